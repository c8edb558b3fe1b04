package workspace

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/workspace/providers"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// addProvider saves a provider (on loopback, never called) with model as
// its default.
func addProvider(t testing.TB, ts *testServer, name, model string) {
	t.Helper()
	p := providers.Provider{Name: name, BaseURL: "http://127.0.0.1:9/v1", DefaultModel: model}
	if _, err := ts.w.providers.Save(context.Background(), "user:owner", p, providers.Key{}); err != nil {
		t.Fatal(err)
	}
}

// addThread makes a thread with messages (role, content pairs).
func addThread(t *testing.T, ts *testServer, title string, messages ...string) threads.Thread {
	t.Helper()
	ctx := context.Background()
	th, err := ts.w.threads.Create(ctx, threads.Thread{Title: title, Provider: "local", Model: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(messages); i += 2 {
		appendEvent(t, ts, th.ID, threads.KindMessage, map[string]any{"role": messages[i], "content": messages[i+1]})
	}
	return th
}

func appendEvent(t *testing.T, ts *testServer, id int64, kind string, body any) {
	t.Helper()
	data, _ := json.Marshal(body)
	if _, err := ts.w.threads.Append(context.Background(), id, threads.Last, kind, data); err != nil {
		t.Fatal(err)
	}
}

// TestThreadsPageListsAndSearches: the list shows every thread, the most
// recent first; a search finds a thread by a word of one of its messages,
// names the message, and leaves out the threads without it; a search over
// its bound is refused, and says so.
func TestThreadsPageListsAndSearches(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	if page := b.mustPage("GET", "/threads", nil, 200); !strings.Contains(page, "No threads yet.") || !strings.Contains(page, `id="no-providers"`) ||
		!strings.Contains(page, `href="/providers"`) {
		t.Errorf("the empty page, no providers:\n%s", page)
	}
	older := addThread(t, ts, "Older thread", "user", "nothing here")
	newer := addThread(t, ts, "Newer thread", "user", "please look at the zebra crossing", "assistant", "done")
	page := b.mustPage("GET", "/threads", nil, 200)
	i, j := strings.Index(page, `id="thread-`+itoa(newer.ID)+`"`), strings.Index(page, `id="thread-`+itoa(older.ID)+`"`)
	if i < 0 || j < 0 || i > j {
		t.Errorf("the list does not show both threads, newest first:\n%s", page)
	}
	page = b.mustPage("GET", "/threads?q=zebra", nil, 200)
	if !strings.Contains(page, `href="/threads/`+itoa(newer.ID)+`#event-1"`) || strings.Contains(page, "Older thread") || !strings.Contains(page, `value="zebra"`) {
		t.Errorf("the search for zebra:\n%s", page)
	}
	if page := b.mustPage("GET", "/threads?q=Older", nil, 200); !strings.Contains(page, "the title") || strings.Contains(page, "Newer thread") {
		t.Errorf("the search for a title's word:\n%s", page)
	}
	if page := b.mustPage("GET", "/threads?q=giraffe", nil, 200); !strings.Contains(page, `id="no-match"`) {
		t.Errorf("a search that matches nothing:\n%s", page)
	}
	if page := b.mustPage("GET", "/threads?q="+strings.Repeat("zebra+", 50), nil, 400); !strings.Contains(page, `id="search-problem"`) {
		t.Errorf("a search over its bound:\n%s", page)
	}
}

// TestNewThreadForm: the form makes a thread with the provider's default
// model, or the one typed, and goes to it; a refusal shows the form again
// with what was typed and says what to change, and makes nothing.
func TestNewThreadForm(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	if page := b.mustPage("POST", "/threads/new", url.Values{"title": {"x"}, "provider": {"local"}}, 400); !strings.Contains(page, "no model providers yet") {
		t.Errorf("no providers:\n%s", page)
	}
	addProvider(t, ts, "local", "m1")
	addProvider(t, ts, "other", "")
	page := b.mustPage("GET", "/threads", nil, 200)
	if !strings.Contains(page, `id="create-thread"`) || !strings.Contains(page, `<option value="other"`) {
		t.Fatalf("the form:\n%s", page)
	}
	_, _, loc := b.page("POST", "/threads/new", url.Values{"title": {"  First  "}, "provider": {"local"}})
	if loc != "/threads/1" {
		t.Fatalf("creating: Location %q", loc)
	}
	th, err := ts.w.threads.Get(context.Background(), 1)
	if err != nil || th.Title != "First" || th.Provider != "local" || th.Model != "m1" {
		t.Fatalf("made %+v, %v", th, err)
	}
	if _, _, loc := b.page("POST", "/threads/new", url.Values{"title": {"Second"}, "provider": {"other"}, "model": {"big-model"}}); loc != "/threads/2" {
		t.Fatalf("creating with a model: Location %q", loc)
	}
	if th, _ := ts.w.threads.Get(context.Background(), 2); th.Model != "big-model" {
		t.Errorf("the model typed was not kept: %+v", th)
	}

	long := strings.Repeat("Long title ", 30)
	for _, tc := range []struct {
		form      url.Values
		say, kept string
	}{
		{url.Values{"title": {long}, "provider": {"other"}, "model": {"typed-model"}}, "over 200 bytes", `value="typed-model"`},
		{url.Values{"title": {""}, "provider": {"local"}, "model": {"typed-model"}}, "Give the thread a title", `value="typed-model"`},
		{url.Values{"title": {"Kept title"}, "provider": {"nosuch"}}, "choose one from the list", `value="Kept title"`},
		{url.Values{"title": {"Kept title"}, "provider": {"other"}}, "has no default model", `<option value="other" selected>`},
	} {
		page := b.mustPage("POST", "/threads/new", tc.form, 400)
		if !strings.Contains(page, `id="problem"`) || !strings.Contains(page, tc.say) || !strings.Contains(page, tc.kept) {
			t.Errorf("%v: the page does not say %q or keep %q:\n%s", tc.form, tc.say, tc.kept, page)
		}
	}
	if page := b.mustPage("POST", "/threads/new", url.Values{"title": {long}, "provider": {"other"}}, 400); !strings.Contains(page, `value="`+strings.TrimSpace(long)+`"`) {
		t.Error("the long title typed is not in the form again")
	}
	if list, _ := ts.w.threads.List(context.Background()); len(list) != 2 {
		t.Errorf("%d threads after the refusals, want 2", len(list))
	}
}

// TestThreadPageShowsUntrustedText: what a model or a tool wrote is text on
// the page, never markup; a call's arguments are indented, hidden
// characters shown; an approval pending shows the owner its answers, and
// a later event of the same approval replaces it in its place.
func TestThreadPageShowsUntrustedText(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	th := addThread(t, ts, "Escapes", "system", "secret-ish system prompt", "user", "<script>alert(1)</script>")
	appendEvent(t, ts, th.ID, threads.KindMessage, map[string]any{"role": "assistant", "content": nil,
		"tool_calls": []any{map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "fs__read", "arguments": `{"path":"a` + "\u202e" + `b","n":[]}`}}}})
	appendEvent(t, ts, th.ID, "approval", map[string]any{"approval": 7, "run": 1, "call_id": "call_1", "server": "fs", "tool": "read", "name": "fs__read",
		"arguments": `{"path":"x"}`, "reason": "this tool is not allowed without asking", "hints": map[string]bool{"read_only": true}, "status": "pending",
		"expires": "2030-01-02T03:04:05Z"})
	appendEvent(t, ts, th.ID, threads.KindMessage, map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "<b>bold</b> result"})
	page := b.mustPage("GET", "/threads/1", nil, 200)
	for _, want := range []string{
		"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b&gt;bold&lt;/b&gt; result",
		`<details><summary>System prompt</summary>`,
		"{\n  &#34;path&#34;: &#34;a\\u202eb&#34;,\n  &#34;n&#34;: []\n}", // indented, the override shown
		`data-approval="7" data-status="pending"`, `data-answer="once"`, `data-answer="cancelled"`, `class="badge passed">read-only`,
		`Result of <code class="tool-name">fs__read</code>`, `data-thread="1"`, `data-last-seq="5"`, `<script src="/static/thread.js" defer>`,
		`id="prompt-form"`, `data-fork="2"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>alert(1)</script>", "<b>bold</b>", "\u202e"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q as itself", bad)
		}
	}
	appendEvent(t, ts, th.ID, "approval", map[string]any{"approval": 7, "run": 1, "call_id": "call_1", "server": "fs", "tool": "read",
		"arguments": `{"path":"x"}`, "status": "declined", "answered_by": "user:owner"})
	page = b.mustPage("GET", "/threads/1", nil, 200)
	if strings.Count(page, `data-approval="7"`) != 1 || !strings.Contains(page, `data-status="declined" data-seq="4"`) || !strings.Contains(page, "Declined, by user:owner") ||
		strings.Contains(page, `data-answer="once"`) {
		t.Errorf("the approval after its answer:\n%s", page)
	}
	if code, _, _ := b.page("GET", "/threads/99", nil); code != 404 {
		t.Errorf("a thread that is not there: %d", code)
	}
}

// TestThreadPagesForViewers: in a team, a viewer reads the threads but
// cannot make one (the form is not shown, and a post is refused), nor is
// given the controls that change a thread.
func TestThreadPagesForViewers(t *testing.T) {
	ts := start(t, Options{Team: true})
	addProvider(t, ts, "local", "m1")
	addThread(t, ts, "Team thread", "user", "hello")
	var viewer struct {
		ID int64 `json:"id"`
	}
	ts.browser.must("POST", "/api/users", map[string]string{"name": "vic", "role": "viewer"}, 201, &viewer)
	v := ts.login(viewer.ID)
	if page := v.mustPage("GET", "/threads", nil, 200); !strings.Contains(page, "Team thread") || strings.Contains(page, `id="create-thread"`) {
		t.Errorf("the viewer's list:\n%s", page)
	}
	if code, body, _ := v.page("POST", "/threads/new", url.Values{"title": {"By a viewer"}, "provider": {"local"}}); code != 403 || !strings.Contains(body, "Viewers cannot change anything") {
		t.Errorf("a viewer making a thread: %d\n%s", code, body)
	}
	if list, _ := ts.w.threads.List(context.Background()); len(list) != 1 {
		t.Errorf("%d threads, want 1", len(list))
	}
	page := v.mustPage("GET", "/threads/1", nil, 200)
	if !strings.Contains(page, "hello") || strings.Contains(page, `id="prompt-form"`) || strings.Contains(page, "data-fork") || !strings.Contains(page, `data-writer="false"`) {
		t.Errorf("the viewer's thread page:\n%s", page)
	}
	if code, _, _ := ts.bearer().page("GET", "/threads", nil); code != 403 {
		t.Errorf("a bearer caller got the threads page: %d", code)
	}
}

// TestThreadScriptBuildsNoHTML: the thread page's script, as served, has
// no way to parse a string as HTML or code, and only the thread page
// loads it.
func TestThreadScriptBuildsNoHTML(t *testing.T) {
	ts := start(t, Options{})
	code, js := ts.browser.do("GET", "/static/thread.js", nil)
	if code != 200 || len(js) == 0 {
		t.Fatalf("GET /static/thread.js: %d", code)
	}
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "eval(", "document.write", "new Function", "createContextualFragment", "DOMParser"} {
		if strings.Contains(string(js), bad) {
			t.Errorf("thread.js uses %s", bad)
		}
	}
	if page := ts.browser.mustPage("GET", "/threads", nil, 200); strings.Contains(page, "thread.js") {
		t.Error("the list loads thread.js")
	}
}

// TestVisibleText: hidden characters in what a model or tool wrote are
// shown escaped, line by line, tabs kept; arguments are indented only
// when they are JSON.
func TestVisibleText(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\nline two\r\n": "plain\ttext\nline two\n",
		"a\u202eb\nc\u200bd":        `a\u202eb` + "\n" + `c\u200bd`,
		"bell\a":                    `bell\x07`,
	} {
		if got := visibleText(in); got != want {
			t.Errorf("visibleText(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		`{"a":1,"b":{},"c":[1,2]}`: "{\n  \"a\": 1,\n  \"b\": {},\n  \"c\": [\n    1,\n    2\n  ]\n}",
		`not json {`:               `not json {`,
		``:                         ``,
	} {
		if got := argsText([]byte(in)); got != want {
			t.Errorf("argsText(%q) = %q, want %q", in, got, want)
		}
	}
}
