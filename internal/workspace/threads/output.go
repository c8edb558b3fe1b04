package threads

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/zero-dev/zero/internal/guard/hiddentext"
)

// MaxInlineResult bounds the text of a tool result a model reads in the
// conversation; a longer one is kept in a file in the thread's folder.
const MaxInlineResult = 32 << 10

// ResultsDir is the folder, inside a thread's folder, that long results
// are kept in.
const ResultsDir = "results"

// OutputTag is the name of the tag a tool result is wrapped in.
const OutputTag = "tool_output"

// NewNonce returns a run's nonce: 128 random bits, in hex. A run's wrapper
// tags carry it, so that a tool cannot guess the tag that closes its own
// output.
func NewNonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// forged matches what could be read as the wrapper tag, opening or
// closing, in any case and spacing.
var forged = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)<(\s*/?\s*` + OutputTag + `)`) })

// Wrap returns text, a tool's result, as a model reads it: invisible
// characters removed (hiddentext.Strip), every "<" that would begin a
// wrapper tag, opening or closing, written "&lt;" (so that no copy of the
// tag inside the output, the run's nonce included, can close it), and the
// whole wrapped in a tag that carries the run's nonce, the server's and
// the tool's names. It lowers the odds that a model reads a tool's output
// as an instruction; it cannot prevent it.
func Wrap(nonce, server, tool, text string) string {
	text, _ = hiddentext.Strip(text)
	text = forged().ReplaceAllString(text, "&lt;$1")
	return fmt.Sprintf("<%s nonce=\"%s\" server=\"%s\" tool=\"%s\">\n%s\n</%s nonce=\"%s\">",
		OutputTag, nonce, attr(server), attr(tool), text, OutputTag, nonce)
}

// wrapped matches a result as Wrap made it: the opening tag, the text, and
// the closing tag with the same nonce.
var wrapped = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\A<` + OutputTag + ` nonce="([0-9a-f]{32})" server="[^"\n]*" tool="[^"\n]*">\n((?s:.*))\n</` + OutputTag + ` nonce="([0-9a-f]{32})">\z`)
})

// Unwrap returns the text inside a result that Wrap made, as the model
// read it (hidden characters removed, forged tags neutralised), and true;
// for anything else, text itself and false. The wrapper stays in what the
// model receives; a person is shown what is inside.
func Unwrap(text string) (string, bool) {
	m := wrapped().FindStringSubmatch(text)
	if m == nil || m[1] != m[3] {
		return text, false
	}
	return m[2], true
}

// attr is s as the value of a double-quoted attribute.
func attr(s string) string {
	s, _ = hiddentext.Strip(s)
	return strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;", "\n", " ", "\r", " ").Replace(s)
}

// nameRE is what a kept result's file name may be.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,99}$`) })

// Keep returns what the conversation holds of a result's text: the text
// itself when it is at most MaxInlineResult bytes; else the text is saved
// as ResultsDir/name in the thread's folder dir, and a short notice says
// where, how large it is, and shows its start. The file is made new (an
// existing one is never written over) through an os.Root of dir, so a link
// planted in the folder leads nowhere outside it.
func Keep(dir, name, text string) (string, error) {
	if len(text) <= MaxInlineResult {
		return text, nil
	}
	if !nameRE().MatchString(name) {
		return "", fmt.Errorf("%w: a result file name %q", ErrInvalid, name)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if err := root.Mkdir(ResultsDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	rel := path.Join(ResultsDir, name)
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("keep a long result: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		root.Remove(rel)
		return "", err
	}
	if err := f.Close(); err != nil {
		root.Remove(rel)
		return "", err
	}
	head := validPrefix(text, 1024)
	return fmt.Sprintf("[zero: this result is %d bytes, over the %d that stay in the conversation. It is kept in the thread's folder as %s (%s); open it with a tool that reads files. Its first %d bytes:]\n%s",
		len(text), MaxInlineResult, rel, filepath.Join(dir, filepath.FromSlash(rel)), len(head), head), nil
}

// validPrefix is s cut to at most n bytes at a character boundary.
func validPrefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
