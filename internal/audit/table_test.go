package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/database/databasetest"
)

// TestTableConcurrentReplicas: two processes' handles on one PostgreSQL
// (two connection pools, as two workspace replicas) append 100 records
// each at once; the chain holds 200, in one order, and verifies; a record
// changed, removed or inserted in the table is found.
func TestTableConcurrentReplicas(t *testing.T) {
	dsn := databasetest.Postgres(t)
	ctx := context.Background()
	var tables [2]*Table
	var dbs [2]*sql.DB
	for i := range tables {
		db, err := database.OpenPostgres(ctx, dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if tables[i], err = OpenTable(ctx, db); err != nil {
			t.Fatal(err)
		}
		dbs[i] = db
	}
	var wg sync.WaitGroup
	for i, tb := range tables {
		for j := range 100 {
			wg.Go(func() {
				if _, err := tb.Append(ctx, Event{Actor: fmt.Sprintf("replica:%d", i), Action: "server.approve", Target: fmt.Sprint(j),
					Detail: map[string]string{"n": fmt.Sprint(j)}}); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	if n, err := VerifyTable(ctx, dbs[0]); n != 200 || err != nil {
		t.Fatalf("verify: %d %v", n, err)
	}

	for _, c := range []struct {
		name, sql string
		kind      error
	}{
		{"a changed detail", `UPDATE audit_records SET detail = '{"n":"999"}' WHERE seq = 50`, ErrModified},
		{"a removed record", `DELETE FROM audit_records WHERE seq = 120`, ErrRemoved},
	} {
		tx, _ := dbs[1].BeginTx(ctx, nil)
		if _, err := tx.ExecContext(ctx, c.sql); err != nil {
			t.Fatal(err)
		}
		var ve *VerifyError
		_, err := VerifyTable(ctx, tx)
		if !errors.As(err, &ve) || !errors.Is(err, c.kind) {
			t.Errorf("%s: %v", c.name, err)
		}
		tx.Rollback()
	}
}

// TestTableSQLite: the same chain in SQLite.
func TestTableSQLite(t *testing.T) {
	ctx := context.Background()
	db, err := database.OpenSQLite(ctx, filepath.Join(t.TempDir(), "a.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb, err := OpenTable(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if r, err := tb.Append(ctx, Event{Actor: "user:owner", Action: "token.create", Target: fmt.Sprint(i)}); err != nil || r.Seq != uint64(i+1) {
			t.Fatalf("append %d: %+v %v", i, r, err)
		}
	}
	if n, err := VerifyTable(ctx, db); n != 10 || err != nil {
		t.Fatalf("verify: %d %v", n, err)
	}
	db.ExecContext(ctx, `UPDATE audit_records SET actor = 'user:mallory' WHERE seq = 3`)
	if _, err := VerifyTable(ctx, db); !errors.Is(err, ErrModified) {
		t.Errorf("a changed actor: %v", err)
	}
}

// TestTableOpenedAtOnce: replicas that open the chain of a new database at
// once make its table once, each waiting for the one before.
func TestTableOpenedAtOnce(t *testing.T) {
	dsn := databasetest.Postgres(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			db, err := database.ConnectPostgres(dsn)
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			_, errs[i] = OpenTable(ctx, db)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
}
