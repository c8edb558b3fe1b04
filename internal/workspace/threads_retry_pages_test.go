package workspace

import (
	"strings"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/workspace/threads"
)

// TestThreadPageControls: a call that ran without asking shows the
// allowance it ran under (scope, who gave it and when, the hash and
// fingerprint); the model's answers have Regenerate and the user's
// messages Edit and resend; Retry is offered to a thread that ends with a
// question and no run, not to one that ends with the answer; a pending
// approval says how to answer it from the keyboard.
func TestThreadPageControls(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	th := addThread(t, ts, "Controls", "user", "What is one?", "assistant", "One.")
	appendEvent(t, ts, th.ID, threads.KindAllowance, threads.AllowanceEvent{Run: 1, CallID: "call_1", Name: "fs__read",
		Allowance: threads.Allowance{Scope: threads.AnswerAlways, ServerID: 1, Server: "fs", Tool: "read", Hash: "sha256:abc", Fingerprint: "sha256:def",
			SetBy: "user:owner", SetAt: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)}})
	page := b.mustPage("GET", "/threads/"+itoa(th.ID), nil, 200)
	for _, want := range []string{
		`<li class="allowance" data-call-id="call_1" data-scope="always" data-seq="3" id="event-3">`, "Ran without asking",
		"always allowed, in every thread, by user:owner, 2026-12-01 09:30 UTC", "sha256:abc", "sha256:def",
		`data-regenerate="2"`, `data-edit="1"`, `data-can-retry="false"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the thread's page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, `data-regenerate="1"`) || strings.Contains(page, `data-edit="2"`) {
		t.Errorf("a button on the wrong message:\n%s", page)
	}

	q := addThread(t, ts, "Question", "user", "Unanswered?")
	appendEvent(t, ts, q.ID, "approval", map[string]any{"approval": 7, "run": 1, "call_id": "call_1", "server": "fs", "tool": "read", "name": "fs__read",
		"arguments": `{}`, "status": "pending", "expires": "2030-01-02T03:04:05Z"})
	page = b.mustPage("GET", "/threads/"+itoa(q.ID), nil, 200)
	if !strings.Contains(page, `data-can-retry="true"`) || !strings.Contains(page, "Press Esc first") {
		t.Errorf("a thread that ends with a question, an approval pending:\n%s", page)
	}
}
