package spawn

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// run starts the prepared process in its own session and process group and
// waits for it.
func (p *prepared) run(ctx context.Context) (Result, error) {
	runCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()

	var stdin io.Reader
	if p.stdin != nil {
		stdin = bytes.NewReader(p.stdin)
	}
	stdout, stderr := &capped{limit: p.limit}, &capped{limit: p.limit}
	c, err := p.launch(runCtx, stdin, stdout, stderr)
	if err != nil {
		return Result{}, err
	}
	res, err := c.wait()
	p.finish(&res, stdout, stderr)
	return res, err
}

// start starts the prepared process as run does, with pipes to its stdin and
// stdout, and returns without waiting for it. A goroutine waits for it; it
// ends when the child is reaped, which the lifetime (p.timeout and ctx)
// bounds.
func (p *prepared) start(ctx context.Context) (*Process, error) {
	life, cancel := context.WithTimeout(ctx, p.timeout)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		cancel()
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		cancel()
		stdinR.Close()
		stdinW.Close()
		return nil, err
	}
	stderr := &capped{limit: p.limit}
	c, err := p.launch(life, stdinR, stdoutW, stderr)
	// The child holds its own copies of its ends of the pipes. The parent's
	// go at once, so that once the child and its group are gone, Stdout
	// reads end of file and a write to Stdin fails.
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		cancel()
		stdinW.Close()
		stdoutR.Close()
		return nil, err
	}
	proc := &Process{
		Stdin:     stdinW,
		Stdout:    stdoutR,
		Isolation: p.isolation,
		stderr:    stderr,
		stop:      cancel,
		done:      make(chan struct{}),
	}
	go func() {
		res, err := c.wait()
		p.finish(&res, nil, stderr)
		cancel()
		// A process that left the group may still hold the child's stdin:
		// closing the parent's end makes every later write fail, and wakes
		// one blocked on a full pipe.
		stdinW.Close()
		proc.res, proc.err = res, err
		close(proc.done)
	}()
	return proc, nil
}

// markInheritedCloseOnExec sets close-on-exec on every open descriptor above
// 2, so a child gets only its stdin, stdout and stderr. Go opens its own
// files close-on-exec, but a descriptor Zero inherited from its parent, or
// one made by dup or cgo, is not, and would otherwise pass into every child
// (into the sandbox too). It runs before each launch, because such a
// descriptor can appear at any time; the flag is what Go sets anyway, so a
// descriptor closed and reused meanwhile is unharmed.
func markInheritedCloseOnExec() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err == nil && flags&unix.FD_CLOEXEC == 0 {
			unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC)
		}
	}
}

// A child is a started process: what its end needs.
type child struct {
	cmd    *exec.Cmd
	ctx    context.Context // its lifetime; done on timeout or cancellation
	group  *group
	start  time.Time
	cgroup *cgroup // with Cmd.Limits: the group it and its children run in
}

// launch starts the prepared process in its own session and process group.
// When ctx is done (timeout, cancellation, Stop) the whole group is killed.
// stdin may be nil (end of file at once); stdout and stderr are written by
// os/exec (an *os.File goes to the child as it is).
func (p *prepared) launch(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (*child, error) {
	// p.path is absolute, so CommandContext does no PATH lookup of its own.
	cmd := exec.CommandContext(ctx, p.path)
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
	cmd.Stdin = stdin
	cmd.Stdout, cmd.Stderr = stdout, stderr
	g := &group{}
	// Cancel runs when ctx is done; cmd.Process is set before os/exec starts
	// watching the context.
	cmd.Cancel = func() error { return g.cancel(cmd.Process.Pid) }
	// WaitDelay bounds the wait for the output pipes os/exec copies from
	// once the process is gone: after it, os/exec closes them, so a process
	// that escaped the group and holds them open cannot hang the wait.
	cmd.WaitDelay = waitDelay

	var cg *cgroup
	if p.limits != nil {
		var err error
		if cg, err = newCgroup(*p.limits); err != nil {
			return nil, err
		}
	}
	markInheritedCloseOnExec()
	start := time.Now()
	var err error
	if cg != nil {
		err = cg.start(cmd)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		if cg != nil {
			cg.close()
		}
		return nil, err
	}
	return &child{cmd: cmd, ctx: ctx, group: g, start: start, cgroup: cg}, nil
}

// wait waits for the child and reports how it ended; the caller fills in the
// output.
//
// The order of the end matters. wait waits for the child to exit without
// reaping it (waitid with WNOWAIT), kills its process group, then reaps it.
// While the child is unreaped its PID cannot be reused, so the group kill can
// only reach the child's own group, never an unrelated process that got the
// same number.
func (c *child) wait() (Result, error) {
	pid := c.cmd.Process.Pid
	exited := waitExited(pid) == nil
	c.group.end(pid, exited)
	waitErr := c.cmd.Wait()
	res := Result{Duration: time.Since(c.start)}
	if c.cgroup != nil {
		res.MemoryKilled = c.cgroup.memoryKilled()
		c.cgroup.close() // what left the process group goes too
	}

	state := c.cmd.ProcessState
	if state == nil {
		res.ExitCode = -1
		return res, waitErr
	}
	res.ExitCode = state.ExitCode()
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal().String()
		res.TimedOut = c.group.wasCancelled() && errors.Is(c.ctx.Err(), context.DeadlineExceeded)
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
