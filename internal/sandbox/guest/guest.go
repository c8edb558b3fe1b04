// Package guest is the guest helper: the program a sandboxed thread's file
// tools run inside a guest (internal/sandbox) to read, write, list and
// search its workspace. Every path is confined to /work: a path is taken
// absolute or relative to /work, cleaned, and refused when it leaves /work;
// every file is opened through an os.Root of /work, so that no symbolic
// link leads out of it. Each command writes one JSON object on stdout, of
// a bounded size, and an error as {"error": "..."} with exit code 1 (2 for
// a command that is not understood).
//
// The production helper is Zero's own executable, as "zero guest ..."; tests
// build a tiny one (guesttest.Helper).
package guest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/zero-dev/zero/internal/sandbox"
)

// Bounds of what one command reads, writes and answers.
const (
	MaxRead       = 256 << 10 // bytes of a file's content read_file returns; the rest is cut
	MaxWrite      = 1 << 20   // bytes write accepts on stdin; more is refused and nothing is written
	MaxEntries    = 1000      // entries list returns
	MaxMatches    = 100       // lines search returns
	MaxLine       = 400       // bytes of a matching line search returns
	MaxSearchFile = 4 << 20   // a larger file is not searched
	MaxSearched   = 10_000    // files search opens
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the command was understood and failed (a refused path, a missing file)
	exitUsage = 2 // no such command, or the wrong arguments
)

// Main runs the helper command args (read PATH, write PATH, list PATH,
// search TEXT PATH) on /work and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(sandbox.WorkDir, args, stdin, stdout, stderr)
}

// usage is what a command that is not understood is told.
const usage = "usage: read PATH | write PATH (content on stdin) | list PATH | search TEXT PATH"

// run is Main with root (the folder standing for /work) as a parameter.
func run(root string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	answer, err := command(root, args, stdin)
	var ue usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, usage)
		writeJSON(stdout, map[string]string{"error": err.Error()})
		return exitUsage
	case err != nil:
		writeJSON(stdout, map[string]string{"error": err.Error()})
		return exitError
	}
	writeJSON(stdout, answer)
	return exitOK
}

type usageError string

func (e usageError) Error() string { return string(e) }

func writeJSON(w io.Writer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"error":"the answer cannot be written as JSON"}`)
	}
	w.Write(append(b, '\n'))
}

func command(root string, args []string, stdin io.Reader) (any, error) {
	want := map[string]int{"read": 2, "write": 2, "list": 2, "search": 3}
	if len(args) == 0 || want[args[0]] == 0 {
		return nil, usageError("no such command")
	}
	if len(args) != want[args[0]] {
		return nil, usageError(fmt.Sprintf("%s takes %d argument(s)", args[0], want[args[0]]-1))
	}
	name, err := local(args[len(args)-1])
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", sandbox.WorkDir, err)
	}
	defer r.Close()
	switch args[0] {
	case "read":
		return read(r, name)
	case "write":
		return write(r, name, stdin)
	case "list":
		return list(r, name)
	default:
		return search(r, args[1], name)
	}
}

// local returns p, absolute or relative to /work, as a clean path relative
// to /work ("." for /work itself), or an error when it leaves /work. The
// os.Root every file is opened through is what keeps a link from leading
// out.
func local(p string) (string, error) {
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("path %q: empty or holding a NUL byte", p)
	}
	rel := filepath.Clean(p)
	if filepath.IsAbs(p) {
		var err error
		if rel, err = filepath.Rel(sandbox.WorkDir, rel); err != nil {
			return "", fmt.Errorf("path %q: %w", p, err)
		}
	}
	if rel != "." && !filepath.IsLocal(rel) {
		return "", fmt.Errorf("path %q is outside %s", p, sandbox.WorkDir)
	}
	return rel, nil
}

// guestPath is name (relative to /work) as the guest sees it.
func guestPath(name string) string { return filepath.Join(sandbox.WorkDir, name) }

// A File is read's answer.
type File struct {
	Path      string `json:"path"`
	Size      int64  `json:"size"`
	Content   string `json:"content"`
	Binary    bool   `json:"binary,omitempty"`    // not UTF-8: Content is empty
	Truncated bool   `json:"truncated,omitempty"` // Content is the first MaxRead bytes
}

func read(r *os.Root, name string) (File, error) {
	f, err := r.Open(name)
	if err != nil {
		return File{}, fmt.Errorf("read: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return File{}, fmt.Errorf("read: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return File{}, fmt.Errorf("read %s: not a regular file", guestPath(name))
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxRead+1))
	if err != nil {
		return File{}, fmt.Errorf("read: %w", err)
	}
	out := File{Path: guestPath(name), Size: fi.Size()}
	if len(b) > MaxRead {
		b, out.Truncated = b[:MaxRead], true
		for i := 0; i < utf8.UTFMax-1 && !utf8.Valid(b); i++ {
			b = b[:len(b)-1] // a rune cut at the bound
		}
	}
	if utf8.Valid(b) {
		out.Content = string(b)
	} else {
		out.Binary = true
	}
	return out, nil
}

// A Written is write's answer.
type Written struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// write replaces (or makes) the file name with stdin, making the folders
// it lies in.
func write(r *os.Root, name string, stdin io.Reader) (Written, error) {
	if name == "." {
		return Written{}, fmt.Errorf("write: %s is a folder", sandbox.WorkDir)
	}
	b, err := io.ReadAll(io.LimitReader(stdin, MaxWrite+1))
	if err != nil {
		return Written{}, fmt.Errorf("write: %w", err)
	}
	if len(b) > MaxWrite {
		return Written{}, fmt.Errorf("write %s: the content is over %d bytes; nothing was written", guestPath(name), MaxWrite)
	}
	if dir := filepath.Dir(name); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return Written{}, fmt.Errorf("write: %w", err)
		}
	}
	if err := r.WriteFile(name, b, 0o644); err != nil {
		return Written{}, fmt.Errorf("write: %w", err)
	}
	return Written{Path: guestPath(name), Size: int64(len(b))}, nil
}

// A Listing is list's answer.
type Listing struct {
	Path      string  `json:"path"`
	Entries   []Entry `json:"entries"`
	Truncated bool    `json:"truncated,omitempty"` // more than MaxEntries: the first ones, by name
}

// An Entry is one entry of a folder.
type Entry struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // file, dir, symlink or other
	Size int64  `json:"size"`
}

func list(r *os.Root, name string) (Listing, error) {
	entries, err := fs.ReadDir(r.FS(), filepath.ToSlash(name))
	if err != nil {
		return Listing{}, fmt.Errorf("list: %w", err)
	}
	out := Listing{Path: guestPath(name), Entries: []Entry{}}
	if len(entries) > MaxEntries {
		entries, out.Truncated = entries[:MaxEntries], true
	}
	for _, e := range entries {
		entry := Entry{Name: e.Name(), Kind: "other"}
		switch {
		case e.Type().IsRegular():
			entry.Kind = "file"
			if fi, err := e.Info(); err == nil {
				entry.Size = fi.Size()
			}
		case e.IsDir():
			entry.Kind = "dir"
		case e.Type()&fs.ModeSymlink != 0:
			entry.Kind = "symlink"
		}
		out.Entries = append(out.Entries, entry)
	}
	return out, nil
}

// Matches are search's answer.
type Matches struct {
	Text      string  `json:"text"`
	Path      string  `json:"path"`
	Matches   []Match `json:"matches"`
	Truncated bool    `json:"truncated,omitempty"` // MaxMatches reached, or MaxSearched files opened
	Skipped   int     `json:"skipped,omitempty"`   // files not searched: over MaxSearchFile, or binary
}

// A Match is one line holding the text.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"` // cut to MaxLine bytes
}

// errEnough ends a search that has found or opened all it may.
var errEnough = errors.New("enough")

// search finds the lines holding text in the regular files at or under
// name (links are not followed), in lexical order.
func search(r *os.Root, text, name string) (Matches, error) {
	if text == "" {
		return Matches{}, errors.New("search: no text to search for")
	}
	out := Matches{Text: text, Path: guestPath(name), Matches: []Match{}}
	opened := 0
	err := fs.WalkDir(r.FS(), filepath.ToSlash(name), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if opened++; opened > MaxSearched {
			out.Truncated = true
			return errEnough
		}
		return out.file(r, p, text)
	})
	if errors.Is(err, errEnough) {
		err = nil
	}
	if err != nil {
		return Matches{}, fmt.Errorf("search: %w", err)
	}
	return out, nil
}

// file adds the lines of the file p that hold text.
func (m *Matches) file(r *os.Root, p, text string) error {
	f, err := r.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() > MaxSearchFile {
		m.Skipped++
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxSearchFile))
	if err != nil {
		return err
	}
	if bytes.IndexByte(b, 0) >= 0 {
		m.Skipped++
		return nil
	}
	lines := bufio.NewScanner(bytes.NewReader(b))
	lines.Buffer(nil, MaxSearchFile)
	for n := 1; lines.Scan(); n++ {
		line := lines.Text()
		if !strings.Contains(line, text) {
			continue
		}
		if len(m.Matches) == MaxMatches {
			m.Truncated = true
			return errEnough
		}
		if len(line) > MaxLine {
			line = strings.ToValidUTF8(line[:MaxLine], "")
		}
		m.Matches = append(m.Matches, Match{Path: guestPath(p), Line: n, Text: line})
	}
	return lines.Err()
}
