package spawn

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestShortestTimeout: a timeout of one nanosecond, shorter than any launch,
// still runs the command and times it out: a Result with TimedOut, never an
// error, with Run and with Start.
func TestShortestTimeout(t *testing.T) {
	for i := range 50 {
		res, err := tryRun(t, Cmd{Program: "/bin/sleep", Args: []string{"60"}, Timeout: time.Nanosecond})
		if err != nil || !res.TimedOut || res.Signal != "killed" {
			t.Fatalf("Run %d: %v, TimedOut=%v Signal=%q; want the command run and timed out", i, err, res.TimedOut, res.Signal)
		}
		p, err := tryStart(t, t.Context(), Cmd{Program: "/bin/sleep", Args: []string{"60"}, Timeout: time.Nanosecond})
		if err != nil {
			t.Fatalf("Start %d: %v; want the command started and timed out", i, err)
		}
		waitDone(t, p)
		if res := stop(t, p, time.Second); !res.TimedOut || res.Signal != "killed" {
			t.Fatalf("Start %d: TimedOut=%v Signal=%q; want timed out", i, res.TimedOut, res.Signal)
		}
	}
}

// setStartHook makes hook stand in for the start of each process until the
// test ends.
func setStartHook(t *testing.T, hook func(start func() error) error) {
	t.Helper()
	startHook = hook
	t.Cleanup(func() { startHook = nil })
}

// TestTimeoutCountsFromStart: the timeout starts once the process has
// started. A launch slower than the timeout (three times as long, through
// startHook) still runs the command, which is killed at its timeout,
// TimedOut, having run at least that long, with Run and with Start.
func TestTimeoutCountsFromStart(t *testing.T) {
	const timeout = 100 * time.Millisecond
	setStartHook(t, func(start func() error) error {
		time.Sleep(3 * timeout) // a slow launch, not a wait for anything
		return start()
	})
	cmd := Cmd{Program: "/bin/sleep", Args: []string{"60"}, Timeout: timeout}
	res, err := tryRun(t, cmd)
	if err != nil {
		t.Fatalf("Run after a launch longer than the timeout: %v; want the command run", err)
	}
	if !res.TimedOut || res.Signal != "killed" || res.Duration < timeout {
		t.Errorf("Run: TimedOut=%v Signal=%q Duration=%v; want timed out after at least %v", res.TimedOut, res.Signal, res.Duration, timeout)
	}
	p, err := tryStart(t, t.Context(), cmd)
	if err != nil {
		t.Fatalf("Start after a launch longer than the timeout: %v; want the command started", err)
	}
	waitDone(t, p)
	if res := stop(t, p, time.Second); !res.TimedOut || res.Signal != "killed" || res.Duration < timeout {
		t.Errorf("Start: TimedOut=%v Signal=%q Duration=%v; want timed out after at least %v", res.TimedOut, res.Signal, res.Duration, timeout)
	}
}

// TestLaunchBound: a stuck launch (startHook) is given up after
// LaunchTimeout, or when the caller's context is cancelled, with an error
// that is not a timeout of the command (ErrLaunchTimeout, or the
// context's), by Run and by Start; once the launch goes on, it starts
// nothing.
func TestLaunchBound(t *testing.T) {
	saved := launchTimeout
	launchTimeout = 100 * time.Millisecond
	t.Cleanup(func() { launchTimeout = saved })
	roots, dir := workspace(t)
	marker := filepath.Join(dir, "ran")
	cmd := Cmd{Program: "touch", Args: []string{marker}, Roots: roots, Dir: dir, Timeout: time.Minute}
	for _, way := range []struct {
		name   string
		launch func(context.Context) error
	}{
		{"Run", func(ctx context.Context) error { _, err := Run(ctx, cmd); return err }},
		{"Start", func(ctx context.Context) error {
			p, err := Start(ctx, cmd)
			if err == nil {
				p.Stop()
			}
			return err
		}},
	} {
		for _, cancels := range []bool{false, true} {
			ctx, cancel := context.WithCancel(context.Background())
			release := make(chan struct{})
			started := make(chan error, 1)
			setStartHook(t, func(start func() error) error {
				if cancels {
					cancel()
				}
				<-release
				err := start()
				started <- err
				return err
			})
			err := within(t, 10*time.Second, way.name, func() error { return way.launch(ctx) })
			close(release)
			cancel()
			switch {
			case !cancels && !errors.Is(err, ErrLaunchTimeout):
				t.Errorf("%s, stuck: %v; want ErrLaunchTimeout", way.name, err)
			case cancels && (!errors.Is(err, context.Canceled) || errors.Is(err, ErrLaunchTimeout)):
				t.Errorf("%s, cancelled: %v; want context.Canceled", way.name, err)
			}
			if err := <-started; !errors.Is(err, context.Canceled) {
				t.Errorf("%s: the launch given up went on to start: %v", way.name, err)
			}
			mustNotExist(t, marker)
		}
	}
}

// TestCancelJustAfterStart: a cancellation that comes once the process has
// started, while its launch is still returning it, kills the process, which
// Run reports as killed, as a later cancellation is; it is not a launch
// that failed (CI saw "launch: context canceled" for a child that had run).
func TestCancelJustAfterStart(t *testing.T) {
	roots, dir := workspace(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	setStartHook(t, func(start func() error) error {
		err := start()
		cancel()
		time.Sleep(50 * time.Millisecond) // the launch returns after the cancellation
		return err
	})
	var res Result
	err := within(t, 10*time.Second, "Run", func() (err error) {
		res, err = Run(ctx, Cmd{Program: "sleep", Args: []string{"60"}, Roots: roots, Dir: dir, Timeout: time.Minute})
		return err
	})
	if err != nil || res.Signal != "killed" {
		t.Errorf("a cancellation just after the start: %v, signal %q; want the process killed", err, res.Signal)
	}
}
