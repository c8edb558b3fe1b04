package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zero-dev/zero/internal/guard/fsroot/escapetest"
)

func resolve(t *testing.T, s *Set, path string) *Path {
	t.Helper()
	p, err := s.Resolve(path)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", path, err)
	}
	return p
}

func readString(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteFileIsAtomicAndKeepsMode(t *testing.T) {
	tr := escapetest.New(t)
	s := openSet(t, tr.Allowed)
	target := tr.In("file.txt")
	if err := os.Chmod(target, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := resolve(t, s, target).WriteFile([]byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, target); got != "new\n" {
		t.Errorf("content = %q", got)
	}
	fi, _ := os.Stat(target)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	leftovers, _ := filepath.Glob(tr.In(".*.tmp"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// A symbolic link planted at the target after the check is replaced, not
// followed: the file outside keeps its content.
func TestWriteFileDoesNotFollowLinkSwappedIn(t *testing.T) {
	tr := escapetest.New(t)
	s := openSet(t, tr.Allowed)
	target := tr.In("race.txt")
	p := resolve(t, s, target)
	if err := os.Symlink(filepath.Join(tr.Outside, "secret.txt"), target); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteFile([]byte("pwned\n")); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(tr.Outside, "secret.txt")); got != escapetest.SecretContent {
		t.Errorf("outside file changed to %q", got)
	}
	fi, err := os.Lstat(target)
	if err != nil || !fi.Mode().IsRegular() {
		t.Errorf("target is not a regular file after the write: %v %v", fi, err)
	}
}

// A directory replaced by a link leading out after the check cannot redirect
// a read, a write or a mkdir: os.Root refuses the escape at the time of use.
func TestOperationsRefuseDirectorySwappedForLink(t *testing.T) {
	tr := escapetest.New(t)
	s := openSet(t, tr.Allowed)
	dir := tr.In("swap")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("inside\n"), 0o644)
	read := resolve(t, s, filepath.Join(dir, "secret.txt"))
	write := resolve(t, s, filepath.Join(dir, "new.txt"))
	mkdir := resolve(t, s, filepath.Join(dir, "newdir"))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tr.Outside, dir); err != nil {
		t.Fatal(err)
	}
	if b, err := read.ReadFile(); err == nil {
		t.Errorf("read through swapped link succeeded: %q", b)
	}
	if err := write.WriteFile([]byte("x")); err == nil {
		t.Error("write through swapped link succeeded")
	}
	if err := mkdir.MkdirAll(); err == nil {
		t.Error("mkdir through swapped link succeeded")
	}
	entries, _ := os.ReadDir(tr.Outside)
	if len(entries) != 1 {
		t.Errorf("outside directory changed: %v", entries)
	}
}

func TestWriteFileReplacesHardLinkedName(t *testing.T) {
	tr := escapetest.New(t)
	s := openSet(t, tr.Allowed)
	outside := filepath.Join(tr.Outside, "secret.txt")
	target := tr.In("hardlink.txt")
	if err := os.Link(outside, target); err != nil {
		t.Skipf("hard link: %v", err)
	}
	if err := resolve(t, s, target).WriteFile([]byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, outside); got != escapetest.SecretContent {
		t.Errorf("write through hard link changed the outside file to %q", got)
	}
	if got := readString(t, target); got != "new\n" {
		t.Errorf("target = %q", got)
	}
}

func TestWriteFileRefusesDirectory(t *testing.T) {
	tr := escapetest.New(t)
	s := openSet(t, tr.Allowed)
	for _, path := range []string{tr.Allowed, tr.In("sub")} {
		if err := resolve(t, s, path).WriteFile([]byte("x")); err == nil {
			t.Errorf("WriteFile(%q) on a directory succeeded", path)
		}
	}
}

func TestMove(t *testing.T) {
	tr := escapetest.New(t)
	s := openSet(t, tr.Allowed)
	move := func(src, dst string) error {
		return Move(resolve(t, s, src), resolve(t, s, dst))
	}
	if err := move(tr.In("file.txt"), tr.In("sub/moved.txt")); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, tr.In("sub/moved.txt")); got != "inside\n" {
		t.Errorf("moved content = %q", got)
	}
	if err := move(tr.In("sub/moved.txt"), tr.In("sub/inner.txt")); !errors.Is(err, fs.ErrExist) && err == nil {
		t.Errorf("move onto an existing file: err = %v", err)
	}
	if got := readString(t, tr.In("sub/inner.txt")); got != "inner\n" {
		t.Errorf("existing destination overwritten: %q", got)
	}
	if err := move(tr.In("sub/moved.txt"), tr.In("link_in_dir")); err == nil {
		t.Error("move onto an existing link succeeded")
	}
	if err := move(tr.In("sub/moved.txt"), tr.In("dangling_in")); err == nil {
		t.Error("move onto a dangling link succeeded")
	}
	if _, err := os.Stat(tr.In("new_inside.txt")); err == nil {
		t.Error("move went through a dangling link to its target")
	}
	if err := move(tr.Allowed, tr.In("sub/x")); err == nil {
		t.Error("moving the allowed directory itself succeeded")
	}
	// Moving a link moves the link, not its target.
	if err := move(tr.In("link_in_dir"), tr.In("renamed_link")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(tr.In("renamed_link"))
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("renamed_link is not a link: %v %v", fi, err)
	}
	if _, err := os.Stat(tr.In("sub/inner.txt")); err != nil {
		t.Errorf("link target moved: %v", err)
	}
}

func TestMoveAcrossRoots(t *testing.T) {
	tr := escapetest.New(t)
	other := filepath.Join(tr.Base, "other")
	os.Mkdir(other, 0o755)
	s := openSet(t, tr.Allowed, other)
	if err := Move(resolve(t, s, tr.In("file.txt")), resolve(t, s, filepath.Join(other, "file.txt"))); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(other, "file.txt")); got != "inside\n" {
		t.Errorf("content = %q", got)
	}
}

func TestReadDirAndWalkSkipEscapes(t *testing.T) {
	tr := escapetest.New(t)
	s := openSet(t, tr.Allowed)
	entries, err := resolve(t, s, tr.Allowed).ReadDir()
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name      string
		Dir, Link bool
	}
	var got []row
	for _, e := range entries {
		got = append(got, row{e.Name, e.Dir, e.Link})
	}
	want := []row{
		{"file.txt", false, false},
		{"link_abs_in", true, true},
		{"link_in", false, true},
		{"link_in_dir", true, true},
		{"sub", true, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadDir mismatch (-want +got):\n%s", diff)
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Errorf("%s: Info: %v", e.Name, err)
		} else if e.Name == "link_in" && fi.Size() != int64(len("inside\n")) {
			t.Errorf("link_in size = %d, want its target's", fi.Size())
		}
	}

	var walked []string
	err = resolve(t, s, tr.Allowed).Walk(func(rel string, e Entry) bool {
		walked = append(walked, rel)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	wantWalk := []string{"file.txt", "link_abs_in", "link_in", "link_in_dir", "sub", "sub/inner.txt"}
	if diff := cmp.Diff(wantWalk, walked); diff != "" {
		t.Errorf("Walk mismatch (-want +got):\n%s", diff)
	}
}

func TestWriteFileLongName(t *testing.T) {
	tr := escapetest.New(t)
	s := openSet(t, tr.Allowed)
	name := tr.In(strings.Repeat("n", 255))
	if err := resolve(t, s, name).WriteFile([]byte("x")); err != nil {
		t.Fatalf("WriteFile with a 255-byte name: %v", err)
	}
	if got := readString(t, name); got != "x" {
		t.Errorf("content = %q", got)
	}
}
