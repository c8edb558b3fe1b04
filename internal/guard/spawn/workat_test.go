package spawn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIsolationWorkAtNobody checks Cmd.WorkAt and Cmd.Nobody: the sandbox
// shows the work directory at the place asked for (and not at its own
// path), runs a program of the work directory from there, in it, with HOME
// there, as user and group 65534.
func TestIsolationWorkAtNobody(t *testing.T) {
	requireIsolation(t)
	roots, dir := workspace(t)
	script := "#!/bin/sh\necho \"$0\"; pwd; echo \"$HOME\"; id -u; id -g; cat /work/note; test -e " + dir + " && echo host path visible\n"
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "note"), []byte("noted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runIsolated(t, Cmd{Program: filepath.Join(dir, "run.sh"), Roots: roots, Dir: dir, WorkAt: "/work", Nobody: true})
	want := "/work/run.sh\n/work\n/work\n65534\n65534\nnoted\n"
	if got := string(res.Stdout); got != want {
		t.Errorf("stdout = %q, want %q (stderr %q)", got, want, res.Stderr)
	}
}

// TestIsolationWorkAtRefused checks that WorkAt may not cover or lie in
// what the sandbox shows on its own.
func TestIsolationWorkAtRefused(t *testing.T) {
	requireIsolation(t)
	roots, dir := workspace(t)
	for _, at := range []string{"work", "/", "/work/../usr", "/usr/work", "/etc", "/proc/x", "/dev"} {
		_, err := tryRun(t, Cmd{Program: "true", Roots: roots, Dir: dir, Isolation: Bubblewrap, WorkAt: at})
		if err == nil || !strings.Contains(err.Error(), "work directory's place") {
			t.Errorf("WorkAt %q: err = %v, want a refusal", at, err)
		}
	}
}
