package spawn

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/guard/envscrub"
)

// TestResolveIsWhatRuns: Resolve gives the path, links resolved, that Run
// runs, looked up in the child's PATH; Expect refuses to run anything else,
// and argv[0] stays the program as given.
func TestResolveIsWhatRuns(t *testing.T) {
	roots, dir := workspace(t)
	first, second := outsideDir(t), outsideDir(t)
	marker := filepath.Join(outsideDir(t), "ran")
	real := filepath.Join(second, "real-tool")
	script := "#!/bin/sh\necho \"$0\"\n"
	if err := os.WriteFile(real, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(second, "zero-tool")); err != nil {
		t.Fatal(err)
	}
	cmd := Cmd{Program: "zero-tool", Roots: roots, Dir: dir, Timeout: 20 * time.Second,
		Env: envscrub.Spec{Set: map[string]string{"PATH": first + ":" + second}}}
	got, err := Resolve(cmd)
	if err != nil || got != real {
		t.Fatalf("Resolve = %q, %v; want %q", got, err, real)
	}
	cmd.Expect = got
	res, err := Run(context.Background(), cmd)
	if err != nil || string(res.Stdout) != real+"\n" {
		t.Fatalf("Run with Expect = %q, %v; want the script at %s to run", res.Stdout, err, real)
	}

	// Something earlier in PATH now answers to the same name: Resolve says
	// so, and Run with the old Expect runs nothing.
	evil := "#!/bin/sh\ntouch " + marker + "\n"
	if err := os.WriteFile(filepath.Join(first, "zero-tool"), []byte(evil), 0o755); err != nil {
		t.Fatal(err)
	}
	if now, err := Resolve(cmd); err != nil || now != filepath.Join(first, "zero-tool") {
		t.Errorf("Resolve after the change = %q, %v", now, err)
	}
	if _, err := Run(context.Background(), cmd); !errors.Is(err, ErrProgramChanged) {
		t.Errorf("Run with a stale Expect = %v, want ErrProgramChanged", err)
	}
	if _, err := Start(context.Background(), cmd); !errors.Is(err, ErrProgramChanged) {
		t.Errorf("Start with a stale Expect = %v, want ErrProgramChanged", err)
	}
	mustNotExist(t, marker)

	// A link retargeted after the check: the resolved path changes too.
	os.Remove(filepath.Join(first, "zero-tool"))
	os.Remove(filepath.Join(second, "zero-tool"))
	if err := os.Symlink(filepath.Join(first, "other"), filepath.Join(second, "zero-tool")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(first, "other"), []byte(evil), 0o755)
	if _, err := Run(context.Background(), cmd); !errors.Is(err, ErrProgramChanged) {
		t.Errorf("Run after the link moved = %v, want ErrProgramChanged", err)
	}
	mustNotExist(t, marker)

	if _, err := Resolve(Cmd{Program: "zero-missing", Roots: roots, Dir: dir, Timeout: time.Second}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Resolve of a missing program = %v, want ErrNotFound", err)
	}
}
