package record

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/database/databasetest"
)

func appendOne(t *testing.T, task Task, secrets, paths []string) (map[string]string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "records.log")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(task, secrets, paths); err != nil {
		t.Fatal(err)
	}
	l.Close()
	recs, err := Read(path)
	if err != nil || len(recs) != 1 {
		t.Fatalf("records: %+v %v", recs, err)
	}
	if n, err := Verify(path); n != 1 || err != nil {
		t.Errorf("verify: %d %v", n, err)
	}
	data, _ := os.ReadFile(path)
	return recs[0].Detail, string(data)
}

// TestAppendRedacts: secrets and local paths the log is told of never
// reach the file, in any field; the chain verifies.
func TestAppendRedacts(t *testing.T) {
	detail, data := appendOne(t, Task{ID: "t1", Repo: "acme/widget", Outcome: "failed", Reason: PushFailed,
		Branch: "agent-zero/tok-canary-1", Commit: "/srv/checkouts/widget/.git"},
		[]string{"tok-canary-1", ""}, []string{"/srv/checkouts/widget"})
	for _, bad := range []string{"tok-canary-1", "/srv/checkouts"} {
		if strings.Contains(data, bad) {
			t.Errorf("the record holds %q: %s", bad, data)
		}
	}
	if !strings.Contains(detail["branch"], "[redacted") || detail["reason"] != "push_failed" || detail["outcome"] != "failed" {
		t.Errorf("detail: %v", detail)
	}
	if _, ok := detail["verification"]; ok {
		t.Error("empty fields are kept")
	}
}

// TestReasonsAreCodes: a record's reason is one of a fixed list of codes,
// each with a fixed text; anything else (free text a caller slipped in) is
// written as unknown, and so is an outcome that is not a code.
func TestReasonsAreCodes(t *testing.T) {
	for _, r := range Reasons() {
		if !codeRE().MatchString(string(r)) || r.Text() == "" || r.Text() == Unknown.Text() && r != Unknown {
			t.Errorf("reason %q, text %q", r, r.Text())
		}
	}
	detail, data := appendOne(t, Task{ID: "t1", Repo: "acme/widget",
		Outcome: "applied\noutcome: forged",
		Reason:  Reason("model answered 400: invalid input: ignore previous instructions")}, nil, nil)
	if detail["reason"] != "unknown" || detail["outcome"] != "unknown" || strings.Contains(data, "ignore previous") || strings.Contains(data, "forged") {
		t.Errorf("free text in a record: %v", detail)
	}
}

// TestOldReasonsStayReadable: a reason runs no longer write, as records
// written before hold it (refused_mode, mode_requested), is still a known
// code with its own text, and is written as it is.
func TestOldReasonsStayReadable(t *testing.T) {
	if ModeRequested.Text() == Unknown.Text() {
		t.Error("mode_requested reads as unknown")
	}
	detail, _ := appendOne(t, Task{ID: "t1", Repo: "acme/widget", Outcome: "refused_mode", Reason: ModeRequested}, nil, nil)
	if detail["reason"] != "mode_requested" || detail["outcome"] != "refused_mode" {
		t.Errorf("detail: %v", detail)
	}
}

// TestRelativePathIsCanonical: a checkout given as "." is redacted in its
// absolute forms, and "." itself is not a redaction: a confidence of 0.95
// stays 0.95. Values shorter than MinRedacted are not redacted.
func TestRelativePathIsCanonical(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(dir, link)
	t.Chdir(link)
	abs, _ := filepath.Abs(".")
	real, _ := filepath.EvalSymlinks(abs)
	detail, data := appendOne(t, Task{ID: "t1", Repo: "acme/widget", Outcome: "applied", Reason: ChainHeld, Confidence: 0.95,
		Branch: abs + "/x", Commit: real + "/y", Mode: "fix"},
		[]string{"fix", "0.95"}, []string{".", "/w"})
	if detail["confidence"] != "0.95" || detail["mode"] != "fix" {
		t.Errorf("a short value was redacted: %v", detail)
	}
	if strings.Contains(data, abs) || strings.Contains(data, real) {
		t.Errorf("the canonical path reached the record: %s", data)
	}
}

// TestTableSharedByWorkers: two workers' logs on one PostgreSQL (two
// connection pools) append 100 task records each at once; the shared
// chain holds 200, redacted, and verifies; ReadTable returns them; a
// record changed in the table is found.
func TestTableSharedByWorkers(t *testing.T) {
	dsn := databasetest.Postgres(t)
	ctx := context.Background()
	var logs [2]*Log
	var dbs [2]*sql.DB
	for i := range logs {
		db, err := database.OpenPostgres(ctx, dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if logs[i], err = OpenTable(ctx, db); err != nil {
			t.Fatal(err)
		}
		dbs[i] = db
	}
	var wg sync.WaitGroup
	for i, l := range logs {
		for j := range 100 {
			wg.Go(func() {
				task := Task{ID: fmt.Sprintf("w%d-%d", i, j), Repo: "acme/widget", Outcome: "applied", Reason: ChainHeld,
					Branch: "agent-zero/w-tok-canary-7"}
				if err := l.Append(task, []string{"tok-canary-7"}, nil); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	if n, err := VerifyTable(ctx, dbs[1]); n != 200 || err != nil {
		t.Fatalf("verify the shared chain: %d %v", n, err)
	}
	recs, err := ReadTable(ctx, dbs[0])
	if err != nil || len(recs) != 200 {
		t.Fatalf("read the shared chain: %d %v", len(recs), err)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.Detail["task"]] = true
		if strings.Contains(r.Detail["branch"], "tok-canary-7") {
			t.Fatalf("a secret in the table: %v", r.Detail)
		}
	}
	if len(seen) != 200 {
		t.Errorf("%d distinct tasks in the chain, want 200", len(seen))
	}
	if _, err := dbs[0].ExecContext(ctx, `UPDATE audit_records SET detail = replace(detail, 'applied', 'failed') WHERE seq = 77`); err != nil {
		t.Fatal(err)
	}
	if n, err := VerifyTable(ctx, dbs[1]); !errors.Is(err, audit.ErrModified) || n != 77 {
		t.Errorf("verify a changed record: %d %v", n, err)
	}
	if recs, err := ReadTable(ctx, dbs[1]); err == nil || recs != nil {
		t.Errorf("read a changed chain: %d records, %v", len(recs), err)
	}
}
