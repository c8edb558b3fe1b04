package threads

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
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

// TestReplicasTakeOnlyTheRunsOfTheGone: on PostgreSQL, the runs a replica
// would take over are those of a replica that is gone, never a live one's;
// taking one cancels the approval it waited for.
func TestReplicasTakeOnlyTheRunsOfTheGone(t *testing.T) {
	dir := t.TempDir()
	a := storeIn(t, dir)
	if database.DialectOf(a.db) != database.PostgreSQL {
		t.Skip("on SQLite one process owns the database: TestRuns covers its start")
	}
	b := storeIn(t, dir) // the same database, as another replica
	ctx := context.Background()
	for _, s := range []*Store{a, b} {
		if err := s.JoinReplicas(ctx); err != nil {
			t.Fatal(err)
		}
	}
	defer b.LeaveReplicas()
	th, _ := a.Create(ctx, Thread{Title: "t"})
	r, err := a.StartRun(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	a.SetStatus(ctx, r.ID, WaitingApproval, "")
	p, err := a.Request(ctx, r.ID, "call-1", ToolRef{ServerID: 1, Tool: "echo"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if jobs, err := b.strays(ctx); len(jobs) != 0 || err != nil {
		t.Fatalf("the runs of a live replica are strays: %+v (%v)", jobs, err)
	}
	a.LeaveReplicas() // as when a's process dies: its connection, and lock, end
	jobs, err := b.strays(ctx)
	if err != nil || len(jobs) != 1 || jobs[0] != (Job{Run: r.ID, Owner: a.replica}) {
		t.Fatalf("after the replica went: strays %+v (%v), want its run", jobs, err)
	}
	if _, ok, err := b.claim(ctx, jobs[0]); !ok || err != nil {
		t.Fatalf("taking the gone replica's run: %v %v", ok, err)
	}
	if got, _, _ := b.GetApproval(ctx, p.ID); got.Status != AnswerCancel {
		t.Errorf("its approval: %+v", got)
	}
	if jobs, _ := b.strays(ctx); len(jobs) != 0 {
		t.Errorf("a run taken is still a stray: %+v", jobs)
	}
}

// TestInterruptAllAppendsEnds: a workspace dies while a run waits for an
// approval (its database is closed under it, so it writes nothing more);
// the workspace that opens the file next runs InterruptAll, which appends,
// in the transaction that ends them, the approval's end (cancelled, by
// zero, the pending event's other fields as they were) and the run's end
// (interrupted, saying why), as the loop writes them. The thread's events
// end with those two, and its streams get them. The next run gives the
// call its placeholder, once, and the provider takes the history.
func TestInterruptAllAppendsEnds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dead := storeIn(t, dir)
	th, err := dead.Create(ctx, Thread{Title: "t", Provider: "p", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	addServer(t, dead, 1)
	r := NewRunner(dead)
	t.Cleanup(r.Close) // after the crash: it finds the database closed
	f := &loopFixture{t: t, s: dead, r: r, tools: &fakeTools{},
		model: &fakeModel{script: []model.Response{calls(modeltest.Call("c1", "srv__echo", `{"x":1}`))}}, thread: th}
	run := f.start("go")
	pending, seq := f.pending(0)
	dead.db.Close()

	s := storeIn(t, dir)
	stream := s.hub.subscribe(th.ID)
	const why = "the workspace stopped before the run ended"
	if n, err := s.InterruptAll(ctx, why); n != 1 || err != nil {
		t.Fatalf("interrupted %d (%v)", n, err)
	}
	events, err := s.Events(ctx, th.ID, seq)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Kind+" "+string(e.Body))
	}
	if len(events) != 2 || events[0].Kind != KindApproval || events[1].Kind != KindRun {
		t.Fatalf("the events after the pending approval:\n%s\nwant its end and the run's", strings.Join(kinds, "\n"))
	}
	var ended ApprovalEvent
	json.Unmarshal(events[0].Body, &ended)
	want := pending
	want.Status, want.By = AnswerCancel, "zero"
	if diff := cmp.Diff(want, ended); diff != "" {
		t.Errorf("the approval's end (-want +got):\n%s", diff)
	}
	var end RunEvent
	json.Unmarshal(events[1].Body, &end)
	if end != (RunEvent{Run: run.ID, Status: Interrupted, Error: why}) {
		t.Errorf("the run's end: %s", events[1].Body)
	}
	for _, e := range events {
		select {
		case u := <-stream:
			if u.event == nil || u.event.Seq != e.Seq {
				t.Errorf("streamed %+v, want event %d", u, e.Seq)
			}
		default:
			t.Errorf("event %d was not streamed", e.Seq)
		}
	}
	if got, _ := s.GetRun(ctx, run.ID); got.Status != Interrupted || got.Error != why {
		t.Errorf("the run: %+v", got)
	}

	// The next run, on the workspace that opened: c1 gets its placeholder.
	f.s, f.r = s, NewRunner(s)
	t.Cleanup(f.r.Close)
	if r := f.wait(f.start("again")); r.Status != Completed {
		t.Fatalf("the next run: %+v", r)
	}
	f.valid()
	var results []string
	for _, m := range f.messages() {
		if m.ToolCallID == "c1" {
			results = append(results, m.Content)
		}
	}
	if len(results) != 1 || !strings.Contains(results[0], "no result") {
		t.Errorf("c1's results: %q, want one placeholder", results)
	}
}
