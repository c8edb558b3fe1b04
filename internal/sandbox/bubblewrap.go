package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/spawn"
)

// BubblewrapRunner makes guests with bubblewrap, through spawn: Linux
// namespaces on the host's own kernel. A guest sees /usr and /etc
// read-only (what of /etc not every user may read hidden), its workspace
// (or a scratch copy of it) read-write at /work, its own /proc, /dev and
// /tmp, and nothing else of the host's files; a read-only root; no network
// but an empty loopback of its own; its own PID namespace; user and group
// 65534 in a user namespace of its own, with no capabilities; the
// environment guestEnv; memory, process and CPU limits under cgroups; and
// the wall-time limit. Any program under /usr (a shell, coreutils) or in
// the workspace can run. A program killed by a signal inside the guest
// ends with 128+N, as bubblewrap reports it; a guest killed at its wall
// time ends with -1.
type BubblewrapRunner struct{}

// Backend is Bubblewrap.
func (BubblewrapRunner) Backend() Backend { return Bubblewrap }

// bubblewrapProbeWall bounds the probe's guest.
const bubblewrapProbeWall = 5 * time.Second

// Probe runs /bin/true in a guest with an empty workspace, with limits.
func (r BubblewrapRunner) Probe(ctx context.Context) error {
	tmp, err := os.MkdirTemp("", "zero-sandbox-probe-")
	if err != nil {
		return fmt.Errorf("probe workspace: %w", err)
	}
	defer os.RemoveAll(tmp)
	ws, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		return fmt.Errorf("probe workspace: %w", err)
	}
	res, err := r.run(ctx, Guest{Argv: []string{"/bin/true"}, Workspace: ws, Limits: Limits{Wall: bubblewrapProbeWall}})
	switch {
	case err != nil:
		return err
	case res.ExitCode != 0:
		return fmt.Errorf("the probe guest exited with %d: %q", res.ExitCode, res.Stderr)
	}
	return nil
}

// Run runs g in a fresh bubblewrap guest. Where bubblewrap or cgroups do
// not work here, the error wraps ErrUnavailable and nothing runs.
func (r BubblewrapRunner) Run(ctx context.Context, g Guest) (Result, error) {
	res, err := r.run(ctx, g)
	if errors.Is(err, spawn.ErrIsolationUnavailable) || errors.Is(err, spawn.ErrNoCgroups) {
		err = fmt.Errorf("%w: %s: %w", ErrUnavailable, Bubblewrap, err)
	}
	return res, err
}

func (BubblewrapRunner) run(ctx context.Context, g Guest) (Result, error) {
	res := Result{Backend: Bubblewrap, ExitCode: -1}
	if err := g.check(); err != nil {
		return res, err
	}
	lim := g.Limits.WithDefaults()
	ws := g.Workspace
	if g.Copy {
		dir, remove, err := scratchCopy(ws, defaultCopyBounds)
		if err != nil {
			return res, err
		}
		defer remove()
		ws = dir
	}
	roots, err := fsroot.Open([]string{ws})
	if err != nil {
		return res, fmt.Errorf("guest workspace: %w", err)
	}
	defer roots.Close()
	// A program under /work is given to spawn at its host path; spawn runs
	// it from /work.
	program := g.Argv[0]
	if rel, err := filepath.Rel(WorkDir, program); err == nil && fsroot.Within(WorkDir, program) {
		program = filepath.Join(ws, rel)
	}
	var dirs, files []string
	for _, p := range g.ReadOnly {
		if inHostUsr(p) {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			dirs = append(dirs, p)
		} else {
			files = append(files, p)
		}
	}
	out, err := spawn.Run(ctx, spawn.Cmd{
		Program:       program,
		ReadOnly:      dirs,
		ReadOnlyFiles: files,
		Args:          g.Argv[1:],
		Dir:           ws,
		Roots:         roots,
		Env:           envscrub.Spec{Set: guestEnv()},
		Stdin:         g.Stdin,
		Timeout:       lim.Wall,
		OutputLimit:   MaxOutput,
		Isolation:     spawn.Bubblewrap,
		WorkAt:        WorkDir,
		Nobody:        true,
		Limits:        &spawn.Limits{MemoryBytes: lim.MemoryBytes, CPUPercent: lim.CPUPercent, Pids: lim.Pids},
	})
	if err != nil {
		return res, err
	}
	res.ExitCode = out.ExitCode
	res.Stdout, res.Stderr = out.Stdout, out.Stderr
	res.OutputCut = out.StdoutTruncated || out.StderrTruncated
	res.TimedOut = out.TimedOut
	res.MemoryKilled = out.MemoryKilled
	res.Duration = out.Duration
	return res, nil
}

// guestValues are the values of a guest's environment.
var guestValues = map[string]string{
	"PATH":    "/usr/bin:/bin",
	"HOME":    WorkDir,
	"USER":    "nobody",
	"LOGNAME": "nobody",
	"LANG":    "C.UTF-8",
	"TMPDIR":  "/tmp",
}

// guestEnv is a guest's whole environment: guestValues, and every other
// variable envscrub would copy from Zero's own environment set empty, so
// that nothing of it reaches the guest.
func guestEnv() map[string]string {
	env := map[string]string{}
	for _, name := range envscrub.Defaults {
		env[name] = guestValues[name]
	}
	for name, v := range guestValues {
		env[name] = v
	}
	return env
}
