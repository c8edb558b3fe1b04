package threads

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// addServer saves a bare server row, as the servers package would.
func addServer(t testing.TB, s *Store, id int64) {
	t.Helper()
	if _, err := s.db.Exec(`INSERT INTO servers (id, name, config, created_at, updated_at) VALUES (?, ?, '{}', '', '')`, id, "srv"+strconv.FormatInt(id, 10)); err != nil {
		t.Fatal(err)
	}
}

// TestDecide: a call is asked by default; the owner's allow holds for the
// tool's hash and the server's fingerprint only, and a thread's allowance
// for its thread only; after a drift either asks again; a deny wins over
// any allowance, drifted or not; deleting the server forgets its rules.
func TestDecide(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	addServer(t, s, 1)
	a, _ := s.Create(ctx, Thread{Title: "a"})
	b, _ := s.Create(ctx, Thread{Title: "b"})
	tool := ToolRef{ServerID: 1, Tool: "write_file", Hash: "sha256:h1", Fingerprint: "sha256:f1"}
	drifted := tool
	drifted.Hash = "sha256:h2"
	moved := tool
	moved.Fingerprint = "sha256:f2"
	decide, want := decisions(t, s)
	want("by default", decide(a.ID, tool), "ask: this tool is not allowed")
	if err := s.AllowInThread(ctx, "user:owner", a.ID, tool); err != nil {
		t.Fatal(err)
	}
	want("allowed in a", decide(a.ID, tool), "allow: allowed for this thread")
	want("in b", decide(b.ID, tool), "ask: this tool is not allowed")
	want("in a, the tool drifted", decide(a.ID, drifted), "ask: the tool or its server changed")
	if err := s.SetRule(ctx, "user:owner", tool, Allow); err != nil {
		t.Fatal(err)
	}
	want("always, in b", decide(b.ID, tool), "allow: the workspace owner always allows")
	want("always, the tool drifted", decide(b.ID, drifted), "ask: the tool or its server changed")
	want("always, the server's configuration changed", decide(b.ID, moved), "ask: the tool or its server changed")
	if err := s.SetRule(ctx, "user:owner", tool, Deny); err != nil {
		t.Fatal(err)
	}
	want("denied, though allowed in a", decide(a.ID, tool), "deny: ")
	want("denied, drifted", decide(b.ID, drifted), "deny: ")
	if err := s.SetRule(ctx, "user:owner", tool, "sometimes"); !errors.Is(err, ErrInvalid) {
		t.Errorf("a rule that is none: %v", err)
	}
	s.SetRule(ctx, "user:owner", tool, "")
	want("rule removed, allowed in a", decide(a.ID, tool), "allow: allowed for this thread")
	// A deleted server's rules and allowances go with it: a server that
	// takes its id later starts asked.
	if _, err := s.db.Exec(`DELETE FROM servers WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	addServer(t, s, 1)
	want("a server that reuses the id", decide(a.ID, tool), "ask: this tool is not allowed")
}

// decisions returns decide, s's decision on t in thread id as
// "decision: reason", and want, which checks that one starts with prefix.
func decisions(t *testing.T, s *Store) (decide func(id int64, ref ToolRef) string, want func(what, got, prefix string)) {
	decide = func(id int64, ref ToolRef) string {
		v, err := s.Decide(context.Background(), id, ref)
		if err != nil {
			return "error: " + err.Error()
		}
		return v.Decision + ": " + v.Reason
	}
	want = func(what, got, prefix string) {
		t.Helper()
		if !strings.HasPrefix(got, prefix) {
			t.Errorf("%s: %s, want %s...", what, got, prefix)
		}
	}
	return decide, want
}
