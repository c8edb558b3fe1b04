package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/zero-dev/zero/internal/plugin"
	"github.com/zero-dev/zero/internal/testgit"
)

// browserPlugin is the hello plugin's plugin.json: capabilities caps (a
// JSON object) and tools, each a JSON object.
func browserPlugin(caps string, tools ...string) string {
	return `{"name": "hello", "version": "1.0.0", "description": "Says hello.", "license": "MIT", "extensions": {"dev.zero.plugin": {"entry": "plugin.js",
  "capabilities": ` + caps + `, "tools": [` + strings.Join(tools, ", ") + `]}}}`
}

// browserTool is one tool of browserPlugin: name, description d, one
// string parameter, capabilities caps.
func browserTool(name, d, caps string) string {
	return `{"name": "` + name + `", "description": "` + d + `", "parameters": {"type": "object", "properties": {"who": {"type": "string"}}}, "required": ["who"], "capabilities": ` + caps + `}`
}

// The hello plugin's three commits. The first: greet may connect, tally
// receives the secret, wave and shout nothing. The second changes greet,
// removes wave, renames tally to count and adds yell, its permissions
// unchanged. The third widens them (a folder to read, child processes),
// narrows them (no host) and changes greet again.
var (
	helloCaps  = `{"network.hosts": ["127.0.0.1:8443"], "secrets": ["GREET_TOKEN"]}`
	helloFirst = browserPlugin(helloCaps,
		browserTool("greet", "Greets someone.", `{"network.hosts": ["127.0.0.1:8443"]}`),
		browserTool("wave", "Waves.", `{}`),
		browserTool("tally", "Counts greetings.", `{"secrets": ["GREET_TOKEN"]}`),
		browserTool("shout", "Shouts.", `{}`))
	helloSecond = browserPlugin(helloCaps,
		browserTool("yell", "Yells.", `{}`),
		browserTool("greet", "Greets anyone at all.", `{"network.hosts": ["127.0.0.1:8443"]}`),
		browserTool("shout", "Shouts.", `{}`),
		browserTool("count", "Counts greetings.", `{"secrets": ["GREET_TOKEN"]}`))
	helloThird = browserPlugin(`{"fs.read": ["notes"], "process": true, "secrets": ["GREET_TOKEN"]}`,
		browserTool("yell", "Yells.", `{}`),
		browserTool("greet", "Greets from notes.", `{"fs.read": ["notes"], "process": true}`),
		browserTool("shout", "Shouts.", `{}`),
		browserTool("count", "Counts greetings.", `{"secrets": ["GREET_TOKEN"]}`))
)

// helloJS is the plugin's code, CommonJS as the host loads it; its
// comment hides a zero-width space, which the preview must flag.
const helloJS = "// hello\u200b plugin\nexports.greet = async ({who}) => 'hello ' + who;\n"

// TestBrowserPlugin installs, enables and updates a plugin from a real
// local git server in headless Chromium against zero serve. The preview
// shows the commit, each tool with its capabilities in words and its tool
// hash (as plugin.Parse computes it), the permission hash, the licence and
// the hidden character; install leaves it Disabled; an enable whose
// fingerprint is not the plugin's is refused with the plugin as it is, and
// the echoed one enables it. An update's diff lists the tools changed,
// added and removed, alphabetically, a renamed tool as removed and added,
// and leaves the plugin Disabled; an update that widens its permissions
// says how on the preview, leaves it disabled with its secret pending
// until enabled again. A secret set on the plugin's page never appears in
// a page afterwards.
func TestBrowserPlugin(t *testing.T) {
	tab := browser(t)
	g := testgit.NewServer(t)
	work, sha := g.Repo(t, "acme/plugins", map[string]string{
		"LICENSE":                   mitText,
		"plugins/hello/plugin.json": helloFirst,
		"plugins/hello/plugin.js":   helloJS,
	})
	push := func(manifest, msg string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(work, "plugins/hello/plugin.json"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		testgit.Run(t, work, "commit", "-q", "-am", msg)
		testgit.Run(t, work, "push", "-q", filepath.Join(g.Root, "acme/plugins.git"), "main")
	}
	srv := startServe(t, []string{"ZERO_GITHUB_URL=" + g.URL, "GH_TOKEN=", "GITHUB_TOKEN="})
	seen := record(t, tab)
	text := func(id string) string { t.Helper(); return run(t, tab, chromedp.Text(chromedp.ID(id))) }
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")))
	do(t, tab,
		chromedp.Navigate(srv.base+"/plugins"),
		chromedp.WaitVisible(chromedp.ID("plugin-repo")),
		chromedp.SendKeys(chromedp.ID("plugin-repo"), "acme/plugins"),
		chromedp.SendKeys(chromedp.ID("plugin-folder"), "plugins/hello"),
		chromedp.Click(chromedp.ID("plugin-preview")),
		chromedp.WaitVisible(chromedp.ID("install-plugin")),
	)
	if got := text("commit"); got != sha {
		t.Errorf("the preview's commit: %q, want %s", got, sha)
	}
	m, err := plugin.Parse([]byte(helloFirst))
	if err != nil {
		t.Fatalf("the test's manifest: %v", err)
	}
	for _, tool := range m.Zero.Tools {
		hash, err := tool.Hash()
		if err != nil {
			t.Fatal(err)
		}
		if got := run(t, tab, chromedp.Text(chromedp.CSS("#tool-"+tool.Name+" .tool-hash"))); got != hash {
			t.Errorf("%s's tool hash: %q, want %s", tool.Name, got, hash)
		}
	}
	for tool, want := range map[string]string{"greet": "Capabilities: connects to 127.0.0.1:8443.", "tally": "Capabilities: receives the secret GREET_TOKEN.",
		"wave": "Capabilities: reads no files of the thread workspace, connects nowhere, starts no other programs and receives no secrets."} {
		if got := text("tool-" + tool); !strings.Contains(got, want) {
			t.Errorf("the tool %s is shown as %q, want %q in it", tool, got, want)
		}
	}
	if caps := text("capabilities"); !strings.Contains(caps, "connects to 127.0.0.1:8443") || !strings.Contains(caps, "receives the secret GREET_TOKEN") {
		t.Errorf("the capabilities shown: %q", caps)
	}
	if want, _ := m.Zero.Capabilities.Hash(); text("permission-hash") != want {
		t.Errorf("the permission hash: %q, want %s", text("permission-hash"), want)
	}
	if licence := text("licence"); !strings.HasPrefix(licence, "MIT (from LICENSE)") {
		t.Errorf("the licence: %q", licence)
	}
	if findings := text("findings"); !strings.Contains(findings, "plugin.js line 1") || !strings.Contains(findings, "zero-width") {
		t.Errorf("the findings: %q", findings)
	}
	previewed := text("fingerprint")
	screenshot(t, tab, "plugin-preview")

	do(t, tab, chromedp.Click(chromedp.ID("install-plugin")), chromedp.WaitVisible(chromedp.ID("enable")))
	if state := text("state"); state != "Disabled" {
		t.Errorf("installed: %q", state)
	}
	if fp := text("fingerprint"); fp != previewed {
		t.Errorf("the installed plugin's fingerprint %s is not the previewed %s", fp, previewed)
	}
	// The Enable form echoes the fingerprint shown; one that is not the
	// plugin's is refused, and the page shows the plugin as it is.
	if echoed := run(t, tab, chromedp.Evaluate[string](`document.querySelector("form[action$='/enable'] input[name=fingerprint]").value`)); echoed != previewed {
		t.Errorf("the Enable form echoes %q, want %s", echoed, previewed)
	}
	do(t, tab, chromedp.SetValue(chromedp.CSS(`form[action$="/enable"] input[name=fingerprint]`), "sha256:"+strings.Repeat("0", 64)),
		chromedp.Click(chromedp.ID("enable")), chromedp.WaitVisible(chromedp.ID("conflict")))
	if state := text("state"); state != "Disabled" {
		t.Errorf("after an enable with another fingerprint: %q", state)
	}
	screenshot(t, tab, "plugin-conflict")
	enable(t, tab, text)
	screenshot(t, tab, "plugin")

	// The second commit: greet changed, wave removed, tally renamed to
	// count, yell added.
	push(helloSecond, "two")
	do(t, tab, chromedp.Click(chromedp.ID("preview-update")), chromedp.WaitVisible(chromedp.ID("update")))
	for id, want := range map[string]string{"changed-tools": "greet", "added-tools": "count, yell", "removed-tools": "tally, wave", "permissions": "unchanged"} {
		if got := text(id); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	screenshot(t, tab, "plugin-update")
	do(t, tab, chromedp.Click(chromedp.ID("install-plugin")), chromedp.WaitVisible(chromedp.ID("enable")))
	if state := text("state"); state != "Disabled" {
		t.Errorf("after the update: %q", state)
	}
	enable(t, tab, text)

	// The secret, write-only.
	const canary = "plugin-browser-canary-41c7"
	var pages []string
	html := func() { pages = append(pages, run(t, tab, chromedp.OuterHTML(chromedp.CSS("html")))) }
	if got := text("secret-GREET_TOKEN"); !strings.Contains(got, "not set") {
		t.Errorf("the secret before it is set: %q", got)
	}
	do(t, tab, chromedp.SendKeys(chromedp.ID("value-GREET_TOKEN"), canary), chromedp.Click(chromedp.ID("set-GREET_TOKEN")),
		chromedp.WaitVisible(chromedp.ID("delete-GREET_TOKEN")))
	html()
	if got := text("secret-GREET_TOKEN"); !strings.Contains(got, "set by user:owner") || strings.Contains(got, "released once") {
		t.Errorf("the secret once set on the enabled plugin: %q", got)
	}
	if v := run(t, tab, chromedp.Evaluate[string](`document.getElementById("value-GREET_TOKEN").value`)); v != "" {
		t.Errorf("the secret's field holds %q after it was set", v)
	}
	screenshot(t, tab, "plugin-secret")

	// The third commit widens the permissions: the preview says how, and
	// the update leaves the plugin disabled, its secret pending.
	push(helloThird, "three")
	do(t, tab, chromedp.Click(chromedp.ID("preview-update")), chromedp.WaitVisible(chromedp.ID("update")))
	html()
	for id, want := range map[string]string{"changed-tools": "greet", "added-tools": "none", "removed-tools": "none",
		"permissions": "widened and narrowed", "narrowed": "no longer connects to 127.0.0.1:8443"} {
		if got := text(id); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	// What it asks for beyond the approval is a warning, one line each.
	widened := run(t, tab, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(".warning #widened li"), li => li.textContent)`))
	if strings.Join(widened, "; ") != "reads files under notes/; starts other programs" {
		t.Errorf("the widened permissions shown as a warning: %q", widened)
	}
	if button := text("install-plugin"); !strings.HasSuffix(button, "disabled until you enable it again") {
		t.Errorf("the update's button: %q", button)
	}
	screenshot(t, tab, "plugin-update-widened")
	do(t, tab, chromedp.Click(chromedp.ID("install-plugin")), chromedp.WaitVisible(chromedp.ID("enable")))
	html()
	if state := text("state"); state != "Disabled" {
		t.Errorf("after the widening update: %q", state)
	}
	if got := text("secret-GREET_TOKEN"); !strings.Contains(got, "released once you enable it") {
		t.Errorf("the secret after the widening update: %q", got)
	}
	enable(t, tab, text)
	html()
	if got := text("secret-GREET_TOKEN"); strings.Contains(got, "released once") {
		t.Errorf("the secret once enabled again: %q", got)
	}
	do(t, tab, chromedp.Navigate(srv.base+"/plugins"), chromedp.WaitVisible(chromedp.ID("plugins")))
	html()
	if got := text("plugin-hello"); !strings.Contains(got, "Enabled") {
		t.Errorf("the plugins page: %q", got)
	}
	screenshot(t, tab, "plugins")
	for i, page := range pages {
		if strings.Contains(page, canary) {
			t.Errorf("page %d holds the secret's value", i)
		}
	}
	if foreign := seen.foreign(srv.base); len(foreign) > 0 {
		t.Errorf("the pages requested other origins: %q", foreign)
	}
}

// enable presses Enable on a plugin's page, which must then say Enabled.
func enable(t *testing.T, tab context.Context, text func(string) string) {
	t.Helper()
	do(t, tab, chromedp.Click(chromedp.ID("enable")), chromedp.WaitVisible(chromedp.ID("disable")))
	if state := text("state"); state != "Enabled" {
		t.Errorf("after enable: %q", state)
	}
}
