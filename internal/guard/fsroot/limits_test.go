package fsroot

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/guard/fsroot/escapetest"
)

// A named pipe or a device would block a read forever or never end; they
// are refused, and the open itself does not wait.
func TestReadRefusesNamedPipe(t *testing.T) {
	tr := escapetest.New(t)
	fifo := tr.In("fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	s := openSet(t, tr.Allowed)
	done := make(chan error, 1)
	go func() {
		_, err := resolve(t, s, fifo).ReadFile()
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("ReadFile(fifo) = %v, want a refusal naming the pipe", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadFile on a named pipe blocked")
	}
	if _, err := resolve(t, openSet(t, "/dev"), "/dev/zero").ReadFile(); err == nil || !strings.Contains(err.Error(), "a device") {
		t.Errorf("ReadFile(/dev/zero) = %v, want a refusal naming the device", err)
	}
}

func TestReadFileSizeLimit(t *testing.T) {
	tr := escapetest.New(t)
	big := tr.In("big.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(MaxReadSize + 1) // sparse: no disk used
	f.Close()
	s := openSet(t, tr.Allowed)
	if _, err := resolve(t, s, big).ReadFile(); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("ReadFile of a file over the limit: %v", err)
	}
}

func TestSymlinkLoop(t *testing.T) {
	tr := escapetest.New(t)
	os.Symlink("loop_b", tr.In("loop_a"))
	os.Symlink("loop_a", tr.In("loop_b"))
	s := openSet(t, tr.Allowed)
	if _, err := s.Resolve(tr.In("loop_a/x")); err == nil || !strings.Contains(err.Error(), "too many levels") {
		t.Errorf("Resolve through a loop: %v", err)
	}
	// A walk leaves the looping links out instead of failing.
	var names []string
	if err := resolve(t, s, tr.Allowed).Walk(func(rel string, e Entry) bool { names = append(names, rel); return true }); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "loop_") {
			t.Errorf("walk reported %s", n)
		}
	}
}

// The walk opens each subdirectory relative to its parent without following
// a link: a directory replaced by a link is not entered.
func TestOpenChildRefusesLink(t *testing.T) {
	tr := escapetest.New(t)
	s := openSet(t, tr.Allowed)
	d, err := openDir(s.roots[0], ".")
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	if c, err := d.openChild("link_out_dir", "link_out_dir"); err == nil {
		c.close()
		t.Error("openChild followed a link leading outside")
	}
	if c, err := d.openChild("link_in_dir", "link_in_dir"); err == nil {
		c.close()
		t.Error("openChild followed a link")
	}
	c, err := d.openChild("sub", "sub")
	if err != nil {
		t.Fatalf("openChild(sub): %v", err)
	}
	defer c.close()
	names, err := c.read()
	if err != nil || len(names) != 1 || names[0].name != "inner.txt" {
		t.Errorf("read(sub) = %v, %v", names, err)
	}
}
