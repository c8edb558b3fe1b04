package workspace

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/zero-dev/zero/internal/workspace/servers"
	"github.com/zero-dev/zero/internal/workspace/web"
)

// page fetches a page without following redirects: its status, body and
// Location.
func (c *client) page(method, path string, form url.Values, edit ...func(*http.Request)) (int, string, string) {
	c.ts.t.Helper()
	var body io.Reader
	if form != nil {
		form = maps.Clone(form)
		if _, ok := form["csrf_token"]; !ok && c.csrf != "" {
			form.Set("csrf_token", c.csrf)
		}
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, c.ts.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Origin", c.origin)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for _, e := range edit {
		e(req)
	}
	hc := *c.http
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		c.ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	c.ts.seenMu.Lock()
	c.ts.seen.Write(data)
	c.ts.seenMu.Unlock()
	return resp.StatusCode, string(data), resp.Header.Get("Location")
}

// mustPage requires a page's status and returns its body.
func (c *client) mustPage(method, path string, form url.Values, status int) string {
	c.ts.t.Helper()
	got, body, loc := c.page(method, path, form)
	if got != status {
		c.ts.t.Fatalf("%s %s: status %d (Location %q), want %d:\n%s", method, path, got, loc, status, body)
	}
	return body
}

// hidden returns the value of the hidden input name in a page's first form
// that has one.
func hidden(t *testing.T, page, name string) string {
	t.Helper()
	m := regexp.MustCompile(`name="` + regexp.QuoteMeta(name) + `" value="([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no hidden %s in the page", name)
	}
	return html.UnescapeString(m[1])
}

// TestAddServerThroughForms walks the forms a person uses: fill in, review,
// approve and enable; the typed secret reaches the server and never the
// pages; then edit, keeping the stored secret, with the changes shown.
func TestAddServerThroughForms(t *testing.T) {
	const secret = "form-secret-canary-51c2"
	ts := start(t, Options{})
	b := ts.browser
	command := envserver(t)
	review := b.mustPage("POST", "/servers/new", url.Values{"name": {"formsrv"}, "kind": {"stdio"}, "command": {command},
		"args": {"--one\r\ntwo words\r\n\r\nsudo\r\n"}, "env": {"API_KEY=" + secret + "\r\nREGION"}}, 200)
	wantLine := web.CommandLine(command, []string{"--one", "two words", "sudo"})
	for _, want := range []string{html.EscapeString(wantLine), "API_KEY", "REGION", `class="warning danger"`, "(sudo)", `id="approve-enable"`} {
		if !strings.Contains(review, want) {
			t.Errorf("the review page lacks %q", want)
		}
	}
	fp := hidden(t, review, "fingerprint")
	cfg := servers.Config{Name: "formsrv", Kind: servers.KindStdio, Command: command, Args: []string{"--one", "two words", "sudo"}, Env: []string{"API_KEY", "REGION"}}
	if want := ts.fingerprint(0, cfg); fp != want {
		t.Fatalf("the review's fingerprint %s is not the configuration's %s", fp, want)
	}
	form := url.Values{"config": {hidden(t, review, "config")}, "pending": {hidden(t, review, "pending")}, "fingerprint": {fp}, "enable": {"1"}}
	_, _, loc := b.page("POST", "/servers/create", form)
	if loc != "/servers/1?done=enabled" {
		t.Fatalf("after approving: Location %q", loc)
	}
	b.mustPage("POST", "/servers/1/test", url.Values{}, 303)
	page := b.mustPage("GET", "/servers/1", nil, 200)
	var s servers.Server
	b.must("GET", "/api/servers/1", nil, 200, &s)
	if !s.Enabled || envOf(t, s)["API_KEY"] != shortHash(secret) {
		t.Fatalf("the server after the forms: %+v", s)
	}
	if !strings.Contains(page, `id="tools"`) || !strings.Contains(page, s.Tools[0].Hash) {
		t.Error("the server page does not list the tool and its hash")
	}

	// Edit: API_KEY alone keeps the stored value; the review shows what
	// changed.
	edit := b.mustPage("GET", "/servers/1/edit", nil, 200)
	if strings.Contains(edit, secret) || !strings.Contains(edit, "API_KEY") {
		t.Error("the edit form must show the names and never the values")
	}
	review = b.mustPage("POST", "/servers/1/edit", url.Values{"name": {"formsrv"}, "kind": {"stdio"}, "command": {command},
		"args": {"--one\ntwo words\nthree"}, "env": {"API_KEY"}}, 200)
	if !strings.Contains(review, "What changed") || !strings.Contains(review, html.EscapeString(web.CommandLine(command, []string{"--one", "two words", "three"}))) {
		t.Error("the edit's review does not show the change")
	}
	form = url.Values{"config": {hidden(t, review, "config")}, "pending": {hidden(t, review, "pending")}, "fingerprint": {hidden(t, review, "fingerprint")},
		"base": {hidden(t, review, "base")}}
	if _, _, loc := b.page("POST", "/servers/1/update", form); loc != "/servers/1?done=updated" {
		t.Fatalf("after approving the edit: Location %q", loc)
	}
	b.mustPage("POST", "/servers/1/test", url.Values{}, 303)
	b.must("GET", "/api/servers/1", nil, 200, &s)
	if envOf(t, s)["API_KEY"] != shortHash(secret) {
		t.Error("the stored secret was not kept through the edit")
	}
	ts.seenMu.Lock()
	defer ts.seenMu.Unlock()
	if strings.Contains(ts.seen.String(), secret) {
		t.Error("a page holds the secret value")
	}
}

// TestStaleApprovalReReviews: a form whose configuration was changed after
// its review, or an enable sent for a configuration that changed since,
// saves nothing and shows the configuration as it is now, explained.
func TestStaleApprovalReReviews(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	cfg := stdioConfig(t, "stale")
	review := b.mustPage("POST", "/servers/new", url.Values{"name": {cfg.Name}, "kind": {"stdio"}, "command": {cfg.Command}, "args": {"--flag"}}, 200)
	changed := cfg
	changed.Args = []string{"--changed"}
	form := url.Values{"config": {encodeConfig(changed)}, "fingerprint": {hidden(t, review, "fingerprint")}}
	page := b.mustPage("POST", "/servers/create", form, 409)
	if !strings.Contains(page, `id="conflict"`) || !strings.Contains(page, "--changed") || hidden(t, page, "fingerprint") != ts.fingerprint(0, changed) {
		t.Errorf("the re-review after a changed form:\n%s", page)
	}
	var list []servers.Server
	b.must("GET", "/api/servers", nil, 200, &list)
	if len(list) != 0 {
		t.Fatalf("a stale approval saved a server: %+v", list)
	}

	// Enable with the fingerprint of a page opened before an edit.
	var p servers.Preview
	b.must("POST", "/api/servers/preview", map[string]any{"config": cfg}, 200, &p)
	b.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": p.Fingerprint}, 201, nil)
	stalePage := b.mustPage("GET", "/servers/1", nil, 200)
	b.must("PUT", "/api/servers/1", map[string]any{"config": changed, "fingerprint": ts.fingerprint(1, changed), "base_fingerprint": p.Fingerprint}, 200, nil)
	page = b.mustPage("POST", "/servers/1/enable", url.Values{"fingerprint": {hidden(t, stalePage, "fingerprint")}}, 409)
	if !strings.Contains(page, `id="conflict"`) || !strings.Contains(page, "--changed") {
		t.Errorf("the re-review after a stale enable:\n%s", page)
	}
	var s servers.Server
	b.must("GET", "/api/servers/1", nil, 200, &s)
	if s.Enabled {
		t.Error("a stale enable enabled the server")
	}
}

// TestPageFormsChecked: the pages' forms pass the same gate as the API: no
// CSRF token, another site, a bearer token, a member approving or a viewer
// adding are all refused, and nothing changes.
func TestPageFormsChecked(t *testing.T) {
	ts := start(t, Options{Team: true})
	b := ts.browser
	cfg := stdioConfig(t, "gate")
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": cfg}, 201, &c) // a draft
	fp := ts.fingerprint(1, cfg)
	approve := url.Values{"fingerprint": {fp}}
	cases := []struct {
		name string
		form url.Values
		edit func(*http.Request)
	}{
		{"no CSRF token", url.Values{"fingerprint": {fp}, "csrf_token": {""}}, nil},
		{"wrong CSRF token", url.Values{"fingerprint": {fp}, "csrf_token": {"forged"}}, nil},
		{"cross-site", approve, func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }},
		{"foreign Origin", approve, func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }},
	}
	for _, tc := range cases {
		var edits []func(*http.Request)
		if tc.edit != nil {
			edits = append(edits, tc.edit)
		}
		// The Origin guard answers a foreign Origin before any page does.
		if st, body, _ := b.page("POST", "/servers/1/approve", tc.form, edits...); st != 403 || tc.edit == nil && !strings.Contains(body, "Nothing was changed") {
			t.Errorf("%s: status %d", tc.name, st)
		}
	}
	agent := ts.bearer()
	if st, body, _ := agent.page("GET", "/servers", nil); st != 403 || !strings.Contains(body, "browser") {
		t.Errorf("a bearer token on a page: %d", st)
	}
	var member, viewer struct {
		ID int64 `json:"id"`
	}
	b.must("POST", "/api/users", map[string]string{"name": "mia", "role": "member"}, 201, &member)
	b.must("POST", "/api/users", map[string]string{"name": "vic", "role": "viewer"}, 201, &viewer)
	asMember, asViewer := ts.login(member.ID), ts.login(viewer.ID)
	if st, body, _ := asMember.page("POST", "/servers/1/approve", approve); st != 403 || !strings.Contains(body, "Only the owner") {
		t.Errorf("a member approving: %d\n%s", st, body)
	}
	if st, _, _ := asViewer.page("POST", "/servers/new", url.Values{"name": {"v"}, "kind": {"stdio"}, "command": {"x"}}); st != 403 {
		t.Errorf("a viewer adding: %d", st)
	}
	if st, _, _ := asViewer.page("POST", "/servers/1/approve", approve); st != 403 {
		t.Errorf("a viewer approving: %d", st)
	}
	var s servers.Server
	b.must("GET", "/api/servers/1", nil, 200, &s)
	if s.Approved {
		t.Fatal("a refused request approved the server")
	}
	// What each role is shown: the owner the approve button, the others not.
	for name, who := range map[string]*client{"owner": b, "member": asMember, "viewer": asViewer} {
		page := who.mustPage("GET", "/servers/1", nil, 200)
		if strings.Contains(page, `id="approve"`) != (name == "owner") {
			t.Errorf("%s: approve button shown = %v", name, !(name == "owner"))
		}
		list := who.mustPage("GET", "/servers", nil, 200)
		if strings.Contains(list, `id="add-server"`) != (name != "viewer") {
			t.Errorf("%s: add button shown = %v", name, name == "viewer")
		}
	}
}

// TestPagesHeadersAndMarkup: every answer carries the strict CSP, nosniff
// and frame denial; no page has inline script, inline style or event
// handler attributes; every form that posts carries the CSRF token.
func TestPagesHeadersAndMarkup(t *testing.T) {
	ts := start(t, Options{Team: true})
	b := ts.browser
	cfg := stdioConfig(t, "markup", "API_KEY")
	b.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": ts.fingerprint(0, cfg)}, 201, nil)
	b.must("POST", "/api/servers", map[string]any{"config": stdioConfig(t, "draft")}, 201, nil)
	b.mustPage("POST", "/tokens", url.Values{"name": {"t1"}}, 303)
	addProvider(t, ts, "local", "m1")
	addThread(t, ts, "Markup", "user", "hello", "assistant", "hi")
	pages := map[string]string{}
	for _, path := range []string{"/servers", "/servers/1", "/servers/2", "/servers/new", "/servers/1/edit", "/tokens", "/users", "/audit", "/signin", "/threads", "/threads/1", "/skills"} {
		pages[path] = b.mustPage("GET", path, nil, 200)
	}
	pages["review"] = b.mustPage("POST", "/servers/new", url.Values{"name": {"x"}, "kind": {"stdio"}, "command": {"x"}}, 200)
	pages["form error"] = b.mustPage("POST", "/servers/new", url.Values{"name": {"x"}, "kind": {"stdio"}, "command": {"x"}, "env": {"LD_PRELOAD=/evil.so"}}, 400)
	for path, page := range pages {
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			t.Fatal(err)
		}
		for n := range doc.Descendants() {
			if n.Type != html.ElementNode {
				continue
			}
			attr := map[string]string{}
			for _, a := range n.Attr {
				attr[a.Key] = a.Val
				if strings.HasPrefix(a.Key, "on") || a.Key == "style" {
					t.Errorf("%s: <%s %s=...>", path, n.Data, a.Key)
				}
			}
			switch n.Data {
			case "script":
				if attr["src"] == "" || n.FirstChild != nil {
					t.Errorf("%s: an inline script", path)
				}
			case "style":
				t.Errorf("%s: a <style> element", path)
			case "form":
				if strings.EqualFold(attr["method"], "post") && !strings.Contains(renderNode(n), `name="csrf_token" value="`+b.csrf+`"`) {
					t.Errorf("%s: a form posting to %s without the CSRF token", path, attr["action"])
				}
			}
		}
	}
	if !strings.Contains(pages["form error"], "LD_PRELOAD") || strings.Contains(pages["form error"], "/evil.so") {
		t.Error("the form error names the refused variable, and never echoes its value")
	}
	for _, path := range []string{"/servers", "/static/style.css", "/static/app.js", "/static/thread.js", "/signin", "/api/servers"} {
		req, _ := http.NewRequest("GET", ts.base+path, nil)
		resp, err := b.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if h.Get("Content-Security-Policy") != web.CSP || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", path, h)
		}
	}
	for _, forbidden := range []string{"unsafe-inline", "unsafe-eval", "http:", "https:", "*"} {
		if strings.Contains(web.CSP, forbidden) {
			t.Errorf("the CSP allows %s", forbidden)
		}
	}
}

func renderNode(n *html.Node) string {
	var sb strings.Builder
	html.Render(&sb, n)
	return sb.String()
}

// TestSignInAndOut: a used login link, an expired session and signing out
// each lead to the sign-in page with a plain explanation.
func TestSignInAndOut(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	token, _ := ts.w.auth.LoginLink(context.Background(), ts.w.ownerID)
	b.mustPage("GET", "/login?token="+token, nil, 303)
	if st, body, _ := b.page("GET", "/login?token="+token, nil); st != 401 || !strings.Contains(body, "already used") {
		t.Errorf("a used link: %d", st)
	}
	ts.w.db.Exec(`UPDATE sessions SET expires_at = '2000-01-01T00:00:00Z'`)
	if _, _, loc := b.page("GET", "/servers", nil); loc != "/signin?reason=expired" {
		t.Errorf("an expired session: Location %q", loc)
	}
	if body := b.mustPage("GET", "/signin?reason=expired", nil, 200); !strings.Contains(body, "session has ended") {
		t.Error("the sign-in page does not explain the ended session")
	}
	if st, body, _ := b.page("POST", "/servers/new", url.Values{"name": {"x"}}); st != 401 || !strings.Contains(body, "session has ended") {
		t.Errorf("a form posted after the session ended: %d", st)
	}

	fresh := ts.login(ts.w.ownerID)
	base, _ := url.Parse(ts.base)
	cookies := fresh.http.Jar.Cookies(base)
	if _, _, loc := fresh.page("POST", "/logout", url.Values{}); loc != "/signin?reason=signed_out" {
		t.Errorf("signing out: Location %q", loc)
	}
	if len(fresh.http.Jar.Cookies(base)) != 0 {
		t.Error("signing out left the cookie in the browser")
	}
	replay := &client{ts: ts, http: &http.Client{}, origin: ts.base}
	if st, _, _ := replay.page("GET", "/api/servers", nil, func(r *http.Request) {
		for _, c := range cookies {
			r.AddCookie(c)
		}
	}); st != 401 {
		t.Errorf("the session's cookie still works after signing out: %d", st)
	}
}

// TestTokensAndAuditPages: a token made on the Tokens page is shown once
// and can be revoked there; the audit page filters records and reports
// the chain's verification, and a tampered log is reported.
func TestTokensAndAuditPages(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	_, _, loc := b.page("POST", "/tokens", url.Values{"name": {"robot"}})
	if !strings.HasPrefix(loc, "/tokens?shown=") {
		t.Fatalf("creating a token redirects to %q, want the page that shows it", loc)
	}
	page := b.mustPage("GET", loc, nil, 200)
	m := regexp.MustCompile(`id="new-token" class="token">(zt_[^<]+)<`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the new token is not shown")
	}
	// A reload shows it no more and creates nothing.
	if again := b.mustPage("GET", loc, nil, 200); strings.Contains(again, m[1]) || !strings.Contains(again, "shown already") {
		t.Error("reloading the page showed the token again, or did not say why not")
	}
	var toks []any
	b.must("GET", "/api/tokens", nil, 200, &toks)
	if len(toks) != 1 {
		t.Errorf("%d tokens after a create and two loads, want 1", len(toks))
	}
	if page := b.mustPage("POST", "/tokens", url.Values{"name": {"robot"}}, 400); !strings.Contains(page, "exists already") {
		t.Error("a second token of the same name was not refused")
	}
	agent := &client{ts: ts, http: &http.Client{}, token: m[1]}
	agent.must("GET", "/api/servers", nil, 200, nil)
	if again := b.mustPage("GET", "/tokens", nil, 200); strings.Contains(again, m[1]) || !strings.Contains(again, "robot") {
		t.Error("the token list must name the token and never show it again")
	}
	if _, _, loc := b.page("POST", "/tokens/1/delete", url.Values{}); loc != "/tokens?done=revoked" {
		t.Errorf("revoking: Location %q", loc)
	}
	if st, _ := agent.do("GET", "/api/servers", nil); st != 401 {
		t.Errorf("a revoked token still works: %d", st)
	}

	cfg := stdioConfig(t, "audited")
	fp := ts.fingerprint(0, cfg)
	b.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": fp}, 201, nil)
	audit := b.mustPage("GET", "/audit?action=server.create", nil, 200)
	// sign-in, token create, its first use, its revocation, the revoked
	// token refused, the server.
	if !strings.Contains(audit, "The hash chain verifies: 6 records") || !strings.Contains(audit, "1 of 6 records") ||
		!strings.Contains(audit, fp) {
		t.Errorf("the filtered audit page:\n%s", audit)
	}
	if filtered := b.mustPage("GET", "/audit?target=token:1", nil, 200); !strings.Contains(filtered, "3 of 6 records") {
		t.Error("filtering by target")
	}
	ts.tamper("robot", "r0bot")
	if tampered := b.mustPage("GET", "/audit", nil, 200); !strings.Contains(tampered, "does not verify") {
		t.Error("the audit page does not report a tampered log")
	}
}

// TestPagesExplainThemselves: what a new user tripped over. A failed Test
// says it failed; an HTTP server's review says what such a server can do;
// a draft's page offers Edit; a declared variable without a value reads
// unset; an untested server's tool count reads "not tested"; a
// single-user workspace's Users page offers no form that would fail.
func TestPagesExplainThemselves(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	broken := servers.Config{Name: "broken", Kind: servers.KindStdio, Command: "/bin/false", Env: []string{"NO_VALUE"}}
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": broken, "fingerprint": ts.fingerprint(0, broken)}, 201, &c)
	_, _, loc := b.page("POST", "/servers/"+itoa(c.Server.ID)+"/test", url.Values{})
	page := b.mustPage("GET", loc, nil, 200)
	if !strings.Contains(page, `class="notice failed"`) || strings.Contains(page, "The test passed") || !strings.Contains(page, "Check the command") {
		t.Errorf("a failed test's page (%s):\n%s", loc, page)
	}
	if !strings.Contains(page, "<code>NO_VALUE</code> <span class=\"value-state\">unset") {
		t.Error("a declared variable without a value is not shown as unset")
	}

	remote := servers.Config{Name: "remote", Kind: servers.KindHTTP, URL: "https://mcp.example.com/mcp"}
	review := b.mustPage("POST", "/servers/new", url.Values{"name": {"remote"}, "kind": {"http"}, "url": {remote.URL}}, 200)
	if strings.Contains(review, "read your files") || !strings.Contains(review, "connect to this URL") {
		t.Errorf("an HTTP server's review:\n%s", review)
	}
	agent := ts.bearer()
	agent.must("POST", "/api/servers", map[string]any{"config": remote}, 201, &c)
	draft := b.mustPage("GET", "/servers/"+itoa(c.Server.ID), nil, 200)
	if !strings.Contains(draft, `id="edit"`) || strings.Contains(draft, "read your files") {
		t.Errorf("a draft's page:\n%s", draft)
	}
	list := b.mustPage("GET", "/servers", nil, 200)
	if !strings.Contains(list, "not tested") || !strings.Contains(list, "test failed") {
		t.Errorf("the list's tool counts:\n%s", list)
	}
	if users := b.mustPage("GET", "/users", nil, 200); strings.Contains(users, `id="add-user"`) {
		t.Error("a single-user workspace's Users page offers to add users")
	}
}
