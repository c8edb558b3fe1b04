package threads

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/database/databasetest"
	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/workspace/store"
)

// A replica is one workspace's threads on a shared PostgreSQL database.
type replica struct {
	s *Store
	r *Runner
}

// twoReplicas opens two stores on one new PostgreSQL database, each with
// its own connections and runner; listen says whether their runners
// LISTEN. Each stream's heartbeat (and each waiting run's check) is an
// hour: only a NOTIFY wakes them. It returns them and an admin connection.
func twoReplicas(t *testing.T, listen bool) (a, b replica, admin *sql.DB) {
	t.Helper()
	dsn := databasetest.Postgres(t)
	ctx := context.Background()
	dir := t.TempDir()
	var out [2]replica
	for i := range out {
		db, err := database.OpenPostgres(ctx, dsn, store.Migrations())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		pool, err := database.OpenPool(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		s := New(db, filepath.Join(dir, fmt.Sprint("replica", i), "threads"))
		s.beat = time.Hour
		if err := s.JoinReplicas(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.LeaveReplicas)
		r := NewRunner(s)
		if listen {
			r.Listen(pool)
		}
		t.Cleanup(r.Close)
		out[i] = replica{s, r}
	}
	admin, err := database.ConnectPostgres(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	if listen {
		listeners(t, admin, 2)
	}
	return out[0], out[1], admin
}

// listeners waits for n connections to be listening.
func listeners(t *testing.T, admin *sql.DB, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var got int
		if err := admin.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE application_name = ? AND state = 'idle' AND query LIKE 'LISTEN%'`,
			database.ListenerName).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections listen, want %d", got, n)
		}
	}
}

// checkSeqs fails t unless got is the events 1 to n, each once, in order.
func checkSeqs(t *testing.T, got []streamed, n int) {
	t.Helper()
	var ids []int64
	for _, e := range got {
		var ev Event
		if err := json.Unmarshal([]byte(e.data), &ev); err != nil || ev.Seq != e.id {
			t.Fatalf("event %d: %q %v", e.id, e.data, err)
		}
		ids = append(ids, e.id)
	}
	if len(ids) != n {
		t.Fatalf("%d events streamed, want %d: %v", len(ids), n, ids)
	}
	for i, id := range ids {
		if id != int64(i+1) {
			t.Fatalf("event %d streamed as the %dth: %v", id, i+1, ids)
		}
	}
}

// TestStreamAcrossReplicas: a stream on replica B of a thread whose
// events replica A appends gets every event, in order, once, woken by
// A's NOTIFYs (B's heartbeat, which also reads, is an hour); an event B
// appends itself in the middle comes in its place.
func TestStreamAcrossReplicas(t *testing.T) {
	a, b, _ := twoReplicas(t, true)
	ctx := context.Background()
	th, err := a.s.Create(ctx, Thread{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	say(t, a.s, th.ID, 0, "one")
	const total = 1 + 100 + 1 + 99
	go_ := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		<-go_
		for i := range 200 {
			s := a.s
			if i == 100 {
				s = b.s
			}
			if _, err := s.Append(ctx, th.ID, Last, KindMessage, msg("assistant", fmt.Sprint("m", i))); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	started := false
	got, _ := readStream(t, streamServer(t, b.s), th.ID, "", func(e streamed) bool {
		if !started && e.id == 1 {
			started = true
			close(go_) // every other event is appended once the stream is open
		}
		return e.id == total
	})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkSeqs(t, got, total)
}

// TestStreamAfterListenDrops: when replica B's LISTEN connection drops,
// an event A appends before it is back (whose NOTIFY B never hears) still
// reaches B's stream: B reads again once it listens again.
func TestStreamAfterListenDrops(t *testing.T) {
	a, b, admin := twoReplicas(t, true)
	b.r.retry = 2 * time.Second // the time the test has to append while B does not listen
	ctx := context.Background()
	th, _ := a.s.Create(ctx, Thread{Title: "t"})
	say(t, a.s, th.ID, 0, "one")
	got, _ := readStream(t, streamServer(t, b.s), th.ID, "", func(e streamed) bool {
		if e.id == 1 {
			if _, err := admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ?`, database.ListenerName); err != nil {
				t.Fatal(err)
			}
			listeners(t, admin, 0)
			say(t, a.s, th.ID, Last, "two")
		}
		return e.id == 2
	})
	checkSeqs(t, got, 2)
	listeners(t, admin, 2) // both came back
}

// TestStreamWithoutListen: where LISTEN is broken (a pooler in
// transaction mode), a stream on B still gets A's events, read at every
// heartbeat.
func TestStreamWithoutListen(t *testing.T) {
	a, b, _ := twoReplicas(t, false)
	b.s.beat = 50 * time.Millisecond
	ctx := context.Background()
	th, _ := a.s.Create(ctx, Thread{Title: "t"})
	say(t, a.s, th.ID, 0, "one")
	got, _ := readStream(t, streamServer(t, b.s), th.ID, "", func(e streamed) bool {
		if e.id == 1 {
			say(t, a.s, th.ID, Last, "two", "three")
		}
		return e.id == 3
	})
	checkSeqs(t, got, 3)
}

// TestApprovalAcrossReplicas: a run on replica A waits for an approval; the
// answer given on replica B wakes it (through the NOTIFY: its own check
// is an hour away), the call runs and the run completes. An answer on B
// to an approval whose run has ended is refused, as on one replica.
func TestApprovalAcrossReplicas(t *testing.T) {
	a, b, _ := twoReplicas(t, true)
	ctx := context.Background()
	th, _ := a.s.Create(ctx, Thread{Title: "t", Provider: "p", Model: "m"})
	addServer(t, a.s, 1)
	f := &loopFixture{t: t, s: a.s, r: a.r, model: &fakeModel{script: []model.Response{calls(modeltest.Call("c1", "srv__echo", `{"x":1}`))}},
		tools: &fakeTools{}, thread: th}
	run := f.start("go")
	p, _ := f.pending(0)
	if _, err := b.r.Answer(ctx, "owner", p.Approval, AnswerOnce); err != nil {
		t.Fatalf("the answer on B: %v", err)
	}
	if got := f.wait(run); got.Status != Completed {
		t.Fatalf("the run: %+v", got)
	}
	if calls := f.tools.calls(); len(calls) != 1 || calls[0] != `srv__echo {"x":1}` {
		t.Errorf("the calls: %v", calls)
	}
	f.valid()
	if _, err := b.r.Answer(ctx, "owner", p.Approval, AnswerOnce); !errors.Is(err, ErrNotWaiting) {
		t.Errorf("an answer after the run ended: %v", err)
	}
}

// TestStreamFillsAGap: an event B appends itself reaches B's stream at
// once; one that A appended before it, which B has not heard of (B does
// not listen here, and its heartbeat is an hour), is read from the
// database first, so that the stream has no gap.
func TestStreamFillsAGap(t *testing.T) {
	a, b, _ := twoReplicas(t, false)
	ctx := context.Background()
	th, _ := a.s.Create(ctx, Thread{Title: "t"})
	say(t, a.s, th.ID, 0, "one")
	got, _ := readStream(t, streamServer(t, b.s), th.ID, "", func(e streamed) bool {
		if e.id == 1 {
			say(t, a.s, th.ID, Last, "two")
			say(t, b.s, th.ID, Last, "three")
		}
		return e.id == 3
	})
	checkSeqs(t, got, 3)
}

// queueJobs makes the replicas' runs jobs, queued on the channel it
// returns (for the test to work), and their sweeps quick.
func queueJobs(rs ...replica) chan Job {
	jobs := make(chan Job, 64)
	for _, r := range rs {
		r.r.sweep = 50 * time.Millisecond
		r.r.SetQueue(func(_ context.Context, j Job) error {
			select {
			case jobs <- j:
			default:
			}
			return nil
		})
	}
	return jobs
}

// loseLock ends the connection that holds r's advisory lock, as when a
// replica loses its connection to the database, and waits for the lock to
// be free: r lives on, and the other replicas' sweeps find its runs.
func loseLock(t *testing.T, admin *sql.DB, r replica) {
	t.Helper()
	held := `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid::bigint = ? AND objid::bigint = ? AND objsubid = 2`
	if _, err := admin.Exec(`SELECT pg_terminate_backend(pid) FROM (`+held+`) l`, replicaLock, r.s.replica); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool {
		var n int
		err := admin.QueryRow(`SELECT count(*) FROM (`+held+`) l`, replicaLock, r.s.replica).Scan(&n)
		return err == nil && n == 0
	})
}

// build is what Resume builds a run with: m and the fake tools.
func build(m Model) func(Run) (Start, error) {
	return func(Run) (Start, error) { return Start{Model: m, Tools: &fakeTools{}}, nil }
}

// TestResumeTakesARunOnce: a run queued as a job is taken by the first
// replica that works the job; the same job worked again (River's retry or
// rescue) does nothing. When the replica's lock goes, another replica's
// sweep queues the run again, at the count it was taken, and that replica
// completes it from the stored events. The first replica, still alive
// (it lost its lock, not its life), then gets its model's answer: it
// stores nothing, and leaves the run as the second ended it.
func TestResumeTakesARunOnce(t *testing.T) {
	a, b, admin := twoReplicas(t, false)
	jobs := queueJobs(a, b)
	ctx := context.Background()
	th, _ := a.s.Create(ctx, Thread{Title: "t"})
	mA := &fakeModel{block: make(chan struct{}), script: []model.Response{{Message: model.Message{Role: model.RoleAssistant, Content: "from A"}}}}
	mB := &fakeModel{}
	run, err := a.r.Start(ctx, Start{Thread: th.ID, Prompt: "go", Actor: "owner", Model: mA, Tools: &fakeTools{}})
	if err != nil {
		t.Fatal(err)
	}
	j0 := <-jobs
	if j0 != (Job{Run: run.ID, Owner: a.s.replica}) {
		t.Fatalf("the job: %+v", j0)
	}
	aDone := make(chan error, 1)
	go func() { aDone <- a.r.Resume(ctx, j0, build(mA)) }()
	waitUntil(t, func() bool { mA.mu.Lock(); defer mA.mu.Unlock(); return len(mA.requests) == 1 })
	if err := b.r.Resume(ctx, j0, build(mB)); err != nil || len(mB.requests) != 0 {
		t.Fatalf("the job worked again: %v, %d requests", err, len(mB.requests))
	}

	loseLock(t, admin, a)
	var j1 Job
	for j1 = <-jobs; j1.Taken == 0; j1 = <-jobs {
	}
	if j1 != (Job{Run: run.ID, Owner: a.s.replica, Taken: 1}) {
		t.Fatalf("the job queued again: %+v", j1)
	}
	if err := b.r.Resume(ctx, j1, build(mB)); err != nil {
		t.Fatal(err)
	}
	if err := b.r.Resume(ctx, j1, build(mB)); err != nil || len(mB.requests) != 1 {
		t.Fatalf("the second job worked again: %v, %d requests", err, len(mB.requests))
	}
	close(mA.block)
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	events, _ := b.s.Events(ctx, th.ID, 0)
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Kind+":"+messageText(e.Kind, e.Body))
	}
	if got, want := fmt.Sprint(kinds), "[message:go message:done usage: run:]"; got != want {
		t.Errorf("the events: %s, want %s", got, want)
	}
	if got, _ := b.s.GetRun(ctx, run.ID); got.Status != Completed {
		t.Errorf("the run: %+v", got)
	}
}

// waitUntil waits up to 10 s for ok.
func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("it did not happen in 10 s")
		}
	}
}

// TestCancelAcrossReplicas: a cancel on replica B of a run on replica A
// reaches it (a NOTIFY): the run ends interrupted, saying who cancelled.
// A thread with no run going is not cancelled.
func TestCancelAcrossReplicas(t *testing.T) {
	a, b, _ := twoReplicas(t, true)
	ctx := context.Background()
	th, _ := a.s.Create(ctx, Thread{Title: "t"})
	f := &loopFixture{t: t, s: a.s, r: a.r, model: &fakeModel{block: make(chan struct{})}, tools: &fakeTools{}, thread: th}
	run := f.start("go")
	waitUntil(t, func() bool { f.model.mu.Lock(); defer f.model.mu.Unlock(); return len(f.model.requests) == 1 })
	if ok, err := b.r.Cancel(ctx, th.ID, "owner"); !ok || err != nil {
		t.Fatalf("the cancel on B: %v %v", ok, err)
	}
	if got := f.wait(run); got.Status != Interrupted || got.Error != "cancelled by owner" {
		t.Errorf("the run: %+v", got)
	}
	if ok, err := b.r.Cancel(ctx, th.ID, "owner"); ok || err != nil {
		t.Errorf("a cancel of an ended run: %v %v", ok, err)
	}
}

// TestCancelBeforeTaken: a cancel given while no replica holds the run
// (its job not yet taken) is kept: the replica that takes the job ends
// the run as interrupted, saying who cancelled it.
func TestCancelBeforeTaken(t *testing.T) {
	a, b, _ := twoReplicas(t, true)
	jobs := make(chan Job, 1)
	a.r.SetQueue(func(_ context.Context, j Job) error { jobs <- j; return nil })
	ctx := context.Background()
	th, _ := a.s.Create(ctx, Thread{Title: "t"})
	m := &fakeModel{}
	run, err := a.r.Start(ctx, Start{Thread: th.ID, Prompt: "go", Actor: "owner", Model: m, Tools: &fakeTools{}})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := b.r.Cancel(ctx, th.ID, "owner"); !ok || err != nil {
		t.Fatalf("the cancel: %v %v", ok, err)
	}
	if err := b.r.Resume(ctx, <-jobs, func(Run) (Start, error) { return Start{Model: m, Tools: &fakeTools{}}, nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.s.GetRun(ctx, run.ID); got.Status != Interrupted || got.Error != "cancelled by owner" {
		t.Errorf("the run: %+v", got)
	}
}

// TestTakeoverEndsPendingApproval: a run waits for an approval on replica
// A; A's lock goes and replica B takes the run over. B cancels the
// approval and, in the same transaction, appends its event (cancelled, by
// zero, as a cancel on A would have written it), before the run goes on;
// the run completes on B and an answer to the approval is refused.
func TestTakeoverEndsPendingApproval(t *testing.T) {
	a, b, admin := twoReplicas(t, false)
	jobs := queueJobs(a, b)
	ctx := context.Background()
	th, _ := a.s.Create(ctx, Thread{Title: "t", Provider: "p", Model: "m"})
	addServer(t, a.s, 1)
	mA := &fakeModel{script: []model.Response{calls(modeltest.Call("c1", "srv__echo", `{"x":1}`))}}
	mB := &fakeModel{}
	run, err := a.r.Start(ctx, Start{Thread: th.ID, Prompt: "go", Actor: "owner", Model: mA, Tools: &fakeTools{}})
	if err != nil {
		t.Fatal(err)
	}
	j0 := <-jobs
	aDone := make(chan error, 1)
	go func() { aDone <- a.r.Resume(ctx, j0, build(mA)) }()
	f := &loopFixture{t: t, s: b.s, r: b.r, model: mB, thread: th}
	pending, seq := f.pending(0)

	loseLock(t, admin, a)
	var j1 Job
	for j1 = <-jobs; j1.Taken == 0; j1 = <-jobs {
	}
	if err := b.r.Resume(ctx, j1, build(mB)); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.s.GetRun(ctx, run.ID); got.Status != Completed {
		t.Fatalf("the run: %+v", got)
	}
	f.valid()
	events, _ := b.s.Events(ctx, th.ID, seq)
	var ended ApprovalEvent
	if len(events) == 0 || events[0].Kind != KindApproval || json.Unmarshal(events[0].Body, &ended) != nil {
		var after []string
		for _, e := range events {
			after = append(after, e.Kind+" "+string(e.Body))
		}
		t.Fatalf("the events after the pending approval:\n%s", strings.Join(after, "\n"))
	}
	want := pending
	want.Status, want.By = AnswerCancel, "zero"
	if ended.Approval != want.Approval || ended.Status != want.Status || ended.By != want.By || ended.CallID != want.CallID ||
		string(ended.Arguments) != string(want.Arguments) || !ended.Expires.Equal(want.Expires) {
		t.Errorf("the approval's end: %+v, want %+v", ended, want)
	}
	for _, e := range events[1:] {
		if e.Kind == KindApproval {
			t.Errorf("another approval event: %s", e.Body)
		}
	}
	if _, err := b.r.Answer(ctx, "owner", pending.Approval, AnswerOnce); !errors.Is(err, ErrNotWaiting) {
		t.Errorf("an answer after the takeover: %v", err)
	}
	// A, which lost its lock but lives, still waits for the approval:
	// closed, it stores nothing.
	a.r.Close()
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	if after, _ := b.s.Events(ctx, th.ID, 0); len(after) != int(seq)+len(events) {
		t.Errorf("A stored %d events after the takeover", len(after)-int(seq)-len(events))
	}
}
