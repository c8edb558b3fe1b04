package main

import (
	"path/filepath"
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

// TestBrowserImport pastes a VS Code mcp.json into the Import page in
// headless Chromium: the entries that can be drafts are saved, the one
// with a placeholder with its variable declared and unset, the refused
// one is listed with why, and the text stays in the box as pasted.
func TestBrowserImport(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	command := buildEnvserver(t)
	text := `{"inputs": [{"type": "promptString", "id": "token", "password": true}], "servers": {
  "files": {"type": "stdio", "command": "` + command + `", "args": ["--flag"]},
  "github": {"type": "stdio", "command": "` + command + `", "env": {"GITHUB_TOKEN": "${input:token}"}},
  "my server": {"type": "stdio", "command": "` + command + `"}
}}`
	seen := record(t, tab)
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")),
		chromedp.Navigate(srv.base+"/servers/import"),
		chromedp.WaitVisible(chromedp.ID("import-json")),
		chromedp.SetValue(chromedp.ID("import-json"), text),
		chromedp.Click(chromedp.ID("import")),
		chromedp.WaitVisible(chromedp.ID("imported")),
	)
	if got := run(t, tab, chromedp.Text(chromedp.ID("imported"))); !strings.Contains(got, "files") || !strings.Contains(got, "github") || strings.Contains(got, "my server") {
		t.Errorf("the drafts listed: %q", got)
	}
	if got := run(t, tab, chromedp.Text(chromedp.ID("refused"))); !strings.Contains(got, "my server: the name is not one a server may have") {
		t.Errorf("the entries refused: %q", got)
	}
	if notes := run(t, tab, chromedp.Text(chromedp.ID("import-notes"))); !strings.Contains(notes, "GITHUB_TOKEN is declared without a value; set its whole value on the server's Edit page") {
		t.Errorf("the notes: %q", notes)
	}
	if kept := run(t, tab, chromedp.Value(chromedp.ID("import-json"))); kept != text {
		t.Errorf("the box holds\n%s\nwant the text as pasted", kept)
	}
	screenshot(t, tab, "import-partly")
	do(t, tab, chromedp.Click(chromedp.CSS(`#imported a[href="/servers/2"]`)), chromedp.WaitVisible(chromedp.ID("fingerprint")))
	if env := run(t, tab, chromedp.Text(chromedp.CSS("dl.config"))); !strings.Contains(env, "GITHUB_TOKEN unset") {
		t.Errorf("the draft with a placeholder: %q", env)
	}
	if foreign := seen.foreign(srv.base); len(foreign) > 0 {
		t.Errorf("the pages requested other origins: %q", foreign)
	}
}

// TestBrowserSkillHostUnreachable: with a git host that cannot be reached
// (ZERO_GITHUB_URL), a catalog entry's Preview and a typed repository's
// each say which skill could not be fetched, from which host, and that
// ZERO_GITHUB_URL sets it; the add form keeps what was typed, and its
// branch's default after the catalog's Preview; the page names the skills
// folder under this ZERO_HOME.
func TestBrowserSkillHostUnreachable(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, []string{"ZERO_GITHUB_URL=http://127.0.0.1:1", "GH_TOKEN=", "GITHUB_TOKEN="})
	dir := filepath.Join(srv.home, "skills")
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")),
		chromedp.Navigate(srv.base+"/skills"), chromedp.WaitVisible(chromedp.ID("skill-repo")))
	if got := run(t, tab, chromedp.Text(chromedp.ID("skills-dir"))); !strings.Contains(got, "They are in "+dir+"; zero mcp skills --workspace "+dir+" serves them") {
		t.Errorf("the skills folder: %q", got)
	}
	do(t, tab, chromedp.Click(chromedp.CSS(`#explore ~ ul.catalog button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("problem")))
	problem := run(t, tab, chromedp.Text(chromedp.ID("problem")))
	for _, want := range []string{"of the catalog", "from http://127.0.0.1:1: the host could not be reached", "ZERO_GITHUB_URL"} {
		if !strings.Contains(problem, want) {
			t.Errorf("the catalog entry's problem lacks %q: %s", want, problem)
		}
	}
	if ref := run(t, tab, chromedp.Value(chromedp.ID("skill-ref"))); ref != "main" {
		t.Errorf("the branch after the catalog's preview: %q, want main", ref)
	}
	screenshot(t, tab, "skills-unreachable")
	do(t, tab,
		chromedp.SendKeys(chromedp.ID("skill-repo"), "acme/skills"),
		chromedp.SetValue(chromedp.ID("skill-ref"), "dev"),
		chromedp.SendKeys(chromedp.ID("skill-folder"), "skills/pdf"),
		// This page shows a problem too: take it away, so that the wait
		// below finds the next page's.
		chromedp.Evaluate[chromedp.Void](`document.getElementById("problem").remove()`),
		chromedp.Click(chromedp.ID("skill-preview")),
		chromedp.WaitVisible(chromedp.ID("problem")),
	)
	if problem := run(t, tab, chromedp.Text(chromedp.ID("problem"))); !strings.Contains(problem, "fetch the skill acme/skills (ref dev, folder skills/pdf) from http://127.0.0.1:1") {
		t.Errorf("the typed skill's problem: %s", problem)
	}
	for id, want := range map[string]string{"skill-repo": "acme/skills", "skill-ref": "dev", "skill-folder": "skills/pdf"} {
		if got := run(t, tab, chromedp.Value(chromedp.ID(id))); got != want {
			t.Errorf("%s after the error: %q, want %q", id, got, want)
		}
	}
}
