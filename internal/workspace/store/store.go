// Package store owns the workspace's database: it opens the SQLite file
// under $ZERO_HOME, migrates it to the current schema at start, and hands
// out a *sql.DB. It is the only package that imports the SQLite driver;
// everything else speaks database/sql, so another engine (Postgres, say)
// can take its place.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"

	_ "modernc.org/sqlite" // the driver, registered as "sqlite"
)

// migrations are applied in order; migrations[i] takes the schema from
// version i to i+1. Never edit one that has shipped: add another.
var migrations = []string{
	`CREATE TABLE users (
		id         INTEGER PRIMARY KEY,
		name       TEXT NOT NULL UNIQUE,
		role       TEXT NOT NULL CHECK (role IN ('owner', 'member', 'viewer')),
		created_at TEXT NOT NULL
	);
	CREATE TABLE login_links (
		hash       TEXT PRIMARY KEY,
		user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
		expires_at TEXT NOT NULL
	);
	CREATE TABLE sessions (
		hash       TEXT PRIMARY KEY,
		user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
		csrf       TEXT NOT NULL,
		expires_at TEXT NOT NULL
	);
	CREATE TABLE tokens (
		id         INTEGER PRIMARY KEY,
		user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
		name       TEXT NOT NULL,
		hash       TEXT NOT NULL UNIQUE,
		created_at TEXT NOT NULL
	);
	CREATE TABLE servers (
		id                   INTEGER PRIMARY KEY,
		name                 TEXT NOT NULL UNIQUE,
		config               TEXT NOT NULL,
		approved_fingerprint TEXT NOT NULL DEFAULT '',
		enabled              INTEGER NOT NULL DEFAULT 0,
		status               TEXT NOT NULL DEFAULT 'untested',
		tools                TEXT NOT NULL DEFAULT '[]',
		last_error           TEXT NOT NULL DEFAULT '',
		created_at           TEXT NOT NULL,
		updated_at           TEXT NOT NULL
	);
	CREATE TABLE secrets (
		server_id  INTEGER NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
		kind       TEXT NOT NULL CHECK (kind IN ('env', 'header')),
		name       TEXT NOT NULL,
		sealed     BLOB NOT NULL,
		PRIMARY KEY (server_id, kind, name)
	);`,
	// 2: a server's logo, a data: URL the server made from the icon the
	// MCP server declared.
	`ALTER TABLE servers ADD COLUMN logo TEXT NOT NULL DEFAULT ''`,
}

// Open opens (creating it if need be) the database file at path and
// migrates it to the current schema. A new file is readable and writable by
// its owner only, and SQLite gives its journal files the same mode.
func Open(ctx context.Context, path string) (*sql.DB, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	f.Close()
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(FULL)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1) // SQLite has one writer; one connection keeps it simple and safe
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate database %s: %w", path, err)
	}
	return db, nil
}

// Version is the schema version Open migrates to.
func Version() int { return len(migrations) }

func migrate(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var version int
	err := db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&version)
	switch {
	case err == sql.ErrNoRows:
		if _, err := db.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if version > len(migrations) {
		return fmt.Errorf("the database is at schema version %d, newer than this zero knows (%d)", version, len(migrations))
	}
	for v := version; v < len(migrations); v++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("to version %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, v+1); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}
