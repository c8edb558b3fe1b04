package threads

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/database"
)

// TestRuns: a thread has at most one run that has not ended; a run goes
// between running and waiting for an approval, and from either to an end,
// never out of an end; InterruptOrphans ends what a stopped workspace left.
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
	if n, err := s.InterruptOrphans(ctx, "the workspace stopped"); n != 1 || err != nil {
		t.Errorf("interrupted %d (%v)", n, err)
	}
	got, _ = s.GetRun(ctx, r2.ID)
	if got.Status != Interrupted || got.Error != "the workspace stopped" {
		t.Errorf("after InterruptOrphans: %+v", got)
	}
}

// TestReplicasEndOnlyTheRunsOfTheGone: on PostgreSQL, a workspace that
// starts ends the runs of a replica that is gone, never a live one's.
func TestReplicasEndOnlyTheRunsOfTheGone(t *testing.T) {
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
	if n, err := b.InterruptOrphans(ctx, "a replica started"); n != 0 || err != nil {
		t.Fatalf("a start ended %d runs of a live replica (%v)", n, err)
	}
	a.LeaveReplicas() // as when a's process dies: its connection, and lock, end
	if n, err := b.InterruptOrphans(ctx, "a replica started"); n != 1 || err != nil {
		t.Fatalf("after the replica went: ended %d runs (%v), want 1", n, err)
	}
	if got, _ := b.GetRun(ctx, r.ID); got.Status != Interrupted || got.Error != "a replica started" {
		t.Errorf("the gone replica's run: %+v", got)
	}
	if got, _, _ := b.GetApproval(ctx, p.ID); got.Status != AnswerCancel {
		t.Errorf("its approval: %+v", got)
	}
}
