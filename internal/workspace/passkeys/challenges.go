package passkeys

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"
)

// The kinds of challenge.
const (
	kindRegister = "register"
	kindAssert   = "assert"
)

// A challenge is one begun and not yet answered.
type challenge struct {
	nonce   string
	userID  int64
	kind    string
	binding string // hex; "" for a registration
	words   string
	session webauthn.SessionData
}

// keep stores c, to expire ChallengeTTL from now. It first deletes a
// bounded batch of expired challenges, and the person's oldest beyond
// maxPending-1, so that what Begin keeps stays bounded.
func (s *Service) keep(ctx context.Context, c challenge) error {
	now := s.now()
	session, err := json.Marshal(c.session)
	if err != nil {
		return fmt.Errorf("keep the passkey challenge: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM passkey_challenges WHERE nonce IN
		(SELECT nonce FROM passkey_challenges WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`, stamp(now), sweepBatch); err != nil {
		return fmt.Errorf("delete expired passkey challenges: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM passkey_challenges WHERE user_id = ? AND nonce NOT IN
		(SELECT nonce FROM passkey_challenges WHERE user_id = ? ORDER BY expires_at DESC, nonce LIMIT ?)`,
		c.userID, c.userID, maxPending-1); err != nil {
		return fmt.Errorf("delete old passkey challenges: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO passkey_challenges (nonce, user_id, kind, binding, words, session, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, c.nonce, c.userID, c.kind, c.binding, c.words, string(session), stamp(now.Add(ChallengeTTL))); err != nil {
		return fmt.Errorf("keep the passkey challenge: %w", err)
	}
	return nil
}

// consume deletes the challenge nonce names, whoever's and whatever kind
// it is, and returns it if it is userID's, of kind, and not expired; else
// ErrChallengeUnknown. The DELETE is the only read: of two callers with
// one nonce, at most one gets its row, on SQLite (one writer) and on
// PostgreSQL (the second DELETE waits for the first's row lock, then finds
// the row gone).
func (s *Service) consume(ctx context.Context, nonce string, userID int64, kind string) (challenge, error) {
	c := challenge{nonce: nonce}
	var session, expires string
	err := s.db.QueryRowContext(ctx, `DELETE FROM passkey_challenges WHERE nonce = ?
		RETURNING user_id, kind, binding, words, session, expires_at`, nonce).Scan(&c.userID, &c.kind, &c.binding, &c.words, &session, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return challenge{}, ErrChallengeUnknown
	case err != nil:
		return challenge{}, fmt.Errorf("use the passkey challenge: %w", err)
	}
	exp, err := time.Parse(time.RFC3339Nano, expires)
	if err != nil || c.userID != userID || c.kind != kind || !s.now().Before(exp) {
		return challenge{}, ErrChallengeUnknown
	}
	if err := json.Unmarshal([]byte(session), &c.session); err != nil {
		return challenge{}, fmt.Errorf("read the passkey challenge: %w", err)
	}
	return c, nil
}
