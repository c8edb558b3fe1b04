package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/database/databasetest"
)

// TestAuditVerifyDatabase: zero audit verify --database checks the chain
// kept in PostgreSQL: whole, it says how many records; with a record
// changed, it exits 1 naming it.
func TestAuditVerifyDatabase(t *testing.T) {
	dsn := databasetest.Postgres(t)
	ctx := context.Background()
	db, err := database.OpenPostgres(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb, err := audit.OpenTable(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{"server.create", "server.approve", "token.create"} {
		if _, err := tb.Append(ctx, audit.Event{Actor: "user:owner", Action: action, Target: "server:1"}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(zeroBinary(t), "audit", "verify", "--database", dsn).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "3 records, the chain verifies") {
		t.Fatalf("a whole chain: %v\n%s", err, out)
	}
	if _, err := db.ExecContext(ctx, `UPDATE audit_records SET target = 'server:2' WHERE seq = 2`); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(zeroBinary(t), "audit", "verify", "--database", dsn).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "record 2") {
		t.Errorf("a changed record: %v\n%s", err, out)
	}
}
