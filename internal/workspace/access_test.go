package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/workspace/servers"
)

// auditText is the workspace's audit records as JSON, in the file or the
// table, for tests that look for a value in any field.
func (ts *testServer) auditText() string {
	ts.t.Helper()
	all, err := ts.w.audit.ReadAll()
	if err != nil {
		ts.t.Fatal(err)
	}
	data, _ := json.Marshal(all)
	return string(data)
}

// tamper changes the first old in the audit log, in the file or the
// table, to new, as someone with the file or the database would.
func (ts *testServer) tamper(old, new string) {
	ts.t.Helper()
	if ts.w.opts.DatabaseURL != "" {
		q := strconv.Quote
		res, err := ts.w.db.Exec(`UPDATE audit_records SET action = CASE WHEN action = ? THEN ? ELSE action END,
			actor = CASE WHEN actor = ? THEN ? ELSE actor END, target = CASE WHEN target = ? THEN ? ELSE target END,
			detail = replace(detail, ?, ?)
			WHERE seq = (SELECT min(seq) FROM audit_records WHERE action = ? OR actor = ? OR target = ? OR detail LIKE ?)`,
			old, new, old, new, old, new, q(old), q(new), old, old, old, "%"+q(old)+"%")
		if n, _ := res.RowsAffected(); err != nil || n != 1 {
			ts.t.Fatalf("tamper with the audit table: %v, %d rows", err, n)
		}
		return
	}
	path := filepath.Join(ts.home, auditFile)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(data, []byte(strconv.Quote(old)), []byte(strconv.Quote(new)), 1), 0o600)
}

// records returns the workspace's audit records with action.
func (ts *testServer) records(action string) []audit.Record {
	ts.t.Helper()
	all, err := ts.w.audit.ReadAll()
	if err != nil {
		ts.t.Fatal(err)
	}
	var out []audit.Record
	for _, r := range all {
		if r.Action == action {
			out = append(out, r)
		}
	}
	return out
}

// TestRefusalsAudited: every refusal of a caller that sent credentials is
// an access.refused record naming the caller, the route and the reason: an
// agent trying to approve its own draft, a member on an owner's route, a
// failed CSRF, cross-site, Host or Origin check, an unknown token.
func TestRefusalsAudited(t *testing.T) {
	ts := start(t, Options{Team: true})
	b := ts.browser
	agent := ts.bearer()
	var c created
	agent.must("POST", "/api/servers", map[string]any{"config": stdioConfig(t, "mine")}, 201, &c)
	id := itoa(c.Server.ID)
	var member struct {
		ID int64 `json:"id"`
	}
	b.must("POST", "/api/users", map[string]string{"name": "mia", "role": "member"}, 201, &member)
	asMember := ts.login(member.ID)
	stranger := &client{ts: ts, http: &http.Client{}, token: "zt_not-a-token"}

	cases := []struct {
		who              *client
		method, path     string
		body             any
		edit             func(*http.Request)
		actor, route, is string
	}{
		{agent, "POST", "/api/servers/" + id + "/approve", map[string]string{"fingerprint": c.Server.Fingerprint}, nil,
			"token:", "POST /api/servers/{id}/approve", "browser_only"},
		{agent, "POST", "/api/servers", map[string]any{"config": stdioConfig(t, "x"), "fingerprint": "sha256:00"}, nil,
			"token:", "POST /api/servers", "browser_only"},
		{asMember, "POST", "/api/servers/" + id + "/test", nil, nil, "user:mia", "POST /api/servers/{id}/test", "owner_required"},
		{b, "POST", "/api/servers/" + id + "/disable", nil, func(r *http.Request) { r.Header.Set("X-CSRF-Token", "forged") },
			"user:owner", "POST /api/servers/{id}/disable", "csrf"},
		{b, "POST", "/api/servers/" + id + "/disable", nil, func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") },
			"user:owner", "POST /api/servers/{id}/disable", "cross_site"},
		{b, "GET", "/api/servers", nil, func(r *http.Request) { r.Host = "evil.example" }, "anonymous", "GET /api/servers", "host"},
		{b, "POST", "/api/servers/" + id + "/disable", nil, func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") },
			"anonymous", "POST /api/servers/" + id + "/disable", "origin"},
		{stranger, "GET", "/api/servers", nil, nil, "token:unknown", "GET /api/servers", "unauthenticated"},
	}
	for i, tc := range cases {
		var edits []func(*http.Request)
		if tc.edit != nil {
			edits = append(edits, tc.edit)
		}
		if st, _ := tc.who.do(tc.method, tc.path, tc.body, edits...); st != 403 && st != 401 {
			t.Fatalf("case %d (%s): status %d, want a refusal", i, tc.is, st)
		}
		refused := ts.records("access.refused")
		if len(refused) != i+1 {
			t.Fatalf("case %d (%s): %d access.refused records, want %d", i, tc.is, len(refused), i+1)
		}
		r := refused[i]
		if !strings.HasPrefix(r.Actor, tc.actor) || r.Detail["route"] != tc.route || r.Detail["reason"] != tc.is {
			t.Errorf("case %d: record %+v; want actor %s..., route %q, reason %s", i, r.Event, tc.actor, tc.route, tc.is)
		}
	}
	// Nothing changed: the draft is still unapproved and enabled is false.
	var s servers.Server
	b.must("GET", "/api/servers/"+id, nil, 200, &s)
	if s.Approved {
		t.Error("a refused approval approved the draft")
	}
}

// TestRefusalFloodIsBounded: a flood of refused requests adds at most
// refusalBurst records a window, and the number dropped is recorded once
// the window has passed.
func TestRefusalFloodIsBounded(t *testing.T) {
	ts := start(t, Options{})
	now := time.Now()
	ts.w.refusals.now = func() time.Time { return now }
	stranger := &client{ts: ts, http: &http.Client{}, token: "zt_flood"}
	const flood = 200
	for range flood {
		stranger.do("GET", "/api/servers", nil)
	}
	if got := len(ts.records("access.refused")); got != refusalBurst {
		t.Fatalf("%d refusals recorded of %d, want %d", got, flood, refusalBurst)
	}
	now = now.Add(refusalWindow)
	stranger.do("GET", "/api/servers", nil)
	dropped := ts.records("access.refused.dropped")
	if len(dropped) != 1 || dropped[0].Detail["count"] != "170" {
		t.Fatalf("the dropped refusals' record: %+v", dropped)
	}
	if got := len(ts.records("access.refused")); got != refusalBurst+1 {
		t.Errorf("a new window recorded %d refusals in all, want %d", got, refusalBurst+1)
	}
}

// TestSignInsAndLinksAudited: a sign-in, a sign-out, a link used twice, an
// expired link, an unknown link and a token's first use each leave a
// record, naming whose link it was.
func TestSignInsAndLinksAudited(t *testing.T) {
	ts := start(t, Options{})
	if got := ts.records("auth.sign_in"); len(got) != 1 || got[0].Actor != "user:owner" {
		t.Fatalf("the sign-in's record: %+v", got)
	}
	link, _ := ts.w.auth.LoginLink(context.Background(), ts.w.ownerID)
	open := func(token string) int {
		jar, _ := cookiejar.New(nil)
		resp, err := (&http.Client{Jar: jar}).Get(ts.base + "/login?token=" + token)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if open(link) != 200 || open(link) != 401 {
		t.Fatal("a link did not work exactly once")
	}
	if got := ts.records("auth.link_used"); len(got) != 1 || got[0].Actor != "user:owner" {
		t.Errorf("a reused link's record: %+v", got)
	}
	expired, _ := ts.w.auth.LoginLink(context.Background(), ts.w.ownerID)
	ts.w.db.Exec(`UPDATE login_links SET expires_at = '2000-01-01T00:00:00Z' WHERE used_at = ''`)
	open(expired)
	if got := ts.records("auth.link_expired"); len(got) != 1 || got[0].Actor != "user:owner" {
		t.Errorf("an expired link's record: %+v", got)
	}
	open("never-issued")
	if got := ts.records("access.refused"); len(got) != 1 || got[0].Detail["reason"] != "unknown_link" {
		t.Errorf("an unknown link's record: %+v", got)
	}
	agent := ts.bearer()
	agent.must("GET", "/api/servers", nil, 200, nil)
	agent.must("GET", "/api/servers", nil, 200, nil)
	if got := ts.records("token.first_use"); len(got) != 1 || !strings.HasPrefix(got[0].Actor, "token:") {
		t.Errorf("a token's first use: %+v", got)
	}
	ts.browser.must("POST", "/api/logout", nil, 200, nil)
	if got := ts.records("auth.sign_out"); len(got) != 1 || got[0].Actor != "user:owner" {
		t.Errorf("the sign-out's record: %+v", got)
	}
}

// TestRecordsNameServersAndChanges: server records carry the server's name
// besides its id, and an edit's record names the fields and secrets it
// changed, never their values.
func TestRecordsNameServersAndChanges(t *testing.T) {
	const secret = "value-that-stays-out-of-records"
	ts := start(t, Options{})
	b := ts.browser
	cfg := stdioConfig(t, "named")
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": ts.fingerprint(0, cfg)}, 201, &c)
	edited := stdioConfig(t, "renamed", "API_KEY")
	edited.Args = []string{"--edited"}
	b.must("PUT", "/api/servers/"+itoa(c.Server.ID), map[string]any{"config": edited, "fingerprint": ts.fingerprint(c.Server.ID, edited),
		"base_fingerprint": c.Server.Fingerprint, "secrets": map[string]any{"env": map[string]string{"API_KEY": secret}}}, 200, nil)
	if got := ts.records("server.create"); len(got) != 1 || got[0].Detail["name"] != "named" || got[0].Target != "server:"+itoa(c.Server.ID) {
		t.Errorf("the create's record: %+v", got)
	}
	edit := ts.records("server.edit")
	if len(edit) != 1 || edit[0].Detail["name"] != "renamed" || edit[0].Detail["changed"] != "name,args,env" || edit[0].Detail["secrets_set"] != "env API_KEY" {
		t.Errorf("the edit's record: %+v", edit)
	}
	all, _ := ts.w.audit.ReadAll()
	for _, r := range all {
		for _, v := range r.Detail {
			if strings.Contains(v, secret) || strings.Contains(v, "--edited") {
				t.Errorf("a record holds a value: %+v", r)
			}
		}
	}
}

// TestLoginLinkOnceAtOnce: a login link used many times at once (as by two
// replicas on one PostgreSQL) opens one session.
func TestLoginLinkOnceAtOnce(t *testing.T) {
	ts := start(t, Options{})
	ctx := context.Background()
	for range 20 {
		link, err := ts.w.auth.LoginLink(ctx, ts.w.ownerID)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var opened atomic.Int32
		for range 8 {
			wg.Go(func() {
				if _, _, err := ts.w.auth.Login(ctx, link); err == nil {
					opened.Add(1)
				}
			})
		}
		wg.Wait()
		if n := opened.Load(); n != 1 {
			t.Fatalf("one link used 8 times at once opened %d sessions, want 1", n)
		}
	}
}
