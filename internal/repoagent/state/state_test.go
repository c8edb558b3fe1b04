package state

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/database/databasetest"
)

// TestLedger: a delivery key is fresh once, a replay within the retention
// (over 8 days) is refused, and keys older than the retention are dropped.
func TestLedger(t *testing.T) {
	s, err := Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
// once; the database file is its owner's only.
func TestHeldApprovedOnce(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
	fi, _ := os.Stat(filepath.Join(dir, "agent.db"))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("agent.db mode %v", fi.Mode().Perm())
	}
}

// TestMigrationsOnBothDatabases: every migration of Agent Zero's state
// runs on SQLite and on PostgreSQL, and both end with the same tables and
// columns.
func TestMigrationsOnBothDatabases(t *testing.T) {
	databasetest.SameSchema(t, migrations)
}
