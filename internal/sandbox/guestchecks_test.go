package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// runFunc runs the test payload with args in a guest of one backend, on
// the workspace ws.
type runFunc func(t *testing.T, ws string, g Guest, args ...string) Result

// checkFiles: the guest reads its workspace but none of outside, nor a
// canary file outside its workspace.
func checkFiles(t *testing.T, run runFunc, ws string, outside ...string) {
	t.Helper()
	canary := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(canary, []byte("canary-file-7f3a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "mine.txt"), []byte("mine-9b1c"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := run(t, ws, Guest{}, "read", "/work/mine.txt"); res.ExitCode != 0 || string(res.Stdout) != "mine-9b1c" {
		t.Errorf("the guest cannot read its workspace: exit %d, %q %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	for _, p := range append([]string{canary}, outside...) {
		res := run(t, ws, Guest{}, "read", p)
		if res.ExitCode == 0 || strings.Contains(string(res.Stdout), "canary-file-7f3a") {
			t.Errorf("the guest read %s: exit %d, %q", p, res.ExitCode, res.Stdout)
		}
	}
}

// checkUser: the guest runs as 65534:65534, with what it reads on stdin.
func checkUser(t *testing.T, run runFunc, ws string) {
	t.Helper()
	if res := run(t, ws, Guest{}, "id"); strings.TrimSpace(string(res.Stdout)) != "65534 65534" {
		t.Errorf("the guest runs as %q (exit %d, %s), want 65534 65534", res.Stdout, res.ExitCode, res.Stderr)
	}
	if res := run(t, ws, Guest{Stdin: []byte("stdin-4c8d")}, "cat"); string(res.Stdout) != "stdin-4c8d" {
		t.Errorf("the guest read %q from stdin (%s)", res.Stdout, res.Stderr)
	}
}

// checkWrites: the guest writes none of refused, but its /tmp; a write to
// a scratch copy of copyWS does not reach it, a write to the bound ws does.
func checkWrites(t *testing.T, run runFunc, ws, copyWS string, refused ...string) {
	t.Helper()
	for _, p := range refused {
		if res := run(t, ws, Guest{}, "write", p); res.ExitCode == 0 {
			t.Errorf("the guest wrote %s: %s", p, res.Stdout)
		}
	}
	if res := run(t, ws, Guest{}, "write", "/tmp/x"); res.ExitCode != 0 {
		t.Errorf("the guest cannot write its /tmp: %s", res.Stderr)
	}
	if res := run(t, copyWS, Guest{Copy: true}, "write", "/work/copied.txt"); res.ExitCode != 0 {
		t.Errorf("the guest cannot write its scratch copy: %s", res.Stderr)
	}
	if _, err := os.Lstat(filepath.Join(copyWS, "copied.txt")); err == nil {
		t.Error("a write to the scratch copy reached the workspace")
	}
	if res := run(t, ws, Guest{}, "write", "/work/bound.txt"); res.ExitCode != 0 {
		t.Errorf("the guest cannot write its workspace: %s", res.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "bound.txt")); err != nil || string(b) != "written" {
		t.Errorf("a write to the bound workspace is not there: %q %v", b, err)
	}
}

// checkMemoryLimit: a guest that allocates past a 64 MiB limit is killed,
// and the Result says so; one that stays under it runs.
func checkMemoryLimit(t *testing.T, run runFunc, ws string) {
	t.Helper()
	limits := Limits{MemoryBytes: 64 << 20}
	if res := run(t, ws, Guest{Limits: limits}, "alloc", "16"); res.ExitCode != 0 || res.MemoryKilled {
		t.Errorf("16 MiB under a 64 MiB limit: exit %d, killed %v, %s", res.ExitCode, res.MemoryKilled, res.Stderr)
	}
	res := run(t, ws, Guest{Limits: limits}, "alloc", "1024")
	if !res.MemoryKilled || res.ExitCode != -1 || strings.Contains(string(res.Stdout), "allocated") {
		t.Errorf("1 GiB under a 64 MiB limit: exit %d, killed %v, %s%s", res.ExitCode, res.MemoryKilled, res.Stdout, res.Stderr)
	}
}

// checkPidsLimit: a guest that starts processes in a loop is stopped
// short of a limit of 16, and ends.
func checkPidsLimit(t *testing.T, run runFunc, ws string) {
	t.Helper()
	res := run(t, ws, Guest{Limits: Limits{Pids: 16, Wall: 60 * time.Second}}, "spawn", "1000")
	t.Logf("exit %d: %s%s", res.ExitCode, res.Stdout, res.Stderr[:min(len(res.Stderr), 600)])
	var started int
	var rest string
	if _, err := fmt.Sscanf(string(res.Stdout), "started %d %s", &started, &rest); err != nil || res.ExitCode != 0 || started >= 16 {
		t.Errorf("the process limit did not hold: exit %d, timed out %v, %q", res.ExitCode, res.TimedOut, res.Stdout)
	}
}

// countingServer is a TCP server on 127.0.0.1, closed with the test, that
// counts the connections it accepts.
func countingServer(t *testing.T) (addr string, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().String(), accepted
}

// checkReadOnlyPaths: a file and a folder of the host's given as ReadOnly
// are seen at their own paths, read-only; a path the guest has of its own
// is refused before anything runs.
func checkReadOnlyPaths(t *testing.T, run runFunc, ws string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "tool.txt")
	if err := os.WriteFile(file, []byte("shown-3e1f"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, shown := range []string{file, dir} {
		g := Guest{ReadOnly: []string{shown}}
		if res := run(t, ws, g, "read", file); res.ExitCode != 0 || string(res.Stdout) != "shown-3e1f" {
			t.Errorf("%s shown read-only: the guest read %q (exit %d, %s)", shown, res.Stdout, res.ExitCode, res.Stderr)
		}
		if res := run(t, ws, g, "write", file); res.ExitCode == 0 {
			t.Errorf("%s shown read-only: the guest wrote it", shown)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "shown-3e1f" {
		t.Errorf("the read-only file changed: %q", b)
	}
}
