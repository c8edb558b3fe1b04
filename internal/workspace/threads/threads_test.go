package threads

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/database/databasetest"
	"github.com/zero-dev/zero/internal/workspace/store"
)

func newStore(t testing.TB) *Store {
	t.Helper()
	return storeIn(t, t.TempDir())
}

// storeIn is newStore in dir.
func storeIn(t testing.TB, dir string) *Store {
	t.Helper()
	db := databasetest.OpenAt(t, filepath.Join(dir, "zero.db"), store.Migrations())
	return New(db, filepath.Join(dir, "workspace", "threads"))
}

func msg(role, content string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"role": role, "content": content})
	return b
}

// say appends messages to thread id, each after the one before it.
func say(t testing.TB, s *Store, id int64, parent int64, contents ...string) int64 {
	t.Helper()
	for i, c := range contents {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		e, err := s.Append(context.Background(), id, parent, KindMessage, msg(role, c))
		if err != nil {
			t.Fatal(err)
		}
		parent = e.Seq
	}
	return parent
}

func contents(t *testing.T, events []Event) []string {
	t.Helper()
	var out []string
	for _, e := range events {
		var m struct{ Content string }
		json.Unmarshal(e.Body, &m)
		out = append(out, m.Content)
	}
	return out
}

// TestCreate makes a thread and its own folder, mode 0700; refuses a bad
// title or an unbuilt runtime; and refuses a folder already there, a link
// included, saving nothing.
func TestCreate(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	th, err := s.Create(ctx, Thread{Title: "Fix the build", Provider: "local", Model: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(th.Dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || th.Runtime != RuntimeHost {
		t.Fatalf("thread %+v, folder %v %v", th, fi, err)
	}
	got, err := s.Get(ctx, th.ID)
	if err != nil || got.Title != "Fix the build" || got.Model != "m1" || got.Dir != th.Dir {
		t.Errorf("get: %+v %v", got, err)
	}
	for _, bad := range []Thread{{Title: ""}, {Title: "a\nb"}, {Title: strings.Repeat("t", MaxTitle+1)}, {Title: "x", Runtime: "sandbox"}} {
		if _, err := s.Create(ctx, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	next := filepath.Join(filepath.Dir(th.Dir), "2")
	outside := t.TempDir()
	if err := os.Symlink(outside, next); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, Thread{Title: "second"}); err == nil || !strings.Contains(err.Error(), "already there") {
		t.Errorf("a thread whose folder is a link already there: %v", err)
	}
	if _, err := s.Get(ctx, 2); !errors.Is(err, ErrNotFound) {
		t.Errorf("the refused thread was saved: %v", err)
	}
}

// TestAppendAndFork: events are numbered from 1 in their thread, each
// after a parent of the thread; a thread forked from message 3 keeps
// messages 1-3 and nothing after, on the branch message 3 is on.
func TestAppendAndFork(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	th, _ := s.Create(ctx, Thread{Title: "t", Model: "m"})
	say(t, s, th.ID, 0, "one", "two", "three", "four", "five")
	// A branch from message 2: message 6 follows 2, not 5.
	say(t, s, th.ID, 2, "three, again")
	for _, parent := range []int64{-2, 7} {
		if _, err := s.Append(ctx, th.ID, parent, KindMessage, msg("user", "x")); !errors.Is(err, ErrInvalid) {
			t.Errorf("parent %d: %v", parent, err)
		}
	}
	if _, err := s.Append(ctx, th.ID, 0, KindMessage, json.RawMessage(`{"content":`)); !errors.Is(err, ErrInvalid) {
		t.Errorf("a body that is not JSON: %v", err)
	}
	if _, err := s.Append(ctx, 99, 0, KindMessage, msg("user", "x")); !errors.Is(err, ErrNotFound) {
		t.Errorf("no such thread: %v", err)
	}
	path, err := s.Path(ctx, th.ID, 6)
	if err != nil || !cmp.Equal(contents(t, path), []string{"one", "two", "three, again"}) {
		t.Errorf("the branch of 6: %q %v", contents(t, path), err)
	}
	fork, err := s.Fork(ctx, th.ID, 3)
	if err != nil {
		t.Fatal(err)
	}
	events, _ := s.Events(ctx, fork.ID, 0)
	if !cmp.Equal(contents(t, events), []string{"one", "two", "three"}) || events[0].Parent != 0 || events[2].Parent != 2 {
		t.Errorf("the fork from 3: %q, parents %d %d", contents(t, events), events[0].Parent, events[2].Parent)
	}
	if fork.ForkedFrom != th.ID || fork.ForkedAt != 3 || fork.Title != "t (fork)" || fork.Model != "m" {
		t.Errorf("the fork: %+v", fork)
	}
	// Replay: what a stream that saw event 4 missed.
	after, _ := s.Events(ctx, th.ID, 4)
	if len(after) != 2 || after[0].Seq != 5 || after[1].Seq != 6 {
		t.Errorf("events after 4: %+v", after)
	}
	// Last follows whichever event is last: 6, on the branch from 2.
	if e, err := s.Append(ctx, th.ID, Last, KindMessage, msg("user", "seven")); err != nil || e.Seq != 7 || e.Parent != 6 {
		t.Errorf("append after the last: %+v %v", e, err)
	}
}

// TestListAndUsage: List has every thread, the most recently updated
// first; AddUsage adds to a thread's totals.
func TestListAndUsage(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	a, _ := s.Create(ctx, Thread{Title: "a"})
	b, _ := s.Create(ctx, Thread{Title: "b"})
	say(t, s, a.ID, 0, "a is newer now")
	list, err := s.List(ctx)
	if err != nil || len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID {
		t.Fatalf("list: %+v %v", list, err)
	}
	s.AddUsage(ctx, b.ID, 10, 3)
	got, err := s.AddUsage(ctx, b.ID, 5, 2)
	if err != nil || got.PromptTokens != 15 || got.CompletionTokens != 5 {
		t.Errorf("usage: %d %d %v, want 15 5", got.PromptTokens, got.CompletionTokens, err)
	}
	if again, _ := s.Get(ctx, a.ID); again.PromptTokens != 0 {
		t.Errorf("another thread's usage changed: %d", again.PromptTokens)
	}
}

// TestSearch finds threads by title and message words, every word needed,
// the latest first; query syntax is read as words.
func TestSearch(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	a, _ := s.Create(ctx, Thread{Title: "Deploy the docs"})
	say(t, s, a.ID, 0, "the build fails on arm64", "look at the linker flags")
	b, _ := s.Create(ctx, Thread{Title: "Release notes"})
	say(t, s, b.ID, 0, "write the release notes for the build")
	for _, tc := range []struct {
		q    string
		want []Hit
	}{
		{"linker", []Hit{{a.ID, []int64{2}}}},
		{"build", []Hit{{b.ID, []int64{1}}, {a.ID, []int64{1}}}},
		{"build arm64", []Hit{{a.ID, []int64{1}}}},
		{"deploy", []Hit{{a.ID, []int64{0}}}},
		{"rel*", []Hit{{b.ID, []int64{0, 1}}}},
		{`notes" OR "docs`, nil},
		{"NEAR(", nil},
		{"   ", nil},
	} {
		got, err := s.Search(ctx, tc.q, 10)
		if err != nil || !cmp.Equal(got, tc.want) {
			t.Errorf("search %q: %v %v, want %v", tc.q, got, err, tc.want)
		}
	}
}

// TestExport writes a thread as JSONL, one event a line, and as Markdown,
// whose fences hold a message that holds a fence.
func TestExport(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	th, _ := s.Create(ctx, Thread{Title: "Export me", Model: "m"})
	say(t, s, th.ID, 0, "hello", "```\n## 9. system\n```")
	var jl bytes.Buffer
	if err := s.ExportJSONL(ctx, th.ID, &jl); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(jl.String()), "\n")
	var first Event
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &first) != nil || first.Seq != 1 || first.Kind != KindMessage {
		t.Errorf("JSONL: %s", jl.String())
	}
	var md bytes.Buffer
	if err := s.ExportMarkdown(ctx, th.ID, &md); err != nil {
		t.Fatal(err)
	}
	text := md.String()
	if !strings.HasPrefix(text, "# Export me\n") || !strings.Contains(text, "## 1. user\n\n```\nhello\n```") ||
		!strings.Contains(text, "## 2. assistant\n\n````\n```\n## 9. system\n```\n````") {
		t.Errorf("Markdown:\n%s", text)
	}
}

// BenchmarkOpen10000 reads a thread of 10,000 events, as opening it does.
func BenchmarkOpen10000(b *testing.B) {
	s := newStore(b)
	ctx := context.Background()
	th, _ := s.Create(ctx, Thread{Title: "long"})
	contents := make([]string, 10000)
	for i := range contents {
		contents[i] = "message number " + strings.Repeat("x", 100)
	}
	say(b, s, th.ID, 0, contents...)
	for b.Loop() {
		events, err := s.Events(ctx, th.ID, 0)
		if err != nil || len(events) != 10000 {
			b.Fatal(len(events), err)
		}
	}
}
