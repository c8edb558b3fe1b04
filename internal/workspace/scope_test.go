package workspace

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/servers"
)

// scopedBearer creates a token for servers (nil: every server) in the
// browser session and returns its client.
func (ts *testServer) scopedBearer(name string, ids []int64) *client {
	ts.t.Helper()
	var tok struct {
		Token   string  `json:"token"`
		Scoped  bool    `json:"scoped"`
		Servers []int64 `json:"servers"`
	}
	ts.browser.must("POST", "/api/tokens", map[string]any{"name": name, "servers": ids}, 201, &tok)
	if tok.Scoped != (ids != nil) {
		ts.t.Fatalf("token %s: scoped %v for servers %v", name, tok.Scoped, ids)
	}
	return &client{ts: ts, http: &http.Client{}, token: tok.Token}
}

// draft saves a draft named name and returns its id.
func (ts *testServer) draft(name string) int64 {
	ts.t.Helper()
	var c created
	ts.browser.must("POST", "/api/servers", map[string]any{"config": stdioConfig(ts.t, name)}, 201, &c)
	return c.Server.ID
}

// identify returns the caller a request with token is.
func (ts *testServer) identify(token string) *auth.Caller {
	ts.t.Helper()
	r := httptest.NewRequest("GET", "/api/servers", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	c, err := ts.w.auth.Identify(r)
	if err != nil {
		ts.t.Fatal(err)
	}
	return c
}

func names(list []servers.Server) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.Config.Name)
	}
	return out
}

// TestTokenScopes: a token scoped to some servers lists only those, and
// gets 404 for any other on every server route it may use, exactly as
// for a server that does not exist; an unscoped token sees every server.
func TestTokenScopes(t *testing.T) {
	ts := start(t, Options{})
	a, b, c := ts.draft("a"), ts.draft("b"), ts.draft("c")
	scoped := ts.scopedBearer("scoped", []int64{c, a, a})
	all := ts.scopedBearer("all", nil)

	if got := ts.identify(scoped.token); !got.Scoped || !slices.Equal(got.Servers, []int64{a, c}) {
		t.Errorf("the scoped caller: scoped %v, servers %v", got.Scoped, got.Servers)
	}
	if got := ts.identify(all.token); got.Scoped || got.Servers != nil {
		t.Errorf("the unscoped caller: scoped %v, servers %v", got.Scoped, got.Servers)
	}
	var list []servers.Server
	scoped.must("GET", "/api/servers", nil, 200, &list)
	if diff := cmp.Diff([]string{"a", "c"}, names(list)); diff != "" {
		t.Errorf("the scoped token's list (-want +got):\n%s", diff)
	}
	all.must("GET", "/api/servers", nil, 200, &list)
	if diff := cmp.Diff([]string{"a", "b", "c"}, names(list)); diff != "" {
		t.Errorf("the unscoped token's list (-want +got):\n%s", diff)
	}

	_, missing := scoped.do("GET", "/api/servers/99", nil)
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/servers/" + itoa(b), nil},
		{"POST", "/api/servers/" + itoa(b) + "/disable", nil},
		{"POST", "/api/servers/preview", map[string]any{"config": stdioConfig(t, "b"), "id": b}},
	} {
		st, data := scoped.do(r.method, r.path, r.body)
		if st != 404 || errorCode(data) != "not_found" {
			t.Errorf("scoped %s %s: %d %s", r.method, r.path, st, data)
		}
		if r.method == "GET" && string(data) != string(missing) {
			t.Errorf("an out-of-scope server answers %s, a missing one %s", data, missing)
		}
	}
	scoped.must("GET", "/api/servers/"+itoa(a), nil, 200, nil)
	scoped.must("POST", "/api/servers/"+itoa(c)+"/disable", nil, 200, nil)
	all.must("GET", "/api/servers/"+itoa(b), nil, 200, nil)
	all.must("POST", "/api/servers/"+itoa(b)+"/disable", nil, 200, nil)
	// Approval routes stay browser-only, in scope or not.
	for _, id := range []int64{a, b} {
		if st, data := scoped.do("POST", "/api/servers/"+itoa(id)+"/test", nil); st != 403 || errorCode(data) != "browser_only" {
			t.Errorf("scoped test of %d: %d %s", id, st, data)
		}
	}
	// Creating is fine.
	scoped.must("POST", "/api/servers", map[string]any{"config": stdioConfig(t, "d")}, 201, nil)

	var toks []auth.TokenInfo
	ts.browser.must("GET", "/api/tokens", nil, 200, &toks)
	want := []auth.TokenInfo{{Name: "scoped", User: "owner", Scoped: true, Servers: []int64{a, c}}, {Name: "all", User: "owner"}}
	if diff := cmp.Diff(want, toks, cmpIgnoreTokenStamps); diff != "" {
		t.Errorf("GET /api/tokens (-want +got):\n%s", diff)
	}
	records, err := ts.w.audit.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var details []map[string]string
	for _, r := range records {
		if r.Action == "token.create" {
			details = append(details, r.Detail)
		}
	}
	if diff := cmp.Diff([]map[string]string{{"name": "scoped", "servers": itoa(a) + "," + itoa(c)}, {"name": "all"}}, details); diff != "" {
		t.Errorf("token.create records (-want +got):\n%s", diff)
	}
}

var cmpIgnoreTokenStamps = cmp.Transformer("stamps", func(t auth.TokenInfo) auth.TokenInfo {
	t.ID, t.CreatedAt = 0, ""
	return t
})

// TestTokenScopeRefused: a scope naming no server, or a server that does
// not exist, is refused with what is wrong, and no token is made.
func TestTokenScopeRefused(t *testing.T) {
	ts := start(t, Options{})
	a := ts.draft("a")
	for _, tc := range []struct {
		servers []int64
		says    string
	}{
		{[]int64{}, "needs at least one"},
		{[]int64{a, 99}, "no server has id 99"},
		{make([]int64, auth.TokenScopeLimit+1), "at most 1000 servers"},
	} {
		st, data := ts.browser.do("POST", "/api/tokens", map[string]any{"name": "t", "servers": tc.servers})
		if st != 400 || errorCode(data) != "bad_request" || !strings.Contains(string(data), tc.says) {
			t.Errorf("servers %v: %d %s", tc.servers[:min(len(tc.servers), 3)], st, data)
		}
	}
	var toks []auth.TokenInfo
	ts.browser.must("GET", "/api/tokens", nil, 200, &toks)
	if len(toks) != 0 {
		t.Errorf("refused scopes made tokens: %+v", toks)
	}
}

// TestTokenScopeSurvivesIDReuse: SQLite gives a new server the id of the
// deleted server that had the highest; a token scoped to the deleted one
// is scoped to no server then, and never to the new one.
func TestTokenScopeSurvivesIDReuse(t *testing.T) {
	ts := start(t, Options{})
	if ts.w.opts.DatabaseURL != "" {
		t.Skip("PostgreSQL never gives a server's id again (an identity column): SQLite's reuse is what this test needs")
	}
	ts.draft("a")
	gone := ts.draft("gone")
	scoped := ts.scopedBearer("scoped", []int64{gone})
	ts.browser.must("DELETE", "/api/servers/"+itoa(gone), nil, 200, nil)
	reused := ts.draft("newcomer")
	if reused != gone {
		t.Fatalf("the new server got id %d, not the deleted server's %d: this test proves nothing", reused, gone)
	}
	if c := ts.identify(scoped.token); !c.Scoped || len(c.Servers) != 0 {
		t.Errorf("after its server was deleted: scoped %v, servers %v", c.Scoped, c.Servers)
	}
	var list []servers.Server
	scoped.must("GET", "/api/servers", nil, 200, &list)
	if len(list) != 0 {
		t.Errorf("the token sees %v", names(list))
	}
	if st, data := scoped.do("GET", "/api/servers/"+itoa(reused), nil); st != 404 {
		t.Errorf("the server that reuses the id: %d %s", st, data)
	}
	var toks []auth.TokenInfo
	ts.browser.must("GET", "/api/tokens", nil, 200, &toks)
	if len(toks) != 1 || !toks[0].Scoped || toks[0].Servers == nil || len(toks[0].Servers) != 0 {
		t.Errorf("GET /api/tokens: %+v", toks)
	}
	page := ts.browser.mustPage("GET", "/tokens", nil, 200)
	if !strings.Contains(page, "none: its servers were deleted") || strings.Contains(page, "newcomer</td>") {
		t.Error("the tokens page does not show the token as scoped to no server")
	}
}

// TestTokensPageScope: the tokens page makes a token for every server or
// for the servers checked, lists each token's servers by name, and
// refuses a form that says both, or neither.
func TestTokensPageScope(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	a, gh := ts.draft("alpha"), ts.draft("github")
	form := b.mustPage("GET", "/tokens", nil, 200)
	for _, want := range []string{`id="scope-all" checked`, `id="scope-some"`, `id="scope-server-` + itoa(gh) + `"`, "github"} {
		if !strings.Contains(form, want) {
			t.Errorf("the tokens page lacks %s", want)
		}
	}
	if _, _, loc := b.page("POST", "/tokens", url.Values{"name": {"some"}, "scope": {"some"}, "server": {itoa(gh), itoa(a)}}); !strings.HasPrefix(loc, "/tokens?shown=") {
		t.Fatalf("creating a scoped token: Location %q", loc)
	}
	b.mustPage("POST", "/tokens", url.Values{"name": {"every"}, "scope": {"all"}}, 303)
	var toks []auth.TokenInfo
	b.must("GET", "/api/tokens", nil, 200, &toks)
	want := []auth.TokenInfo{{Name: "some", User: "owner", Scoped: true, Servers: []int64{a, gh}}, {Name: "every", User: "owner"}}
	if diff := cmp.Diff(want, toks, cmpIgnoreTokenStamps); diff != "" {
		t.Fatalf("tokens (-want +got):\n%s", diff)
	}
	page := b.mustPage("GET", "/tokens", nil, 200)
	for _, want := range []string{
		`id="token-scope-` + itoa(toks[0].ID) + `">alpha, github</td>`,
		`id="token-scope-` + itoa(toks[1].ID) + `">All servers</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the tokens page lacks %s", want)
		}
	}
	for _, tc := range []struct {
		form url.Values
		says string
	}{
		{url.Values{"name": {"x"}, "scope": {"all"}, "server": {itoa(a)}}, "also checked some servers"},
		{url.Values{"name": {"x"}, "server": {itoa(a)}}, "also checked some servers"},
		{url.Values{"name": {"x"}, "scope": {"some"}}, "check at least one server"},
		{url.Values{"name": {"x"}, "scope": {"some"}, "server": {"one"}}, "is not a server id"},
		{url.Values{"name": {"x"}, "scope": {"some"}, "server": {"99"}}, "no server has id 99"},
		{url.Values{"name": {"x"}, "scope": {"every"}}, "want all or some"},
	} {
		if page := b.mustPage("POST", "/tokens", tc.form, 400); !strings.Contains(page, tc.says) {
			t.Errorf("%v: the page does not say %q", tc.form, tc.says)
		}
	}
	b.must("GET", "/api/tokens", nil, 200, &toks)
	if len(toks) != 2 {
		t.Errorf("refused forms made tokens: %+v", toks)
	}
}
