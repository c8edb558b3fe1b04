package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestScratchCopy: a copy holds the folders, files (with their modes) and
// links (as links) of the workspace, leaves out a pipe, and is removed by
// its remove function.
func TestScratchCopy(t *testing.T) {
	t.Setenv("TMPDIR", newWorkspace(t))
	ws := newWorkspace(t)
	must(t, os.Mkdir(filepath.Join(ws, "d"), 0o750))
	must(t, os.WriteFile(filepath.Join(ws, "d", "x"), []byte("exec"), 0o751))
	must(t, os.Symlink("/etc/passwd", filepath.Join(ws, "link")))
	must(t, syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644))

	dir, remove, err := scratchCopy(ws, defaultCopyBounds)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "d", "x")); err != nil || string(data) != "exec" {
		t.Errorf("d/x = %q, %v", data, err)
	}
	for name, want := range map[string]os.FileMode{"d": os.ModeDir | 0o750, "d/x": 0o751} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v, %v; want %v", name, fi.Mode(), err, want)
		}
	}
	if target, err := os.Readlink(filepath.Join(dir, "link")); err != nil || target != "/etc/passwd" {
		t.Errorf("link = %q, %v", target, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "pipe")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the pipe was copied: %v", err)
	}
	remove()
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
		t.Errorf("%d entries left after remove", len(left))
	}
}

// TestScratchCopyBounds: a workspace over the bytes or the files a copy
// may hold is refused with ErrWorkspaceTooLarge, and nothing is left.
func TestScratchCopyBounds(t *testing.T) {
	tmp := newWorkspace(t)
	t.Setenv("TMPDIR", tmp)
	ws := newWorkspace(t)
	for _, name := range []string{"a", "b", "c"} {
		must(t, os.WriteFile(filepath.Join(ws, name), []byte("12345"), 0o644))
	}
	for _, b := range []copyBounds{{bytes: 14, files: 10}, {bytes: 100, files: 2}} {
		if _, _, err := scratchCopy(ws, b); !errors.Is(err, ErrWorkspaceTooLarge) {
			t.Errorf("%+v: err = %v, want ErrWorkspaceTooLarge", b, err)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("%+v: %d entries left", b, len(left))
		}
	}
	dir, remove, err := scratchCopy(ws, copyBounds{bytes: 15, files: 3})
	if err != nil {
		t.Fatalf("a workspace at its bounds: %v", err)
	}
	remove()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the copy is still there: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
