package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/spawn"
)

// DockerProgram is where Debian installs Docker's client.
const DockerProgram = "/usr/bin/docker"

// DockerGuestProgram is where EnsureImage puts the image's one program.
const DockerGuestProgram = "/guest"

// A DockerRunner runs each guest in a fresh Docker container, through the
// docker client and a daemon at Host: with runc (Runtime "", the Docker
// backend: namespaces and cgroups on the host's kernel) or with gVisor
// (Runtime "runsc", DockerRunsc: the daemon must have the runtime
// registered, on the ptrace platform).
//
// The image is local and never pulled: Image, made by EnsureImage from a
// static program, FROM scratch, so the guest's root holds that program
// and nothing else of the host's. The container has no network (--network
// none: a loopback only), a read-only root, a tmpfs at /tmp, the workspace
// (or its scratch copy) read-write at /work, user 65534:65534, no
// capabilities, no new privileges, an environment of PATH and HOME (and
// HOSTNAME, which Docker sets), no log kept by the daemon, and memory (no
// swap), process and CPU limits; the wall-time limit counts Docker's own
// start-up. The container is removed before Run returns, killed first
// when it outlived its limit.
//
// The guest runs as 65534 of the host: in a bind, it writes only where the
// workspace lets user 65534 write (Zero changes no owner there); a scratch
// copy is given to 65534 when Zero runs as root.
type DockerRunner struct {
	// Host is the daemon's address, such as unix:///run/docker.sock;
	// "" means the client's default.
	Host string
	// Runtime is "" for runc or "runsc" for gVisor.
	Runtime string
	// Image is a local image; see EnsureImage. When it is empty, the image
	// is made of Programs, host programs, at the first use: see
	// EnsureHostImage.
	Image    string
	Programs []string
	// ProbeArgv is what the probe runs in Image; nil means
	// {DockerGuestProgram}. It must exit 0.
	ProbeArgv []string
	// Program is the docker client; "" means DockerProgram.
	Program string
}

// Backend is DockerRunsc with the runsc runtime, else Docker.
func (r DockerRunner) Backend() Backend {
	if r.Runtime == "runsc" {
		return DockerRunsc
	}
	return Docker
}

func (r DockerRunner) program() string {
	if r.Program != "" {
		return r.Program
	}
	return DockerProgram
}

// docker is one call of the docker client in dir, whose environment holds
// DOCKER_HOST and the defaults only.
func (r DockerRunner) docker(dir string, roots *fsroot.Set, timeout time.Duration, args ...string) spawn.Cmd {
	env := envscrub.Spec{Set: map[string]string{}}
	if r.Host != "" {
		env.Set["DOCKER_HOST"] = r.Host
	}
	return spawn.Cmd{Program: r.program(), Args: args, Dir: dir, Roots: roots, Env: env, Timeout: timeout}
}

// call runs the docker client with args in a throwaway folder and returns
// its standard output, or an error with what it said.
func (r DockerRunner) call(ctx context.Context, timeout time.Duration, args ...string) (string, error) {
	dir, err := os.MkdirTemp("", "zero-docker-")
	if err != nil {
		return "", fmt.Errorf("docker: %w", err)
	}
	defer os.RemoveAll(dir)
	return r.callIn(ctx, dir, timeout, args...)
}

func (r DockerRunner) callIn(ctx context.Context, dir string, timeout time.Duration, args ...string) (string, error) {
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("docker: %w", err)
	}
	roots, err := fsroot.Open([]string{dir})
	if err != nil {
		return "", fmt.Errorf("docker: %w", err)
	}
	defer roots.Close()
	out, err := spawn.Run(ctx, r.docker(dir, roots, timeout, args...))
	switch {
	case err != nil:
		return "", fmt.Errorf("docker %s: %w", args[0], err)
	case out.TimedOut:
		return "", fmt.Errorf("docker %s: no answer within %s", args[0], timeout)
	case out.ExitCode != 0:
		return "", fmt.Errorf("docker %s: exit %d: %s", args[0], out.ExitCode, firstLine(out.Stderr))
	}
	return string(out.Stdout), nil
}

// EnsureImage builds r.Image, FROM scratch, holding only the static program
// binary at DockerGuestProgram (its entry point). Nothing is pulled.
func (r DockerRunner) EnsureImage(ctx context.Context, binary string) error {
	if r.Image == "" {
		return errors.New("docker image: no name")
	}
	prog, err := os.ReadFile(binary)
	if err != nil {
		return fmt.Errorf("docker image: %w", err)
	}
	dir, err := os.MkdirTemp("", "zero-docker-image-")
	if err != nil {
		return fmt.Errorf("docker image: %w", err)
	}
	defer os.RemoveAll(dir)
	dockerfile := "FROM scratch\nCOPY guest " + DockerGuestProgram + "\nENTRYPOINT [\"" + DockerGuestProgram + "\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		return fmt.Errorf("docker image: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "guest"), prog, 0o755); err != nil {
		return fmt.Errorf("docker image: %w", err)
	}
	if _, err := r.callIn(ctx, dir, 2*time.Minute, "build", "-q", "-t", r.Image, "."); err != nil {
		return fmt.Errorf("docker image %s: %w", r.Image, err)
	}
	return nil
}

// Probe checks that the daemon answers and that a guest of Image really
// runs ProbeArgv and exits 0 within 10 s.
func (r DockerRunner) Probe(ctx context.Context) error {
	name := string(r.Backend())
	if _, err := os.Stat(r.program()); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if _, err := r.call(ctx, 10*time.Second, "version", "--format", "{{.Server.Version}}"); err != nil {
		return fmt.Errorf("%s: the daemon: %w", name, err)
	}
	if r.Image == "" && len(r.Programs) == 0 {
		return fmt.Errorf("%s: no image to run", name)
	}
	ws, err := os.MkdirTemp("", "zero-docker-probe-")
	if err != nil {
		return fmt.Errorf("%s probe: %w", name, err)
	}
	defer os.RemoveAll(ws)
	ws, err = filepath.EvalSymlinks(ws)
	if err == nil {
		// The guest is the host's user 65534: the throwaway workspace is
		// open to it, as a sandboxed thread's is.
		err = os.Chmod(ws, 0o777)
	}
	if err != nil {
		return fmt.Errorf("%s probe: %w", name, err)
	}
	argv := r.ProbeArgv
	if argv == nil {
		argv = []string{DockerGuestProgram}
	}
	res, err := r.Run(ctx, Guest{Argv: argv, Workspace: ws, Limits: Limits{Wall: 10 * time.Second}})
	switch {
	case err != nil:
		return err
	case res.TimedOut:
		return fmt.Errorf("%s probe: the guest did not end within 10 s", name)
	case res.ExitCode != 0:
		return fmt.Errorf("%s probe: the guest exited %d: %s", name, res.ExitCode, firstLine(append(res.Stderr, res.Stdout...)))
	}
	return nil
}

// dockerArgs are the arguments of docker run for g, named name, with work
// at /work.
func (r DockerRunner) dockerArgs(g Guest, name, work, image string, l Limits) []string {
	mem, pids := l.MemoryBytes, l.Pids
	if r.Runtime != "" {
		// gVisor's Sentry and gofer run in the container's cgroup too.
		mem, pids = mem+runscMemory, 4*pids+runscPids
	}
	args := []string{"run", "-i", "--name", name,
		"--network", "none", "--read-only", "--user", "65534:65534",
		"--memory", strconv.FormatInt(mem, 10), "--memory-swap", strconv.FormatInt(mem, 10),
		"--pids-limit", strconv.Itoa(pids), "--cpus", strconv.FormatFloat(float64(l.CPUPercent)/100, 'f', 2, 64),
		"--ulimit", "nofile=1024:1024", "--ulimit", "core=0:0",
		"--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--log-driver", "none", "--tmpfs", "/tmp:rw,nosuid,nodev,size=16m",
		"-v", work + ":" + WorkDir, "-w", WorkDir,
		"--env-file", "/dev/null", "-e", "PATH=/usr/bin:/bin", "-e", "HOME=" + WorkDir,
	}
	for _, p := range g.ReadOnly {
		args = append(args, "-v", p+":"+p+":ro")
	}
	if r.Runtime != "" {
		// In gVisor's kernel, RLIMIT_NPROC is the guest's own process limit.
		p := strconv.Itoa(l.Pids)
		args = append(args, "--runtime", r.Runtime, "--ulimit", "nproc="+p+":"+p)
	}
	args = append(args, "--entrypoint", g.Argv[0], image)
	return append(args, g.Argv[1:]...)
}

// Run runs g in a fresh container of Image and removes the container
// before it returns.
func (r DockerRunner) Run(ctx context.Context, g Guest) (Result, error) {
	res := Result{Backend: r.Backend()}
	if err := g.check(); err != nil {
		return res, err
	}
	image, err := r.image(ctx)
	switch {
	case err != nil:
		return res, fmt.Errorf("%s: %w", res.Backend, err)
	case image == "":
		return res, fmt.Errorf("%s: no image", res.Backend)
	}
	if strings.Contains(g.Workspace, ":") {
		// docker run -v would read what follows as another field.
		return res, fmt.Errorf("%s: a workspace path with a colon: %s", res.Backend, g.Workspace)
	}
	limits := g.Limits.WithDefaults()
	work, done, err := g.workFolder()
	if err != nil {
		return res, err
	}
	defer done()
	if g.Copy {
		if err := giveToGuest(work); err != nil {
			return res, err
		}
	}
	roots, err := fsroot.Open([]string{work})
	if err != nil {
		return res, fmt.Errorf("%s: %w", res.Backend, err)
	}
	defer roots.Close()
	name := "zero-" + randomID()
	run := r.docker(work, roots, limits.Wall, r.dockerArgs(g, name, work, image, limits)...)
	run.Stdin = g.Stdin
	run.OutputLimit = MaxOutput
	started := time.Now()
	out, err := spawn.Run(ctx, run)
	bg := context.WithoutCancel(ctx)
	// The container outlives a client that was killed: remove it, killing
	// what is left.
	r.call(bg, 30*time.Second, "rm", "-f", name)
	if err == nil && !out.TimedOut && out.ExitCode == 137 {
		// 137 is a SIGKILL: the kernel's at the memory limit, or another.
		// The daemon's oom event can come after the container's exit
		// (seen with gVisor's shim), so State.OOMKilled may not be set
		// yet; the event itself is in the daemon's log of events, before
		// the container's removal.
		res.MemoryKilled = r.oomEvent(bg, name, started)
	}
	if err != nil {
		return res, fmt.Errorf("%s: %w", res.Backend, err)
	}
	res.ExitCode = out.ExitCode
	res.Stdout, res.Stderr = out.Stdout, out.Stderr
	res.OutputCut = out.StdoutTruncated || out.StderrTruncated
	res.TimedOut = out.TimedOut
	res.Duration = out.Duration
	if res.TimedOut || res.MemoryKilled {
		res.ExitCode = -1
	}
	return res, nil
}

// oomEvent reports whether the daemon logged an oom event for the
// container name since start.
func (r DockerRunner) oomEvent(ctx context.Context, name string, start time.Time) bool {
	out, err := r.call(ctx, 10*time.Second, "events", "--filter", "container="+name, "--filter", "event=oom",
		"--since", start.Add(-time.Second).Format(time.RFC3339Nano), "--until", time.Now().Format(time.RFC3339Nano),
		"--format", "{{.Status}}")
	return err == nil && strings.Contains(out, "oom")
}

// giveToGuest makes a scratch copy the guest's user's, so that it can
// write there, when Zero runs as root; else the copy stays Zero's user's.
func giveToGuest(dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, guestUID, guestUID)
	})
	if err != nil {
		return fmt.Errorf("scratch copy: %w", err)
	}
	return nil
}
