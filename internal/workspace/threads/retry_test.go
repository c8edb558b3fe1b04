package threads

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
)

// asked waits for the model to have been asked n times.
func (f *loopFixture) asked(n int) {
	f.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		f.model.mu.Lock()
		got := len(f.model.requests)
		f.model.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("the model was not asked %d times", n)
		}
	}
}

func (f *loopFixture) retry() (Run, error) {
	return f.r.Start(context.Background(), Start{Thread: f.thread.ID, Retry: true, Actor: "owner", Model: f.model, Tools: f.tools, Limits: f.lim})
}

func roles(msgs []model.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role)
	}
	return out
}

// TestLoopRetry: a run interrupted while the model answers, one
// interrupted while a tool runs, and one that failed at a limit are each
// run again from where they ended, with no new prompt: the model gets the
// history as it was (the call's placeholder included), a provider takes
// it, and the run completes. A thread that ends with the model's answer,
// or has no message, has nothing to retry, and a retry has no prompt.
func TestLoopRetry(t *testing.T) {
	ctx := context.Background()
	f := newLoop(t)
	if _, err := f.retry(); !errors.Is(err, ErrNothingToRetry) {
		t.Errorf("a retry of a thread with no message: %v", err)
	}

	// Interrupted while the model answers.
	f.model.block = make(chan struct{})
	run := f.start("one")
	f.asked(1)
	f.r.Cancel(ctx, f.thread.ID, "owner")
	if r := f.wait(run); r.Status != Interrupted {
		t.Fatalf("run: %+v", r)
	}
	f.model.block = nil
	f.model.script = []model.Response{{Message: model.Message{Role: model.RoleAssistant, Content: "answered"}}}
	run, err := f.retry()
	if err != nil {
		t.Fatal(err)
	}
	if r := f.wait(run); r.Status != Completed {
		t.Fatalf("the retry: %+v", r)
	}
	if got := roles(f.model.last().Messages); !cmp.Equal(got, []string{"system", "user"}) {
		t.Errorf("the retry asked the model with %q", got)
	}
	if msgs := f.messages(); !cmp.Equal(roles(msgs), []string{"user", "assistant"}) || msgs[0].Content != "one" || msgs[1].Content != "answered" {
		t.Errorf("the messages after the retry: %+v", msgs)
	}
	if _, err := f.retry(); !errors.Is(err, ErrNothingToRetry) {
		t.Errorf("a retry of a thread that ends with the answer: %v", err)
	}
	if _, err := f.r.Start(ctx, Start{Thread: f.thread.ID, Retry: true, Prompt: "two", Model: f.model, Tools: f.tools}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a retry with a prompt: %v", err)
	}

	// Interrupted while a tool runs: the retry re-sends its placeholder.
	tools, _ := f.tools.Tools(ctx)
	f.rule(tools[0], Allow) // echo
	f.rule(tools[1], Allow) // block
	f.model.script = []model.Response{calls(modeltest.Call("b1", "srv__block", `{}`))}
	run = f.start("two")
	f.called(1)
	f.r.Cancel(ctx, f.thread.ID, "owner")
	if r := f.wait(run); r.Status != Interrupted {
		t.Fatalf("run: %+v", r)
	}
	run, err = f.retry()
	if err != nil {
		t.Fatal(err)
	}
	if r := f.wait(run); r.Status != Completed {
		t.Fatalf("the retry: %+v", r)
	}
	if last := f.model.last().Messages; last[len(last)-1].Role != model.RoleTool || last[len(last)-1].ToolCallID != "b1" {
		t.Errorf("the retry asked the model with %q", roles(last))
	}
	f.valid()

	// Failed at the step limit, after a call's result.
	f.lim.Steps = 1
	f.model.script = []model.Response{calls(modeltest.Call("e1", "srv__echo", `{}`))}
	run = f.start("three")
	if r := f.wait(run); r.Status != Failed {
		t.Fatalf("run: %+v", r)
	}
	f.lim.Steps = 0
	run, err = f.retry()
	if err != nil {
		t.Fatal(err)
	}
	if r := f.wait(run); r.Status != Completed {
		t.Fatalf("the retry: %+v", r)
	}
	msgs := f.messages()
	if n := len(msgs); msgs[n-2].ToolCallID != "e1" || msgs[n-1].Role != model.RoleAssistant || msgs[n-3].Role != model.RoleAssistant || msgs[n-4].Content != "three" {
		t.Errorf("the messages after the retry: %q", roles(msgs))
	}
	f.valid()
}

// TestForkBefore: a fork before a model's answer holds the branch up to
// the message it answered, and can be run with no prompt; a fork before a
// user's message holds what came before it (nothing, for the first); the
// thread forked keeps every event; an event of another role is refused.
func TestForkBefore(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	th, _ := s.Create(ctx, Thread{Title: "t", Provider: "p", Model: "m"})
	say(t, s, th.ID, 0, "one", "two", "three", "four")
	check := func(seq int64, role string, want []string, at int64) Thread {
		t.Helper()
		fork, err := s.ForkBefore(ctx, th.ID, seq, role)
		if err != nil {
			t.Fatal(err)
		}
		events, _ := s.Events(ctx, fork.ID, 0)
		if got := contents(t, events); !cmp.Equal(got, want) || fork.ForkedFrom != th.ID || fork.ForkedAt != at || fork.Model != "m" {
			t.Errorf("the fork before %d: %q, %+v", seq, got, fork)
		}
		return fork
	}
	again := check(4, model.RoleAssistant, []string{"one", "two", "three"}, 3)
	if err := s.Retryable(ctx, again.ID); err != nil {
		t.Errorf("the fork before an answer cannot be run: %v", err)
	}
	check(3, model.RoleUser, []string{"one", "two"}, 2)
	empty := check(1, model.RoleUser, nil, 0)
	if err := s.Retryable(ctx, empty.ID); !errors.Is(err, ErrNothingToRetry) {
		t.Errorf("the empty fork: %v", err)
	}
	for _, c := range []struct {
		seq  int64
		role string
	}{{2, model.RoleUser}, {3, model.RoleAssistant}, {5, model.RoleUser}, {0, model.RoleUser}} {
		if _, err := s.ForkBefore(ctx, th.ID, c.seq, c.role); !errors.Is(err, ErrInvalid) {
			t.Errorf("a fork before %d as %s: %v", c.seq, c.role, err)
		}
	}
	if events, _ := s.Events(ctx, th.ID, 0); len(events) != 4 {
		t.Errorf("the thread forked has %d events", len(events))
	}
}
