package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/spawn"
)

// RunscProgram is where Debian installs gVisor's runsc.
const RunscProgram = "/usr/bin/runsc"

// A RunscRunner runs each guest under gVisor's runsc alone (no daemon),
// from a fresh OCI bundle that it writes itself, on the ptrace platform:
// gVisor's user-space kernel (the Sentry) answers the guest's system calls,
// so the guest never calls the host's kernel directly.
//
// The guest's root is an empty, read-only directory holding only the mount
// points and the links of a merged /usr (bin, lib, lib64, sbin), with:
// the host's /usr read-only; /proc; a tmpfs at /dev and one at /tmp; and
// the workspace (or its scratch copy) read-write at /work. Nothing else of
// the host's is visible: no /etc, no /home. The guest runs as 65534:65534
// in /work with no new privileges, an environment of PATH and HOME only,
// its own PID, IPC, UTS and mount namespaces, and a network namespace with
// only a loopback (--network=none). Its one capability, inside gVisor's
// kernel, is CAP_DAC_OVERRIDE: this runsc cannot map user IDs (its gofer
// fails to start in a user namespace here), so without it the guest could
// not write a workspace owned by the host's user. The capability reaches
// only what the guest's mounts show, and a read-only mount stays read-only.
//
// runsc and everything it starts (its gofer, the Sentry and the ptrace
// stubs that run the guest's code) run in a cgroup made by spawn with the
// guest's memory, CPU and process limits plus runsc's own needs
// (runscMemory, runscPids): the host's kernel enforces them on the whole
// sandbox, not per guest process. The wall-time limit kills the lot; the
// container is then deleted and its state and bundle removed.
//
// Programs: a static program in the workspace runs; Go programs built with
// CGO_ENABLED=0 work well. A program of the host's /usr may not: this
// version of runsc (Debian's 0.0~20221219) breaks Debian 12's ls and stat.
type RunscRunner struct {
	// Program is the runsc binary; "" means RunscProgram.
	Program string
}

// runscMemory and runscPids are what runsc itself needs, on top of the
// guest's limits: memory of runsc, the Sentry and the gofer (about 60 MiB
// of RSS for a no-op guest) and their host threads (about 35 measured,
// doubled for a loaded machine). Each guest task takes host threads too (a
// tracing Sentry thread and a stub thread, and more under load: 2 a task
// let a loaded machine's Sentry die first), so the host's pids limit is
// 4 a task: the guest's own limit is RLIMIT_NPROC, in gVisor's kernel; the
// host's is the backstop.
const (
	runscMemory = 64 << 20
	runscPids   = 128
)

// Backend is Runsc.
func (r RunscRunner) Backend() Backend { return Runsc }

func (r RunscRunner) program() string {
	if r.Program != "" {
		return r.Program
	}
	return RunscProgram
}

// RunscProbeProgram is what the probe runs: a program every Debian host has,
// which this runsc runs (unlike ls and stat).
const RunscProbeProgram = "/usr/bin/true"

// Probe runs RunscProbeProgram in a guest with an empty workspace, and
// says why runsc is unusable when that guest does not start and exit 0
// within 10 s.
func (r RunscRunner) Probe(ctx context.Context) error {
	if _, err := os.Stat(r.program()); err != nil {
		return fmt.Errorf("runsc: %w", err)
	}
	ws, err := os.MkdirTemp("", "zero-runsc-probe-")
	if err != nil {
		return fmt.Errorf("runsc probe: %w", err)
	}
	defer os.RemoveAll(ws)
	ws, err = filepath.EvalSymlinks(ws)
	if err != nil {
		return fmt.Errorf("runsc probe: %w", err)
	}
	res, err := r.Run(ctx, Guest{Argv: []string{RunscProbeProgram}, Workspace: ws, Limits: Limits{Wall: 10 * time.Second}})
	switch {
	case err != nil:
		return err
	case res.TimedOut:
		return errors.New("runsc probe: the guest did not end within 10 s")
	case res.ExitCode != 0:
		return fmt.Errorf("runsc probe: the guest exited %d: %s", res.ExitCode, firstLine(res.Stderr))
	}
	return nil
}

// firstLine is the first line of b, at most 200 bytes: enough to say why.
func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// Run runs g in a fresh gVisor sandbox and removes it, with its state and
// bundle, before it returns.
func (r RunscRunner) Run(ctx context.Context, g Guest) (Result, error) {
	res := Result{Backend: Runsc}
	if err := g.check(); err != nil {
		return res, err
	}
	limits := g.Limits.WithDefaults()
	dir, err := os.MkdirTemp("", "zero-runsc-")
	if err != nil {
		return res, fmt.Errorf("runsc bundle: %w", err)
	}
	defer os.RemoveAll(dir)
	dir, err = filepath.EvalSymlinks(dir)
	if err != nil {
		return res, fmt.Errorf("runsc bundle: %w", err)
	}
	work, done, err := g.workFolder()
	if err != nil {
		return res, err
	}
	defer done()
	bundle, state := filepath.Join(dir, "bundle"), filepath.Join(dir, "state")
	if err := writeBundle(bundle, runscSpec(g, work, limits)); err != nil {
		return res, fmt.Errorf("runsc bundle: %w", err)
	}
	if err := os.Mkdir(state, 0o700); err != nil {
		return res, fmt.Errorf("runsc state: %w", err)
	}
	roots, err := fsroot.Open([]string{dir})
	if err != nil {
		return res, fmt.Errorf("runsc bundle: %w", err)
	}
	defer roots.Close()
	id := "zero-" + randomID()
	cmd := func(timeout time.Duration, args ...string) spawn.Cmd {
		return spawn.Cmd{
			Program: r.program(),
			Args:    append([]string{"--root=" + state, "--network=none", "--platform=ptrace"}, args...),
			Dir:     dir,
			Roots:   roots,
			Timeout: timeout,
		}
	}
	run := cmd(limits.Wall, "run", "--bundle", bundle, id)
	run.Stdin = g.Stdin
	run.OutputLimit = MaxOutput
	run.Limits = &spawn.Limits{
		MemoryBytes: limits.MemoryBytes + runscMemory,
		CPUPercent:  limits.CPUPercent,
		Pids:        4*limits.Pids + runscPids,
	}
	out, err := spawn.Run(ctx, run)
	// A run that ended on its own has removed its container; one that was
	// killed, or failed (runsc's own errors exit 128), may have left it,
	// which delete -force removes, with what it names. (Its processes are
	// already gone: spawn killed what was left in the cgroup.)
	if err != nil || out.TimedOut || out.MemoryKilled || out.Signal != "" || out.ExitCode >= 128 {
		spawn.Run(context.WithoutCancel(ctx), cmd(10*time.Second, "delete", "-force", id))
	}
	if err != nil {
		return res, fmt.Errorf("runsc: %w", err)
	}
	res.ExitCode = out.ExitCode
	res.Stdout, res.Stderr = out.Stdout, out.Stderr
	res.OutputCut = out.StdoutTruncated || out.StderrTruncated
	res.TimedOut = out.TimedOut
	res.MemoryKilled = out.MemoryKilled
	res.Duration = out.Duration
	if res.TimedOut || res.MemoryKilled {
		res.ExitCode = -1
	}
	return res, nil
}

func randomID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// ociSpec is the part of an OCI runtime configuration Zero writes.
type ociSpec struct {
	Version string     `json:"ociVersion"`
	Process ociProcess `json:"process"`
	Root    ociRoot    `json:"root"`
	Mounts  []ociMount `json:"mounts"`
	Linux   ociLinux   `json:"linux"`
}

type ociProcess struct {
	User            ociUser         `json:"user"`
	Args            []string        `json:"args"`
	Env             []string        `json:"env"`
	Cwd             string          `json:"cwd"`
	NoNewPrivileges bool            `json:"noNewPrivileges"`
	Capabilities    ociCapabilities `json:"capabilities"`
	Rlimits         []ociRlimit     `json:"rlimits"`
}

type ociUser struct {
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
}

type ociCapabilities struct {
	Bounding  []string `json:"bounding"`
	Effective []string `json:"effective"`
	Permitted []string `json:"permitted"`
}

type ociRlimit struct {
	Type string `json:"type"`
	Hard uint64 `json:"hard"`
	Soft uint64 `json:"soft"`
}

type ociRoot struct {
	Path     string `json:"path"`
	Readonly bool   `json:"readonly"`
}

type ociMount struct {
	Destination string   `json:"destination"`
	Type        string   `json:"type"`
	Source      string   `json:"source"`
	Options     []string `json:"options,omitempty"`
}

type ociLinux struct {
	Namespaces  []ociNamespace `json:"namespaces"`
	CgroupsPath string         `json:"cgroupsPath"`
}

type ociNamespace struct {
	Type string `json:"type"`
}

// guestUID is the guest's user and group: nobody.
const guestUID = 65534

// runscSpec is the configuration of g's guest, with work (the workspace or
// its copy) at /work.
func runscSpec(g Guest, work string, l Limits) ociSpec {
	caps := []string{"CAP_DAC_OVERRIDE"}
	mounts := []ociMount{
		{"/proc", "proc", "proc", nil},
		{"/dev", "tmpfs", "tmpfs", []string{"nosuid", "noexec", "mode=755"}},
		{"/tmp", "tmpfs", "tmpfs", []string{"nosuid", "nodev", "mode=1777"}},
		{"/usr", "bind", "/usr", []string{"rbind", "ro", "nosuid", "nodev"}},
		{WorkDir, "bind", work, []string{"rbind", "rw", "nosuid", "nodev"}},
	}
	for _, p := range g.ReadOnly {
		if !inHostUsr(p) {
			mounts = append(mounts, ociMount{p, "bind", p, []string{"rbind", "ro", "nosuid", "nodev"}})
		}
	}
	return ociSpec{
		Version: "1.0.2",
		Process: ociProcess{
			User:            ociUser{guestUID, guestUID},
			Args:            g.Argv,
			Env:             []string{"PATH=/usr/bin:/bin", "HOME=" + WorkDir},
			Cwd:             WorkDir,
			NoNewPrivileges: true,
			Capabilities:    ociCapabilities{caps, caps, caps},
			Rlimits: []ociRlimit{
				{"RLIMIT_NOFILE", 1024, 1024},
				{"RLIMIT_CORE", 0, 0},
				{"RLIMIT_NPROC", uint64(l.Pids), uint64(l.Pids)},
			},
		},
		Root:   ociRoot{Path: "rootfs", Readonly: true},
		Mounts: mounts,
		Linux:  ociLinux{Namespaces: []ociNamespace{{"pid"}, {"ipc"}, {"uts"}, {"mount"}, {"network"}}, CgroupsPath: "."},
	}
}

// writeBundle makes an OCI bundle at dir: config.json and the guest's
// root, an empty directory with the mount points and the links of a merged
// /usr.
func writeBundle(dir string, spec ociSpec) error {
	root := filepath.Join(dir, "rootfs")
	for _, m := range spec.Mounts {
		point := filepath.Join(root, m.Destination)
		if fi, err := os.Stat(m.Source); m.Type == "bind" && err == nil && !fi.IsDir() {
			// A file's mount point is an empty file.
			if err := os.MkdirAll(filepath.Dir(point), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(point, nil, 0o644); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(point, 0o755); err != nil {
			return err
		}
	}
	for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
		if err := os.Symlink("usr/"+l, filepath.Join(root, l)); err != nil {
			return err
		}
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), data, 0o600)
}
