package workspace

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/guard/markdown"
	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// hostileMarkdown is an assistant's answer with Markdown and with what
// must never act in a page: a script, a remote image, a javascript: link,
// an event handler and a hidden character.
const hostileMarkdown = "Here is **bold** and a list:\n\n- one\n- two\n\n```go\nx := 1\n```\n\n" +
	"<script>document.title = \"pwned\"</script>\n\n" +
	"An image ![tracker](http://127.0.0.1:9/pixel.png), a [link](javascript:alert(1)), " +
	"<img src=http://127.0.0.1:9/x onerror=alert(1)> and a\u202eb."

// TestThreadPageRendersMarkdown: an assistant's Markdown is HTML on the
// page, with no script, image, handler or javascript: link, its hidden
// characters shown; a person's text stays text; a tool's result is shown
// without the wrapper the model read it in; Markdown over its bounds is
// text, saying why.
func TestThreadPageRendersMarkdown(t *testing.T) {
	ts := start(t, Options{})
	th := addThread(t, ts, "Markdown", "user", "**not bold**", "assistant", hostileMarkdown)
	appendEvent(t, ts, th.ID, threads.KindMessage, map[string]any{"role": "assistant", "content": nil,
		"tool_calls": []any{map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "fs__read", "arguments": `{}`}}}})
	appendEvent(t, ts, th.ID, threads.KindMessage, map[string]any{"role": "tool", "tool_call_id": "call_1",
		"content": threads.Wrap(threads.NewNonce(), "fs", "read", "**the file** <b>says</b> hi")})
	appendEvent(t, ts, th.ID, threads.KindMessage, map[string]any{"role": "assistant", "content": strings.Repeat("[", markdown.MaxDepth+1) + "deep"})
	page := ts.browser.mustPage("GET", "/threads/1", nil, 200)
	for _, want := range []string{
		`<div class="text">**not bold**</div>`,
		`<div class="text markdown"><p>Here is <strong>bold</strong> and a list:</p>`, "<li>one</li>", `<code class="language-go">x := 1`,
		"&lt;script&gt;document.title = &#34;pwned&#34;&lt;/script&gt;",
		`<a href="http://127.0.0.1:9/pixel.png" rel="nofollow noreferrer noopener" target="_blank">image: tracker</a> (http://127.0.0.1:9/pixel.png)`,
		", a link, &lt;img src=http://127.0.0.1:9/x onerror=alert(1)&gt; and a\\u202eb.",
		`<div class="text">**the file** &lt;b&gt;says&lt;/b&gt; hi</div>`,
		`<div class="text">` + strings.Repeat("[", markdown.MaxDepth+1) + `deep</div><p class="help as-text">Shown as text: too long or too deeply nested`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>document", "<img", "javascript:", "tool_output", "\u202e"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if handler := regexp.MustCompile(`<[^>]*\son[a-z]+=`).FindString(page); handler != "" {
		t.Errorf("the page has an event handler: %s", handler)
	}
}

// TestRenderedEvent: the route thread.js asks gives a message's text as
// the page shows it: an assistant's Markdown as nodes, a tool's result
// without its wrapper; anything else is refused.
func TestRenderedEvent(t *testing.T) {
	ts := start(t, Options{})
	th := addThread(t, ts, "Rendered", "user", "**hi**", "assistant", "A *b* [c](javascript:x)")
	appendEvent(t, ts, th.ID, threads.KindMessage, map[string]any{"role": "tool", "tool_call_id": "call_1",
		"content": threads.Wrap(threads.NewNonce(), "fs", "read", "result\u202e")})
	appendEvent(t, ts, th.ID, "run", map[string]any{"run": 1, "status": "completed"})
	type shown struct {
		Seq      int64           `json:"seq"`
		Role     string          `json:"role"`
		Text     string          `json:"text"`
		Markdown []markdown.Node `json:"markdown"`
	}
	for _, tc := range []struct {
		seq  string
		want shown
	}{
		{"1", shown{Seq: 1, Role: "user", Text: "**hi**"}},
		{"2", shown{Seq: 2, Role: "assistant", Text: "A *b* [c](javascript:x)", Markdown: []markdown.Node{{Tag: "p", Children: []markdown.Node{
			{Text: "A "}, {Tag: "em", Children: []markdown.Node{{Text: "b"}}}, {Text: " c"}}}}}},
		{"3", shown{Seq: 3, Role: "tool", Text: "result"}}, // hidden characters were stripped before the model read it
	} {
		var got shown
		ts.browser.must("GET", "/api/threads/1/events/"+tc.seq+"/rendered", nil, 200, &got)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("event %s (-want +got):\n%s", tc.seq, diff)
		}
	}
	for _, path := range []string{"/api/threads/1/events/4/rendered", "/api/threads/1/events/9/rendered", "/api/threads/1/events/x/rendered", "/api/threads/2/events/1/rendered"} {
		if st, data := ts.browser.do("GET", path, nil); st != 404 || errorCode(data) != "not_found" {
			t.Errorf("GET %s: %d %s", path, st, data)
		}
	}
}

// TestRenderItemsBudget: a page renders the latest answers' Markdown
// within its budget, and shows older ones as text, saying why.
func TestRenderItemsBudget(t *testing.T) {
	big := "**x** " + strings.Repeat("a", markdown.MaxSource-10)
	var items []threadItem
	for range markdownBudget/len(big) + 2 {
		items = append(items, threadItem{Kind: threads.KindMessage, Role: model.RoleAssistant, content: big, shownText: shownText{Text: big}})
	}
	renderItems(items)
	rendered := 0
	for i, it := range items {
		if it.Markdown != nil {
			rendered++
		} else if i > 1 || !strings.Contains(it.AsText, "at most 1024 KiB of Markdown") {
			t.Errorf("item %d: %q", i, it.AsText)
		}
	}
	if rendered != markdownBudget/len(big) || items[len(items)-1].Markdown == nil {
		t.Errorf("%d of %d rendered, want the latest %d", rendered, len(items), markdownBudget/len(big))
	}
}
