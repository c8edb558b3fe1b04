// Package fsroot guards filesystem access: it confines every path an MCP tool
// receives to a set of allowed directories.
//
// Roots are canonicalized once, when the set is opened, and kept both as given
// (lexically normalized) and canonicalized. A requested path is normalized
// (~ expanded, relative paths joined to the first root, ".", ".." and doubled
// separators removed), checked lexically, then resolved symlink by symlink; the
// resolved path must lie inside a canonical root. A path that does not exist
// yet is checked through its deepest existing ancestor.
//
// The check is not the only line of defence: every operation then runs through
// an [os.Root] opened on the root's canonical directory, so a symbolic link
// swapped in after the check cannot lead the operation outside the root.
// Writes go to a fresh temporary file that is renamed over the target, and
// walks re-validate every entry they visit.
//
// This is access control, not a sandbox: inside a root the caller can do
// whatever the process user can do there.
package fsroot

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrOutside reports a path that is, or resolves to, a place outside every
// allowed directory.
var ErrOutside = errors.New("access denied")

// A Root is one allowed directory.
type Root struct {
	// Given is the directory as configured: absolute, ~ expanded, lexically
	// normalized, symlinks not resolved.
	Given string
	// Canonical is Given with every symbolic link resolved.
	Canonical string

	dir *os.Root // opened on Canonical; all operations go through it
}

// A Set is an immutable list of allowed directories. Its methods are safe for
// concurrent use.
type Set struct {
	roots []*Root
	owned bool // Close closes the roots' directories
}

// Open canonicalizes and opens every directory in dirs. Each one must exist,
// be a directory and be readable; otherwise Open fails and says which one.
// Open fails too when dirs is empty.
func Open(dirs []string) (*Set, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no allowed directory given")
	}
	s := &Set{owned: true}
	for _, d := range dirs {
		r, err := openRoot(d)
		if err != nil {
			s.Close()
			return nil, err
		}
		if !slices.ContainsFunc(s.roots, func(o *Root) bool { return o.Canonical == r.Canonical && o.Given == r.Given }) {
			s.roots = append(s.roots, r)
		} else {
			r.dir.Close()
		}
	}
	return s, nil
}

func openRoot(d string) (*Root, error) {
	if strings.IndexByte(d, 0) >= 0 {
		return nil, fmt.Errorf("allowed directory %q: contains a NUL byte", d)
	}
	if d == "" {
		return nil, errors.New("allowed directory is an empty string")
	}
	expanded, err := expandHome(d)
	if err != nil {
		return nil, fmt.Errorf("allowed directory %q: %w", d, err)
	}
	given, err := filepath.Abs(expanded)
	if err != nil {
		return nil, fmt.Errorf("allowed directory %q: %w", d, err)
	}
	canonical, err := filepath.EvalSymlinks(given)
	if err != nil {
		return nil, fmt.Errorf("allowed directory %q: %w", d, unwrapPathError(err))
	}
	fi, err := os.Stat(canonical)
	if err != nil {
		return nil, fmt.Errorf("allowed directory %q: %w", d, unwrapPathError(err))
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("allowed directory %q: not a directory", d)
	}
	dir, err := os.OpenRoot(canonical)
	if err != nil {
		return nil, fmt.Errorf("allowed directory %q: %w", d, unwrapPathError(err))
	}
	// A directory we cannot list is not usable as a root.
	f, err := dir.Open(".")
	if err == nil {
		_, err = f.ReadDir(1)
		f.Close()
	}
	if err != nil && !errors.Is(err, io.EOF) {
		dir.Close()
		return nil, fmt.Errorf("allowed directory %q: cannot be read: %w", d, unwrapPathError(err))
	}
	return &Root{Given: given, Canonical: canonical, dir: dir}, nil
}

// Close releases the directories the set opened. A set made by [Set.Narrow]
// owns its own directories and must be closed too.
func (s *Set) Close() error {
	if s == nil || !s.owned {
		return nil
	}
	var errs []error
	for _, r := range s.roots {
		errs = append(errs, r.dir.Close())
	}
	return errors.Join(errs...)
}

// Roots returns the allowed directories in the order they were given.
func (s *Set) Roots() []Root {
	out := make([]Root, len(s.roots))
	for i, r := range s.roots {
		out[i] = Root{Given: r.Given, Canonical: r.Canonical}
	}
	return out
}

// Len reports how many allowed directories the set holds.
func (s *Set) Len() int { return len(s.roots) }

// Narrow returns the part of s that also lies inside dirs: each directory of
// dirs that is inside a root of s, and each root of s that is inside a
// directory of dirs. It never returns anything outside s. Directories of dirs
// that cannot be used are reported in skipped with the reason, and left out.
// An empty result is valid: it allows nothing.
func (s *Set) Narrow(dirs []string) (narrowed *Set, skipped []error) {
	n := &Set{owned: true}
	add := func(given, canonical string, parent *Root) error {
		if slices.ContainsFunc(n.roots, func(o *Root) bool { return o.Canonical == canonical }) {
			return nil
		}
		rel, err := filepath.Rel(parent.Canonical, canonical)
		if err != nil {
			return err
		}
		dir, err := parent.dir.OpenRoot(rel)
		if err != nil {
			return unwrapPathError(err)
		}
		n.roots = append(n.roots, &Root{Given: given, Canonical: canonical, dir: dir})
		return nil
	}
	for _, d := range dirs {
		canonical, err := resolveDir(d)
		if err != nil {
			skipped = append(skipped, err)
			continue
		}
		overlaps := false
		for _, r := range s.roots {
			var err error
			switch {
			case Within(r.Canonical, canonical):
				err = add(filepath.Clean(d), canonical, r)
			case Within(canonical, r.Canonical):
				err = add(r.Given, r.Canonical, r)
			default:
				continue
			}
			if err != nil {
				skipped = append(skipped, fmt.Errorf("root %q: %w", d, err))
				continue
			}
			overlaps = true
		}
		if !overlaps {
			skipped = append(skipped, fmt.Errorf("root %q: outside the directories allowed on the command line", d))
		}
	}
	return n, skipped
}

func resolveDir(d string) (string, error) {
	if strings.IndexByte(d, 0) >= 0 {
		return "", fmt.Errorf("root %q: contains a NUL byte", d)
	}
	if !filepath.IsAbs(d) {
		return "", fmt.Errorf("root %q: not an absolute path", d)
	}
	canonical, err := filepath.EvalSymlinks(filepath.Clean(d))
	if err != nil {
		return "", fmt.Errorf("root %q: %w", d, unwrapPathError(err))
	}
	fi, err := os.Stat(canonical)
	if err != nil {
		return "", fmt.Errorf("root %q: %w", d, unwrapPathError(err))
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("root %q: not a directory", d)
	}
	return canonical, nil
}

// Within reports whether p is dir or lies below it. Both must be clean
// absolute paths. It compares whole path elements, never string prefixes, so
// /r/allowed_evil is not within /r/allowed. It is the one containment check
// of the code base.
func Within(dir, p string) bool {
	for {
		var de, pe string
		de, dir = nextElement(dir)
		if de == "" {
			return true
		}
		pe, p = nextElement(p)
		if pe != de {
			return false
		}
	}
}

// nextElement splits the first name off a slash-separated path.
func nextElement(p string) (elem, rest string) {
	p = strings.TrimLeft(p, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i:]
	}
	return p, ""
}

// unwrapPathError drops the *PathError wrapper, whose message repeats the
// path, so that messages name the path once, as the caller gave it.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
