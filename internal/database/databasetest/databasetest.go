// Package databasetest brings up Zero's databases for tests, PostgreSQL in
// a throwaway cluster, and checks a schema on both. Only tests import it.
package databasetest

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
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
