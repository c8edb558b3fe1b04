package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAppendRedacts: secrets and local paths the log is told of never
// reach the file, in any field; the chain verifies.
func TestAppendRedacts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.log")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	err = l.Append(Task{ID: "t1", Repo: "acme/widget", Outcome: "failed",
		Reason: "git push https://x:tok-canary-1@example.com failed in /srv/checkouts/widget/.git"},
		[]string{"tok-canary-1", ""}, []string{"/srv/checkouts/widget"})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	data, _ := os.ReadFile(path)
	for _, bad := range []string{"tok-canary-1", "/srv/checkouts"} {
		if strings.Contains(string(data), bad) {
			t.Errorf("the record holds %q: %s", bad, data)
		}
	}
	recs, err := Read(path)
	if err != nil || len(recs) != 1 || recs[0].Action != "task.failed" || recs[0].Target != "repo:acme/widget" ||
		!strings.Contains(recs[0].Detail["reason"], "[redacted") {
		t.Fatalf("records: %+v %v", recs, err)
	}
	if _, ok := recs[0].Detail["branch"]; ok {
		t.Error("empty fields are kept")
	}
	if n, err := Verify(path); n != 1 || err != nil {
		t.Errorf("verify: %d %v", n, err)
	}
}
