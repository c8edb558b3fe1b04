package main

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
)

// TestBrowserLayout: no page makes the browser ask for a missing
// /favicon.ico (the layout declares an icon, and /favicon.ico answers
// too); the header names the owner once, not "owner owner"; the edit form
// is titled as an edit.
func TestBrowserLayout(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	command := buildEnvserver(t)
	var mu sync.Mutex
	failed := map[string]int64{}
	if err := chromedp.Listen(tab, func(ev any) {
		if e, ok := ev.(*network.EventResponseReceived); ok && e.Response.Status >= 400 {
			mu.Lock()
			failed[e.Response.URL] = e.Response.Status
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")),
		chromedp.Click(chromedp.ID("add-server")), chromedp.WaitVisible(chromedp.ID("name")),
		chromedp.SendKeys(chromedp.ID("name"), "files"), chromedp.SendKeys(chromedp.ID("command"), command),
		chromedp.Click(chromedp.ID("review")), chromedp.WaitVisible(chromedp.ID("approve")),
		chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.ID("edit")),
		chromedp.Click(chromedp.ID("edit")), chromedp.WaitVisible(chromedp.ID("review")))
	if h1, title := run(t, tab, chromedp.Text(chromedp.CSS("h1"))), run(t, tab, chromedp.Title()); h1 != "Edit files" || !strings.HasPrefix(title, "Edit files") {
		t.Errorf("the edit form is titled %q (page title %q)", h1, title)
	}
	if who := run(t, tab, chromedp.Text(chromedp.CSS("header .who"))); who != "owner" {
		t.Errorf("the header says %q", who)
	}
	icon := run(t, tab, chromedp.Evaluate[string](`(document.querySelector('link[rel="icon"]') || {}).href || ""`))
	if icon != srv.base+"/static/icon.svg" {
		t.Errorf("the layout declares the icon %q", icon)
	}
	for _, path := range []string{"/static/icon.svg", "/favicon.ico"} {
		resp, err := http.Get(srv.base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" {
			t.Errorf("%s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failed) > 0 {
		t.Errorf("answers of 400 or more: %v", failed)
	}
}

// TestBrowserThreadNumbers: a thread's messages are numbered 1, 2, 3, ...
// and its runs 1, 2, whatever events lie between (a run's status, an
// approval, usage) and whatever other threads' runs took ids before: live
// as they come, and as the page shows them when loaded again.
func TestBrowserThreadNumbers(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	ms := modeltest.New(t)
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")))
	// An approved server, a provider, and another thread that has run
	// once, so that this thread's first run is not the workspace's.
	inPage(t, tab, toolsAndProvider(t, ms.BaseURL())+`
		const other = await send("POST", "/api/threads", {title: "Another thread", provider: "local"});
		await send("POST", "/api/threads/" + other.id + "/runs", {prompt: "hello"});
		for (;;) {
			const th = await (await fetch("/api/threads/" + other.id)).json();
			if (th.run && th.run.status === "completed") return "ok";
			await new Promise(r => setTimeout(r, 100));
		}`)
	ms.Push(
		modeltest.Reply{Text: "Checking.", Calls: []model.ToolCall{modeltest.Call("call_1", "tools__echo", `{"x": 1}`)}},
		modeltest.Reply{Text: "x is 1."},
		modeltest.Reply{Text: "Again: x is 1."},
	)
	do(t, tab,
		chromedp.Navigate(srv.base+"/threads"),
		chromedp.WaitVisible(chromedp.ID("thread-title")),
		chromedp.SendKeys(chromedp.ID("thread-title"), "Numbered"),
		chromedp.Click(chromedp.ID("create-thread")),
		chromedp.WaitVisible(chromedp.CSS(`#live[data-state="live"]`)),
		chromedp.SendKeys(chromedp.ID("prompt"), "Echo x=1."),
		chromedp.Click(chromedp.ID("send")),
		chromedp.WaitVisible(chromedp.CSS(`.approval[data-status="pending"] button[data-answer="once"]`)),
		chromedp.Click(chromedp.CSS(`.approval[data-status="pending"] button[data-answer="once"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="completed"]`)),
		chromedp.SendKeys(chromedp.ID("prompt"), "Once more."),
		chromedp.Click(chromedp.ID("send")),
		chromedp.WaitVisible(chromedp.CSS(`#events li.run-end ~ li.run-end`)),
	)
	check := func(when string) {
		t.Helper()
		numbers := run(t, tab, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#events .msg .when"), e => e.textContent)`))
		for i, n := range numbers {
			if want := "#" + strconv.Itoa(i+1) + " · "; !strings.HasPrefix(n, want) {
				t.Errorf("%s: message %d is numbered %q", when, i+1, n)
			}
		}
		if len(numbers) != 6 { // a question, an answer calling the tool, its result, an answer; a question, an answer
			t.Errorf("%s: %d messages numbered: %q", when, len(numbers), numbers)
		}
		runs := run(t, tab, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#events .run-end"), e => e.textContent)`))
		if strings.Join(runs, "|") != "Run 1 completed|Run 2 completed" {
			t.Errorf("%s: the runs end as %q", when, runs)
		}
	}
	check("live")
	do(t, tab, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#events .run-end`)))
	check("loaded again")
	// The anchors and the fork button still name events by their seq.
	ids := run(t, tab, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#events .msg"), e => e.id)`))
	seqs := regexp.MustCompile(`^event-[0-9]+$`)
	for _, id := range ids {
		if !seqs.MatchString(id) {
			t.Errorf("a message's anchor: %q", id)
		}
	}
	// A fork from message #4 says so, and numbers its copies 1 to 4.
	run(t, tab, chromedp.Evaluate[bool](`(() => {
		const li = Array.from(document.querySelectorAll("#events .msg")).find(li => ((li.querySelector(".when") || {}).textContent || "").startsWith("#4 "));
		li.querySelector("button.fork").click();
		return true;
	})()`))
	do(t, tab, chromedp.WaitVisible(chromedp.ID("forked-from")))
	meta := run(t, tab, chromedp.Text(chromedp.CSS(".thread-meta")))
	numbers := run(t, tab, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#events .msg .when"), e => e.textContent.split(" ")[0])`))
	if !strings.HasSuffix(meta, " at message #4") || strings.Join(numbers, " ") != "#1 #2 #3 #4" {
		t.Errorf("the fork says %q, and numbers its messages %q", meta, numbers)
	}
}
