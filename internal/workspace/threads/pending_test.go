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
