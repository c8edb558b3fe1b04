package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/zero-dev/zero/internal/testgit"
)

// browserPlugin is a plugin.json with one tool, greet, of description d,
// and a second tool, wave, unless wave is false.
func browserPlugin(d string, wave bool) string {
	tools := `{"name": "greet", "description": "` + d + `", "parameters": {"type": "object", "properties": {"who": {"type": "string"}}}, "capabilities": {}}`
	if wave {
		tools += `, {"name": "wave", "description": "Waves.", "parameters": {"type": "object"}, "capabilities": {}}`
	}
	return `{"name": "hello", "version": "1.0.0", "description": "Says hello.", "extensions": {"dev.zero.plugin": {"entry": "plugin.js",
  "capabilities": {"network.hosts": ["127.0.0.1:8443"]}, "tools": [` + tools + `]}}}`
}

// TestBrowserPlugin installs a plugin from a repository in headless
// Chromium against zero serve and a real local git server: the owner
// types the repository, ref and folder, previews it (the commit, each
// tool with its hash and capabilities in words, the permission hash),
// installs it (not enabled), enables it with its fingerprint, then
// previews an update whose diff names the tool changed and the tool
// removed, and updates it, which leaves it disabled.
func TestBrowserPlugin(t *testing.T) {
	tab := browser(t)
	g := testgit.NewServer(t)
	work, sha := g.Repo(t, "acme/plugins", map[string]string{
		"LICENSE":                   mitText,
		"plugins/hello/plugin.json": browserPlugin("Greets someone.", true),
		"plugins/hello/plugin.js":   "export async function greet({who}) { return 'hello ' + who; }\nexport async function wave() { return 'o/'; }\n",
	})
	srv := startServe(t, []string{"ZERO_GITHUB_URL=" + g.URL, "GH_TOKEN=", "GITHUB_TOKEN="})
	seen := record(t, tab)
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")))
	do(t, tab,
		chromedp.Navigate(srv.base+"/plugins"),
		chromedp.WaitVisible(chromedp.ID("plugin-repo")),
		chromedp.SendKeys(chromedp.ID("plugin-repo"), "acme/plugins"),
		chromedp.SendKeys(chromedp.ID("plugin-folder"), "plugins/hello"),
		chromedp.Click(chromedp.ID("plugin-preview")),
		chromedp.WaitVisible(chromedp.ID("install-plugin")),
	)
	if got := run(t, tab, chromedp.Text(chromedp.ID("commit"))); got != sha {
		t.Errorf("the preview's commit: %q, want %s", got, sha)
	}
	if tools := run(t, tab, chromedp.Text(chromedp.ID("tools"))); !strings.Contains(tools, "greet") || !strings.Contains(tools, "wave") || strings.Count(tools, "sha256:") != 2 {
		t.Errorf("the tools shown: %q", tools)
	}
	if caps := run(t, tab, chromedp.Text(chromedp.ID("capabilities"))); !strings.Contains(caps, "connects to: 127.0.0.1:8443") {
		t.Errorf("the capabilities shown: %q", caps)
	}
	if h := run(t, tab, chromedp.Text(chromedp.ID("permission-hash"))); !strings.HasPrefix(h, "sha256:") {
		t.Errorf("the permission hash: %q", h)
	}
	screenshot(t, tab, "plugin-preview")
	do(t, tab, chromedp.Click(chromedp.ID("install-plugin")), chromedp.WaitVisible(chromedp.ID("enable")))
	if state := run(t, tab, chromedp.Text(chromedp.ID("state"))); state != "Disabled" {
		t.Errorf("installed: %q", state)
	}
	do(t, tab, chromedp.Click(chromedp.ID("enable")), chromedp.WaitVisible(chromedp.ID("disable")))
	if state := run(t, tab, chromedp.Text(chromedp.ID("state"))); state != "Enabled" {
		t.Errorf("after enable: %q", state)
	}
	screenshot(t, tab, "plugin")

	// A new commit: greet's description changes, wave goes.
	os.WriteFile(filepath.Join(work, "plugins/hello/plugin.json"), []byte(browserPlugin("Greets anyone at all.", false)), 0o644)
	testgit.Run(t, work, "commit", "-q", "-am", "two")
	testgit.Run(t, work, "push", "-q", filepath.Join(g.Root, "acme/plugins.git"), "main")
	do(t, tab, chromedp.Click(chromedp.ID("preview-update")), chromedp.WaitVisible(chromedp.ID("update")))
	for id, want := range map[string]string{"changed-tools": "greet", "added-tools": "none", "removed-tools": "wave"} {
		if got := run(t, tab, chromedp.Text(chromedp.ID(id))); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	screenshot(t, tab, "plugin-update")
	do(t, tab, chromedp.Click(chromedp.ID("install-plugin")), chromedp.WaitVisible(chromedp.ID("enable")))
	if state := run(t, tab, chromedp.Text(chromedp.ID("state"))); state != "Disabled" {
		t.Errorf("after the update: %q", state)
	}
	if foreign := seen.foreign(srv.base); len(foreign) > 0 {
		t.Errorf("the pages requested other origins: %q", foreign)
	}
}
