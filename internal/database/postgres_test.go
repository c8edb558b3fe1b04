package database_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"

	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/database/databasetest"
)

var migrations = []string{
	`CREATE TABLE a (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, on_off INTEGER NOT NULL DEFAULT 0)`,
	`CREATE TABLE b (id INTEGER PRIMARY KEY AUTOINCREMENT, a_id INTEGER NOT NULL REFERENCES a (id))`,
	`ALTER TABLE a ADD COLUMN note TEXT NOT NULL DEFAULT ''`,
}

// TestMigrationsTakeTurns: replicas that open a new PostgreSQL database at
// once migrate it once, each waiting for the one before.
func TestMigrationsTakeTurns(t *testing.T) {
	dsn := databasetest.Postgres(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			db, err := database.OpenPostgres(ctx, dsn, migrations)
			if err == nil {
				db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
}

// TestQueriesAsForSQLite: one query, written with SQLite's "?" and a Go
// bool, runs on both databases, and a duplicate is told apart by
// IsUnique on both.
func TestQueriesAsForSQLite(t *testing.T) {
	ctx := context.Background()
	lite, err := database.OpenSQLite(ctx, filepath.Join(t.TempDir(), "z.db"), migrations)
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg, err := database.OpenPostgres(ctx, databasetest.Postgres(t), migrations)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	for name, db := range map[string]*sql.DB{"SQLite": lite, "PostgreSQL": pg} {
		var id int64
		if err := db.QueryRowContext(ctx, `INSERT INTO a (name, on_off) VALUES (?, ?) RETURNING id`, "x?", true).Scan(&id); err != nil {
			t.Fatalf("%s: insert: %v", name, err)
		}
		var on bool
		var got string
		if err := db.QueryRowContext(ctx, `SELECT name, on_off FROM a WHERE id = ? AND on_off = 1`, id).Scan(&got, &on); err != nil || !on || got != "x?" {
			t.Errorf("%s: read back %q %v (%v)", name, got, on, err)
		}
		_, err := db.ExecContext(ctx, `INSERT INTO a (name) VALUES (?)`, "x?")
		if !database.IsUnique(err) {
			t.Errorf("%s: a duplicate name: %v, not IsUnique", name, err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO b (a_id) VALUES (?)`, 999); err == nil || database.IsUnique(err) {
			t.Errorf("%s: a missing reference: %v, want an error that is not IsUnique", name, err)
		}
		if d := database.DialectOf(db); (d == database.PostgreSQL) != (name == "PostgreSQL") {
			t.Errorf("%s: DialectOf says %v", name, d)
		}
	}
}
