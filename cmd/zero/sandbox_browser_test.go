package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/sandbox"
)

// TestBrowserSandboxedThread runs a sandboxed thread end to end in
// headless Chromium against zero serve (its own executable the guest
// helper) and the scripted model server: the Sandbox page shows each
// backend's probe (bubblewrap usable, smolvm not); the owner pins
// bubblewrap and lets sandboxed calls run without asking; a thread made
// with runtime "sandbox" on the Threads page shows its backend; the
// model's write_file and read_file run in guests, and each call shows the
// backend that ran it, live and after a reload.
func TestBrowserSandboxedThread(t *testing.T) {
	if err := (sandbox.BubblewrapRunner{}).Probe(t.Context()); err != nil {
		t.Skipf("bubblewrap is unusable here: %v", err)
	}
	tab := browser(t)
	srv := startServe(t, nil)
	ms := modeltest.New(t)
	ms.Push(
		modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("w", "write_file", `{"path": "notes.txt", "content": "from the guest"}`)}},
		modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("r", "read_file", `{"path": "notes.txt"}`)}},
		modeltest.Reply{Text: "The file says: from the guest."},
	)
	threadSetup(t, tab, srv, ms)
	text := func(sel string) string { t.Helper(); return run(t, tab, chromedp.Text(chromedp.CSS(sel))) }

	do(t, tab, chromedp.Navigate(srv.base+"/sandbox"), chromedp.WaitVisible(chromedp.ID("save-sandbox")))
	if got := text("#backend-bubblewrap .probe"); got != "usable" {
		t.Errorf("bubblewrap's probe shows %q", got)
	}
	if got := text("#backend-smolvm .probe"); !strings.HasPrefix(got, "unusable: ") {
		t.Errorf("smolvm's probe shows %q", got)
	}
	screenshot(t, tab, "sandbox-settings")
	do(t, tab,
		chromedp.SetValue(chromedp.ID("sandbox-pin"), "bubblewrap"),
		chromedp.Click(chromedp.ID("sandbox-allow")),
		chromedp.Click(chromedp.ID("save-sandbox")),
		chromedp.WaitVisible(chromedp.ID("set-by")),
	)
	if pin := run(t, tab, chromedp.Evaluate[string](`document.getElementById("sandbox-pin").value`)); pin != "bubblewrap" {
		t.Errorf("the pin after saving: %q", pin)
	}

	do(t, tab,
		chromedp.Navigate(srv.base+"/threads"),
		chromedp.WaitVisible(chromedp.ID("thread-title")),
		chromedp.SendKeys(chromedp.ID("thread-title"), "Sandboxed"),
		chromedp.Click(chromedp.ID("thread-runtime-sandbox")),
		chromedp.Click(chromedp.ID("create-thread")),
		chromedp.WaitVisible(chromedp.ID("prompt")),
		chromedp.WaitVisible(chromedp.CSS(`#live[data-state="live"]`)),
	)
	if got := text("#thread-backend"); got != "bubblewrap" {
		t.Errorf("the thread's backend shows %q", got)
	}
	do(t, tab,
		chromedp.SendKeys(chromedp.ID("prompt"), "Write a note and read it back."),
		chromedp.Click(chromedp.ID("send")),
		chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="completed"]`)),
	)
	ran := func() []string {
		return run(t, tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#events .ran")].map(e => e.dataset.backend + " " + e.textContent.trim())`))
	}
	want := []string{"bubblewrap write_file ran in a guest on bubblewrap: ok", "bubblewrap read_file ran in a guest on bubblewrap: ok"}
	if got := ran(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the calls shown live: %q, want %q", got, want)
	}
	if result := run(t, tab, chromedp.Evaluate[string](`[...document.querySelectorAll('.msg[data-role="tool"]')].pop().textContent`)); !strings.Contains(result, "from the guest") {
		t.Errorf("read_file's result: %q", result)
	}
	screenshot(t, tab, "sandbox-thread")
	do(t, tab, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("thread-backend")))
	if got := ran(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the calls shown after a reload: %q, want %q", got, want)
	}
	if refused := ms.Refused(); len(refused) > 0 {
		t.Errorf("the provider refused: %v", refused)
	}
}
