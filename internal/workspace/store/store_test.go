package store

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/database/databasetest"
)

func TestOpenMigratesOnceAndKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "zero.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO users (name, role, created_at) VALUES ('ada', 'owner', 'now')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO users (name, role, created_at) VALUES ('bob', 'king', 'now')`); err == nil {
		t.Error("a role outside owner, member, viewer was accepted")
	}
	db.Close()

	db, err = Open(ctx, path) // a second open applies nothing twice
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version, users int
	db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&version)
	db.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&users)
	if version != Version() || users != 1 {
		t.Errorf("after reopening: version %d (want %d), %d users (want 1)", version, Version(), users)
	}
	// Foreign keys are on: deleting a server deletes its secrets.
	db.ExecContext(ctx, `INSERT INTO servers (id, name, config, created_at, updated_at) VALUES (1, 's', '{}', 'now', 'now')`)
	db.ExecContext(ctx, `INSERT INTO secrets (server_id, kind, name, sealed) VALUES (1, 'env', 'KEY', x'00')`)
	db.ExecContext(ctx, `DELETE FROM servers WHERE id = 1`)
	var secrets int
	db.QueryRowContext(ctx, `SELECT count(*) FROM secrets`).Scan(&secrets)
	if secrets != 0 {
		t.Errorf("deleting a server left %d secrets", secrets)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "zero.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db.ExecContext(ctx, `UPDATE schema_version SET version = 999`)
	db.Close()
	if db, err := Open(ctx, path); err == nil {
		db.Close()
		t.Error("a database from a newer zero was opened")
	}
}

// TestFilesArePrivate: the database and its journal files are readable and
// writable by their owner only, whatever the umask.
func TestFilesArePrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "zero.db")
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO users (name, role, created_at) VALUES ('ada', 'owner', 'now')`); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(f), fi.Mode().Perm())
		}
	}
}

// TestMigrationKeepsDuplicateTokens: a database from before token names
// were unique keeps every token, the later duplicates renamed, and then
// refuses a new duplicate.
func TestMigrationKeepsDuplicateTokens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "zero.db")
	old, err := database.OpenSQLite(ctx, path, migrations[:2])
	if err != nil {
		t.Fatal(err)
	}
	old.ExecContext(ctx, `INSERT INTO users (id, name, role, created_at) VALUES (1, 'ada', 'owner', 'now')`)
	for i, hash := range []string{"h1", "h2", "h3"} {
		if _, err := old.ExecContext(ctx, `INSERT INTO tokens (id, user_id, name, hash, created_at) VALUES (?, 1, 'agent', ?, 'now')`, i+1, hash); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT name FROM tokens ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	if want := []string{"agent", "agent (2)", "agent (3)"}; !slices.Equal(names, want) {
		t.Errorf("tokens after the migration: %q, want %q", names, want)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO tokens (user_id, name, hash, created_at) VALUES (1, 'agent', 'h4', 'now')`); err == nil {
		t.Error("a duplicate token name was accepted")
	}
}

// TestMigrationsOnBothDatabases: every migration of the workspace runs on
// SQLite and on PostgreSQL (the dialect's rewrites, database.ForPostgres),
// and both end with the same tables and columns; on PostgreSQL a thread id
// is assigned as SQLite assigns it, and the search table takes a row.
func TestMigrationsOnBothDatabases(t *testing.T) {
	_, pg := databasetest.SameSchema(t, migrations)
	ctx := context.Background()
	var id int64
	if err := pg.QueryRowContext(ctx, `INSERT INTO threads (title, runtime, provider, model, created_at, updated_at)
		VALUES ('t', 'host', 'p', 'm', '', '') RETURNING id`).Scan(&id); err != nil || id != 1 {
		t.Fatalf("a thread on PostgreSQL: %d %v", id, err)
	}
	if _, err := pg.ExecContext(ctx, `INSERT INTO thread_search (text, thread_id, seq) VALUES ('hello world', $1, 0)`, id); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pg.QueryRowContext(ctx, `SELECT count(*) FROM thread_search WHERE to_tsvector('simple', text) @@ plainto_tsquery('simple', 'hello')`).Scan(&n); err != nil || n != 1 {
		t.Errorf("search on PostgreSQL: %d %v", n, err)
	}
}

// TestPasskeyTables: a credential id is one person's only; the settings
// take one row, 'on' or 'off'; a challenge is a registration's or an
// assertion's; deleting a person deletes their passkeys and challenges.
func TestPasskeyTables(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "zero.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`INSERT INTO users (id, name, role, created_at) VALUES (1, 'ada', 'owner', 'now'), (2, 'bob', 'member', 'now')`,
		`INSERT INTO passkeys (user_id, name, credential_id, credential, created_at) VALUES (1, 'Passkey 1', x'0102', '{}', 'now')`,
		`INSERT INTO passkey_challenges (nonce, user_id, kind, binding, words, session, expires_at) VALUES ('n1', 1, 'assert', 'ab', 'w', '{}', 'later')`,
		`INSERT INTO passkey_settings (id, required, set_by, set_at) VALUES (1, 'off', 'ada', 'now')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range []string{
		`INSERT INTO passkeys (user_id, name, credential_id, credential, created_at) VALUES (2, 'Passkey 1', x'0102', '{}', 'now')`,
		`INSERT INTO passkey_settings (id, required, set_by, set_at) VALUES (2, 'on', 'ada', 'now')`,
		`UPDATE passkey_settings SET required = 'maybe'`,
		`INSERT INTO passkey_challenges (nonce, user_id, kind, binding, words, session, expires_at) VALUES ('n2', 1, 'login', '', '', '{}', 'later')`,
	} {
		if _, err := db.ExecContext(ctx, q); err == nil {
			t.Errorf("accepted: %s", q)
		}
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM users WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	var passkeys, challenges int
	db.QueryRowContext(ctx, `SELECT count(*) FROM passkeys`).Scan(&passkeys)
	db.QueryRowContext(ctx, `SELECT count(*) FROM passkey_challenges`).Scan(&challenges)
	if passkeys != 0 || challenges != 0 {
		t.Errorf("deleting a person left %d passkeys and %d challenges", passkeys, challenges)
	}
}
