package threads

import (
	"context"
	"errors"
	"testing"
)

// TestRuns: a thread has at most one run that has not ended; a run goes
// between running and waiting for an approval, and from either to an end,
// never out of an end; InterruptAll ends what a stopped workspace left.
func TestRuns(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	th, _ := s.Create(ctx, Thread{Title: "t"})
	r, err := s.StartRun(ctx, th.ID)
	if err != nil || r.Status != Running {
		t.Fatalf("start: %+v %v", r, err)
	}
	if _, err := s.StartRun(ctx, th.ID); !errors.Is(err, ErrBusy) {
		t.Errorf("a second run while one runs: %v", err)
	}
	if _, err := s.StartRun(ctx, 99); !errors.Is(err, ErrNotFound) {
		t.Errorf("a run of no thread: %v", err)
	}
	for _, step := range []struct {
		to string
		ok bool
	}{
		{Running, false}, {WaitingApproval, true}, {WaitingApproval, false}, {Running, true}, {Completed, true},
		{Running, false}, {Failed, false}, {"nonsense", false},
	} {
		_, err := s.SetStatus(ctx, r.ID, step.to, "")
		if (err == nil) != step.ok || (err != nil && !errors.Is(err, ErrTransition)) {
			t.Errorf("to %s: %v, want ok %v", step.to, err, step.ok)
		}
	}
	got, _ := s.GetRun(ctx, r.ID)
	if got.Status != Completed || got.Ended.IsZero() {
		t.Errorf("the run: %+v", got)
	}
	// Ended, so another may start; a stopped workspace's runs end interrupted.
	r2, err := s.StartRun(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	s.SetStatus(ctx, r2.ID, WaitingApproval, "")
	if n, err := s.InterruptAll(ctx, "the workspace stopped"); n != 1 || err != nil {
		t.Errorf("interrupted %d (%v)", n, err)
	}
	got, _ = s.GetRun(ctx, r2.ID)
	if got.Status != Interrupted || got.Error != "the workspace stopped" {
		t.Errorf("after InterruptAll: %+v", got)
	}
}
