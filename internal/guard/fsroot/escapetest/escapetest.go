// Package escapetest builds, for tests, a directory tree that holds the known
// escapes from an allowed directory: a sibling whose name shares a prefix, and
// symbolic links to a file, a directory and /etc/passwd outside it, in the
// middle of a path, and dangling.
package escapetest

import (
	"os"
	"path/filepath"
	"testing"
)

// A Tree is a fixture laid out under a temporary directory:
//
//	Allowed/                 the allowed directory
//	  file.txt               "inside\n"
//	  sub/inner.txt          "inner\n"
//	  link_in        -> file.txt          (stays inside)
//	  link_in_dir    -> sub               (stays inside)
//	  link_abs_in    -> Allowed/sub (absolute, stays inside)
//	  link_out_file  -> Outside/secret.txt
//	  link_out_dir   -> Outside
//	  link_passwd    -> /etc/passwd
//	  dangling_out   -> Outside/new.txt  (does not exist)
//	  dangling_in    -> new_inside.txt    (does not exist)
//	Evil/ (Allowed + "_evil") secret.txt  a prefix collision
//	Outside/secret.txt       "secret\n"
type Tree struct {
	Base    string // the temporary directory holding it all
	Allowed string
	Evil    string
	Outside string
}

// SecretContent is what every file outside the allowed directory holds.
const SecretContent = "secret\n"

// New builds the tree in a fresh temporary directory and points HOME at
// Outside, so that ~ is an escape too. The paths it returns are canonical:
// the temporary directory's own symbolic links are resolved.
func New(t testing.TB) *Tree {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := &Tree{
		Base:    base,
		Allowed: filepath.Join(base, "allowed"),
		Evil:    filepath.Join(base, "allowed_evil"),
		Outside: filepath.Join(base, "outside"),
	}
	t.Setenv("HOME", tr.Outside)
	for _, d := range []string{tr.Allowed, filepath.Join(tr.Allowed, "sub"), tr.Evil, tr.Outside} {
		must(t, os.MkdirAll(d, 0o755))
	}
	files := map[string]string{
		filepath.Join(tr.Allowed, "file.txt"):      "inside\n",
		filepath.Join(tr.Allowed, "sub/inner.txt"): "inner\n",
		filepath.Join(tr.Evil, "secret.txt"):       SecretContent,
		filepath.Join(tr.Outside, "secret.txt"):    SecretContent,
	}
	for name, content := range files {
		must(t, os.WriteFile(name, []byte(content), 0o644))
	}
	links := map[string]string{
		"link_in":       "file.txt",
		"link_in_dir":   "sub",
		"link_abs_in":   filepath.Join(tr.Allowed, "sub"),
		"link_out_file": "../outside/secret.txt",
		"link_out_dir":  "../outside",
		"link_passwd":   "/etc/passwd",
		"dangling_out":  "../outside/new.txt",
		"dangling_in":   "new_inside.txt",
	}
	for name, target := range links {
		must(t, os.Symlink(target, filepath.Join(tr.Allowed, name)))
	}
	return tr
}

// In returns a path inside the allowed directory.
func (tr *Tree) In(rel string) string { return filepath.Join(tr.Allowed, rel) }

// Escape is one way a request can try to leave the allowed directory. Path is
// relative to the allowed directory unless it is absolute or starts with ~.
type Escape struct {
	Name string
	Path string
	// Missing reports a path whose target does not exist, which only a tool
	// that creates something can reach.
	Missing bool
}

// Escapes returns the escapes every tool that takes a path must refuse, as
// requests. Paths that exist outside lead to SecretContent.
func (tr *Tree) Escapes() []Escape {
	return []Escape{
		{Name: "prefix collision", Path: filepath.Join(tr.Evil, "secret.txt")},
		{Name: "prefix collision dir", Path: tr.Evil},
		{Name: "symlink to file", Path: tr.In("link_out_file")},
		{Name: "symlink to dir", Path: tr.In("link_out_dir")},
		{Name: "symlink to /etc/passwd", Path: tr.In("link_passwd")},
		{Name: "symlink in middle component", Path: tr.In("link_out_dir/secret.txt")},
		{Name: "new name under linked dir", Path: tr.In("link_out_dir/new.txt"), Missing: true},
		{Name: "new dir under linked dir", Path: tr.In("link_out_dir/newdir/deeper"), Missing: true},
		{Name: "dangling symlink", Path: tr.In("dangling_out"), Missing: true},
		{Name: "dot-dot escape", Path: tr.In("../outside/secret.txt")},
		{Name: "dot-dot escape deep", Path: tr.In("sub/../../outside/secret.txt")},
		{Name: "relative escape", Path: "../outside/secret.txt"},
		{Name: "relative escape deep", Path: "sub/../../../" + filepath.Base(tr.Base) + "/outside/secret.txt"},
		{Name: "home", Path: "~"},
		{Name: "home file", Path: "~/.zero-escapetest-missing", Missing: true},
		{Name: "NUL byte", Path: tr.In("file.txt\x00.png")},
		{Name: "absolute outside", Path: "/etc/passwd"},
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
