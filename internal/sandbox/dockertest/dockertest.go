// Package dockertest starts, for a test binary, a Docker daemon of its own:
// under a short /tmp folder, with no bridge and no iptables, overlay2 (vfs
// where overlay2 fails), and gVisor's runsc registered as the runtime
// "runsc" on the ptrace platform. Nothing is pulled: tests build their
// images locally.
package dockertest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Runsc is where the runsc runtime is registered from.
const Runsc = "/usr/bin/runsc"

// A Daemon is a running dockerd.
type Daemon struct {
	Host string // its address, unix://...
	dir  string
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

var shared struct {
	once sync.Once
	d    *Daemon
	err  error
}

// Require returns the test binary's daemon, started at the first call; it
// skips where dockerd is missing or does not start, unless
// ZERO_REQUIRE_DOCKER is set: then it fails. TestMain calls Stop.
func Require(t testing.TB) *Daemon {
	t.Helper()
	shared.once.Do(func() { shared.d, shared.err = start() })
	if shared.err != nil {
		if os.Getenv("ZERO_REQUIRE_DOCKER") != "" {
			t.Fatalf("docker is required (ZERO_REQUIRE_DOCKER) but unusable: %v", shared.err)
		}
		t.Skipf("docker unusable here: %v", shared.err)
	}
	return shared.d
}

// Stop stops the daemon Require started, if any.
func Stop() {
	if shared.d != nil {
		shared.d.stop()
	}
}

func start() (*Daemon, error) {
	dockerd, err := exec.LookPath("dockerd")
	if err != nil {
		return nil, fmt.Errorf("no dockerd: %w", err)
	}
	dir, err := os.MkdirTemp("/tmp", "zd")
	if err != nil {
		return nil, err
	}
	conf, _ := json.Marshal(map[string]any{"runtimes": map[string]any{
		"runsc": map[string]any{"path": Runsc, "runtimeArgs": []string{"--platform=ptrace", "--network=none"}},
	}})
	if err := os.WriteFile(filepath.Join(dir, "daemon.json"), conf, 0o644); err != nil {
		return nil, err
	}
	d := &Daemon{Host: "unix://" + filepath.Join(dir, "docker.sock"), dir: dir}
	var why []string
	for _, driver := range []string{"overlay2", "vfs"} {
		log, err := os.Create(filepath.Join(dir, "dockerd-"+driver+".log"))
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(dockerd, "--config-file="+filepath.Join(dir, "daemon.json"),
			"--data-root="+filepath.Join(dir, "data"), "--exec-root="+filepath.Join(dir, "exec"),
			"--pidfile="+filepath.Join(dir, "dockerd.pid"), "-H", d.Host,
			"--bridge=none", "--iptables=false", "--ip6tables=false", "--storage-driver="+driver)
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); log.Close(); close(exited) }()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
			select {
			case <-exited:
				deadline = time.Time{}
				continue
			default:
			}
			if _, err := d.Docker("version"); err == nil {
				d.cmd, d.done = cmd, exited
				return d, nil
			}
			select {
			case <-exited:
			case <-time.After(100 * time.Millisecond):
			}
		}
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		b, _ := os.ReadFile(log.Name())
		why = append(why, driver+": "+lastLines(string(b)))
	}
	d.stop()
	return nil, fmt.Errorf("dockerd did not start: %s", strings.Join(why, "; "))
}

// Docker runs the docker client on d, and returns its standard output.
func (d *Daemon) Docker(args ...string) (string, error) {
	cmd := exec.Command("/usr/bin/docker", args...)
	cmd.Env = []string{"DOCKER_HOST=" + d.Host, "PATH=/usr/bin:/bin"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("docker %s: %v: %s", args[0], err, lastLines(stderr.String()))
	}
	return string(out), nil
}

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-3):], " | ")
}

// stop stops the daemon with any container left, then kills what the
// daemon started that outlived it (containerd's shims do, and a runsc
// sandbox whose start failed), and removes its folder.
func (d *Daemon) stop() {
	if d.cmd != nil {
		if ids, err := d.Docker("ps", "-aq"); err == nil && strings.TrimSpace(ids) != "" {
			d.Docker(append([]string{"rm", "-f"}, strings.Fields(ids)...)...)
		}
		d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(20 * time.Second):
			syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
			<-d.done
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, _ := os.ReadFile(p); strings.Contains(string(b), d.dir) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	syscall.Unmount(filepath.Join(d.dir, "data"), syscall.MNT_DETACH)
	os.RemoveAll(d.dir)
}
