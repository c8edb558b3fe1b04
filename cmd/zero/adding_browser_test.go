package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/zero-dev/zero/internal/workspace/web"
)

// TestBrowserCommandLineSplit: a whole command line typed into Command, in
// headless Chromium against zero serve. The review says the configuration
// cannot run and offers no Approve; its primary action is the split, which
// lists the words one by one; pressing it reviews the program and its
// arguments, which are then approved, enabled and tested.
func TestBrowserCommandLineSplit(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	command := buildEnvserver(t)
	seen := record(t, tab)
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")),
		chromedp.Click(chromedp.ID("add-server")),
		chromedp.WaitVisible(chromedp.ID("name")),
		chromedp.SendKeys(chromedp.ID("name"), "pasted"),
		chromedp.SendKeys(chromedp.ID("command"), command+` --flag "two words"`),
		chromedp.Click(chromedp.ID("review")),
		chromedp.WaitVisible(chromedp.ID("cannot-run")),
	)
	if n := run(t, tab, chromedp.Evaluate[int](`document.querySelectorAll("#approve, #approve-enable").length`)); n != 0 {
		t.Errorf("the review of a configuration that cannot run has %d approve buttons", n)
	}
	if primary := run(t, tab, chromedp.Evaluate[string](`[...document.querySelectorAll("form button.primary")].map(b => b.id).join(" ")`)); primary != "split" {
		t.Errorf("the review's primary action is %q, want split", primary)
	}
	words := run(t, tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#split-words li")].map(li => li.textContent)`))
	if want := []string{"program " + command, "--flag", "'two words'"}; strings.Join(words, "|") != strings.Join(want, "|") {
		t.Errorf("the words offered: %q, want %q", words, want)
	}
	screenshot(t, tab, "review-command-line")

	do(t, tab, chromedp.Click(chromedp.ID("split")), chromedp.WaitVisible(chromedp.ID("approve-enable")))
	if got, want := run(t, tab, chromedp.Text(chromedp.ID("command-line"))), web.CommandLine(command, []string{"--flag", "two words"}); got != want {
		t.Errorf("the review after the split shows\n%s\nwant\n%s", got, want)
	}
	if n := run(t, tab, chromedp.Evaluate[int](`document.querySelectorAll("#cannot-run").length`)); n != 0 {
		t.Error("the split configuration is still marked as one that cannot run")
	}
	do(t, tab, chromedp.Click(chromedp.ID("approve-enable")), chromedp.WaitVisible(chromedp.ID("test")),
		chromedp.Click(chromedp.ID("test")), chromedp.WaitVisible(chromedp.ID("tools")))
	if foreign := seen.foreign(srv.base); len(foreign) > 0 {
		t.Errorf("the pages requested other origins: %q", foreign)
	}
}
