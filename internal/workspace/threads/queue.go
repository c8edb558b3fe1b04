package threads

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/zero-dev/zero/internal/database"
)

// Sweep is how often a replica looks for the runs of replicas that are
// gone, to queue them again.
const Sweep = 2 * time.Second

// A Job is a run queued for whichever replica is free: Owner and Taken
// are the replica number the run carried when it was queued, and how
// many times it had been taken. The replica that works it takes the run
// only while the run still carries both, and counts one more, so that of
// two jobs of one run (queued again by two replicas that both saw its
// replica gone) one runs it, and a job River retries or rescues after the
// run was taken does nothing.
type Job struct {
	Run   int64 `json:"run"`
	Owner int64 `json:"owner"`
	Taken int64 `json:"taken"`
}

// ErrTakenOver reports a write of a run that another replica has taken
// since (its replica's lock was seen free: it lost its connection to the
// database, say, and lives on): nothing is written, and the run's loop
// here stops without a word.
var ErrTakenOver = errors.New("another replica took the run over")

// A fence is who runs a run taken as a job: this replica, at the count it
// took it at.
type fence struct {
	run, replica, taken int64
}

// check locks the run's row in tx (on PostgreSQL; see database.ForUpdate)
// and fails with ErrTakenOver if the run is no longer f's. A nil f checks
// nothing.
func (f *fence) check(ctx context.Context, tx *sql.Tx, db *sql.DB) error {
	if f == nil {
		return nil
	}
	var replica, taken int64
	if err := tx.QueryRowContext(ctx, `SELECT replica, taken FROM thread_runs WHERE id = ?`+database.ForUpdate(db), f.run).Scan(&replica, &taken); err != nil {
		return err
	}
	if replica != f.replica || taken != f.taken {
		return fmt.Errorf("%w: run %d", ErrTakenOver, f.run)
	}
	return nil
}

// A Queue queues a job (River's, on PostgreSQL).
type Queue func(ctx context.Context, j Job) error

// SetQueue makes r's runs jobs: Start saves the run and its prompt and
// queues it; whichever replica's worker takes the job calls Resume; and,
// every Sweep, r queues again the runs of replicas that are gone. It is
// for PostgreSQL, after JoinReplicas; call it before the first Start.
func (r *Runner) SetQueue(q Queue) {
	r.queue = q
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		tick := time.NewTicker(r.sweep)
		defer tick.Stop()
		for {
			select {
			case <-r.life.Done():
				return
			case <-tick.C:
				r.requeue(r.life)
			}
		}
	}()
}

// enqueue is Start on a queue: the run and its prompt are saved here, and
// the loop runs where the job is taken.
func (r *Runner) enqueue(ctx context.Context, st Start) (Run, error) {
	run, err := r.store.startRun(ctx, st.Thread, st.Actor)
	if err != nil {
		return Run{}, err
	}
	l := r.newLoop(st, run)
	err = l.begin(ctx)
	if err == nil {
		err = r.queue(ctx, Job{Run: run.ID, Owner: r.store.replica})
	}
	if err != nil {
		l.finish(context.WithoutCancel(ctx), Failed, err.Error())
		return Run{}, err
	}
	return run, nil
}

func (r *Runner) newLoop(st Start, run Run) *loop {
	return &loop{r: r, s: r.store, st: st, run: run, lim: st.Limits.withDefaults(), nonce: NewNonce(), seen: map[string]int{}, schemas: map[string]*Schema{},
		allowed: map[string]Draft{}, called: map[string]Draft{}}
}

// requeue queues again each run whose replica is gone. Two replicas may
// both queue one: the first job taken runs it (see Job).
func (r *Runner) requeue(ctx context.Context) {
	jobs, err := r.store.strays(ctx)
	if err != nil {
		return // the next sweep tries again
	}
	for _, j := range jobs {
		if r.queue(ctx, j) != nil {
			return
		}
	}
}

// Resume works job j: it takes the run if it still carries j.Owner (and
// does nothing if not), and runs its loop here from the events stored: a
// call left without a result gets its placeholder, an approval left
// pending is cancelled, and the model is asked again what it had not
// answered. build makes the run's model and tools (Thread and Prompt are
// not read); the run fails if it cannot. Resume returns when the run
// ends, or when r closes (the run then ends interrupted); a runner that
// is closing takes no run, and returns an error.
func (r *Runner) Resume(ctx context.Context, j Job, build func(Run) (Start, error)) error {
	if r.life.Err() != nil {
		return errStopped // not taken: the job is retried, on a replica that is not stopping
	}
	run, ok, err := r.store.claim(ctx, j)
	if err != nil || !ok {
		return err
	}
	st, err := build(run)
	st.Thread, st.Actor = run.Thread, run.Actor
	l := r.newLoop(st, run)
	l.fence = &fence{run: run.ID, replica: r.store.replica, taken: j.Taken + 1}
	if err == nil {
		err = l.resume(ctx)
	}
	if err != nil {
		l.finish(context.WithoutCancel(ctx), Failed, err.Error())
		return nil
	}
	runCtx, cancel := context.WithCancelCause(r.life)
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	defer stop()
	r.mu.Lock()
	r.runs[run.Thread] = &active{run: run, cancel: cancel}
	r.mu.Unlock()
	defer r.forget(run.Thread)
	// A cancel that came while no replica held the run; one that comes
	// from now on finds it here.
	var by string
	if err := r.store.db.QueryRowContext(ctx, `SELECT cancelled_by FROM thread_runs WHERE id = ?`, run.ID).Scan(&by); err != nil {
		cancel(err)
	} else if by != "" {
		cancel(fmt.Errorf("cancelled by %s", by))
	}
	l.drive(runCtx)
	return nil
}

// resume reads the thread's conversation, as begin does, without adding a
// prompt: the run's is stored.
func (l *loop) resume(ctx context.Context) error {
	if err := l.history(ctx, "the replica running the run stopped before this call had a result"); err != nil {
		return err
	}
	if l.run.Status == WaitingApproval {
		return l.status(ctx, Running)
	}
	return nil
}

// claim takes run j.Run for this replica if it has not ended and still
// carries j.Owner, and cancels the approvals it left pending. In the same
// transaction it appends the event that ends each approval the run's
// events left pending, as ask does: the streams and the events show it
// cancelled (or answered, by an answer whose run died before its event).
func (s *Store) claim(ctx context.Context, j Job) (Run, bool, error) {
	a, err := s.beginAppend(ctx)
	if err != nil {
		return Run{}, false, err
	}
	defer a.end()
	tx := a.tx
	var replica, taken int64
	if err := tx.QueryRowContext(ctx, `SELECT replica, taken FROM thread_runs WHERE id = ?`+database.ForUpdate(s.db), j.Run).Scan(&replica, &taken); err != nil {
		return Run{}, false, fmt.Errorf("take run %d: %w", j.Run, err)
	}
	r, err := getRun(ctx, tx, j.Run)
	if err != nil {
		return Run{}, false, err
	}
	if ended(r.Status) || replica != j.Owner || taken != j.Taken {
		return Run{}, false, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE thread_runs SET replica = ?, taken = taken + 1 WHERE id = ?`, s.replica, j.Run); err != nil {
		return Run{}, false, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE thread_approvals SET status = ?, answered_by = 'zero', answered_at = ? WHERE run_id = ? AND status = ?`,
		AnswerCancel, stamp(s.now()), j.Run, Pending); err != nil {
		return Run{}, false, err
	}
	ends, err := approvalEnds(ctx, tx, r)
	if err != nil {
		return Run{}, false, err
	}
	if len(ends) > 0 {
		if _, err := a.add(ctx, r.Thread, Last, 0, 0, ends); err != nil {
			return Run{}, false, err
		}
	}
	return r, true, a.commit()
}

// approvalEnds are the events that end the approvals of run r whose last
// event in its thread is pending: each its pending event with the status
// and the answerer the approval has now.
func approvalEnds(ctx context.Context, tx *sql.Tx, r Run) ([]Draft, error) {
	rows, err := tx.QueryContext(ctx, `SELECT body FROM thread_events WHERE thread_id = ? AND kind = ? ORDER BY seq`, r.Thread, KindApproval)
	if err != nil {
		return nil, err
	}
	var (
		order []int64
		last  = map[int64]ApprovalEvent{}
	)
	for rows.Next() {
		var (
			body string
			e    ApprovalEvent
		)
		if err := rows.Scan(&body); err != nil {
			rows.Close()
			return nil, err
		}
		if json.Unmarshal([]byte(body), &e) != nil || e.Run != r.ID {
			continue
		}
		if _, seen := last[e.Approval]; !seen {
			order = append(order, e.Approval)
		}
		last[e.Approval] = e
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []Draft
	for _, id := range order {
		e := last[id]
		if e.Status != Pending {
			continue
		}
		err := tx.QueryRowContext(ctx, `SELECT status, answered_by FROM thread_approvals WHERE id = ?`, id).Scan(&e.Status, &e.By)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, err
		}
		body, err := marshal(e)
		if err != nil {
			return nil, err
		}
		out = append(out, Draft{KindApproval, body})
	}
	return out, nil
}

// strays are the runs not ended whose replica is gone, each as a job.
func (s *Store) strays(ctx context.Context) ([]Job, error) {
	if s.hold == nil {
		return nil, errors.New("not one of the replicas")
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, replica, taken FROM thread_runs WHERE status IN (?, ?)`, Running, WaitingApproval)
	if err != nil {
		return nil, err
	}
	var all []Job
	for rows.Next() {
		var j Job
		if err := rows.Scan(&j.Run, &j.Owner, &j.Taken); err != nil {
			rows.Close()
			return nil, err
		}
		all = append(all, j)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []Job
	gone := map[int64]bool{}
	for _, j := range all {
		g, seen := gone[j.Owner]
		if !seen {
			if g, err = s.gone(ctx, j.Owner); err != nil {
				return nil, err
			}
			gone[j.Owner] = g
		}
		if g {
			out = append(out, j)
		}
	}
	return out, nil
}
