package threads

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/model/modeltest"
)

// TestAllowances: every allowance is listed, the owner's and each
// thread's, with its tool, server, scope, who gave it and when, and the
// hash and fingerprint it is bound to; a deny is not one. Revoking one
// returns it as it was, and the calls it allowed ask again; revoking it
// again, or a deny, finds none.
func TestAllowances(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	addServer(t, s, 1)
	addServer(t, s, 2)
	a, _ := s.Create(ctx, Thread{Title: "thread a"})
	b, _ := s.Create(ctx, Thread{Title: "thread b"})
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return at }
	write := ToolRef{ServerID: 1, Tool: "write_file", Hash: "sha256:h1", Fingerprint: "sha256:f1"}
	read := ToolRef{ServerID: 2, Tool: "read_file", Hash: "sha256:h2", Fingerprint: "sha256:f2"}
	wipe := ToolRef{ServerID: 2, Tool: "wipe", Hash: "sha256:h3", Fingerprint: "sha256:f2"}
	if err := s.SetRule(ctx, "user:owner", write, Allow); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRule(ctx, "user:owner", wipe, Deny); err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return at.Add(time.Hour) }
	if err := s.AllowInThread(ctx, "user:ann", a.ID, read); err != nil {
		t.Fatal(err)
	}
	always := Allowance{Scope: AnswerAlways, ServerID: 1, Server: "srv1", Tool: "write_file", Hash: "sha256:h1", Fingerprint: "sha256:f1", SetBy: "user:owner", SetAt: at}
	inA := Allowance{Scope: AnswerThread, Thread: a.ID, ThreadTitle: "thread a", ServerID: 2, Server: "srv2", Tool: "read_file", Hash: "sha256:h2",
		Fingerprint: "sha256:f2", SetBy: "user:ann", SetAt: at.Add(time.Hour)}
	list, total, err := s.Allowances(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Allowance{always, inA}, list); diff != "" || total != 2 {
		t.Errorf("the allowances (-want +got):\n%s; %d in all", diff, total)
	}
	if list, total, _ := s.Allowances(ctx, 1); len(list) != 1 || list[0].Scope != AnswerAlways || total != 2 {
		t.Errorf("one listed: %+v, %d in all", list, total)
	}
	// The verdict names the allowance that gives it.
	v, _ := s.Decide(ctx, a.ID, read)
	if want := inA; v.Decision != Allow || v.Allowance == nil || func() bool { want.Server, want.ThreadTitle = "", ""; return *v.Allowance != want }() {
		t.Errorf("the verdict in a: %+v %+v", v, v.Allowance)
	}
	v, _ = s.Decide(ctx, b.ID, write)
	if want := always; v.Decision != Allow || v.Allowance == nil || func() bool { want.Server = ""; return *v.Allowance != want }() {
		t.Errorf("the verdict in b: %+v %+v", v, v.Allowance)
	}

	got, err := s.Revoke(ctx, Allowance{Scope: AnswerThread, Thread: a.ID, ServerID: 2, Tool: "read_file"})
	if want := inA; err != nil || func() bool { want.ThreadTitle = ""; return got != want }() {
		t.Errorf("revoked %+v, %v", got, err)
	}
	if v, _ := s.Decide(ctx, a.ID, read); v.Decision != Ask || v.Allowance != nil {
		t.Errorf("after the revocation, in a: %+v", v)
	}
	if _, err := s.Revoke(ctx, Allowance{Scope: AnswerThread, Thread: a.ID, ServerID: 2, Tool: "read_file"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("revoked twice: %v", err)
	}
	if got, err := s.Revoke(ctx, Allowance{Scope: AnswerAlways, ServerID: 1, Tool: "write_file", Thread: b.ID}); err != nil || got != always {
		t.Errorf("revoked %+v, %v", got, err)
	}
	if v, _ := s.Decide(ctx, b.ID, write); v.Decision != Ask || !strings.Contains(v.Reason, "not allowed") {
		t.Errorf("after the owner's rule is revoked: %+v", v)
	}
	if _, err := s.Revoke(ctx, Allowance{Scope: AnswerAlways, ServerID: 2, Tool: "wipe"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("revoking a deny: %v", err)
	}
	if v, _ := s.Decide(ctx, b.ID, wipe); v.Decision != Deny {
		t.Errorf("the deny after a revocation of it was refused: %+v", v)
	}
	if _, err := s.Revoke(ctx, Allowance{Scope: "sometimes", ServerID: 1, Tool: "write_file"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a scope that is none: %v", err)
	}
	if list, total, _ := s.Allowances(ctx, 10); len(list) != 0 || total != 0 {
		t.Errorf("left after the revocations: %+v, %d", list, total)
	}
}

// TestLoopRecordsAllowance: a call that runs without asking has, just
// before its result and in its transaction, an event naming the allowance
// that let it run (the owner's, or the thread's, with who gave it and
// the hash and fingerprint it is bound to); a call that asked has none.
func TestLoopRecordsAllowance(t *testing.T) {
	ctx := context.Background()
	f := newLoop(t, calls(modeltest.Call("a", "srv__echo", `{}`), modeltest.Call("b", "srv__out", `{}`), modeltest.Call("c", "srv__write", `{}`)))
	tools, _ := f.tools.Tools(ctx)
	f.rule(tools[0], Allow) // echo, for every thread
	if err := f.s.AllowInThread(ctx, "user:ann", f.thread.ID, tools[3].Ref); err != nil {
		t.Fatal(err)
	}
	run := f.start("go")
	a, _ := f.pending(0)
	f.r.Answer(ctx, "owner", a.Approval, AnswerOnce)
	if r := f.wait(run); r.Status != Completed {
		t.Fatalf("run: %+v", r)
	}
	f.valid()
	events, _ := f.s.Events(ctx, f.thread.ID, 0)
	var got []AllowanceEvent
	for i, e := range events {
		if e.Kind != KindAllowance {
			continue
		}
		var b AllowanceEvent
		json.Unmarshal(e.Body, &b)
		got = append(got, b)
		var next struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
		}
		if i+1 < len(events) {
			json.Unmarshal(events[i+1].Body, &next)
		}
		if next.Role != "tool" || next.ToolCallID != b.CallID {
			t.Errorf("the allowance of call %s is followed by %s", b.CallID, events[min(i+1, len(events)-1)].Body)
		}
	}
	want := []AllowanceEvent{
		{Run: run.ID, CallID: "a", Name: "srv__echo", Allowance: Allowance{Scope: AnswerAlways, ServerID: 1, Server: "srv", Tool: "echo", Hash: "h1", Fingerprint: "f1", SetBy: "owner"}},
		{Run: run.ID, CallID: "b", Name: "srv__out", Allowance: Allowance{Scope: AnswerThread, Thread: f.thread.ID, ServerID: 1, Server: "srv", Tool: "out", Hash: "h1", Fingerprint: "f1", SetBy: "user:ann"}},
	}
	if diff := cmp.Diff(want, got, cmp.Transformer("when", func(time.Time) int { return 0 })); diff != "" {
		t.Errorf("the allowance events (-want +got):\n%s", diff)
	}
	for _, b := range got {
		if b.SetAt.IsZero() {
			t.Errorf("call %s's allowance has no time", b.CallID)
		}
	}
}
