package main

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
)

// send types text in the message box and sends it with Ctrl+Enter.
func send(t *testing.T, tab context.Context, text string) {
	t.Helper()
	do(t, tab, chromedp.SendKeys(chromedp.ID("prompt"), text), chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
}

// focused is the id of the element that has the focus, else its class.
func focused(t *testing.T, tab context.Context) string {
	t.Helper()
	return run(t, tab, chromedp.Evaluate[string](`(e => e.id || e.className)(document.activeElement)`))
}

// TestBrowserThreadKeysAfterSend: a message sent with Ctrl+Enter leaves
// the focus in the message box when the call's approval comes; the card
// says to press Esc first; Esc leaves the box for the approval, and "o"
// answers it (before, it was typed into the box and the run waited).
func TestBrowserThreadKeysAfterSend(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	ms := modeltest.New(t)
	ms.Push(modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("call_1", "tools__echo", `{"x": 1}`)}}, modeltest.Reply{Text: "Echoed."})
	threadSetup(t, tab, srv, ms)
	newThread(t, tab, srv, "Keys")
	send(t, tab, "Echo x=1, please.")
	do(t, tab, chromedp.WaitVisible(chromedp.CSS(`.approval[data-status="pending"] button[data-answer="once"]`)))
	if got := focused(t, tab); got != "prompt" {
		t.Fatalf("after Ctrl+Enter the focus is on %q, want the message box", got)
	}
	if card := run(t, tab, chromedp.Text(chromedp.CSS(`.approval[data-status="pending"]`))); !strings.Contains(card, "Press Esc first") {
		t.Errorf("the approval card does not say how to answer from the message box: %s", card)
	}
	screenshot(t, tab, "thread-keys")
	do(t, tab, chromedp.KeyEvent(kb.Escape))
	if got := run(t, tab, chromedp.Evaluate[string](`document.activeElement.dataset.status || document.activeElement.id`)); got != "pending" {
		t.Errorf("after Esc the focus is on %q, want the pending approval", got)
	}
	do(t, tab, chromedp.KeyEvent("o"), chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="completed"]`)))
	if status := run(t, tab, chromedp.Evaluate[string](`document.querySelector(".approval").dataset.status`)); status != "once" {
		t.Errorf("the approval shows %q, want once", status)
	}
	if text := run(t, tab, chromedp.Value(chromedp.ID("prompt"))); text != "" {
		t.Errorf("the message box holds %q", text)
	}
}

// TestBrowserAllowances: after "always allow", the tool's next call runs
// without asking and its thread shows the allowance it ran under, live
// and after a reload; the Allowances page (from the navigation) lists it
// with its tool, server, scope, who gave it, and the hash and fingerprint;
// Revoke removes it and says so; the tool's next call asks again.
func TestBrowserAllowances(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	ms := modeltest.New(t)
	echo := modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("", "tools__echo", `{"x": 1}`)}}
	ms.Push(echo, modeltest.Reply{Text: "One."}, echo, modeltest.Reply{Text: "Two."}, echo, modeltest.Reply{Text: "Three."})
	seen := record(t, tab)
	threadSetup(t, tab, srv, ms)
	newThread(t, tab, srv, "Allowed")
	send(t, tab, "one")
	do(t, tab,
		chromedp.Click(chromedp.CSS(`.approval[data-status="pending"] button[data-answer="always"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="completed"]`)),
	)
	send(t, tab, "two")
	do(t, tab, chromedp.WaitVisible(chromedp.CSS(`.allowance[data-scope="always"]`)), chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="completed"]`)))
	live := run(t, tab, chromedp.Text(chromedp.CSS(`.allowance[data-scope="always"]`)))
	for _, want := range []string{"Ran without asking", "tools / echo", "always allowed, in every thread, by user:owner, 20", "sha256:"} {
		if !strings.Contains(live, want) {
			t.Errorf("the allowance shown live lacks %q: %s", want, live)
		}
	}
	if n := run(t, tab, chromedp.Evaluate[int](`document.querySelectorAll(".approval").length`)); n != 1 {
		t.Errorf("%d approvals, want the first call's only", n)
	}
	screenshot(t, tab, "thread-allowance")
	do(t, tab, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`.allowance[data-scope="always"]`)))
	if loaded := run(t, tab, chromedp.Text(chromedp.CSS(`.allowance[data-scope="always"]`))); loaded != live {
		t.Errorf("the allowance after a reload:\n%s\nlive:\n%s", loaded, live)
	}

	do(t, tab, chromedp.Click(chromedp.CSS(`nav a[href="/allowances"]`)), chromedp.WaitVisible(chromedp.CSS(`tr[data-tool="echo"]`)))
	row := run(t, tab, chromedp.Text(chromedp.CSS(`tr[data-tool="echo"]`)))
	for _, want := range []string{"echo", "tools", "Every thread", "by user:owner, 20", "sha256:"} {
		if !strings.Contains(row, want) {
			t.Errorf("the allowance's row lacks %q: %s", want, row)
		}
	}
	screenshot(t, tab, "allowances")
	do(t, tab, chromedp.Click(chromedp.CSS(`tr[data-tool="echo"] button[data-revoke]`)), chromedp.WaitVisible(chromedp.ID("no-allowances")))
	if notice := run(t, tab, chromedp.Text(chromedp.ID("notice"))); !strings.Contains(notice, "revoked") {
		t.Errorf("after Revoke: %s", notice)
	}
	screenshot(t, tab, "allowances-revoked")

	do(t, tab, chromedp.Navigate(srv.base+"/threads/1"), chromedp.WaitVisible(chromedp.CSS(`#live[data-state="live"]`)))
	send(t, tab, "three")
	do(t, tab, chromedp.WaitVisible(chromedp.CSS(`.approval[data-status="pending"] button[data-answer="once"]`)))
	do(t, tab, chromedp.Click(chromedp.CSS(`.approval[data-status="pending"] button[data-answer="once"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="completed"]`)))
	if foreign := seen.foreign(srv.base); len(foreign) > 0 {
		t.Errorf("the pages requested other origins: %q", foreign)
	}
}

// TestBrowserThreadRetryRegenerateEdit: a run that failed (the provider
// down) is retried with its button and completes; Regenerate on the
// answer goes to a fork where the model answers again; Edit and resend on
// that fork's question opens a box with its text, and sending it changed
// goes to a fork before it, answered.
func TestBrowserThreadRetryRegenerateEdit(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	ms := modeltest.New(t)
	ms.Push(modeltest.Reply{Error: "overloaded"}, modeltest.Reply{Text: "One is one."}, modeltest.Reply{Text: "One, again."}, modeltest.Reply{Text: "Two is two."})
	threadSetup(t, tab, srv, ms)
	newThread(t, tab, srv, "Again")
	send(t, tab, "What is one?")
	do(t, tab, chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="failed"]`)), chromedp.WaitVisible(chromedp.ID("retry")))
	screenshot(t, tab, "thread-failed")
	do(t, tab, chromedp.Click(chromedp.ID("retry")), chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="completed"]`)))
	answers := func() []string {
		return run(t, tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.msg[data-role="assistant"] .text, .msg[data-role="user"] .text')].map(e => e.textContent)`))
	}
	if got := answers(); len(got) != 2 || got[0] != "What is one?" || got[1] != "One is one." {
		t.Fatalf("after the retry: %q", got)
	}
	if hidden := run(t, tab, chromedp.Evaluate[bool](`document.getElementById("retry").hidden`)); !hidden {
		t.Error("Retry is offered after the run completed")
	}

	do(t, tab, chromedp.Click(chromedp.CSS(`.msg[data-role="assistant"] button[data-regenerate]`)),
		chromedp.WaitVisible(chromedp.ID("forked-from")), chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="completed"]`)))
	if loc := run(t, tab, chromedp.Location()); loc != srv.base+"/threads/2" {
		t.Errorf("Regenerate went to %s", loc)
	}
	if got := answers(); len(got) != 2 || got[0] != "What is one?" || got[1] != "One, again." {
		t.Errorf("the regenerated fork: %q", got)
	}
	screenshot(t, tab, "thread-regenerated")

	do(t, tab, chromedp.Click(chromedp.CSS(`.msg[data-role="user"] button[data-edit]`)), chromedp.WaitVisible(chromedp.CSS(`.edit-form textarea`)))
	if got := run(t, tab, chromedp.Value(chromedp.CSS(`.edit-form textarea`))); got != "What is one?" {
		t.Errorf("the edit box holds %q", got)
	}
	if got := run(t, tab, chromedp.Evaluate[bool](`document.activeElement.classList.contains("edit-text")`)); !got {
		t.Errorf("the focus is on %q, want the edit box", focused(t, tab))
	}
	screenshot(t, tab, "thread-edit")
	do(t, tab,
		chromedp.Evaluate[chromedp.Void](`document.querySelector(".edit-form textarea").value = ""`),
		chromedp.SendKeys(chromedp.CSS(`.edit-form textarea`), "What is two?"),
		chromedp.Click(chromedp.CSS(`.edit-form button[type="submit"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`.edit-form`)), // the page of the new fork
		chromedp.WaitVisible(chromedp.CSS(`.msg[data-role="user"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="completed"]`)),
	)
	if loc := run(t, tab, chromedp.Location()); loc != srv.base+"/threads/3" {
		t.Errorf("Edit and resend went to %s", loc)
	}
	if got := answers(); len(got) != 2 || got[0] != "What is two?" || got[1] != "Two is two." {
		t.Errorf("the edited fork: %q", got)
	}
	if meta := run(t, tab, chromedp.Text(chromedp.CSS(".thread-meta"))); !strings.Contains(meta, "forked from thread 2 before its first message") {
		t.Errorf("the edited fork says %q", meta)
	}
	if refused := ms.Refused(); len(refused) > 0 {
		t.Errorf("the provider refused: %v", refused)
	}
}
