package passkeys

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Required reports whether approvals need a passkey: not when the owner
// switched it off; else (switched on, or never set) when the owner,
// ownerID, has a passkey. A member's passkeys do not count.
func (s *Service) Required(ctx context.Context, ownerID int64) (bool, error) {
	var setting string
	err := s.db.QueryRowContext(ctx, `SELECT required FROM passkey_settings WHERE id = 1`).Scan(&setting)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return false, fmt.Errorf("read the passkey setting: %w", err)
	case setting == "off":
		return false, nil
	}
	n, err := s.Count(ctx, ownerID)
	return n > 0, err
}

// SetRequired sets whether approvals need a passkey (once the owner has
// one), as actor.
func (s *Service) SetRequired(ctx context.Context, actor string, on bool) error {
	setting := "off"
	if on {
		setting = "on"
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO passkey_settings (id, required, set_by, set_at) VALUES (1, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET required = excluded.required, set_by = excluded.set_by, set_at = excluded.set_at`,
		setting, actor, stamp(s.now())); err != nil {
		return fmt.Errorf("set the passkey setting: %w", err)
	}
	return nil
}

// Reset removes every passkey, every pending challenge and the setting (zero
// login --reset-passkeys), and returns how many passkeys it removed.
func (s *Service) Reset(ctx context.Context) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("reset passkeys: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM passkeys`)
	if err != nil {
		return 0, fmt.Errorf("reset passkeys: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("reset passkeys: %w", err)
	}
	for _, q := range []string{`DELETE FROM passkey_challenges`, `DELETE FROM passkey_settings`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return 0, fmt.Errorf("reset passkeys: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("reset passkeys: %w", err)
	}
	return int(n), nil
}
