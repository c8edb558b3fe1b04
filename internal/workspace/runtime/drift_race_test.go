package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// describedOf returns the description of the test server's tool described
// in l, as listed.
func describedOf(l Listing) string {
	t, _ := l.tool("described")
	return t.Description
}

// mutate has the test server of s give its tool described the description
// d, each later listing waiting delay first; it returns once the server
// has said its tools changed.
func (f *fixture) mutate(s Spec, d string, delay time.Duration) {
	f.t.Helper()
	args, _ := json.Marshal(map[string]any{"description": d, "list_delay_ms": delay.Milliseconds()})
	if _, err := f.rt.Call(f.ctx, s, "mutate", args, "test"); err != nil {
		f.t.Fatalf("mutate to %s: %v", d, err)
	}
}

// TestDriftWhileListingAgain: a tool changes and the server says so; a
// caller lists the tools again, and the server is slow to answer. A call
// that comes meanwhile waits for that listing and is refused: it is never
// let through on the listing from before the change (issue 28: the stale
// flag, read without the lock, was already cleared by the listing under
// way, and the call ran the changed tool under the old approval).
func TestDriftWhileListingAgain(t *testing.T) {
	f := newFixture(t, Options{})
	s := f.spec(1, "--mutable")
	res, err := f.rt.Call(f.ctx, s, "described", nil, "test")
	if err != nil || textOf(t, res) != "v0" {
		t.Fatalf("before the change: %v %v", res, err)
	}
	f.mutate(s, "v1", 300*time.Millisecond)

	// Another caller lists the tools until it has listed them again (the
	// Probe's listing, the connection's first, and this one).
	listed := make(chan error, 1)
	go func() {
		for {
			if _, err := f.rt.Tools(f.ctx, s); err != nil || f.countEvents("list_") >= 3 {
				listed <- err
				return
			}
		}
	}()
	f.waitEvent("list_", 3)
	res, err = f.rt.Call(f.ctx, s, "described", nil, "test")
	if err == nil {
		t.Fatalf("the changed tool ran under the old approval: %q", textOf(t, res))
	}
	if got := refusal(t, err); got != RefusedQuarantined {
		t.Errorf("the call during the listing: %s, want %s", got, RefusedQuarantined)
	}
	if err := <-listed; err != nil {
		t.Fatal(err)
	}
}

// TestDriftToldBeforeTheAnswer: a server that says its tools changed before
// it answers has the very next call decided on the new listing, every time:
// the change is taken as it comes off the wire, not when the SDK's handler
// gets to it. Approving the new set lets the call through again.
func TestDriftToldBeforeTheAnswer(t *testing.T) {
	f := newFixture(t, Options{})
	s := f.spec(1, "--mutable")
	for i := 1; i <= 50; i++ {
		d := fmt.Sprintf("v%d", i)
		f.mutate(s, d, 0)
		_, err := f.rt.Call(f.ctx, s, "described", nil, "test")
		if err == nil {
			t.Fatalf("change %d: the changed tool ran under the old approval", i)
		}
		if got := refusal(t, err); got != RefusedQuarantined {
			t.Fatalf("change %d: %s, want %s", i, got, RefusedQuarantined)
		}
		f.mu.Lock()
		last := f.observed[len(f.observed)-1]
		f.mu.Unlock()
		if got := describedOf(last); got != d {
			t.Fatalf("change %d: the last listing observed has %q", i, got)
		}
		s.ToolSet = SetOf(last.Tools)
		res, err := f.rt.Call(f.ctx, s, "described", nil, "test")
		if err != nil || textOf(t, res) != d {
			t.Fatalf("change %d, approved: %v %v", i, res, err)
		}
	}
}

// stopped reports whether stop is closed.
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// An approval is a Spec and the description of described it approved.
type approval struct {
	spec        Spec
	description string
}

// TestDriftGateUnderConcurrency: callers call described, and list the
// tools, while the tool changes again and again and each change is
// approved in turn, with connections renewed now and then. A call that
// ran while no change was under way must have run the tool as its Spec
// approved it; every other call is refused as quarantined.
func TestDriftGateUnderConcurrency(t *testing.T) {
	f := newFixture(t, Options{MaxPerServer: 8})
	first := f.spec(1, "--mutable")
	var current atomic.Pointer[approval]
	current.Store(&approval{first, "v0"})
	var started, finished atomic.Int64 // changes
	var ran, checked, refused atomic.Int64
	stop := make(chan struct{})

	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 4 {
		wg.Go(func() {
			for !stopped(stop) {
				a := current.Load()
				before, idle := started.Load(), started.Load() == finished.Load()
				res, err := f.rt.Call(f.ctx, a.spec, "described", nil, "test")
				steady := idle && started.Load() == before
				switch {
				case err == nil:
					ran.Add(1)
					if steady {
						checked.Add(1)
						if got := textOf(t, res); got != a.description {
							errs <- fmt.Errorf("a call approved for %q ran %q, with no change under way", a.description, got)
							return
						}
					}
				case errors.As(err, new(*RefusedError)) && refusal(t, err) == RefusedQuarantined:
					refused.Add(1)
				default:
					errs <- fmt.Errorf("a call: %v", err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for !stopped(stop) {
			if _, err := f.rt.Tools(f.ctx, current.Load().spec); err != nil {
				errs <- fmt.Errorf("list: %v", err)
				return
			}
		}
	})

	// until waits for cond, at most 5 s.
	until := func(cond func() bool) bool {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if cond() {
				return true
			}
		}
		return false
	}
	for i := 1; i <= 30; i++ {
		d := fmt.Sprintf("v%d", i)
		r0 := refused.Load()
		started.Add(1)
		f.mutate(first, d, time.Duration(rand.IntN(3))*time.Millisecond)
		finished.Add(1)
		if !until(func() bool { return refused.Load() > r0 }) {
			t.Fatalf("change %d: no call was refused", i)
		}
		var l Listing
		if !until(func() bool {
			f.mu.Lock()
			defer f.mu.Unlock()
			l = f.observed[len(f.observed)-1]
			return describedOf(l) == d
		}) {
			t.Fatalf("change %d: no listing of it", i)
		}
		s := first
		s.ToolSet = SetOf(l.Tools)
		n := ran.Load()
		current.Store(&approval{s, d})
		if i%7 == 0 {
			f.rt.Renew(1) // the next connection starts at v0 again
			current.Store(&approval{first, "v0"})
		}
		if !until(func() bool { return ran.Load() > n }) {
			t.Fatalf("change %d: no call ran once approved", i)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d calls ran (%d checked against their approval), %d refused", ran.Load(), checked.Load(), refused.Load())
}
