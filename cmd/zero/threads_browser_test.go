package main

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
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

	threadSetup(t, tab, srv, ms)

	newThread(t, tab, srv, "Browser thread")
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
	if !strings.Contains(result, `{"x":1}`) || strings.Contains(result, "tool_output") {
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

// threadSetup signs the tab in to srv and adds, approved and enabled, the
// runtime's test MCP server "tools" and the provider "local" on ms.
func threadSetup(t *testing.T, tab context.Context, srv *serveProcess, ms *modeltest.Server) {
	t.Helper()
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")))
	// The server and the provider, through the API as the page's own
	// script would send it; the pages that do it are tested elsewhere.
	if got := inPage(t, tab, toolsAndProvider(t, ms.BaseURL())+`
		return "ok";`); got != "ok" {
		t.Fatalf("setup: %s", got)
	}
}

// newThread makes a thread titled title on the Threads page, and waits
// for its page to be live.
func newThread(t *testing.T, tab context.Context, srv *serveProcess, title string) {
	t.Helper()
	do(t, tab,
		chromedp.Navigate(srv.base+"/threads"),
		chromedp.WaitVisible(chromedp.ID("thread-title")),
		chromedp.SendKeys(chromedp.ID("thread-title"), title),
		chromedp.Click(chromedp.ID("create-thread")),
		chromedp.WaitVisible(chromedp.ID("prompt")),
		chromedp.WaitVisible(chromedp.CSS(`#live[data-state="live"]`)),
	)
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
