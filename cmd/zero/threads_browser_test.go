package main

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/workspace/runtime/runtimetest"
)

// TestBrowserThread runs a thread end to end in headless Chromium against
// zero serve, an approved MCP server (the runtime's toolserver) and the
// scripted model server: the owner makes a thread and sends a prompt; the
// answer streams in; the tool call waits at an approval prompt, answered
// with the keyboard ("o"); the result and the final answer show, and the
// run completes. Model text with markup stays text, and the page requests
// nothing from another origin.
func TestBrowserThread(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	ms := modeltest.New(t)
	seen := record(t, tab)
	pause := make(chan struct{})
	ms.Push(
		modeltest.Reply{Text: "Checking with the tool <img src=x onerror=alert(1)>.", Pause: pause,
			Calls: []model.ToolCall{modeltest.Call("call_1", "tools__echo", `{"x": 1}`)}, Usage: model.Usage{PromptTokens: 12, CompletionTokens: 3}},
		modeltest.Reply{Text: "The tool said x is 1.", Usage: model.Usage{PromptTokens: 20, CompletionTokens: 6}},
	)

	setupThreads(t, tab, srv, ms)

	do(t, tab,
		chromedp.Navigate(srv.base+"/threads"),
		chromedp.WaitVisible(chromedp.ID("thread-title")),
		chromedp.SendKeys(chromedp.ID("thread-title"), "Browser thread"),
		chromedp.Click(chromedp.ID("create-thread")),
		chromedp.WaitVisible(chromedp.ID("prompt")),
		chromedp.WaitVisible(chromedp.CSS(`#live[data-state="live"]`)),
	)
	screenshot(t, tab, "thread-new")
	do(t, tab,
		chromedp.SendKeys(chromedp.ID("prompt"), "Echo x=1, please."),
		chromedp.Click(chromedp.ID("send")),
		chromedp.WaitVisible(chromedp.CSS(`#streaming .text`)),
	)
	streamed := run(t, tab, chromedp.Text(chromedp.CSS(`#streaming .text`)))
	if !strings.HasPrefix("Checking with the tool <img src=x onerror=alert(1)>.", streamed) || streamed == "" {
		t.Errorf("the streamed text so far: %q", streamed)
	}
	screenshot(t, tab, "thread-streaming")
	close(pause)

	do(t, tab, chromedp.WaitVisible(chromedp.CSS(`.approval[data-status="pending"] button[data-answer="once"]`)))
	if focused := run(t, tab, chromedp.Evaluate[string](`document.activeElement.dataset.status || ""`)); focused != "pending" {
		t.Errorf("the pending approval does not have the focus: %q", focused)
	}
	prompt := run(t, tab, chromedp.Text(chromedp.CSS(`.approval[data-status="pending"]`)))
	for _, want := range []string{"echo", `"x": 1`, "destructive"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the approval prompt lacks %q: %s", want, prompt)
		}
	}
	screenshot(t, tab, "thread-approval")
	do(t, tab, chromedp.KeyEvent("o"), chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="completed"]`)))

	result := run(t, tab, chromedp.Text(chromedp.CSS(`.msg[data-role="tool"]`)))
	if !strings.Contains(result, `{"x":1}`) || !strings.Contains(result, "tool_output") {
		t.Errorf("the tool result shows %q", result)
	}
	answers := run(t, tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.msg[data-role="assistant"] .text')].map(e => e.textContent)`))
	if len(answers) != 2 || answers[1] != "The tool said x is 1." || !strings.Contains(answers[0], "<img src=x") {
		t.Errorf("the assistant's messages: %q", answers)
	}
	if imgs := run(t, tab, chromedp.Evaluate[int](`document.querySelectorAll("#events img").length`)); imgs != 0 {
		t.Errorf("model text made %d img elements", imgs)
	}
	if usage := run(t, tab, chromedp.Text(chromedp.ID("usage"))); !strings.Contains(usage, "32 prompt, 9 completion") {
		t.Errorf("usage: %q", usage)
	}
	if status := run(t, tab, chromedp.Evaluate[string](`document.querySelector(".approval").dataset.status`)); status != "once" {
		t.Errorf("the answered approval shows %q", status)
	}
	screenshot(t, tab, "thread-done")
	if refused := ms.Refused(); len(refused) > 0 {
		t.Errorf("the provider refused: %v", refused)
	}
	if foreign := seen.foreign(srv.base); len(foreign) > 0 {
		t.Errorf("the pages requested other origins: %q", foreign)
	}
}

// setupThreads signs tab in to srv and adds, through the API as the
// pages' own script would send it, the runtime's toolserver as the
// approved, enabled and tested server "tools", and a provider "local" on
// ms; the pages that do it are tested elsewhere.
func setupThreads(t *testing.T, tab context.Context, srv *serveProcess, ms *modeltest.Server) {
	t.Helper()
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")))
	setup := `(async () => {
		const s = await (await fetch("/api/session")).json();
		const send = async (method, path, body) => {
			const r = await fetch(path, {method, headers: {"Content-Type": "application/json", "X-CSRF-Token": s.csrf_token}, body: JSON.stringify(body)});
			const j = await r.json();
			if (!r.ok) throw new Error(path + ": " + JSON.stringify(j));
			return j;
		};
		const config = {name: "tools", kind: "stdio", command: ` + jsString(runtimetest.Toolserver(t)) + `};
		const p = await send("POST", "/api/servers/preview", {config});
		const c = await send("POST", "/api/servers", {config, fingerprint: p.fingerprint, enable: true});
		await send("POST", "/api/servers/" + c.server.id + "/test", null);
		await send("POST", "/api/providers", {name: "local", base_url: ` + jsString(ms.BaseURL()) + `, default_model: "scripted-1"});
		return "ok";
	})()`
	if got := run(t, tab, chromedp.Evaluate[string](setup, chromedp.EvalAwaitPromise)); got != "ok" {
		t.Fatalf("setup: %s", got)
	}
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
