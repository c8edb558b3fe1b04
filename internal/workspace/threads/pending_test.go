package threads

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestApprovals: a run's pending approval is answered once, by one
// answer; "thread" and "always" save the allowance that Decide then finds;
// an approval nobody answers in time expires as declined and cannot be
// answered after.
func TestApprovals(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	clock := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return clock }
	addServer(t, s, 1)
	th, _ := s.Create(ctx, Thread{Title: "t"})
	run, _ := s.StartRun(ctx, th.ID)
	tool := ToolRef{ServerID: 1, Tool: "write_file", Hash: "sha256:h", Fingerprint: "sha256:f"}

	a, err := s.Request(ctx, run.ID, "call_1", tool, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Answer(ctx, "user:owner", a.ID, "maybe"); !errors.Is(err, ErrInvalid) {
		t.Errorf("an answer that is none: %v", err)
	}
	if got, err := s.Answer(ctx, "user:owner", a.ID, AnswerThread); err != nil || got.Status != AnswerThread || got.By != "user:owner" {
		t.Fatalf("answer: %+v %v", got, err)
	}
	if _, err := s.Answer(ctx, "user:owner", a.ID, AnswerOnce); !errors.Is(err, ErrAnswered) {
		t.Errorf("a second answer: %v", err)
	}
	if v, _ := s.Decide(ctx, th.ID, tool); v.Decision != Allow {
		t.Errorf("after allow for this thread: %+v", v)
	}
	if _, err := s.Request(ctx, run.ID, "call_1", tool, time.Minute); err == nil {
		t.Error("a second approval of the same call was saved")
	}

	late, _ := s.Request(ctx, run.ID, "call_2", tool, time.Minute)
	soon, _ := s.Request(ctx, run.ID, "call_3", tool, 2*time.Minute)
	clock = clock.Add(90 * time.Second)
	if n, err := s.ExpireDue(ctx); n != 1 || err != nil {
		t.Errorf("expired %d (%v), want 1", n, err)
	}
	if _, err := s.Answer(ctx, "user:owner", late.ID, AnswerOnce); !errors.Is(err, ErrAnswered) {
		t.Errorf("an answer after the expiry: %v", err)
	}
	if got, err := s.Answer(ctx, "user:owner", soon.ID, AnswerAlways); err != nil || got.Status != AnswerAlways {
		t.Fatalf("always: %+v %v", got, err)
	}
	other, _ := s.Create(ctx, Thread{Title: "other"})
	if v, _ := s.Decide(ctx, other.ID, tool); v.Decision != Allow {
		t.Errorf("after always, in another thread: %+v", v)
	}
	// Past its expiry but not yet swept: still refused.
	last, _ := s.Request(ctx, run.ID, "call_4", tool, time.Second)
	clock = clock.Add(2 * time.Second)
	if _, err := s.Answer(ctx, "user:owner", last.ID, AnswerOnce); !errors.Is(err, ErrAnswered) {
		t.Errorf("an answer past the expiry, before the sweep: %v", err)
	}
}

// TestSettle: an approval still pending ends as the run settles it
// (expired or cancelled); one a person answered first keeps the answer.
func TestSettle(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	addServer(t, s, 1)
	th, _ := s.Create(ctx, Thread{Title: "t"})
	run, _ := s.StartRun(ctx, th.ID)
	tool := ToolRef{ServerID: 1, Tool: "write_file", Hash: "sha256:h", Fingerprint: "sha256:f"}
	a, _ := s.Request(ctx, run.ID, "call_1", tool, time.Minute)
	b, _ := s.Request(ctx, run.ID, "call_2", tool, time.Minute)
	if got, err := s.Settle(ctx, "zero", a.ID, Expired); err != nil || got.Status != Expired {
		t.Errorf("settle a pending one: %+v %v", got, err)
	}
	s.Answer(ctx, "user:owner", b.ID, AnswerOnce)
	if got, err := s.Settle(ctx, "zero", b.ID, AnswerCancel); err != nil || got.Status != AnswerOnce || got.By != "user:owner" {
		t.Errorf("settle an answered one: %+v %v, want the answer kept", got, err)
	}
	if _, err := s.Settle(ctx, "zero", a.ID, AnswerAlways); !errors.Is(err, ErrInvalid) {
		t.Errorf("settle as always: %v", err)
	}
	if got, th2, err := s.GetApproval(ctx, a.ID); err != nil || th2 != th.ID || got.CallID != "call_1" {
		t.Errorf("get: %+v thread %d %v", got, th2, err)
	}
}

// TestInterruptAllCancelsApprovals: a workspace that starts again ends the
// runs of the one before it, and the approvals they waited for, so that a
// late answer allows nothing.
func TestInterruptAllCancelsApprovals(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	addServer(t, s, 1)
	th, _ := s.Create(ctx, Thread{Title: "t"})
	if _, ok, err := s.LastRun(ctx, th.ID); ok || err != nil {
		t.Errorf("a thread with no run has one: %v %v", ok, err)
	}
	run, _ := s.StartRun(ctx, th.ID)
	s.SetStatus(ctx, run.ID, WaitingApproval, "")
	tool := ToolRef{ServerID: 1, Tool: "write_file", Hash: "sha256:h", Fingerprint: "sha256:f"}
	a, _ := s.Request(ctx, run.ID, "call_1", tool, time.Hour)
	if n, err := s.InterruptAll(ctx, "the workspace started again"); n != 1 || err != nil {
		t.Fatalf("interrupted %d %v", n, err)
	}
	if _, err := s.Answer(ctx, "user:owner", a.ID, AnswerThread); !errors.Is(err, ErrAnswered) {
		t.Errorf("an answer after the restart: %v", err)
	}
	if v, _ := s.Decide(ctx, th.ID, tool); v.Decision != Ask {
		t.Errorf("after a late answer: %+v, want ask", v)
	}
	last, ok, err := s.LastRun(ctx, th.ID)
	if !ok || err != nil || last.ID != run.ID || last.Status != Interrupted {
		t.Errorf("last run: %+v %v %v", last, ok, err)
	}
}

// TestApprovalTimeout: the owner's setting, bounded, with a default.
func TestApprovalTimeout(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	if d, err := s.ApprovalTimeout(ctx); d != DefaultApprovalTimeout || err != nil {
		t.Errorf("default: %s %v", d, err)
	}
	for _, d := range []time.Duration{MinApprovalTimeout - time.Second, MaxApprovalTimeout + time.Second, 90*time.Second + time.Millisecond} {
		if err := s.SetApprovalTimeout(ctx, "user:owner", d); !errors.Is(err, ErrInvalid) {
			t.Errorf("set %s: %v", d, err)
		}
	}
	if err := s.SetApprovalTimeout(ctx, "user:owner", 90*time.Second); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.ApprovalTimeout(ctx); d != 90*time.Second {
		t.Errorf("after setting 90s: %s", d)
	}
}
