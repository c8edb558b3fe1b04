package threads

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Bounds of the approval timeout the owner sets, and its default.
const (
	DefaultApprovalTimeout = 10 * time.Minute
	MinApprovalTimeout     = 10 * time.Second
	MaxApprovalTimeout     = 24 * time.Hour
)

// ApprovalTimeout is how long a pending approval waits before it expires
// as declined: the owner's setting, or DefaultApprovalTimeout.
func (s *Store) ApprovalTimeout(ctx context.Context) (time.Duration, error) {
	var secs int64
	err := s.db.QueryRowContext(ctx, `SELECT approval_timeout FROM thread_settings WHERE id = 1`).Scan(&secs)
	if errors.Is(err, sql.ErrNoRows) {
		return DefaultApprovalTimeout, nil
	}
	return time.Duration(secs) * time.Second, err
}

// SetApprovalTimeout sets it, in whole seconds from MinApprovalTimeout to
// MaxApprovalTimeout; anything else is ErrInvalid, and nothing changes.
func (s *Store) SetApprovalTimeout(ctx context.Context, actor string, d time.Duration) error {
	if d < MinApprovalTimeout || d > MaxApprovalTimeout || d%time.Second != 0 {
		return fmt.Errorf("%w: an approval timeout of %s: want whole seconds from %s to %s", ErrInvalid, d, MinApprovalTimeout, MaxApprovalTimeout)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO thread_settings (id, approval_timeout, set_by, set_at) VALUES (1, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET approval_timeout = excluded.approval_timeout, set_by = excluded.set_by, set_at = excluded.set_at`,
		int64(d/time.Second), actor, stamp(s.now()))
	return err
}
