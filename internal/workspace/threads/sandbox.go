package threads

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/zero-dev/zero/internal/sandbox"
)

// KindCall is the event of a call a sandbox backend ran (CallEvent),
// stored with the call's result.
const KindCall = "call"

// CallEvent is the body of a KindCall event: call CallID of run Run, of
// the tool the model calls Name, ran on Backend and ended as Outcome.
type CallEvent struct {
	Run     int64  `json:"run"`
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Backend string `json:"backend"`
	Outcome string `json:"outcome"`
}

// Outcomes of a sandboxed call, in a CallEvent and a Result.
const (
	OutcomeOK           = "ok"
	OutcomeError        = "error"
	OutcomeTimedOut     = "timed_out"
	OutcomeMemoryKilled = "memory_killed"
	OutcomeRefused      = "refused" // nothing ran: the tool is not offered, or changed since
)

// SandboxSettings are the owner's settings of sandboxed threads.
type SandboxSettings struct {
	// Pin is the one backend sandboxed threads may use; Minimum the
	// weakest (sandbox.Tiers): at most one is set, neither for any.
	Pin     string `json:"pin"`
	Minimum string `json:"minimum"`
	// Approval is the decision on a sandboxed thread's call that no rule
	// decides: Ask (the default) or Allow.
	Approval string    `json:"approval"`
	SetBy    string    `json:"set_by,omitempty"`
	SetAt    time.Time `json:"set_at,omitzero"`
}

// Policy is the settings' sandbox policy for a new thread.
func (s SandboxSettings) Policy() sandbox.Policy {
	return sandbox.Policy{Pin: sandbox.Backend(s.Pin), Minimum: sandbox.Backend(s.Minimum)}
}

// Words say which backends the settings allow, for a person.
func (s SandboxSettings) Words() string {
	switch {
	case s.Pin != "":
		return "pinned to " + s.Pin
	case s.Minimum != "":
		return "at least " + s.Minimum
	}
	return "any backend"
}

// check refuses settings with an unknown backend, both a pin and a
// minimum, or an approval default other than Ask or Allow.
func (s SandboxSettings) check() error {
	for _, b := range []string{s.Pin, s.Minimum} {
		if b == "" {
			continue
		}
		if _, err := sandbox.ParseBackend(b); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	if s.Pin != "" && s.Minimum != "" {
		return fmt.Errorf("%w: pin a backend or set a minimum, not both", ErrInvalid)
	}
	if s.Approval != Ask && s.Approval != Allow {
		return fmt.Errorf("%w: the approval default %q: want %s or %s", ErrInvalid, s.Approval, Ask, Allow)
	}
	return nil
}

// SandboxSettings returns the owner's settings of sandboxed threads: any
// backend, and ask, until they are set.
func (s *Store) SandboxSettings(ctx context.Context) (SandboxSettings, error) {
	var (
		out SandboxSettings
		at  string
	)
	err := s.db.QueryRowContext(ctx, `SELECT pin, minimum, approval, set_by, set_at FROM sandbox_settings WHERE id = 1`).
		Scan(&out.Pin, &out.Minimum, &out.Approval, &out.SetBy, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return SandboxSettings{Approval: Ask}, nil
	}
	out.SetAt = parseStamp(at)
	return out, err
}

// SetSandboxSettings sets them for actor; settings that check refuses are
// ErrInvalid, and nothing changes.
func (s *Store) SetSandboxSettings(ctx context.Context, actor string, set SandboxSettings) (SandboxSettings, error) {
	if err := set.check(); err != nil {
		return SandboxSettings{}, err
	}
	set.SetBy, set.SetAt = actor, s.now()
	_, err := s.db.ExecContext(ctx, `INSERT INTO sandbox_settings (id, pin, minimum, approval, set_by, set_at) VALUES (1, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET pin = excluded.pin, minimum = excluded.minimum, approval = excluded.approval,
		set_by = excluded.set_by, set_at = excluded.set_at`, set.Pin, set.Minimum, set.Approval, actor, stamp(set.SetAt))
	if err != nil {
		return SandboxSettings{}, err
	}
	set.SetAt = parseStamp(stamp(set.SetAt))
	return set, nil
}
