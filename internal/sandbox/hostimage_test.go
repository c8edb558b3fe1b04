package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostFiles: a dynamic program's root holds it, its interpreter and
// the libraries it loads (libc among them), at the loader's canonical
// folders; a relative program is refused.
func TestHostFiles(t *testing.T) {
	files, err := hostFiles([]string{"/usr/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	var libc, interp bool
	for at, from := range files {
		if _, err := os.Stat(from); err != nil {
			t.Errorf("%s from %s: %v", at, from, err)
		}
		libc = libc || filepath.Base(at) == "libc.so.6"
		interp = interp || strings.HasPrefix(filepath.Base(at), "ld-linux")
	}
	if files["/usr/bin/true"] == "" || !libc || !interp {
		t.Errorf("/usr/bin/true's root: %v", files)
	}
	if _, err := hostFiles([]string{"true"}); err == nil {
		t.Error("a relative program was accepted")
	}
	if _, err := hostFiles([]string{filepath.Join(t.TempDir(), "helper")}); err == nil || !strings.Contains(err.Error(), "in /tmp") {
		t.Errorf("a program in /tmp, which a guest's own /tmp would hide: %v", err)
	}
	if _, err := findLibrary("../libc.so.6"); err == nil {
		t.Error("a library named by a path was looked up")
	}
}

// TestDockerHostImage: an image made of the host's node runs it, under
// runc and gVisor, with a script shown read-only; the guest has no /etc
// of the host's and cannot reach a loopback server the test started.
func TestDockerHostImage(t *testing.T) {
	node := "/usr/bin/node"
	if _, err := os.Stat(node); err != nil {
		if os.Getenv("ZERO_REQUIRE_NODE") != "" {
			t.Fatal(err)
		}
		t.Skip("no node")
	}
	dockerRuntimes(t, func(t *testing.T, r DockerRunner) {
		r.Image, r.Programs, r.ProbeArgv = "", []string{node}, []string{node, "--version"}
		if err := r.Probe(context.Background()); err != nil {
			t.Fatalf("probe: %v", err)
		}
		addr, accepted := countingServer(t)
		dir := t.TempDir()
		script := filepath.Join(dir, "s.js")
		src := `const fs = require('fs');
let etc = 'absent'; try { fs.readFileSync('/etc/passwd'); etc = 'read'; } catch {}
const [host, port] = process.argv[2].split(':');
const s = require('net').connect(Number(port), host);
s.on('connect', () => { console.log('etc ' + etc + ' net reached'); process.exit(0); });
s.on('error', () => { console.log('etc ' + etc + ' net refused'); process.exit(0); });`
		if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		ws := dockerWorkspace(t)
		res, err := r.Run(context.Background(), Guest{Argv: []string{node, script, addr}, Workspace: ws, ReadOnly: []string{script}})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "etc absent net refused" || accepted.Load() != 0 {
			t.Errorf("node in the host image: exit %d, %q %s", res.ExitCode, res.Stdout, res.Stderr)
		}
	})
}
