package threads

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/zero-dev/zero/internal/database"
)

// Run statuses: a run is running or waiting for an approval until it ends
// completed, interrupted (cancelled, or the workspace stopped) or failed.
const (
	Running         = "running"
	WaitingApproval = "waiting_approval"
	Completed       = "completed"
	Interrupted     = "interrupted"
	Failed          = "failed"
)

// ErrBusy reports a thread that has a run not ended.
var ErrBusy = errors.New("the thread has a run that has not ended")

// ErrTransition reports a status change a run cannot make.
var ErrTransition = errors.New("a run cannot change status so")

// A Run is one run of a thread's loop.
type Run struct {
	ID      int64     `json:"id"`
	Thread  int64     `json:"thread"`
	Status  string    `json:"status"`
	Error   string    `json:"error,omitempty"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	// Actor is who started it: the caller of its tool calls.
	Actor string `json:"-"`
}

// ended reports whether status is a final one.
func ended(status string) bool {
	return status == Completed || status == Interrupted || status == Failed
}

// may reports whether a run may go from one status to another: between
// running and waiting for an approval, and from either to an end.
func may(from, to string) bool {
	switch {
	case ended(from):
		return false
	case ended(to):
		return true
	}
	return (from == Running && to == WaitingApproval) || (from == WaitingApproval && to == Running)
}

// StartRun starts a run of thread id, running; a thread whose last run has
// not ended gets ErrBusy.
func (s *Store) StartRun(ctx context.Context, id int64) (Run, error) {
	return s.startRun(ctx, id, "")
}

// startRun is StartRun, saving actor as the caller of the run's calls.
func (s *Store) startRun(ctx context.Context, id int64, actor string) (Run, error) {
	if _, err := s.Get(ctx, id); err != nil {
		return Run{}, err
	}
	now := s.now()
	var rid int64
	err := s.db.QueryRowContext(ctx, `INSERT INTO thread_runs (thread_id, status, started_at, replica, actor) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		id, Running, stamp(now), s.replica, actor).Scan(&rid)
	if err != nil {
		if database.IsUnique(err) {
			return Run{}, fmt.Errorf("%w: thread %d", ErrBusy, id)
		}
		return Run{}, err
	}
	return Run{ID: rid, Thread: id, Status: Running, Started: now, Actor: actor}, nil
}

// SetStatus moves run rid to status, with why for an end that is not
// completed; a change may does not allow is ErrTransition, and nothing
// changes.
func (s *Store) SetStatus(ctx context.Context, rid int64, status, why string) (Run, error) {
	return s.setStatus(ctx, nil, rid, status, why)
}

// setStatus is SetStatus, for a run taken as a job with f: nothing
// changes unless the run is still f's (ErrTakenOver).
func (s *Store) setStatus(ctx context.Context, f *fence, rid int64, status, why string) (Run, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Run{}, err
	}
	defer tx.Rollback()
	r, err := s.moveRun(ctx, tx, f, rid, status, why)
	if err != nil {
		return Run{}, err
	}
	return r, tx.Commit()
}

// endRun moves run rid to status, an end, and appends its end event (a
// KindRun RunEvent) to its thread in the same transaction: whoever sees the
// run ended finds its end event too.
func (s *Store) endRun(ctx context.Context, f *fence, rid int64, status, why string) (Run, error) {
	a, err := s.beginAppend(ctx)
	if err != nil {
		return Run{}, err
	}
	defer a.end()
	r, err := s.moveRun(ctx, a.tx, f, rid, status, why)
	if err != nil {
		return Run{}, err
	}
	body, err := marshal(RunEvent{Run: rid, Status: status, Error: why})
	if err != nil {
		return Run{}, err
	}
	if _, err := a.add(ctx, r.Thread, Last, 0, 0, []Draft{{KindRun, body}}); err != nil {
		return Run{}, err
	}
	return r, a.commit()
}

// moveRun moves run rid to status within tx, within fence f.
func (s *Store) moveRun(ctx context.Context, tx *sql.Tx, f *fence, rid int64, status, why string) (Run, error) {
	if err := f.check(ctx, tx, s.db); err != nil {
		return Run{}, err
	}
	// On PostgreSQL the run's row stays locked until tx ends: two
	// replicas' moves of one run take turns (see database.ForUpdate).
	if _, err := tx.ExecContext(ctx, `SELECT id FROM thread_runs WHERE id = ?`+database.ForUpdate(s.db), rid); err != nil {
		return Run{}, err
	}
	r, err := getRun(ctx, tx, rid)
	if err != nil {
		return Run{}, err
	}
	if !may(r.Status, status) {
		return Run{}, fmt.Errorf("%w: run %d from %s to %s", ErrTransition, rid, r.Status, status)
	}
	endedAt := ""
	if ended(status) {
		r.Ended = s.now()
		endedAt = stamp(r.Ended)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE thread_runs SET status = ?, error = ?, ended_at = ? WHERE id = ?`, status, why, endedAt, rid); err != nil {
		return Run{}, err
	}
	r.Status, r.Error = status, why
	return r, nil
}

// replicaLock is the first key of the PostgreSQL advisory locks replicas
// hold on their numbers (the second is the number).
const replicaLock = 0x7a657230 // "zer0"

// JoinReplicas makes s one of the workspaces that share a PostgreSQL
// database: it takes a number no live replica holds, holds an advisory
// lock on it on a connection of its own until LeaveReplicas, and marks the
// runs it starts with it. On SQLite, which one process owns, it does
// nothing.
func (s *Store) JoinReplicas(ctx context.Context) error {
	if database.DialectOf(s.db) != database.PostgreSQL {
		return nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	for {
		r := 1 + mrand.Int64N(1<<31-1)
		var got bool
		if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(?, ?)`, replicaLock, r).Scan(&got); err != nil {
			conn.Close()
			return err
		}
		if got {
			s.replica, s.hold = r, conn
			return nil
		}
	}
}

// LeaveReplicas lets go of the number JoinReplicas took: the other
// replicas then take over the runs s left (see strays).
func (s *Store) LeaveReplicas() {
	if s.hold != nil {
		// The connection goes back to the pool, still open: the lock is
		// let go first. (A process that dies lets go with its connections.)
		s.hold.ExecContext(context.Background(), `SELECT pg_advisory_unlock(?, ?)`, replicaLock, s.replica)
		s.hold.Close()
		s.hold = nil
	}
}

// InterruptAll ends every run not ended as interrupted, saying why, and
// cancels the approvals they waited for: a workspace that starts again
// does not go on with the runs of the one before it, and an answer to one
// of them allows nothing. In the same transaction it appends, to each
// run's thread, the events that end the approvals it left pending (see
// approvalEnds) and the run's end, as the loop writes them: the events
// and the streams do not show the run going on. The calls it left without
// a result get their placeholders when the thread's next run starts. It
// is for SQLite, which one workspace owns; on PostgreSQL the runs of
// replicas that are gone are taken over instead.
func (s *Store) InterruptAll(ctx context.Context, why string) (int64, error) {
	a, err := s.beginAppend(ctx)
	if err != nil {
		return 0, err
	}
	defer a.end()
	tx := a.tx
	now := stamp(s.now())
	if _, err := tx.ExecContext(ctx, `UPDATE thread_approvals SET status = ?, answered_by = 'zero', answered_at = ? WHERE status = ?`,
		AnswerCancel, now, Pending); err != nil {
		return 0, err
	}
	rows, err := tx.QueryContext(ctx, `UPDATE thread_runs SET status = ?, error = ?, ended_at = ? WHERE status IN (?, ?) RETURNING id, thread_id`,
		Interrupted, why, now, Running, WaitingApproval)
	if err != nil {
		return 0, err
	}
	var runs []Run
	for rows.Next() {
		var r Run
		if err := rows.Scan(&r.ID, &r.Thread); err != nil {
			rows.Close()
			return 0, err
		}
		runs = append(runs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, r := range runs {
		drafts, err := approvalEnds(ctx, tx, r)
		if err != nil {
			return 0, err
		}
		end, err := marshal(RunEvent{Run: r.ID, Status: Interrupted, Error: why})
		if err != nil {
			return 0, err
		}
		if _, err := a.add(ctx, r.Thread, Last, 0, 0, append(drafts, Draft{KindRun, end})); err != nil {
			return 0, fmt.Errorf("end run %d: %w", r.ID, err)
		}
	}
	return int64(len(runs)), a.commit()
}

// gone reports whether replica r's workspace is gone: its lock is free
// (taken and let go again here).
func (s *Store) gone(ctx context.Context, r int64) (bool, error) {
	if r == s.replica {
		return false, nil
	}
	var got bool
	if err := s.hold.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(?, ?)`, replicaLock, r).Scan(&got); err != nil || !got {
		return false, err
	}
	_, err := s.hold.ExecContext(ctx, `SELECT pg_advisory_unlock(?, ?)`, replicaLock, r)
	return true, err
}

// LastRun returns thread id's latest run, and false if it has none.
func (s *Store) LastRun(ctx context.Context, id int64) (Run, bool, error) {
	var rid int64
	err := s.db.QueryRowContext(ctx, `SELECT id FROM thread_runs WHERE thread_id = ? ORDER BY id DESC LIMIT 1`, id).Scan(&rid)
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, false, nil
	}
	if err != nil {
		return Run{}, false, err
	}
	r, err := s.GetRun(ctx, rid)
	return r, err == nil, err
}

// GetRun returns run rid.
func (s *Store) GetRun(ctx context.Context, rid int64) (Run, error) {
	return getRun(ctx, s.db, rid)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getRun(ctx context.Context, q querier, rid int64) (Run, error) {
	var (
		r              Run
		started, endAt string
	)
	err := q.QueryRowContext(ctx, `SELECT id, thread_id, status, error, started_at, ended_at, actor FROM thread_runs WHERE id = ?`, rid).
		Scan(&r.ID, &r.Thread, &r.Status, &r.Error, &started, &endAt, &r.Actor)
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("%w: no run %d", ErrNotFound, rid)
	}
	if err != nil {
		return Run{}, err
	}
	r.Started = parseStamp(started)
	if endAt != "" {
		r.Ended = parseStamp(endAt)
	}
	return r, nil
}
