package spawn

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// run starts the prepared process in its own session and process group and
// waits for it.
//
// The order of the end matters. Run waits for the child to exit without
// reaping it (waitid with WNOWAIT), kills its process group, then reaps it.
// While the child is unreaped its PID cannot be reused, so the group kill can
// only reach the child's own group, never an unrelated process that got the
// same number.
func (p *prepared) run(ctx context.Context) (Result, error) {
	runCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()

	// p.path is absolute, so CommandContext does no PATH lookup of its own.
	cmd := exec.CommandContext(runCtx, p.path)
	cmd.Args = p.argv
	cmd.Dir = p.dir
	cmd.Env = p.env
	if cmd.Env == nil {
		cmd.Env = []string{} // nil would mean the parent's environment
	}
	// Setsid, not just Setpgid: the child leads a new session, so it also
	// leads a new process group (its PID) for the group kill, and it has no
	// controlling terminal, so it cannot read from or inject into Zero's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if p.stdin != nil {
		cmd.Stdin = bytes.NewReader(p.stdin)
	}
	stdout, stderr := &capped{limit: p.limit}, &capped{limit: p.limit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	g := &group{}
	// Cancel runs when runCtx is done (timeout or cancellation); cmd.Process
	// is set before os/exec starts watching the context.
	cmd.Cancel = func() error { return g.cancel(cmd.Process.Pid) }
	// WaitDelay bounds the wait for the output pipes once the process is
	// gone: after it, os/exec closes them, so a process that escaped the
	// group and holds them open cannot hang Run.
	cmd.WaitDelay = waitDelay

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, err
	}
	pid := cmd.Process.Pid
	exited := waitExited(pid) == nil
	g.end(pid, exited)
	waitErr := cmd.Wait()
	res := Result{Duration: time.Since(start)}
	p.finish(&res, stdout, stderr)

	state := cmd.ProcessState
	if state == nil {
		res.ExitCode = -1
		return res, waitErr
	}
	res.ExitCode = state.ExitCode()
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal().String()
		res.TimedOut = g.wasCancelled() && errors.Is(runCtx.Err(), context.DeadlineExceeded)
	}
	return res, nil
}

// waitExited blocks until the process pid has exited, leaving it unreaped.
func waitExited(pid int) error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err
		}
	}
}

// A group tracks the child's process group: whether it was killed on
// cancellation, and whether it is finished, after which no signal may be
// sent to its number.
type group struct {
	mu        sync.Mutex
	ended     bool
	cancelled bool
}

// cancel kills the group for a timeout or a cancelled context.
func (g *group) cancel(pid int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		return os.ErrProcessDone
	}
	g.cancelled = true
	return killGroup(pid)
}

// end kills what is left of the group once the child has exited (when
// exited says the child is known to be exited and unreaped), and marks the
// group ended: the child is about to be reaped.
func (g *group) end(pid int, exited bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if exited && !g.ended {
		killGroup(pid) // the group may be empty already: ESRCH is fine
	}
	g.ended = true
}

func (g *group) wasCancelled() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cancelled
}

func killGroup(pgid int) error {
	err := unix.Kill(-pgid, unix.SIGKILL)
	if err == unix.ESRCH {
		return os.ErrProcessDone
	}
	return err
}
