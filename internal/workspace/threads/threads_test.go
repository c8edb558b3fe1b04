package threads

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	gmtext "github.com/yuin/goldmark/text"

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

// TestExport writes a thread as JSONL, every event a line, and as
// Markdown: each message under its heading, a person's and a model's text
// as Markdown in a block quote, each call with its arguments and each
// result without its wrapper, in fences no line inside can close. Text
// that tries to break out (an open fence, a heading, an HTML comment, a
// lone carriage return, runs of backticks) stays inside its message, as a
// CommonMark parser reads the file.
func TestExport(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	th, _ := s.Create(ctx, Thread{Title: "Export *me* <b>", Model: "m`1"})
	hostile := "Look: **bold**\n\n```\n## 9. System\n<!-- open comment\r## 8. Fake\n~~~"
	nonce := NewNonce()
	result := "line one\n````` not a fence end\n## 7. Fake result\n```"
	for _, body := range []any{
		map[string]any{"role": "user", "content": "Read *a.txt*, please."},
		map[string]any{"role": "assistant", "content": hostile, "tool_calls": []any{
			map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "fs__read", "arguments": `{"path":"a.txt","note":"` + "```" + `"}`}},
			map[string]any{"id": "call_2", "type": "function", "function": map[string]any{"name": "fs__list", "arguments": "not json ````"}},
		}},
		map[string]any{"role": "tool", "tool_call_id": "call_1", "content": Wrap(nonce, "fs", "read", result)},
		map[string]any{"role": "tool", "tool_call_id": "call_2", "content": "[zero: not run: the person declined this call]"},
		map[string]any{"role": "assistant", "content": "Done."},
	} {
		data, _ := json.Marshal(body)
		if _, err := s.Append(ctx, th.ID, Last, KindMessage, data); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Append(ctx, th.ID, Last, KindRun, json.RawMessage(`{"run":1,"status":"completed"}`)); err != nil {
		t.Fatal(err)
	}

	var jl bytes.Buffer
	if err := s.ExportJSONL(ctx, th.ID, &jl); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(jl.String()), "\n")
	var second, third Event
	if len(lines) != 6 || json.Unmarshal([]byte(lines[1]), &second) != nil || json.Unmarshal([]byte(lines[2]), &third) != nil ||
		!strings.Contains(string(second.Body), `"arguments":"{\"path\":\"a.txt\"`) || !strings.Contains(string(third.Body), `tool_output nonce=\"`+nonce) {
		t.Errorf("JSONL:\n%s", jl.String())
	}

	var md bytes.Buffer
	if err := s.ExportMarkdown(ctx, th.ID, &md); err != nil {
		t.Fatal(err)
	}
	text := md.String()
	for _, want := range []string{
		"# Export \\*me\\* \\<b\\>\n", "model ``m`1``",
		"## 1. User\n\n> Read *a.txt*, please.\n",
		"## 2. Assistant\n\n> Look: **bold**\n>\n> ```\n> ## 9. System\n> <!-- open comment\n> ## 8. Fake\n> ~~~\n",
		"Calls `fs__read` (call `call_1`) with:\n\n````json\n{\n  \"path\": \"a.txt\",\n  \"note\": \"```\"\n}\n````\n",
		"Calls `fs__list` (call `call_2`) with:\n\n`````text\nnot json ````\n`````\n",
		"## 3. Result of `fs__read` (call `call_1`)\n\n``````text\n" + result + "\n``````\n",
		"## 4. Result of `fs__list` (call `call_2`)\n\n```text\n[zero: not run: the person declined this call]\n```\n",
		"## 5. Assistant\n\n> Done.\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "tool_output") {
		t.Errorf("the Markdown shows the wrapper:\n%s", text)
	}

	// As a CommonMark parser reads it: the title, a line, then for each
	// message its heading and its blocks, and nothing else at the top.
	doc := goldmark.New().Parser().Parse(gmtext.NewReader(md.Bytes()))
	var got []string
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		kind := n.Kind().String()
		if h, ok := n.(*ast.Heading); ok {
			kind = fmt.Sprintf("h%d %s", h.Level, strings.SplitN(string(n.Lines().Value(md.Bytes())), " ", 2)[0])
		}
		got = append(got, kind)
	}
	want := []string{"h1 Export", "Paragraph",
		"h2 1.", "Blockquote",
		"h2 2.", "Blockquote", "Paragraph", "FencedCodeBlock", "Paragraph", "FencedCodeBlock",
		"h2 3.", "FencedCodeBlock",
		"h2 4.", "FencedCodeBlock",
		"h2 5.", "Blockquote"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the Markdown's blocks (-want +got):\n%s\n%s", diff, text)
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
