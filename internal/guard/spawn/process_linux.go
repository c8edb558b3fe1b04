package spawn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// runWith prepares a process with prep, starts it in its own session and
// process group and waits for it.
func runWith(ctx context.Context, prep func() (*prepared, error)) (Result, error) {
	type launched struct {
		p              *prepared
		c              *child
		stdout, stderr *capped
	}
	l, err := bounded(ctx, func(life context.Context, end context.CancelCauseFunc) (launched, error) {
		p, err := prep()
		if err != nil {
			return launched{}, err
		}
		var stdin io.Reader
		if p.stdin != nil {
			stdin = bytes.NewReader(p.stdin)
		}
		l := launched{p: p, stdout: &capped{limit: p.limit}, stderr: &capped{limit: p.limit}}
		l.c, err = p.launch(life, end, stdin, l.stdout, l.stderr)
		return l, err
	}, func(l launched) { l.c.wait() })
	if err != nil {
		return Result{}, err
	}
	res, err := l.c.wait()
	l.p.finish(&res, l.stdout, l.stderr)
	return res, err
}

// startWith prepares a process with prep and starts it as runWith does,
// with pipes to its stdin and stdout, and returns without waiting for it. A
// goroutine waits for it; it ends when the child is reaped, which the
// lifetime (the timeout and ctx) bounds.
func startWith(ctx context.Context, prep func() (*prepared, error)) (*Process, error) {
	type launched struct {
		p             *prepared
		c             *child
		stdin, stdout *os.File // Zero's ends of the pipes
		stderr        *capped
	}
	l, err := bounded(ctx, func(life context.Context, end context.CancelCauseFunc) (launched, error) {
		p, err := prep()
		if err != nil {
			return launched{}, err
		}
		stdinR, stdinW, err := os.Pipe()
		if err != nil {
			return launched{}, err
		}
		stdoutR, stdoutW, err := os.Pipe()
		if err != nil {
			stdinR.Close()
			stdinW.Close()
			return launched{}, err
		}
		l := launched{p: p, stdin: stdinW, stdout: stdoutR, stderr: &capped{limit: p.limit}}
		l.c, err = p.launch(life, end, stdinR, stdoutW, l.stderr)
		// The child holds its own copies of its ends of the pipes. The
		// parent's go at once, so that once the child and its group are
		// gone, Stdout reads end of file and a write to Stdin fails.
		stdinR.Close()
		stdoutW.Close()
		if err != nil {
			stdinW.Close()
			stdoutR.Close()
			return launched{}, err
		}
		return l, nil
	}, func(l launched) {
		l.c.wait()
		l.stdin.Close()
		l.stdout.Close()
	})
	if err != nil {
		return nil, err
	}
	proc := &Process{
		Stdin:     l.stdin,
		Stdout:    l.stdout,
		Isolation: l.p.isolation,
		stderr:    l.stderr,
		stop:      func() { l.c.end(errStopped) },
		done:      make(chan struct{}),
	}
	go func() {
		res, err := l.c.wait()
		l.p.finish(&res, nil, l.stderr)
		// A process that left the group may still hold the child's stdin:
		// closing the parent's end makes every later write fail, and wakes
		// one blocked on a full pipe.
		l.stdin.Close()
		proc.res, proc.err = res, err
		close(proc.done)
	}()
	return proc, nil
}

// bounded runs begin, the launch of a process (its checks, the bubblewrap
// probe, its start), for at most launchTimeout and while ctx lasts. The
// command's own timeout does not count the launch: it starts once the
// process has (see prepared.launch). begin starts the process under life,
// which ctx ends, and end. When ctx ends or launchTimeout passes first,
// bounded ends life, so that the launch starts nothing or kills what it
// started, and returns an error; once begin returns, what it started goes
// to abandon, which reaps it.
func bounded[T any](ctx context.Context, begin func(life context.Context, end context.CancelCauseFunc) (T, error), abandon func(T)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("launch: %w", err)
	}
	life, end := context.WithCancelCause(ctx)
	type launched struct {
		v   T
		err error
	}
	done := make(chan launched, 1)
	go func() {
		v, err := begin(life, end)
		done <- launched{v, err}
	}()
	limit := time.NewTimer(launchTimeout)
	defer limit.Stop()
	var err error
	select {
	case l := <-done:
		if l.err != nil {
			end(l.err)
		}
		return l.v, l.err
	case <-ctx.Done():
		err = fmt.Errorf("launch: %w", ctx.Err())
		end(err)
		// The launch may have started the process already, or be about
		// to return it: then it is the caller's, ended by ctx (killed),
		// as when the cancellation comes a moment later.
		select {
		case l := <-done:
			return l.v, l.err
		case <-time.After(cancelGrace):
		}
	case <-limit.C:
		err = fmt.Errorf("%w: the process had not started after %v", ErrLaunchTimeout, launchTimeout)
		end(err)
	}
	go func() {
		if l := <-done; l.err == nil {
			abandon(l.v)
		}
	}()
	return zero, err
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
	cmd     *exec.Cmd
	life    context.Context         // done on timeout, cancellation or stop
	end     context.CancelCauseFunc // ends life
	timeout *time.Timer             // ends life with errTimedOut
	group   *group
	start   time.Time // when the process had started
	cgroup  *cgroup   // with Cmd.Limits: the group it and its children run in
}

// Causes of the end of a child's life.
var (
	errTimedOut = fmt.Errorf("timeout: %w", context.DeadlineExceeded)
	errStopped  = errors.New("stopped")
)

// cancelGrace is how long a launch whose caller cancelled is waited for:
// one that is about to return its process hands it over, to be killed.
const cancelGrace = time.Second

// startHook, set by a test only, runs in place of the start of each process
// (fork and exec), and is given that start to call: it stands for a slow or
// stuck launch, which nothing else makes on purpose.
var startHook func(start func() error) error

// launch starts the prepared process in its own session and process group.
// When life is done (timeout, cancellation, Stop) the whole group is
// killed. The timeout starts once the process has started: it counts the
// command, not Zero's launch work before it. stdin may be nil (end of file
// at once); stdout and stderr are written by os/exec (an *os.File goes to
// the child as it is).
func (p *prepared) launch(life context.Context, end context.CancelCauseFunc, stdin io.Reader, stdout, stderr io.Writer) (*child, error) {
	// p.path is absolute, so CommandContext does no PATH lookup of its own.
	// It starts nothing once life is done.
	cmd := exec.CommandContext(life, p.path)
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
	// Cancel runs when life is done; cmd.Process is set before os/exec
	// starts watching the context.
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
	begin := func() error {
		markInheritedCloseOnExec()
		if cg != nil {
			return cg.start(cmd)
		}
		return cmd.Start()
	}
	var err error
	if startHook != nil {
		err = startHook(begin)
	} else {
		err = begin()
	}
	if err != nil {
		if cg != nil {
			cg.close()
		}
		return nil, err
	}
	c := &child{cmd: cmd, life: life, end: end, group: g, start: time.Now(), cgroup: cg}
	c.timeout = time.AfterFunc(p.timeout, func() { end(errTimedOut) })
	return c, nil
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
	defer c.end(nil) // after TimedOut is read
	pid := c.cmd.Process.Pid
	exited := waitExited(pid) == nil
	c.group.end(pid, exited)
	waitErr := c.cmd.Wait()
	c.timeout.Stop()
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
		// The timeout, or the deadline of the caller's context.
		timedOut := context.Cause(c.life) == errTimedOut || errors.Is(c.life.Err(), context.DeadlineExceeded)
		res.TimedOut = c.group.wasCancelled() && timedOut
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
