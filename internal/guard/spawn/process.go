package spawn

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// stopGrace is how long Stop lets a child exit on its own after closing its
// stdin, before it kills the child's process group.
const stopGrace = 200 * time.Millisecond

// A Process is a child started by [Start], which the caller talks to over
// pipes: an MCP server on stdio, for instance, whose messages go to Stdin
// and come from Stdout.
//
// Its lifetime is bounded by [Cmd].Timeout and by the context given to Start:
// when either ends, its whole process group is killed and it is reaped.
// The caller must call [Process.Stop], which releases the pipes, also after
// the child exited on its own.
type Process struct {
	// Stdin is the child's standard input. Closing it is end of file for the
	// child. Once the child has been reaped it is closed, so a write fails
	// rather than blocks, a write already blocked included.
	Stdin io.WriteCloser
	// Stdout is the child's standard output, unbuffered. It reads end of file
	// once the child and its group are gone (unless a process that left the
	// group holds it); Stop closes it.
	Stdout io.ReadCloser
	// Isolation is what actually runs: None when AllowFallback dropped the
	// requested sandbox.
	Isolation Isolation

	program string // for errors
	stderr  *capped
	stop    func()        // ends the lifetime: kills the group unless it ended
	done    chan struct{} // closed once the child is reaped and res is set

	stopOnce sync.Once
	res      Result
	err      error
}

// Start starts c.Program with pipes to its standard input and output and
// returns without waiting for it. It makes every check [Run] makes, and
// refuses the same commands, starting nothing; in addition c.Stdin must be
// nil, as the child's input is the Stdin pipe. c.Timeout is the child's
// maximum lifetime, from its start, and ctx bounds it too: ctx is not only
// for starting. c.OutputLimit caps the stderr kept.
//
// The child gets what a child of Run gets: a scrubbed environment, a
// working directory inside the roots, its own session and process group,
// which is killed once the child exits, and the requested isolation.
func Start(ctx context.Context, c Cmd) (*Process, error) {
	if c.Stdin != nil {
		return nil, fmt.Errorf("spawn %q: Cmd.Stdin must be nil with Start, which gives a pipe", c.Program)
	}
	proc, err := startWith(ctx, func() (*prepared, error) { return prepare(c) })
	if err != nil {
		return nil, fmt.Errorf("spawn %q: %w", c.Program, err)
	}
	proc.program = c.Program
	return proc, nil
}

// Stderr returns a copy of what the child wrote to its standard error so
// far, up to the output limit. The child is never blocked on stderr: beyond
// the limit its output is read and discarded.
func (p *Process) Stderr() []byte {
	b, _ := p.stderr.bytes()
	return b
}

// Done returns a channel closed once the child has exited, its group has
// been killed and the child has been reaped.
func (p *Process) Done() <-chan struct{} {
	return p.done
}

// Stop ends the child and returns what happened to it. It closes Stdin,
// gives the child a short grace period (200 ms) to exit, then kills its
// whole process group with SIGKILL, reaps it and closes Stdout. It returns
// within about that grace period, or half a second more when a process that
// left the group holds the child's stderr. The Result holds the exit code or signal
// and stderr; its Stdout is empty, as stdout was streamed. As with Run, the
// error is nil for a process that ran, whatever its end.
//
// Stop may be called more than once, concurrently too, and after the child
// exited; every call returns the same Result.
func (p *Process) Stop() (Result, error) {
	p.stopOnce.Do(func() {
		p.Stdin.Close()
		grace := time.NewTimer(stopGrace)
		select {
		case <-p.done:
		case <-grace.C:
		}
		grace.Stop()
		p.stop()
		<-p.done
		p.Stdout.Close()
		if p.err != nil {
			p.err = fmt.Errorf("spawn %q: %w", p.program, p.err)
		}
	})
	return p.res, p.err
}
