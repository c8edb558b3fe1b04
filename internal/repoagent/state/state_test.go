package state

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/database/databasetest"
)

// onBoth runs test on a new state in SQLite and in PostgreSQL.
func onBoth(t *testing.T, test func(t *testing.T, s *State)) {
	t.Run("sqlite", func(t *testing.T) {
		s, err := Open(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		test(t, s)
	})
	t.Run("postgres", func(t *testing.T) {
		s, err := OpenPostgres(context.Background(), databasetest.Postgres(t))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		test(t, s)
	})
}

// TestLedger: a delivery key is fresh once, a replay within the retention
// (over 8 days) is refused, and keys older than the retention are dropped;
// in either database.
func TestLedger(t *testing.T) { onBoth(t, testLedger) }

func testLedger(t *testing.T, s *State) {
	ctx, now := context.Background(), time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for i, want := range []bool{true, false} {
		if fresh, err := s.Remember(ctx, "github:1:abc", now.Add(time.Duration(i)*8*24*time.Hour)); err != nil || fresh != want {
			t.Errorf("delivery %d: fresh %v %v, want %v", i, fresh, err, want)
		}
	}
	if fresh, _ := s.Remember(ctx, "github:1:abc", now.Add(LedgerRetention+time.Hour)); !fresh {
		t.Error("a key older than the retention is still remembered")
	}
	if LedgerRetention < 8*24*time.Hour {
		t.Error("the retention is shorter than 8 days")
	}
}

// TestHeldApprovedOnce: a held change is kept whole and can be approved
// once, in either database; the SQLite file is its owner's only.
func TestHeldApprovedOnce(t *testing.T) {
	onBoth(t, testHeldApprovedOnce)
	dir := t.TempDir()
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fi, _ := os.Stat(filepath.Join(dir, "agent.db"))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("agent.db mode %v", fi.Mode().Perm())
	}
}

func testHeldApprovedOnce(t *testing.T, s *State) {
	ctx := context.Background()
	h := Held{ID: "t1", RepoName: "acme/w", RepoDir: "/srv/w", Remote: "origin", DefaultBranch: "main", HeadSHA: "h", PolicySHA: "p",
		Work: "pull_request", Mode: "fix", Risk: "ci", Diff: "diff --git a/x b/x\n", Confidence: 0.9, CreatedAt: time.Now()}
	if err := s.Hold(ctx, h); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "t1")
	if err != nil || got.Diff != h.Diff || got.Status != "held" || got.Confidence != 0.9 {
		t.Fatalf("get: %+v %v", got, err)
	}
	if err := s.MarkApproved(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkApproved(ctx, "t1"); err == nil {
		t.Error("approved twice")
	}
	if _, err := s.Get(ctx, "nope"); err == nil {
		t.Error("an unknown task")
	}
}

// TestMigrationsOnBothDatabases: every migration of Agent Zero's state
// runs on SQLite and on PostgreSQL, and both end with the same tables and
// columns.
func TestMigrationsOnBothDatabases(t *testing.T) {
	databasetest.SameSchema(t, migrations)
}

// TestLedgerExactlyOnceAcrossWorkers: two workers on one PostgreSQL each
// see the same 200 deliveries at the same moment; each delivery is new to
// exactly one of them.
func TestLedgerExactlyOnceAcrossWorkers(t *testing.T) {
	dsn := databasetest.Postgres(t)
	ctx := context.Background()
	var workers [2]*State
	for i := range workers {
		s, err := OpenPostgres(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		workers[i] = s
	}
	now := time.Now()
	var mu sync.Mutex
	fresh := map[string]int{}
	var wg sync.WaitGroup
	for i := range 200 {
		key := fmt.Sprintf("github:delivery-%d", i)
		for _, w := range workers {
			wg.Go(func() {
				ok, err := w.Remember(ctx, key, now)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					fresh[key]++
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(fresh) != 200 {
		t.Errorf("%d of 200 deliveries were new to a worker", len(fresh))
	}
	for key, n := range fresh {
		if n != 1 {
			t.Errorf("%s was new to %d workers", key, n)
		}
	}
}
