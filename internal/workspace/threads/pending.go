package threads

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Answers to a pending approval, and its other ends.
const (
	AnswerOnce    = "once"      // run this call
	AnswerThread  = "thread"    // run it, and the tool's later calls in this thread
	AnswerAlways  = "always"    // run it, and the tool's calls in every thread, while it is unchanged
	AnswerDecline = "declined"  // do not run it; the run goes on
	AnswerCancel  = "cancelled" // do not run it, and end the run
	Pending       = "pending"
	Expired       = "expired" // nobody answered in time: declined
)

// ErrAnswered reports an answer to an approval that has one, or expired.
var ErrAnswered = errors.New("the approval was answered already, or expired")

// An Approval is a tool call a run waits for a person to answer.
type Approval struct {
	ID      int64     `json:"id"`
	Run     int64     `json:"run"`
	CallID  string    `json:"call_id"`
	Tool    ToolRef   `json:"-"`
	Status  string    `json:"status"`
	By      string    `json:"answered_by,omitempty"`
	Expires time.Time `json:"expires"`
}

// Request saves a pending approval of call callID of run rid for t, which
// expires after ttl.
func (s *Store) Request(ctx context.Context, rid int64, callID string, t ToolRef, ttl time.Duration) (Approval, error) {
	if callID == "" || ttl <= 0 {
		return Approval{}, fmt.Errorf("%w: an approval needs a call id and a time to live", ErrInvalid)
	}
	exp := s.now().Add(ttl)
	var id int64
	err := s.db.QueryRowContext(ctx, `INSERT INTO thread_approvals (run_id, call_id, server_id, plugin, sandbox, tool, tool_hash, fingerprint, status, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, rid, callID, t.ServerID, t.Plugin, t.Sandbox, t.Tool, t.Hash, t.Fingerprint, Pending, stamp(exp)).Scan(&id)
	return Approval{ID: id, Run: rid, CallID: callID, Tool: t, Status: Pending, Expires: exp}, err
}

// Answer records actor's answer to approval id: AnswerOnce, AnswerThread,
// AnswerAlways, AnswerDecline or AnswerCancel. "thread" and "always" save
// the allowance (for the tool's hash and fingerprint as the call saw
// them). An approval already answered, or past its expiry, is
// ErrAnswered: it expired as declined.
func (s *Store) Answer(ctx context.Context, actor string, id int64, answer string) (Approval, error) {
	switch answer {
	case AnswerOnce, AnswerThread, AnswerAlways, AnswerDecline, AnswerCancel:
	default:
		return Approval{}, fmt.Errorf("%w: answer %q", ErrInvalid, answer)
	}
	a, thread, err := s.approval(ctx, id)
	if err != nil {
		return Approval{}, err
	}
	now := s.now()
	if a.Status == Pending && !now.Before(a.Expires) {
		return a, fmt.Errorf("%w: approval %d expired at %s", ErrAnswered, id, a.Expires.UTC().Format(time.RFC3339))
	}
	if a.Status != Pending {
		return a, fmt.Errorf("%w: approval %d is %s", ErrAnswered, id, a.Status)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE thread_approvals SET status = ?, answered_by = ?, answered_at = ? WHERE id = ? AND status = ?`,
		answer, actor, stamp(now), id, Pending)
	if err != nil {
		return Approval{}, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return a, fmt.Errorf("%w: approval %d", ErrAnswered, id)
	}
	switch answer {
	case AnswerThread:
		err = s.AllowInThread(ctx, actor, thread, a.Tool)
	case AnswerAlways:
		err = s.SetRule(ctx, actor, a.Tool, Allow)
	}
	a.Status, a.By = answer, actor
	if err != nil {
		return a, err
	}
	// After the allowance, so that the run it wakes, on whichever
	// replica, finds it saved.
	return a, s.notify(ctx, approvalNote(id))
}

// Settle ends approval id if it is still pending, with status (expired
// or cancelled) by actor, and returns it as it is then: ended so, or
// answered by a person just before.
func (s *Store) Settle(ctx context.Context, actor string, id int64, status string) (Approval, error) {
	if status != Expired && status != AnswerCancel {
		return Approval{}, fmt.Errorf("%w: settle an approval as %q", ErrInvalid, status)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE thread_approvals SET status = ?, answered_by = ?, answered_at = ? WHERE id = ? AND status = ?`,
		status, actor, stamp(s.now()), id, Pending); err != nil {
		return Approval{}, err
	}
	a, _, err := s.approval(ctx, id)
	return a, err
}

// GetApproval returns approval id and the thread of its run.
func (s *Store) GetApproval(ctx context.Context, id int64) (Approval, int64, error) {
	return s.approval(ctx, id)
}

// ExpireDue declines, as expired, every pending approval past its expiry,
// and returns how many.
func (s *Store) ExpireDue(ctx context.Context) (int64, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE thread_approvals SET status = ?, answered_at = ? WHERE status = ? AND expires_at <= ?`,
		Expired, stamp(s.now()), Pending, stamp(s.now()))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// approval returns approval id and the thread of its run.
func (s *Store) approval(ctx context.Context, id int64) (Approval, int64, error) {
	var (
		a      Approval
		thread int64
		exp    string
	)
	err := s.db.QueryRowContext(ctx, `SELECT a.id, a.run_id, a.call_id, a.server_id, a.plugin, a.sandbox, a.tool, a.tool_hash, a.fingerprint, a.status, a.answered_by,
		a.expires_at, r.thread_id FROM thread_approvals a JOIN thread_runs r ON r.id = a.run_id WHERE a.id = ?`, id).
		Scan(&a.ID, &a.Run, &a.CallID, &a.Tool.ServerID, &a.Tool.Plugin, &a.Tool.Sandbox, &a.Tool.Tool, &a.Tool.Hash, &a.Tool.Fingerprint, &a.Status, &a.By, &exp, &thread)
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, 0, fmt.Errorf("%w: no approval %d", ErrNotFound, id)
	}
	a.Expires = parseStamp(exp)
	return a, thread, err
}
