package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
)

// TestBrowserThreadMarkdown runs a thread whose model answers, and whose
// tool returns, hostile Markdown in headless Chromium: a script, images
// and a frame on another origin (a listener on another loopback port), a
// javascript: link and an event handler. Nothing of it runs, and the
// browser requests nothing off the workspace's origin, live as the answer
// comes in and on the page loaded afresh; the answer's Markdown is HTML
// (bold, a list, code, a marked link showing its URL); the tool's result is
// shown as the text it is, without the wrapper the model reads; and the
// Markdown export holds the call, its arguments and its result.
func TestBrowserThreadMarkdown(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	ms := modeltest.New(t)
	seen := record(t, tab)
	var mu sync.Mutex
	var offOrigin []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		offOrigin = append(offOrigin, r.URL.String())
		mu.Unlock()
	}))
	t.Cleanup(other.Close)
	off := other.URL // http://127.0.0.1:PORT, another origin

	answer := "Here is **bold** and a list:\n\n- one\n- two\n\nRun `zero serve`.\n\n" +
		"<script>document.title = \"pwned\"; window.pwned = 1</script>\n\n" +
		"![tracker](" + off + "/pixel.png) <img src=" + off + "/img.png onerror=\"window.pwned = 2\"> " +
		"[click me](javascript:window.pwned=3) <iframe src=\"" + off + "/frame\"></iframe> " +
		"[docs](" + off + "/docs) <svg onload=\"window.pwned = 4\"></svg>"
	toolText := "**not bold** <script>window.pwned = 5</script> ![t](" + off + "/tool.png) [x](javascript:window.pwned=6)"
	args := `{"text": ` + jsString(toolText) + `}`
	ms.Push(
		modeltest.Reply{Text: "Let me look.", Calls: []model.ToolCall{modeltest.Call("call_1", "tools__echo", args)}},
		modeltest.Reply{Text: answer},
	)
	threadSetup(t, tab, srv, ms)
	newThread(t, tab, srv, "Markdown thread")
	do(t, tab,
		chromedp.SendKeys(chromedp.ID("prompt"), "Show me some Markdown."),
		chromedp.Click(chromedp.ID("send")),
		chromedp.Click(chromedp.CSS(`.approval[data-status="pending"] button[data-answer="once"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="completed"]`)),
		// thread.js asks the server how to show each message that came.
		chromedp.WaitVisible(chromedp.CSS(`.msg[data-role="tool"] .text[data-shown="text"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.msg[data-role="assistant"] .text[data-shown="markdown"] ul`)),
	)
	check := func(when string) {
		t.Helper()
		state := run(t, tab, chromedp.Evaluate[map[string]any](`(() => {
			const events = document.getElementById("events");
			const answers = events.querySelectorAll('.msg[data-role="assistant"] .text');
			const last = answers[answers.length - 1];
			const links = [...last.querySelectorAll("a")];
			return {
				title: document.title,
				pwned: String(window.pwned),
				active: events.querySelectorAll("script, img, iframe, svg, object, embed, video, audio, link, style").length,
				handlers: [...events.querySelectorAll("*")].filter(e => [...e.attributes].some(a => /^on/i.test(a.name))).length,
				javascript: [...events.querySelectorAll("[href], [src]")].filter(e => /^\s*javascript:/i.test(e.getAttribute("href") || e.getAttribute("src"))).length,
				bold: last.querySelector("p strong") ? last.querySelector("p strong").textContent : "",
				items: [...last.querySelectorAll("ul > li")].map(li => li.textContent).join(","),
				code: last.querySelector("p code") ? last.querySelector("p code").textContent : "",
				links: links.map(a => a.getAttribute("href") + " " + a.rel + " " + a.target + " " + a.textContent).join("\n"),
				answer: last.textContent,
				result: events.querySelector('.msg[data-role="tool"] .text').textContent,
			};
		})()`))
		if state["title"] == "pwned" || state["pwned"] != "undefined" || state["active"] != 0.0 || state["handlers"] != 0.0 || state["javascript"] != 0.0 {
			t.Errorf("%s: something of the model's or the tool's could act: %v", when, state)
		}
		if state["bold"] != "bold" || state["items"] != "one,two" || state["code"] != "zero serve" {
			t.Errorf("%s: the answer's Markdown is not HTML: %v", when, state)
		}
		wantLinks := off + "/pixel.png nofollow noreferrer noopener _blank image: tracker\n" + off + "/docs nofollow noreferrer noopener _blank docs"
		if got := state["links"]; got != wantLinks {
			t.Errorf("%s: the links:\n%v\nwant\n%s", when, got, wantLinks)
		}
		answer, _ := state["answer"].(string)
		for _, want := range []string{"image: tracker (" + off + "/pixel.png)", "docs (" + off + "/docs)", "click me", `<script>document.title = "pwned"`, "<img src=" + off} {
			if !strings.Contains(answer, want) {
				t.Errorf("%s: the answer does not show %q: %q", when, want, answer)
			}
		}
		result, _ := state["result"].(string)
		if !strings.Contains(result, "**not bold** <script>window.pwned = 5</script> ![t]("+off+"/tool.png)") || strings.Contains(result, "tool_output") {
			t.Errorf("%s: the tool's result shows %q", when, result)
		}
	}
	check("live")
	screenshot(t, tab, "thread-markdown")
	do(t, tab, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`.msg[data-role="assistant"] .text.markdown`)))
	check("loaded")

	// The export link gives the call with its arguments and the result
	// without its wrapper, the answer as Markdown in a quote.
	export := run(t, tab, chromedp.Evaluate[string](`fetch(document.getElementById("export-markdown").href).then(r => r.text())`, chromedp.EvalAwaitPromise))
	for _, want := range []string{
		"## 2. Assistant\n\n> Let me look.\n\nCalls `tools__echo` (call `call_1`) with:\n\n```json\n{\n  \"text\": " + jsString(toolText) + "\n}\n```\n",
		"Result of `tools__echo` (call `call_1`)\n\n```text\n{\"text\":" + jsString(toolText) + "}\n```\n",
		"## 9. Assistant\n\n> Here is **bold** and a list:\n>\n> - one\n",
	} {
		if !strings.Contains(export, want) {
			t.Errorf("the Markdown export lacks %q:\n%s", want, export)
		}
	}
	if strings.Contains(export, "tool_output") {
		t.Errorf("the Markdown export shows the wrapper:\n%s", export)
	}

	if foreign := seen.foreign(srv.base); len(foreign) > 0 {
		t.Errorf("the page requested other origins: %q", foreign)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(offOrigin) > 0 {
		t.Errorf("the other origin was asked for %q", offOrigin)
	}
}
