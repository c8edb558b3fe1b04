package sandbox

import (
	"context"
	"fmt"
	"github.com/zero-dev/zero/internal/benchstat"
	"github.com/zero-dev/zero/internal/sandbox/dockertest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dockertest.Stop()
	os.Exit(code)
}

const testImage = "zero-test/payload:1"

// testImages are the daemons the test image was built on.
var testImages sync.Map

// buildTestImage builds testImage holding the static payload, once.
func buildTestImage(host string) error {
	if _, ok := testImages.Load(host); ok {
		return nil
	}
	dir, err := os.MkdirTemp("", "zero-payload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "payload")
	build := exec.Command("go", "build", "-o", bin, "./testdata/runscpayload")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build the payload: %v\n%s", err, out)
	}
	if err := (DockerRunner{Host: host, Image: testImage}).EnsureImage(context.Background(), bin); err != nil {
		return err
	}
	testImages.Store(host, true)
	return nil
}

// requireDocker returns a runner of the test daemon with runtime (""
// or "runsc"), whose probe passes; it skips where dockerd is missing or
// unusable, unless ZERO_REQUIRE_DOCKER is set: then it fails.
func requireDocker(t testing.TB, runtime string) DockerRunner {
	t.Helper()
	d := dockertest.Require(t)
	r := DockerRunner{Host: d.Host, Runtime: runtime, Image: testImage, ProbeArgv: []string{DockerGuestProgram, "true"}}
	err := buildTestImage(d.Host)
	if err == nil {
		err = r.Probe(context.Background())
	}
	if err != nil {
		if os.Getenv("ZERO_REQUIRE_DOCKER") != "" {
			t.Fatalf("docker (%q) is required (ZERO_REQUIRE_DOCKER) but unusable: %v", runtime, err)
		}
		t.Skipf("docker (%q) unusable here: %v", runtime, err)
	}
	return r
}

// dockerRuntimes runs f for docker and for docker-runsc.
func dockerRuntimes(t *testing.T, f func(t *testing.T, r DockerRunner)) {
	for _, rt := range []string{"", "runsc"} {
		t.Run(string(DockerRunner{Runtime: rt}.Backend()), func(t *testing.T) {
			f(t, requireDocker(t, rt))
		})
	}
}

// dockerWorkspace is a fresh canonical workspace, its folder open to the
// guest's user (a bind keeps the owner and mode of the host's folder).
func dockerWorkspace(t *testing.T) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ws, 0o777); err != nil {
		t.Fatal(err)
	}
	return ws
}

// runGuest runs the image's payload with args on ws, and checks that the
// Result names r's backend.
func runGuest(t *testing.T, r DockerRunner, ws string, g Guest, args ...string) Result {
	t.Helper()
	g.Argv = append([]string{DockerGuestProgram}, args...)
	g.Workspace = ws
	res, err := r.Run(context.Background(), g)
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	if res.Backend != r.Backend() {
		t.Errorf("%s: the result names %q, want %q", args, res.Backend, r.Backend())
	}
	return res
}

// TestDockerNetwork: a guest has a loopback only, and cannot reach a
// loopback TCP server the test started.
func TestDockerNetwork(t *testing.T) {
	dockerRuntimes(t, func(t *testing.T, r DockerRunner) {
		addr, accepted := countingServer(t)
		ws := dockerWorkspace(t)
		if res := runGuest(t, r, ws, Guest{}, "ifaces"); res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "lo" {
			t.Errorf("the guest's interfaces: exit %d, %q %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		res := runGuest(t, r, ws, Guest{}, "dial", addr)
		if res.ExitCode == 0 || accepted.Load() != 0 || !strings.Contains(string(res.Stderr), "dial") {
			t.Errorf("the guest reached %s: exit %d, %s%s", addr, res.ExitCode, res.Stdout, res.Stderr)
		}
	})
}

// TestDockerFiles: a guest reads its workspace but not a canary outside it,
// nor the host's /etc.
func TestDockerFiles(t *testing.T) {
	dockerRuntimes(t, func(t *testing.T, r DockerRunner) {
		checkFiles(t, dockerRun(r), dockerWorkspace(t), "/etc/passwd", "/usr/bin/true")
	})
}

// dockerRun runs the image's payload under r.
func dockerRun(r DockerRunner) runFunc {
	return func(t *testing.T, ws string, g Guest, args ...string) Result { return runGuest(t, r, ws, g, args...) }
}

// TestDockerEnvironment: a guest sees none of the test process's
// environment: PATH, HOME and Docker's HOSTNAME only.
func TestDockerEnvironment(t *testing.T) {
	t.Setenv("ZERO_TEST_SECRET", "canary-env-5d2e")
	dockerRuntimes(t, func(t *testing.T, r DockerRunner) {
		res := runGuest(t, r, dockerWorkspace(t), Guest{}, "env")
		env := strings.Fields(string(res.Stdout))
		var names []string
		for _, kv := range env {
			name, _, _ := strings.Cut(kv, "=")
			if name != "PATH" && name != "HOME" && name != "HOSTNAME" {
				names = append(names, kv)
			}
		}
		if res.ExitCode != 0 || len(env) == 0 || len(names) > 0 || strings.Contains(string(res.Stdout), "canary-env") {
			t.Errorf("the guest's environment: exit %d, %q %s", res.ExitCode, env, res.Stderr)
		}
	})
}

// TestDockerUser: a guest runs as 65534:65534, with no capability, not
// even in its bounding set, no new privileges (runc; gVisor's
// /proc/self/status does not say), and with what it reads on stdin.
func TestDockerUser(t *testing.T) {
	dockerRuntimes(t, func(t *testing.T, r DockerRunner) {
		ws := dockerWorkspace(t)
		checkUser(t, dockerRun(r), ws)
		res := runGuest(t, r, ws, Guest{}, "read", "/proc/self/status")
		for _, line := range strings.Split(string(res.Stdout), "\n") {
			name, value, _ := strings.Cut(line, ":")
			if strings.HasPrefix(name, "Cap") && strings.Trim(strings.TrimSpace(value), "0") != "" {
				t.Errorf("the guest has capabilities: %s", line)
			}
		}
		nnp := strings.Contains(string(res.Stdout), "NoNewPrivs:\t1\n")
		if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "CapBnd:") || (r.Runtime == "" && !nnp) {
			t.Errorf("the guest's /proc/self/status: exit %d, %q %s", res.ExitCode, res.Stdout, res.Stderr)
		}
	})
}

// TestDockerWrites: a guest writes in /work and its /tmp only; a scratch
// copy is thrown away with the guest, a bind keeps what it wrote.
func TestDockerWrites(t *testing.T) {
	dockerRuntimes(t, func(t *testing.T, r DockerRunner) {
		// The copy of a workspace only its owner may write is the guest's.
		private, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		checkWrites(t, dockerRun(r), dockerWorkspace(t), private, "/x", "/guest", "/proc/zero-canary", "/etc/zero-canary")
	})
}

// TestDockerMemoryLimit: a guest that allocates past its memory limit is
// killed and the Result says so; one under it runs.
func TestDockerMemoryLimit(t *testing.T) {
	dockerRuntimes(t, func(t *testing.T, r DockerRunner) {
		checkMemoryLimit(t, dockerRun(r), dockerWorkspace(t))
	})
}

// TestDockerPidsLimit: a guest that starts processes in a loop is stopped
// short of its goal, and ends.
func TestDockerPidsLimit(t *testing.T) {
	dockerRuntimes(t, func(t *testing.T, r DockerRunner) {
		checkPidsLimit(t, dockerRun(r), dockerWorkspace(t))
	})
}

// TestDockerCleanup: a guest killed at its wall-time limit, like one that
// ended, leaves no container behind.
func TestDockerCleanup(t *testing.T) {
	dockerRuntimes(t, func(t *testing.T, r DockerRunner) {
		ws := dockerWorkspace(t)
		res := runGuest(t, r, ws, Guest{Limits: Limits{Wall: 3 * time.Second}}, "sleep")
		if !res.TimedOut || res.ExitCode != -1 {
			t.Errorf("a guest that never ends: timed out %v, exit %d, %s", res.TimedOut, res.ExitCode, res.Stderr)
		}
		runGuest(t, r, ws, Guest{Copy: true}, "true")
		left, err := r.call(context.Background(), 10*time.Second, "ps", "-a", "-q")
		if err != nil || strings.TrimSpace(left) != "" {
			t.Errorf("containers left: %q %v", left, err)
		}
	})
}

// TestDockerProbe: the probe refuses a daemon that does not answer, and
// one without the runtime asked for.
func TestDockerProbe(t *testing.T) {
	r := requireDocker(t, "")
	bad := r
	bad.Host = "unix:///nonexistent/docker.sock"
	if err := bad.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "daemon") {
		t.Errorf("a daemon that is not there: %v", err)
	}
	bad = r
	bad.Runtime = "zero-no-such-runtime"
	if err := bad.Probe(context.Background()); err == nil {
		t.Error("a runtime the daemon lacks passed the probe")
	}
}

// TestDockerColon: a workspace whose path holds a colon, which docker run
// -v would split into another field (such as a mount's options), is
// refused and nothing runs.
func TestDockerColon(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "a:ro")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	r := DockerRunner{Host: "unix:///nonexistent/docker.sock", Image: testImage}
	_, err = r.Run(context.Background(), Guest{Argv: []string{DockerGuestProgram, "true"}, Workspace: ws})
	if err == nil || !strings.Contains(err.Error(), "colon") {
		t.Errorf("a workspace with a colon: %v", err)
	}
}

// BenchmarkDockerGuest: the start-up of one guest running a no-op static
// program, from Run to its return, with runc and with runsc.
func BenchmarkDockerGuest(b *testing.B) {
	for _, rt := range []string{"", "runsc"} {
		b.Run(string(DockerRunner{Runtime: rt}.Backend()), func(b *testing.B) {
			r := requireDocker(b, rt)
			ws, err := filepath.EvalSymlinks(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				res, err := r.Run(context.Background(), Guest{Argv: []string{DockerGuestProgram, "true"}, Workspace: ws})
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("%v %d %s", err, res.ExitCode, res.Stderr)
				}
				took = append(took, time.Since(start))
			}
			benchstat.Report(b, took)
		})
	}
}

// TestDockerReadOnly: host paths given as ReadOnly are seen, read-only.
func TestDockerReadOnly(t *testing.T) {
	dockerRuntimes(t, func(t *testing.T, r DockerRunner) {
		checkReadOnlyPaths(t, dockerRun(r), dockerWorkspace(t))
	})
}
