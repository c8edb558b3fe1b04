package sandbox

import (
	"context"
	"github.com/zero-dev/zero/internal/benchstat"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// requireRunsc skips the test where runsc cannot run a guest, unless
// ZERO_REQUIRE_RUNSC is set (scripts/test sets it): then it fails.
func requireRunsc(t testing.TB) RunscRunner {
	t.Helper()
	r := RunscRunner{}
	if err := r.Probe(context.Background()); err != nil {
		if os.Getenv("ZERO_REQUIRE_RUNSC") != "" {
			t.Fatalf("runsc is required (ZERO_REQUIRE_RUNSC) but unusable: %v", err)
		}
		t.Skipf("runsc unusable here: %v", err)
	}
	return r
}

// runscWorkspace is a fresh canonical workspace holding the test payload
// (testdata/runscpayload, built static) at /work/payload.
func runscWorkspace(t testing.TB) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(ws, "payload"), "./testdata/runscpayload")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the payload: %v\n%s", err, out)
	}
	return ws
}

// runPayload runs the payload with args in a guest on ws, and checks that
// the Result names runsc.
func runPayload(t *testing.T, r RunscRunner, ws string, g Guest, args ...string) Result {
	t.Helper()
	g.Argv = append([]string{"/work/payload"}, args...)
	g.Workspace = ws
	res, err := r.Run(context.Background(), g)
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	if res.Backend != Runsc {
		t.Errorf("%s: the result names %q, want runsc", args, res.Backend)
	}
	return res
}

// TestRunscNetwork: a guest cannot reach a loopback TCP server the test
// started, which the same program reaches from the host.
func TestRunscNetwork(t *testing.T) {
	r := requireRunsc(t)
	ws := runscWorkspace(t)
	addr, accepted := countingServer(t)
	if out, err := exec.Command(filepath.Join(ws, "payload"), "dial", addr).CombinedOutput(); err != nil {
		t.Fatalf("the payload cannot reach the server from the host either: %v %s", err, out)
	}
	before := accepted.Load()
	res := runPayload(t, r, ws, Guest{}, "dial", addr)
	if res.ExitCode == 0 || accepted.Load() != before {
		t.Errorf("the guest reached %s: exit %d, %s%s", addr, res.ExitCode, res.Stdout, res.Stderr)
	}
}

// TestRunscFiles: a guest reads its workspace but not a canary outside it
// (in a fake $ZERO_HOME), nor the host's /etc.
func TestRunscFiles(t *testing.T) {
	r := requireRunsc(t)
	checkFiles(t, runscRun(r), runscWorkspace(t), "/etc/hostname", "/etc/passwd")
}

// runscRun runs the payload under r.
func runscRun(r RunscRunner) runFunc {
	return func(t *testing.T, ws string, g Guest, args ...string) Result { return runPayload(t, r, ws, g, args...) }
}

// TestRunscEnvironment: a guest sees none of the test process's
// environment, a secret included: only PATH and HOME.
func TestRunscEnvironment(t *testing.T) {
	r := requireRunsc(t)
	ws := runscWorkspace(t)
	t.Setenv("ZERO_TEST_SECRET", "canary-env-5d2e")
	res := runPayload(t, r, ws, Guest{}, "env")
	env := strings.Fields(string(res.Stdout))
	slices.Sort(env)
	if res.ExitCode != 0 || !slices.Equal(env, []string{"HOME=/work", "PATH=/usr/bin:/bin"}) {
		t.Errorf("the guest's environment: exit %d, %q %s", res.ExitCode, env, res.Stderr)
	}
}

// TestRunscUser: a guest runs as 65534:65534, with what it reads on stdin.
func TestRunscUser(t *testing.T) {
	checkUser(t, runscRun(requireRunsc(t)), runscWorkspace(t))
}

// TestRunscWrites: a guest writes in /work and nowhere else but its own
// /tmp (the root and /usr are read-only); a scratch copy (Copy) is thrown
// away with the guest, a bind keeps what the guest wrote.
func TestRunscWrites(t *testing.T) {
	r := requireRunsc(t)
	ws := runscWorkspace(t)
	checkWrites(t, runscRun(r), ws, ws, "/x", "/usr/zero-canary", "/usr/bin/zero-canary", "/proc/zero-canary")
	if _, err := os.Lstat("/usr/zero-canary"); err == nil {
		t.Error("/usr/zero-canary exists on the host")
	}
}

// TestRunscMemoryLimit: a guest that allocates past its memory limit is
// killed, and the Result says so; one that stays under it runs.
func TestRunscMemoryLimit(t *testing.T) {
	checkMemoryLimit(t, runscRun(requireRunsc(t)), runscWorkspace(t))
}

// TestRunscPidsLimit: a guest that starts processes in a loop is stopped
// well short of its goal, and ends.
func TestRunscPidsLimit(t *testing.T) {
	checkPidsLimit(t, runscRun(requireRunsc(t)), runscWorkspace(t))
}

// TestRunscCleanup: a guest killed at its wall-time limit leaves nothing
// behind: no bundle or state folder, no process.
func TestRunscCleanup(t *testing.T) {
	r := requireRunsc(t)
	ws := runscWorkspace(t)
	// Not t.TempDir(): its long path makes runsc's socket paths too long.
	tmp, err := os.MkdirTemp("/tmp", "zr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	res := runPayload(t, r, ws, Guest{Limits: Limits{Wall: 2 * time.Second}}, "sleep")
	if !res.TimedOut || res.ExitCode != -1 {
		t.Errorf("a guest that never ends: timed out %v, exit %d, %s", res.TimedOut, res.ExitCode, res.Stderr)
	}
	runPayload(t, r, ws, Guest{Copy: true}, "true")
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left behind in TMPDIR: %v", left)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, _ := os.ReadFile(p); strings.Contains(string(b), tmp) {
			t.Errorf("a process is left: %s: %q", p, b)
		}
	}
}

// TestRunscProbe: the probe passes here, and refuses a missing runsc.
func TestRunscProbe(t *testing.T) {
	requireRunsc(t)
	err := RunscRunner{Program: "/nonexistent/runsc"}.Probe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/runsc") {
		t.Errorf("a missing runsc: %v", err)
	}
}

// BenchmarkRunscGuest: the start-up of one guest running a no-op static
// program, from Run to its return.
func BenchmarkRunscGuest(b *testing.B) {
	r := requireRunsc(b)
	ws := runscWorkspace(b)
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		res, err := r.Run(context.Background(), Guest{Argv: []string{"/work/payload", "true"}, Workspace: ws})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%v %d %s", err, res.ExitCode, res.Stderr)
		}
		took = append(took, time.Since(start))
	}
	benchstat.Report(b, took)
}

// TestRunscReadOnly: host paths given as ReadOnly are seen, read-only.
func TestRunscReadOnly(t *testing.T) {
	r := requireRunsc(t)
	checkReadOnlyPaths(t, func(t *testing.T, ws string, g Guest, args ...string) Result {
		return runPayload(t, r, ws, g, args...)
	}, runscWorkspace(t))
}
