// Package databasetest brings up Zero's databases for tests, PostgreSQL in
// a throwaway cluster, and checks a schema on both. Only tests import it.
package databasetest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/database"
)

// SameSchema applies every migration of migrations on a new SQLite file and
// on a throwaway PostgreSQL cluster, and fails t unless both end with the
// same tables holding the same columns (SQLite's full-text shadow tables
// aside). It returns the two databases, migrated.
func SameSchema(t *testing.T, migrations []string) (lite, pg *sql.DB) {
	t.Helper()
	ctx := context.Background()
	lite, err := database.OpenSQLite(ctx, filepath.Join(t.TempDir(), "zero.db"), migrations)
	if err != nil {
		t.Fatalf("SQLite: %v", err)
	}
	t.Cleanup(func() { lite.Close() })
	pg, err = database.OpenPostgres(ctx, Postgres(t), migrations)
	if err != nil {
		t.Fatalf("PostgreSQL: %v", err)
	}
	t.Cleanup(func() { pg.Close() })
	liteCols := columns(t, lite, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`)
	pgCols := columns(t, pg, `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'`)
	for table := range liteCols {
		for _, shadow := range []string{"_data", "_idx", "_content", "_docsize", "_config"} {
			if base, ok := strings.CutSuffix(table, shadow); ok && liteCols[base] != nil {
				delete(liteCols, table)
			}
		}
	}
	if diff := cmp.Diff(liteCols, pgCols); diff != "" {
		t.Errorf("the schemas differ (-SQLite +PostgreSQL):\n%s", diff)
	}
	return lite, pg
}

// columns reads table and column names, as query lists them.
func columns(t *testing.T, db *sql.DB, query string) map[string][]string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			t.Fatal(err)
		}
		out[table] = append(out[table], column)
	}
	for _, cols := range out {
		slices.Sort(cols)
	}
	return out
}

// The cluster of a package whose tests run on PostgreSQL (see Main).
var shared struct {
	dsn   string
	admin *sql.DB
	mu    sync.Mutex
	made  map[string]string // For's databases, by key
}

// Main runs m's tests. With ZERO_TEST_DATABASE=postgres (scripts/test's
// second pass) they run on PostgreSQL: Main starts one throwaway cluster
// for the package first, in which For gives tests databases of their own,
// and stops it after.
func Main(m *testing.M) int {
	if os.Getenv("ZERO_TEST_DATABASE") != "postgres" {
		return m.Run()
	}
	dsn, stop, err := startCluster(false)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ZERO_TEST_DATABASE=postgres:", err)
		return 1
	}
	defer stop()
	admin, err := database.ConnectPostgres(dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ZERO_TEST_DATABASE=postgres:", err)
		return 1
	}
	defer admin.Close()
	shared.dsn, shared.admin, shared.made = dsn, admin, map[string]string{}
	return m.Run()
}

// For is where a test, in a package whose tests run under Main, keeps the
// state it names by key (a file's path, say): "" for SQLite (the
// default), where the caller uses its file; on PostgreSQL, the DSN of a
// database made for key, new and empty the first time.
func For(t testing.TB, key string) string {
	t.Helper()
	if shared.admin == nil {
		return ""
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if dsn, ok := shared.made[key]; ok {
		return dsn
	}
	name := fmt.Sprintf("test%d", len(shared.made)+1)
	if _, err := shared.admin.Exec(`CREATE DATABASE ` + name); err != nil {
		t.Fatal(err)
	}
	dsn := strings.Replace(shared.dsn, "dbname=postgres", "dbname="+name, 1)
	shared.made[key] = dsn
	return dsn
}

// OpenAt opens the database file at path with migrations, or, where the
// tests run on PostgreSQL, the database For(t, path) names. It is closed
// when t ends.
func OpenAt(t testing.TB, path string, migrations []string) *sql.DB {
	t.Helper()
	ctx := context.Background()
	var db *sql.DB
	var err error
	if dsn := For(t, path); dsn != "" {
		db, err = database.OpenPostgres(ctx, dsn, migrations)
	} else {
		db, err = database.OpenSQLite(ctx, path, migrations)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
