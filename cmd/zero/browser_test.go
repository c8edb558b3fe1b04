package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/zero-dev/zero/internal/workspace/web"
)

// browser starts headless Chromium for a test and returns its first tab.
// Without Chromium the test is skipped, or fails when ZERO_REQUIRE_BROWSER
// is set (scripts/test sets it).
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("ZERO_REQUIRE_BROWSER") != "" {
			t.Fatal("chromium is required (ZERO_REQUIRE_BROWSER is set) but not installed")
		}
		t.Skip("chromium is not installed")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Headless, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	return newTab(t, alloc)
}

// newTab opens a tab, started on its own long-lived context: the browser
// and tab live as long as the context of their first call does, so that
// call must not be one of the short ones below.
func newTab(t *testing.T, parent context.Context, opts ...chromedp.ContextOption) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(parent, opts...)
	t.Cleanup(cancel)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("start the browser: %v", err)
	}
	return tab
}

// requests records every URL a tab requests.
type requests struct {
	mu   sync.Mutex
	urls []string
}

func record(t *testing.T, tab context.Context) *requests {
	t.Helper()
	r := &requests{}
	err := chromedp.Listen(tab, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			r.mu.Lock()
			r.urls = append(r.urls, e.Request.URL)
			r.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// foreign returns the requested URLs that are neither the workspace's nor
// data: URLs.
func (r *requests) foreign(base string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, u := range r.urls {
		if !strings.HasPrefix(u, base+"/") && !strings.HasPrefix(u, "data:") {
			out = append(out, u)
		}
	}
	return out
}

// stepTimeout bounds one call into the browser, so that a page that never
// shows what a test waits for fails the test quickly.
const stepTimeout = 20 * time.Second

func do(t *testing.T, tab context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		loc, _ := chromedp.Run(tab, chromedp.Location())
		t.Fatalf("in the browser, at %s: %v", loc, err)
	}
}

func run[T any](t *testing.T, tab context.Context, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		loc, _ := chromedp.Run(tab, chromedp.Location())
		t.Fatalf("in the browser, at %s: %v", loc, err)
	}
	return v
}

// artifacts is where screenshots go: $ZERO_TEST_ARTIFACTS, or a folder in
// the system's temporary directory.
func artifacts(t *testing.T) string {
	dir := os.Getenv("ZERO_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "zero-test-artifacts")
	}
	dir = filepath.Join(dir, "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// screenshot saves the page at 1280 and 390 pixels wide, and requires that
// nothing overflows sideways at either width.
func screenshot(t *testing.T, tab context.Context, name string) {
	t.Helper()
	for _, width := range []int64{1280, 390} {
		do(t, tab, chromedp.EmulateViewport(width, 900))
		wide := run(t, tab, chromedp.Evaluate[string](`(() => {
			if (document.documentElement.scrollWidth <= window.innerWidth) return "";
			for (const e of document.querySelectorAll("body *")) {
				const r = e.getBoundingClientRect();
				if (r.right > window.innerWidth + 1 && e.children.length === 0) return e.outerHTML.slice(0, 120);
			}
			return "the page";
		})()`))
		if wide != "" {
			t.Errorf("%s: wider than %d px: %s", name, width, wide)
		}
		png := run(t, tab, chromedp.FullScreenshot(100))
		file := filepath.Join(artifacts(t), name+"-"+map[int64]string{1280: "desktop", 390: "phone"}[width]+".png")
		if err := os.WriteFile(file, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	do(t, tab, chromedp.EmulateViewport(1280, 900))
}

// buildEnvserver builds the workspace's test MCP server, which reports
// its environment in its tool's description.
func buildEnvserver(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "envserver")
	out, err := exec.Command("go", "build", "-o", path, "github.com/zero-dev/zero/internal/workspace/testdata/envserver").CombinedOutput()
	if err != nil {
		t.Fatalf("build envserver: %v\n%s", err, out)
	}
	return path
}

// icon is an SVG logo with a script and an event handler in it, as a data:
// URL the test server declares.
var icon = "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(
	`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32" onload="alert(1)"><script>alert(2)</script>`+
		`<circle cx="16" cy="16" r="14" fill="#0a58ca"/></svg>`))

// TestBrowserApprovalFlow drives the real `zero serve` in headless
// Chromium: sign in with the one-time link, add a stdio server, read the
// exact command and the warnings on the review page, approve and enable it
// with the keyboard, test it and see its tools and logo; then approve an
// edit in a second tab and try to enable from the stale first tab, which
// shows the 409 review. The secret never reaches a page, and the pages
// request nothing from another origin.
func TestBrowserApprovalFlow(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	command := buildEnvserver(t)
	const secret = "browser-secret-canary-7d1e"
	seen := record(t, tab)
	var pages []string
	html := func() string {
		h := run(t, tab, chromedp.OuterHTML(chromedp.CSS("html")))
		pages = append(pages, h)
		return h
	}

	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")))
	if loc := run(t, tab, chromedp.Location()); loc != srv.base+"/servers" {
		t.Fatalf("the login link led to %s", loc)
	}
	screenshot(t, tab, "servers-empty")

	args := []string{"--icon=" + icon, "sudo", "--flag"}
	do(t, tab,
		chromedp.Click(chromedp.ID("add-server")),
		chromedp.WaitVisible(chromedp.ID("name")),
		chromedp.SendKeys(chromedp.ID("name"), "envserver"),
		chromedp.SendKeys(chromedp.ID("command"), command),
		chromedp.SetValue(chromedp.ID("args"), strings.Join(args, "\n")),
		chromedp.SetValue(chromedp.ID("env"), "API_KEY="+secret),
	)
	screenshot(t, tab, "add-server")
	do(t, tab, chromedp.Click(chromedp.ID("review")), chromedp.WaitVisible(chromedp.ID("fingerprint")))
	wantLine := web.CommandLine(command, args)
	if got := run(t, tab, chromedp.Text(chromedp.ID("command-line"))); got != wantLine {
		t.Errorf("the review shows the command line\n%s\nwant\n%s", got, wantLine)
	}
	review := html()
	for _, want := range []string{`class="warning danger"`, "root privileges", "API_KEY"} {
		if !strings.Contains(review, want) {
			t.Errorf("the review page lacks %q", want)
		}
	}
	screenshot(t, tab, "review")

	// Approve and enable with the keyboard alone.
	do(t, tab, chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
	for i := 0; ; i++ {
		if i == 80 {
			t.Fatal("Tab never reached the approve button")
		}
		do(t, tab, chromedp.KeyEvent(kb.Tab))
		if run(t, tab, chromedp.Evaluate[string](`document.activeElement.id`)) == "approve-enable" {
			break
		}
	}
	do(t, tab, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.ID("test")))
	if loc := run(t, tab, chromedp.Location()); loc != srv.base+"/servers/1?done=enabled" {
		t.Errorf("after approving: %s", loc)
	}
	do(t, tab, chromedp.Click(chromedp.ID("test")), chromedp.WaitVisible(chromedp.ID("tools")))
	server := html()
	if !strings.Contains(server, "<code>env</code>") || !strings.Contains(server, "sha256:") || !strings.Contains(server, "tested") {
		t.Error("the server page does not show the tested tool and its hash")
	}
	logo := run(t, tab, chromedp.AttributeValue(chromedp.CSS("img.logo"), "src"))
	if !strings.HasPrefix(logo.Value, "data:image/svg+xml;base64,") {
		t.Errorf("the logo is %.60q, want a data: SVG", logo.Value)
	} else if svg, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(logo.Value, "data:image/svg+xml;base64,")); bytes.Contains(svg, []byte("script")) || bytes.Contains(svg, []byte("onload")) {
		t.Errorf("the logo kept its script: %s", svg)
	}
	// Words wrap whole: a tool's name breaks only where a line must, never
	// inside a word that fits (CSS word-break: break-all did).
	if style := run(t, tab, chromedp.Evaluate[string](`(() => {
		const c = getComputedStyle(document.querySelector("table.tools td code"));
		return c.wordBreak + " " + c.overflowWrap;
	})()`)); strings.Contains(style, "break-all") || strings.Contains(style, "anywhere") {
		t.Errorf("tool names break mid-word: %s", style)
	}
	screenshot(t, tab, "server")
	// Dark mode follows the system's preference.
	light := run(t, tab, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
	if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	dark := run(t, tab, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
	if dark == light || dark != "rgb(13, 17, 23)" {
		t.Errorf("prefers-color-scheme dark: background %s, light %s", dark, light)
	}
	screenshot(t, tab, "server-dark")
	chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
	do(t, tab, chromedp.Navigate(srv.base+"/servers"), chromedp.WaitVisible(chromedp.CSS("table.servers")))
	html()
	screenshot(t, tab, "servers")

	// A stale page: disable, then change an argument in another tab, then
	// press Enable on the first.
	do(t, tab, chromedp.Navigate(srv.base+"/servers/1"), chromedp.Click(chromedp.ID("disable")), chromedp.WaitVisible(chromedp.ID("enable")))
	other := newTab(t, tab)
	do(t, other,
		chromedp.Navigate(srv.base+"/servers/1/edit"),
		chromedp.WaitVisible(chromedp.ID("args")),
		chromedp.SetValue(chromedp.ID("args"), strings.Join(append(args, "--changed"), "\n")),
		chromedp.Click(chromedp.ID("review")),
		chromedp.WaitVisible(chromedp.ID("approve")),
	)
	if changes := run(t, other, chromedp.Text(chromedp.CSS("table.changes"))); !strings.Contains(changes, "--changed") {
		t.Errorf("the edit's review does not show the change: %s", changes)
	}
	screenshot(t, other, "review-edit")
	do(t, other, chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.ID("test")))
	do(t, tab, chromedp.Click(chromedp.ID("enable")), chromedp.WaitVisible(chromedp.ID("conflict")))
	if line := run(t, tab, chromedp.Text(chromedp.ID("command-line"))); !strings.Contains(line, "--changed") {
		t.Errorf("the 409 review does not show the configuration as it is now: %s", line)
	}
	html()
	screenshot(t, tab, "conflict")

	for _, page := range []string{"/tokens", "/audit"} {
		do(t, tab, chromedp.Navigate(srv.base+page), chromedp.WaitVisible(chromedp.CSS("h1")))
		html()
		screenshot(t, tab, strings.TrimPrefix(page, "/"))
	}
	if verify := run(t, tab, chromedp.Text(chromedp.ID("verify"))); !strings.Contains(verify, "verifies") {
		t.Errorf("the audit page: %s", verify)
	}
	// A checkbox is a box beside its label, not a line of its own.
	do(t, tab, chromedp.Navigate(srv.base+"/tokens"), chromedp.WaitVisible(chromedp.CSS("h1")))
	if width := run(t, tab, chromedp.Evaluate[float64](`(() => { const c = document.querySelector("input[type=checkbox]"); return c ? c.getBoundingClientRect().width : -1; })()`)); width <= 0 || width > 40 {
		t.Errorf("a checkbox on the tokens page is %v px wide (-1: none)", width)
	}
	// The review of a common configuration, for the README.
	do(t, tab,
		chromedp.Navigate(srv.base+"/servers/new"),
		chromedp.SendKeys(chromedp.ID("name"), "github"),
		chromedp.SendKeys(chromedp.ID("command"), "npx"),
		chromedp.SetValue(chromedp.ID("args"), "-y\n@modelcontextprotocol/server-github"),
		chromedp.SetValue(chromedp.ID("env"), "GITHUB_PERSONAL_ACCESS_TOKEN="+secret),
		chromedp.Click(chromedp.ID("review")),
		chromedp.WaitVisible(chromedp.ID("fingerprint")),
	)
	html()
	screenshot(t, tab, "readme-review")

	for i, page := range pages {
		if strings.Contains(page, secret) {
			t.Errorf("page %d holds the secret value", i)
		}
	}
	if foreign := seen.foreign(srv.base); len(foreign) > 0 {
		t.Errorf("the pages requested other origins: %q", foreign)
	}
	if len(seen.urls) < 10 {
		t.Errorf("only %d requests recorded; is the recorder working?", len(seen.urls))
	}
}

// TestBrowserViewerCannotApprove: in team mode the owner adds a viewer on
// the Users page and an agent saves a draft with a token made on the
// Tokens page; the viewer's page has no approve button, and a POST the
// viewer crafts in the page is refused.
func TestBrowserViewerCannotApprove(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil, "--team")
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")),
		chromedp.Navigate(srv.base+"/tokens"),
		chromedp.SendKeys(chromedp.ID("token-name"), "agent"),
		chromedp.Click(chromedp.ID("create-token")),
		chromedp.WaitVisible(chromedp.ID("new-token")),
	)
	token := run(t, tab, chromedp.Text(chromedp.ID("new-token")))
	screenshot(t, tab, "token-created")

	body, _ := json.Marshal(map[string]any{"config": map[string]any{"name": "draft", "kind": "stdio", "command": "/bin/true"}})
	req, _ := http.NewRequest("POST", srv.base+"/api/servers", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("a draft from the agent: %v %v", resp, err)
	}
	resp.Body.Close()

	do(t, tab, chromedp.Navigate(srv.base+"/servers/1"), chromedp.WaitVisible(chromedp.ID("approve")),
		chromedp.Navigate(srv.base+"/users"),
		chromedp.SendKeys(chromedp.ID("user-name"), "vic"),
		chromedp.SetValue(chromedp.ID("user-role"), "viewer"),
		chromedp.Click(chromedp.ID("add-user")),
		chromedp.WaitVisible(chromedp.ID("new-link")),
	)
	link := run(t, tab, chromedp.Text(chromedp.ID("new-link")))

	viewer := newTab(t, tab, chromedp.WithNewBrowserContext())
	seen := record(t, viewer)
	do(t, viewer, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("table.servers")),
		chromedp.Navigate(srv.base+"/servers/1"), chromedp.WaitVisible(chromedp.ID("fingerprint")))
	page := run(t, viewer, chromedp.OuterHTML(chromedp.CSS("html")))
	for _, absent := range []string{`id="approve"`, `id="approve-enable"`, `id="add-server"`, `id="test"`, `id="delete"`} {
		if strings.Contains(page, absent) {
			t.Errorf("the viewer's page has %s", absent)
		}
	}
	screenshot(t, viewer, "viewer")
	status := run(t, viewer, chromedp.Evaluate[int](`(async () => {
		const csrf = document.querySelector("input[name=csrf_token]").value;
		const fp = document.getElementById("fingerprint").textContent;
		const r = await fetch("/servers/1/approve", {method: "POST",
			headers: {"Content-Type": "application/x-www-form-urlencoded"},
			body: new URLSearchParams({csrf_token: csrf, fingerprint: fp, enable: "1"})});
		return r.status;
	})()`, chromedp.EvalAwaitPromise))
	if status != 403 {
		t.Errorf("the viewer's crafted approval: status %d", status)
	}
	req, _ = http.NewRequest("GET", srv.base+"/api/servers/1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ Approved, Enabled bool }
	json.NewDecoder(resp.Body).Decode(&s)
	resp.Body.Close()
	if s.Approved || s.Enabled {
		t.Errorf("the viewer's crafted POST changed the server: %+v", s)
	}
	if foreign := seen.foreign(srv.base); len(foreign) > 0 {
		t.Errorf("the viewer's pages requested other origins: %q", foreign)
	}
}
