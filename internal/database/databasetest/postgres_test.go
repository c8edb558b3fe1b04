package databasetest_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/zero-dev/zero/internal/database/databasetest"
)

// TestPostgres: the cluster starts, takes a connection through pgx over its
// socket, stores and returns a row.
func TestPostgres(t *testing.T) {
	db, err := sql.Open("pgx", databasetest.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var version string
	if err := db.QueryRowContext(ctx, `SHOW server_version`).Scan(&version); err != nil || version == "" {
		t.Fatalf("server_version: %q %v", version, err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (id BIGSERIAL PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := db.QueryRowContext(ctx, `INSERT INTO t (v) VALUES ($1) RETURNING id`, "zero").Scan(&id); err != nil || id != 1 {
		t.Fatalf("insert: %d %v", id, err)
	}
	var v string
	if err := db.QueryRowContext(ctx, `SELECT v FROM t WHERE id = $1`, id).Scan(&v); err != nil || v != "zero" {
		t.Fatalf("select: %q %v", v, err)
	}
	var tcp string
	db.QueryRowContext(ctx, `SHOW listen_addresses`).Scan(&tcp)
	if strings.TrimSpace(tcp) != "" {
		t.Errorf("the throwaway cluster listens on TCP: %q", tcp)
	}
}
