// Package state owns Agent Zero's own database under $ZERO_HOME/agent: the
// changes the authorization chain held for a person's approval, and the
// ledger of webhook deliveries seen, which refuses a replay. The job queue
// (River) keeps its tables in the same file.
package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zero-dev/zero/internal/database"
)

// LedgerRetention is how long a webhook delivery's key is remembered: more
// than the 8 days a forge may retry or redeliver.
const LedgerRetention = 30 * 24 * time.Hour

var migrations = []string{
	`CREATE TABLE held_tasks (
		id             TEXT PRIMARY KEY,
		created_at     TEXT NOT NULL,
		repo_name      TEXT NOT NULL,
		repo_dir       TEXT NOT NULL,
		remote         TEXT NOT NULL,
		default_branch TEXT NOT NULL,
		head_sha       TEXT NOT NULL,
		policy_sha     TEXT NOT NULL,
		work           TEXT NOT NULL,
		mode           TEXT NOT NULL,
		confidence     REAL NOT NULL,
		risk           TEXT NOT NULL,
		diff           TEXT NOT NULL,
		status         TEXT NOT NULL CHECK (status IN ('held', 'approved'))
	);
	CREATE TABLE deliveries (
		key     TEXT PRIMARY KEY,
		seen_at TEXT NOT NULL
	);`,
}

// State is the open database.
type State struct {
	DB *sql.DB
}

// Open opens (creating it) the database in dir.
func Open(ctx context.Context, dir string) (*State, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	db, err := database.OpenSQLite(ctx, filepath.Join(dir, "agent.db"), migrations)
	if err != nil {
		return nil, err
	}
	return &State{DB: db}, nil
}

// OpenPostgres opens the state in the PostgreSQL database dsn names, which
// several workers on several machines may share: a delivery is new to
// exactly one of them.
func OpenPostgres(ctx context.Context, dsn string) (*State, error) {
	db, err := database.OpenPostgres(ctx, dsn, migrations)
	if err != nil {
		return nil, err
	}
	return &State{DB: db}, nil
}

// Close closes the database.
func (s *State) Close() error { return s.DB.Close() }

// A Held is a change the chain held for a person.
type Held struct {
	ID, RepoName, RepoDir, Remote, DefaultBranch, HeadSHA, PolicySHA, Work, Mode, Risk, Diff, Status string
	Confidence                                                                                       float64
	CreatedAt                                                                                        time.Time
}

// ErrNoTask reports an unknown task id.
var ErrNoTask = errors.New("no such held task")

// Hold saves a held change.
func (s *State) Hold(ctx context.Context, h Held) error {
	_, err := s.DB.ExecContext(ctx, `INSERT INTO held_tasks (id, created_at, repo_name, repo_dir, remote, default_branch, head_sha, policy_sha, work, mode, confidence, risk, diff, status)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'held')`,
		h.ID, h.CreatedAt.UTC().Format(time.RFC3339Nano), h.RepoName, h.RepoDir, h.Remote, h.DefaultBranch, h.HeadSHA, h.PolicySHA, h.Work, h.Mode, h.Confidence, h.Risk, h.Diff)
	return err
}

// Get returns a held change.
func (s *State) Get(ctx context.Context, id string) (Held, error) {
	var h Held
	var created string
	err := s.DB.QueryRowContext(ctx, `SELECT id, created_at, repo_name, repo_dir, remote, default_branch, head_sha, policy_sha, work, mode, confidence, risk, diff, status FROM held_tasks WHERE id = ?`, id).
		Scan(&h.ID, &created, &h.RepoName, &h.RepoDir, &h.Remote, &h.DefaultBranch, &h.HeadSHA, &h.PolicySHA, &h.Work, &h.Mode, &h.Confidence, &h.Risk, &h.Diff, &h.Status)
	if errors.Is(err, sql.ErrNoRows) {
		return h, fmt.Errorf("%w: %q", ErrNoTask, id)
	}
	h.CreatedAt, _ = time.Parse(time.RFC3339Nano, created)
	return h, err
}

// MarkApproved records that a person approved a held change; it fails if
// the change was approved already.
func (s *State) MarkApproved(ctx context.Context, id string) error {
	res, err := s.DB.ExecContext(ctx, `UPDATE held_tasks SET status = 'approved' WHERE id = ? AND status = 'held'`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("task %q is not waiting for approval", id)
	}
	return nil
}

// Remember records a webhook delivery's key and reports whether it is new;
// a key seen before, within LedgerRetention, is a replay.
func (s *State) Remember(ctx context.Context, key string, now time.Time) (bool, error) {
	if _, err := s.DB.ExecContext(ctx, `DELETE FROM deliveries WHERE seen_at < ?`, now.Add(-LedgerRetention).UTC().Format(time.RFC3339Nano)); err != nil {
		return false, err
	}
	// One statement, atomic in either database: of workers that see the
	// same key at once, exactly one inserts it.
	res, err := s.DB.ExecContext(ctx, `INSERT INTO deliveries (key, seen_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`, key, now.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
