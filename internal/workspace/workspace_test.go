package workspace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"image"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/database/databasetest"
	"github.com/zero-dev/zero/internal/guard/localhttp"
	"github.com/zero-dev/zero/internal/workspace/runtime/runtimetest"
	"github.com/zero-dev/zero/internal/workspace/servers"
)

var (
	envserverOnce sync.Once
	envserverPath string
	envserverErr  error
)

// envserver builds testdata/envserver, a real Go MCP stdio server whose tool
// description lists its environment.
func envserver(t testing.TB) string {
	t.Helper()
	envserverOnce.Do(func() {
		dir, err := os.MkdirTemp("", "zero-envserver-")
		if err != nil {
			envserverErr = err
			return
		}
		envserverPath = filepath.Join(dir, "envserver")
		out, err := exec.Command("go", "build", "-o", envserverPath, "./testdata/envserver").CombinedOutput()
		if err != nil {
			envserverErr = &buildError{err, string(out)}
		}
	})
	if envserverErr != nil {
		t.Fatal(envserverErr)
	}
	return envserverPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// testServer is a workspace served on loopback with a real SQLite file.
type testServer struct {
	t       testing.TB
	w       *Workspace
	base    string
	home    string
	log     *bytes.Buffer
	seen    *bytes.Buffer // every response body, for the secret-leak test
	seenMu  sync.Mutex
	browser *client
}

// client is one caller: a browser session (cookies, CSRF) or a bearer token.
type client struct {
	ts     *testServer
	http   *http.Client
	csrf   string
	token  string
	origin string // what a browser sends as Origin and Sec-Fetch-Site same-origin
}

func start(t testing.TB, o Options) *testServer {
	t.Helper()
	if o.Home == "" {
		o.Home = filepath.Join(t.TempDir(), "home")
	}
	if o.DatabaseURL == "" {
		o.DatabaseURL = databasetest.For(t, o.Home)
	}
	return startOn(t, o)
}

// startOn is start on o's database as it is: with no DatabaseURL, the
// SQLite file under o.Home, whatever ZERO_TEST_DATABASE says.
func startOn(t testing.TB, o Options) *testServer {
	t.Helper()
	log := &bytes.Buffer{}
	o.Stderr = log
	w, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, _ := localhttp.CheckAddr(ln.Addr().String(), false)
	h, err := w.Handler(l, ln.Addr().(*net.TCPAddr).Port)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h}
	go hs.Serve(ln)
	ts := &testServer{t: t, w: w, base: w.base, home: o.Home, log: log, seen: &bytes.Buffer{}}
	t.Cleanup(func() {
		hs.Close()
		w.Close()
		if kids := runtimetest.Children(t); kids != nil {
			t.Errorf("child processes left after the workspace closed: %v", kids)
		}
	})
	ts.browser = ts.login(w.ownerID)
	return ts
}

// login opens a browser session for a user through a one-time link.
func (ts *testServer) login(userID int64) *client {
	ts.t.Helper()
	token, err := ts.w.auth.LoginLink(context.Background(), userID)
	if err != nil {
		ts.t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &client{ts: ts, http: &http.Client{Jar: jar}, origin: ts.base}
	resp, err := c.http.Get(ts.base + "/login?token=" + token)
	if err != nil || resp.StatusCode != 200 {
		ts.t.Fatalf("login: %v %v", resp, err)
	}
	resp.Body.Close()
	var s struct {
		CSRF string `json:"csrf_token"`
	}
	c.must("GET", "/api/session", nil, 200, &s)
	c.csrf = s.CSRF
	return c
}

// bearer creates a token in the browser session and returns its client.
func (ts *testServer) bearer() *client {
	var tok struct {
		Token string `json:"token"`
	}
	ts.browser.must("POST", "/api/tokens", map[string]string{"name": "agent"}, 201, &tok)
	return &client{ts: ts, http: &http.Client{}, token: tok.Token}
}

// do sends a request and returns the status and body.
func (c *client) do(method, path string, body any, edit ...func(*http.Request)) (int, []byte) {
	c.ts.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.ts.base+path, r)
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	} else {
		req.Header.Set("X-CSRF-Token", c.csrf)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Origin", c.origin)
	}
	for _, e := range edit {
		e(req)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	c.ts.seenMu.Lock()
	c.ts.seen.Write(data)
	c.ts.seenMu.Unlock()
	return resp.StatusCode, data
}

// must sends a request, requires the status, and decodes the body into out.
func (c *client) must(method, path string, body any, status int, out any) {
	c.ts.t.Helper()
	got, data := c.do(method, path, body)
	if got != status {
		c.ts.t.Fatalf("%s %s: status %d, want %d: %s", method, path, got, status, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			c.ts.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
}

// fingerprint returns the fingerprint a preview gives cfg (its program
// resolved), as a replacement of server id (0 for a new one).
func (ts *testServer) fingerprint(id int64, cfg servers.Config) string {
	ts.t.Helper()
	p, err := ts.w.servers.Preview(context.Background(), id, cfg, servers.Secrets{})
	if err != nil {
		ts.t.Fatal(err)
	}
	return p.Fingerprint
}

// current returns server id's fingerprint as it is now: the base of an edit.
func (c *client) current(id string) string {
	c.ts.t.Helper()
	var s servers.Server
	c.must("GET", "/api/servers/"+id, nil, 200, &s)
	return s.Fingerprint
}

// errorCode returns the error code of an error answer.
func errorCode(data []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	json.Unmarshal(data, &e)
	return e.Error.Code
}

func stdioConfig(t testing.TB, name string, env ...string) servers.Config {
	return servers.Config{Name: name, Kind: servers.KindStdio, Command: envserver(t), Args: []string{"--flag"}, Env: env}
}

type created struct {
	Server     servers.Server `json:"server"`
	ApproveURL string         `json:"approve_url"`
}

// TestApprovalFlow walks the whole flow: preview, approve by creating with
// the fingerprint, enable, test; and a draft approved later.
func TestApprovalFlow(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	cfg := stdioConfig(t, "envserver", "API_KEY")
	var p servers.Preview
	b.must("POST", "/api/servers/preview", map[string]any{"config": cfg}, 200, &p)
	if !strings.HasPrefix(p.Fingerprint, "sha256:") || len(p.Warnings) == 0 {
		t.Fatalf("preview: %+v", p)
	}
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": p.Fingerprint,
		"secrets": map[string]any{"env": map[string]string{"API_KEY": "k-123"}}}, 201, &c)
	s := c.Server
	if !s.Approved || s.Enabled || s.Status != servers.StatusUntested {
		t.Fatalf("a new server must be approved, disabled and untested: %+v", s)
	}
	id := itoa(s.ID)
	b.must("POST", "/api/servers/"+id+"/enable", map[string]string{"fingerprint": p.Fingerprint}, 200, &s)
	if !s.Enabled {
		t.Fatal("enable did not enable")
	}
	b.must("POST", "/api/servers/"+id+"/test", nil, 200, &s)
	if s.Status != servers.StatusOK || len(s.Tools) != 1 || s.Tools[0].Name != "env" || !strings.HasPrefix(s.Tools[0].Hash, "sha256:") {
		t.Fatalf("test: %+v", s)
	}
	b.must("POST", "/api/servers/"+id+"/disable", nil, 200, &s)
	if s.Enabled {
		t.Fatal("disable did not disable")
	}

	// A draft, from a bearer caller: saved unapproved and disabled, with
	// the link to approve it; nothing runs until the owner approves.
	agent := ts.bearer()
	draft := stdioConfig(t, "draft")
	agent.must("POST", "/api/servers", map[string]any{"config": draft}, 201, &c)
	if c.Server.Approved || c.Server.Enabled || !strings.HasSuffix(c.ApproveURL, "/servers/"+itoa(c.Server.ID)) {
		t.Fatalf("draft: %+v %s", c.Server, c.ApproveURL)
	}
	did := itoa(c.Server.ID)
	if st, data := b.do("POST", "/api/servers/"+did+"/test", nil); st != 409 || errorCode(data) != "approval_required" {
		t.Errorf("testing an unapproved server: %d %s", st, data)
	}
	b.must("POST", "/api/servers/"+did+"/approve", map[string]any{"fingerprint": c.Server.Fingerprint, "enable": true}, 200, &s)
	if !s.Approved || !s.Enabled {
		t.Errorf("approve with enable: %+v", s)
	}
}

func itoa(id int64) string { return strings.TrimSpace(string(must(json.Marshal(id)))) }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestChangeBetweenPreviewAndApprove changes each fingerprinted field after
// the preview: the approval fails with 409 approval_required and the new
// preview.
func TestChangeBetweenPreviewAndApprove(t *testing.T) {
	ts := start(t, Options{AllowedLocalOrigins: []string{"https://127.0.0.1:9443"}})
	b := ts.browser
	stdio := stdioConfig(t, "s", "TOKEN")
	web := servers.Config{Name: "w", Kind: servers.KindHTTP, URL: "https://example.com/mcp", Headers: []string{"Authorization"}}
	cases := []struct {
		name           string
		before, change servers.Config
	}{
		{"argument", stdio, func() servers.Config { c := stdio; c.Args = []string{"--other"}; return c }()},
		{"env name", stdio, func() servers.Config { c := stdio; c.Env = []string{"TOKEN2"}; return c }()},
		{"cwd", stdio, func() servers.Config { c := stdio; c.Cwd = "sub"; return c }()},
		{"command", stdio, func() servers.Config { c := stdio; c.Command = "/bin/true"; return c }()},
		{"url", web, func() servers.Config { c := web; c.URL = "https://example.org/mcp"; return c }()},
		{"header name", web, func() servers.Config { c := web; c.Headers = []string{"X-Api-Key"}; return c }()},
	}
	for _, tc := range cases {
		var p servers.Preview
		b.must("POST", "/api/servers/preview", map[string]any{"config": tc.before}, 200, &p)
		st, data := b.do("POST", "/api/servers", map[string]any{"config": tc.change, "fingerprint": p.Fingerprint})
		var e struct {
			Error struct {
				Code    string           `json:"code"`
				Preview *servers.Preview `json:"preview"`
			} `json:"error"`
		}
		json.Unmarshal(data, &e)
		if st != 409 || e.Error.Code != "approval_required" || e.Error.Preview == nil || e.Error.Preview.Fingerprint == p.Fingerprint {
			t.Errorf("%s changed after the preview: %d %s", tc.name, st, data)
		}
	}
	// Editing an approved server, and enabling it, echo the fingerprint too.
	var p servers.Preview
	b.must("POST", "/api/servers/preview", map[string]any{"config": stdio}, 200, &p)
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": stdio, "fingerprint": p.Fingerprint}, 201, &c)
	id := itoa(c.Server.ID)
	edited := stdio
	edited.Args = []string{"--edited"}
	if st, data := b.do("PUT", "/api/servers/"+id, map[string]any{"config": edited, "fingerprint": p.Fingerprint, "base_fingerprint": p.Fingerprint}); st != 409 || errorCode(data) != "approval_required" {
		t.Errorf("edit with the old fingerprint: %d %s", st, data)
	}
	if st, data := b.do("POST", "/api/servers/"+id+"/enable", map[string]any{"fingerprint": "sha256:00"}); st != 409 || errorCode(data) != "approval_required" {
		t.Errorf("enable with a wrong fingerprint: %d %s", st, data)
	}
	var ep servers.Preview
	b.must("POST", "/api/servers/preview", map[string]any{"config": edited, "id": c.Server.ID}, 200, &ep)
	var s servers.Server
	b.must("PUT", "/api/servers/"+id, map[string]any{"config": edited, "fingerprint": ep.Fingerprint, "base_fingerprint": p.Fingerprint}, 200, &s)
	if s.Fingerprint != ep.Fingerprint || !s.Approved || s.Status != servers.StatusUntested {
		t.Errorf("after an approved edit: %+v", s)
	}
}

// TestWhoMayApprove: a bearer token on every approval route (the drift
// gate's tool set approval, tool switches and debug log included) gets 403
// browser_only, whatever its user's role; a team member gets 403
// owner_required and sees no logs; a viewer cannot add anything.
func TestWhoMayApprove(t *testing.T) {
	ts := start(t, Options{Team: true, RegistryURL: "http://127.0.0.1:1"}) // no registry: the gate answers first
	b := ts.browser
	var p servers.Preview
	cfg := stdioConfig(t, "s")
	b.must("POST", "/api/servers/preview", map[string]any{"config": cfg}, 200, &p)
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": p.Fingerprint}, 201, &c)
	id := itoa(c.Server.ID)
	routes := []struct {
		method, path string
		body         any
	}{
		{"POST", "/api/servers", map[string]any{"config": stdioConfig(t, "t"), "fingerprint": p.Fingerprint}},
		{"PUT", "/api/servers/" + id, map[string]any{"config": cfg, "fingerprint": p.Fingerprint}},
		{"POST", "/api/servers/" + id + "/approve", map[string]any{"fingerprint": p.Fingerprint}},
		{"POST", "/api/servers/" + id + "/enable", map[string]any{"fingerprint": p.Fingerprint}},
		{"POST", "/api/servers/" + id + "/test", nil},
		{"DELETE", "/api/servers/" + id, nil},
		{"POST", "/api/tokens", map[string]string{"name": "more"}},
		{"DELETE", "/api/tokens/1", nil},
		{"POST", "/api/users", map[string]string{"name": "eve", "role": "member"}},
		{"POST", "/api/servers/" + id + "/tools/approve", map[string]string{"tool_set_hash": "sha256:x"}},
		{"POST", "/api/servers/" + id + "/tools/env/enable", nil},
		{"POST", "/api/servers/" + id + "/tools/env/disable", nil},
		{"POST", "/api/servers/" + id + "/debug-log", map[string]bool{"enabled": true}},
		{"POST", "/api/registry/drafts", map[string]any{"name": "io.github.zero-test/x", "version": "1.0.0", "package": 0}},
	}
	agent := ts.bearer()
	var member, viewer struct {
		ID       int64  `json:"id"`
		LoginURL string `json:"login_url"`
	}
	b.must("POST", "/api/users", map[string]string{"name": "mia", "role": "member"}, 201, &member)
	b.must("POST", "/api/users", map[string]string{"name": "vic", "role": "viewer"}, 201, &viewer)
	if !strings.Contains(member.LoginURL, "/login?token=") {
		t.Errorf("a new user's login link: %q", member.LoginURL)
	}
	asMember, asViewer := ts.login(member.ID), ts.login(viewer.ID)
	for _, r := range routes {
		if st, data := agent.do(r.method, r.path, r.body); st != 403 || errorCode(data) != "browser_only" {
			t.Errorf("bearer %s %s: %d %s", r.method, r.path, st, data)
		}
		if st, data := asMember.do(r.method, r.path, r.body); st != 403 || errorCode(data) != "owner_required" {
			t.Errorf("member %s %s: %d %s", r.method, r.path, st, data)
		}
	}
	if st, data := asViewer.do("POST", "/api/servers", map[string]any{"config": stdioConfig(t, "v")}); st != 403 || errorCode(data) != "read_only" {
		t.Errorf("a viewer added a server: %d %s", st, data)
	}
	if st, data := asViewer.do("POST", "/api/servers/"+id+"/disable", nil); st != 403 || errorCode(data) != "read_only" {
		t.Errorf("a viewer disabled a server: %d %s", st, data)
	}
	if st, _ := asMember.do("POST", "/api/servers/"+id+"/disable", nil); st != 200 {
		t.Errorf("a member could not disable a server: %d", st)
	}
	if page := asMember.mustPage("GET", "/servers/"+id, nil, 200); strings.Contains(page, `id="logs"`) {
		t.Error("a member's page shows the server's logs")
	}
	if page := b.mustPage("GET", "/servers/"+id, nil, 200); !strings.Contains(page, `id="logs"`) {
		t.Error("the owner's page shows no logs")
	}
	if st, _ := asViewer.do("GET", "/api/servers", nil); st != 200 {
		t.Errorf("a viewer could not list servers: %d", st)
	}
}

// TestBrowserRequestsChecked: a browser request without its CSRF token, or
// from another site, is refused; so is any request whose Host is not local.
func TestBrowserRequestsChecked(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	body := map[string]any{"config": stdioConfig(t, "s")}
	cases := []struct {
		name string
		edit func(*http.Request)
		code string
	}{
		{"no CSRF token", func(r *http.Request) { r.Header.Del("X-CSRF-Token") }, "csrf"},
		{"wrong CSRF token", func(r *http.Request) { r.Header.Set("X-CSRF-Token", "forged") }, "csrf"},
		{"cross-site", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }, "cross_site"},
		{"same-site", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "same-site") }, "cross_site"},
		{"foreign Origin", func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, ""},
		{"no Sec-Fetch-Site nor Origin", func(r *http.Request) { r.Header.Del("Sec-Fetch-Site"); r.Header.Del("Origin") }, "cross_site"},
		{"forged Host", func(r *http.Request) { r.Host = "evil.example" }, ""},
	}
	for _, tc := range cases {
		st, data := b.do("POST", "/api/servers", body, tc.edit)
		if st != 403 || (tc.code != "" && errorCode(data) != tc.code) {
			t.Errorf("%s: %d %s", tc.name, st, data)
		}
	}
	if st, _ := b.do("POST", "/api/servers", body); st != 201 {
		t.Errorf("the same request done right: %d", st)
	}
	// No session at all.
	anon := &client{ts: ts, http: &http.Client{}, origin: ts.base}
	if st, data := anon.do("GET", "/api/servers", nil); st != 401 || errorCode(data) != "unauthenticated" {
		t.Errorf("no session: %d %s", st, data)
	}
	// A login link works once.
	token, _ := ts.w.auth.LoginLink(context.Background(), ts.w.ownerID)
	for i, want := range []int{200, 401} {
		jar, _ := cookiejar.New(nil)
		resp, err := (&http.Client{Jar: jar}).Get(ts.base + "/login?token=" + token)
		if err != nil || resp.StatusCode != want {
			t.Errorf("login link use %d: %v %v", i+1, resp.StatusCode, err)
		}
		resp.Body.Close()
	}
}

// TestLoaderVariablesRefused: a stdio server may not declare loader
// variables.
func TestLoaderVariablesRefused(t *testing.T) {
	ts := start(t, Options{})
	for _, name := range []string{"LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "NODE_OPTIONS", "BASH_ENV", "1BAD"} {
		st, data := ts.browser.do("POST", "/api/servers/preview", map[string]any{"config": stdioConfig(t, "s", name)})
		if st != 400 || errorCode(data) != "invalid_config" || !strings.Contains(string(data), name) {
			t.Errorf("env %s: %d %s", name, st, data)
		}
	}
	for _, cwd := range []string{"/tmp", "../escape", "a/../../b", "~/x"} {
		c := stdioConfig(t, "s")
		c.Cwd = cwd
		if st, data := ts.browser.do("POST", "/api/servers/preview", map[string]any{"config": c}); st != 400 {
			t.Errorf("cwd %q: %d %s", cwd, st, data)
		}
	}
}

// TestTypedConfigCannotClaimARegistryEntry: the registry reference, which
// the fingerprint covers, is Zero's to set on a configuration it derived;
// a typed preview, create or edit that sends one is refused.
func TestTypedConfigCannotClaimARegistryEntry(t *testing.T) {
	ts := start(t, Options{})
	c := stdioConfig(t, "s")
	var created struct{ Server servers.Server }
	ts.browser.must("POST", "/api/servers", map[string]any{"config": c}, 201, &created)
	c.Name = "other"
	c.Registry = &servers.RegistryRef{URL: "https://registry.example", Name: "io.example/s", Version: "1.0.0", EntrySHA256: strings.Repeat("0", 64)}
	for _, r := range []struct{ method, path string }{
		{"POST", "/api/servers/preview"}, {"POST", "/api/servers"}, {"PUT", "/api/servers/" + itoa(created.Server.ID)},
	} {
		st, data := ts.browser.do(r.method, r.path, map[string]any{"config": c, "base_fingerprint": created.Server.Fingerprint})
		if st != 400 || !strings.Contains(string(data), "config.registry") {
			t.Errorf("%s %s: %d %s", r.method, r.path, st, data)
		}
	}
}

// envOf returns the environment the envserver reported in its tool's
// description: name -> short hash of the value.
func envOf(t *testing.T, s servers.Server) map[string]string {
	t.Helper()
	if len(s.Tools) != 1 {
		t.Fatalf("server %s: tools %+v, last error %q", s.Config.Name, s.Tools, s.LastError)
	}
	out := map[string]string{}
	for _, kv := range strings.Fields(s.Tools[0].Description) {
		name, hash, _ := strings.Cut(kv, "=")
		out[name] = hash
	}
	return out
}

func shortHash(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:4])
}

// TestStdioEnvironmentScrubbed: a stdio server sees the safe defaults and
// its declared variables, with their secret values, and nothing else.
func TestStdioEnvironmentScrubbed(t *testing.T) {
	t.Setenv("ZERO_TEST_PARENT_ONLY", "must not pass")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "must not pass either")
	ts := start(t, Options{})
	b := ts.browser
	cfg := stdioConfig(t, "env", "API_KEY", "UNSET_ONE")
	var p servers.Preview
	b.must("POST", "/api/servers/preview", map[string]any{"config": cfg}, 200, &p)
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": p.Fingerprint,
		"secrets": map[string]any{"env": map[string]string{"API_KEY": "value-of-api-key"}}}, 201, &c)
	var s servers.Server
	b.must("POST", "/api/servers/"+itoa(c.Server.ID)+"/test", nil, 200, &s)
	env := envOf(t, s)
	if env["API_KEY"] != shortHash("value-of-api-key") {
		t.Errorf("the declared secret did not arrive: %v", env)
	}
	allowed := map[string]bool{"API_KEY": true, "PATH": true, "HOME": true, "USER": true, "LOGNAME": true,
		"LANG": true, "LC_ALL": true, "LC_CTYPE": true, "TZ": true, "TMPDIR": true, "TERM": true}
	for name := range env {
		if !allowed[name] {
			t.Errorf("the server saw %s, which is neither a safe default nor declared", name)
		}
	}
}

// TestNoSecretLeaks sets a recognisable secret, drives every route that
// touches it (a failing server even prints it to its stderr), and requires
// that no response, log line, audit record or database row holds it.
func TestNoSecretLeaks(t *testing.T) {
	const secret = "zEr0-Le4k-Canary-9f83b1"
	ts := start(t, Options{})
	b := ts.browser
	cfg := stdioConfig(t, "leaky", "LEAK")
	var p servers.Preview
	b.must("POST", "/api/servers/preview", map[string]any{"config": cfg, "secrets": map[string]any{"env": map[string]string{"LEAK": secret}}}, 200, &p)
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": p.Fingerprint,
		"secrets": map[string]any{"env": map[string]string{"LEAK": secret}}}, 201, &c)
	id := itoa(c.Server.ID)
	var s servers.Server
	b.must("POST", "/api/servers/"+id+"/test", nil, 200, &s)
	if s.Status != servers.StatusFailed || !strings.Contains(s.LastError, "[redacted") {
		t.Errorf("the failing server's error should carry its redacted stderr: %+v", s)
	}
	web := servers.Config{Name: "web", Kind: servers.KindHTTP, URL: "https://example.com/mcp", Headers: []string{"Authorization"}}
	b.must("POST", "/api/servers", map[string]any{"config": web, "fingerprint": ts.fingerprint(0, web),
		"secrets": map[string]any{"headers": map[string]string{"Authorization": "Bearer " + secret}}}, 201, nil)
	b.do("GET", "/api/servers", nil)
	b.do("GET", "/api/servers/"+id, nil)
	b.do("GET", "/api/audit", nil)
	b.do("POST", "/api/servers", map[string]any{"config": cfg, "secrets": map[string]any{"env": map[string]string{"LEAK": secret, "OTHER": secret}}})
	b.do("PUT", "/api/servers/"+id, map[string]any{"config": cfg, "fingerprint": "sha256:00", "secrets": map[string]any{"env": map[string]string{"LEAK": secret}}})
	ts.seenMu.Lock()
	seen := ts.seen.String()
	ts.seenMu.Unlock()
	if strings.Contains(seen, secret) {
		t.Error("an API response holds the secret")
	}
	if strings.Contains(ts.log.String(), secret) {
		t.Error("the server's log holds the secret")
	}
	for _, f := range []string{auditFile, dbFile, dbFile + "-wal"} {
		if data, err := os.ReadFile(filepath.Join(ts.home, f)); err == nil && bytes.Contains(data, []byte(secret)) {
			t.Errorf("%s holds the secret in clear", f)
		}
	}
	// Deleting the server deletes its secrets.
	b.must("DELETE", "/api/servers/"+id, nil, 200, nil)
	var n int
	ts.w.db.QueryRow(`SELECT count(*) FROM secrets WHERE server_id = ?`, c.Server.ID).Scan(&n)
	if n != 0 {
		t.Errorf("deleting the server left %d secrets", n)
	}
}

// loopbackResolver makes every name resolve to 127.0.0.1.
type loopbackResolver struct{}

func (loopbackResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// remoteMCP starts an MCP server with one tool over streamable HTTP on a
// loopback TLS test server, and returns it with a pool that trusts it.
func remoteMCP(t *testing.T) (*httptest.Server, *x509.CertPool) {
	t.Helper()
	mcpSrv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "0"}, nil)
	mcpSrv.AddTool(&mcp.Tool{Name: "hello", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	remote := httptest.NewTLSServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcpSrv }, nil))
	t.Cleanup(remote.Close)
	pool := x509.NewCertPool()
	pool.AddCert(remote.Certificate())
	return remote, pool
}

// TestSSRF: HTTP servers on loopback, private, link-local or metadata
// addresses are refused, a name resolving to loopback too (at connection
// time); ZERO_ALLOWED_LOCAL_ORIGINS lets exactly the listed origin through.
func TestSSRF(t *testing.T) {
	remote, pool := remoteMCP(t)
	allowed := remote.URL // https://127.0.0.1:PORT
	ts := start(t, Options{AllowedLocalOrigins: []string{allowed}, TLS: &tls.Config{RootCAs: pool}, Resolver: loopbackResolver{}})
	b := ts.browser
	port := strings.TrimPrefix(allowed, "https://127.0.0.1:")
	for _, u := range []string{
		"https://127.0.0.1/mcp", "https://localhost/mcp", "https://10.1.2.3/mcp", "https://169.254.169.254/latest",
		"https://[::ffff:127.0.0.1]/mcp", "https://[::1]/mcp", "https://192.168.1.1/mcp", "http://example.com/mcp",
		"https://127.0.0.2:" + port + "/mcp", "https://127.0.0.1:1/mcp",
	} {
		c := servers.Config{Name: "x", Kind: servers.KindHTTP, URL: u}
		if st, data := b.do("POST", "/api/servers/preview", map[string]any{"config": c}); st != 400 || errorCode(data) != "invalid_config" {
			t.Errorf("%s: %d %s", u, st, data)
		}
	}
	// A name that resolves to loopback passes validation, and is refused
	// when the Test connects.
	byName := servers.Config{Name: "byname", Kind: servers.KindHTTP, URL: "https://loopback.example:" + port + "/mcp"}
	var p servers.Preview
	b.must("POST", "/api/servers/preview", map[string]any{"config": byName}, 200, &p)
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": byName, "fingerprint": p.Fingerprint}, 201, &c)
	var s servers.Server
	b.must("POST", "/api/servers/"+itoa(c.Server.ID)+"/test", nil, 200, &s)
	if s.Status != servers.StatusFailed || !strings.Contains(s.LastError, "blocked") {
		t.Errorf("a name resolving to loopback: %+v", s)
	}
	// The allowed origin itself works.
	ok := servers.Config{Name: "allowed", Kind: servers.KindHTTP, URL: allowed + "/mcp"}
	b.must("POST", "/api/servers/preview", map[string]any{"config": ok}, 200, &p)
	b.must("POST", "/api/servers", map[string]any{"config": ok, "fingerprint": p.Fingerprint}, 201, &c)
	b.must("POST", "/api/servers/"+itoa(c.Server.ID)+"/test", nil, 200, &s)
	if s.Status != servers.StatusOK || len(s.Tools) != 1 {
		t.Errorf("the allow-listed origin: %+v", s)
	}
}

// TestAuditTamperingDetected: every change is in the audit log, and
// altering one record is detected.
func TestAuditTamperingDetected(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	cfg := stdioConfig(t, "s")
	var p, e, d servers.Preview
	b.must("POST", "/api/servers/preview", map[string]any{"config": cfg}, 200, &p)
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": p.Fingerprint}, 201, &c)
	id := itoa(c.Server.ID)
	b.must("POST", "/api/servers/"+id+"/enable", map[string]string{"fingerprint": p.Fingerprint}, 200, nil)
	b.must("POST", "/api/servers/"+id+"/test", nil, 200, nil)
	edited := cfg
	edited.Args = []string{"--edited"}
	b.must("POST", "/api/servers/preview", map[string]any{"config": edited, "id": c.Server.ID}, 200, &e)
	b.must("PUT", "/api/servers/"+id, map[string]any{"config": edited, "fingerprint": e.Fingerprint, "base_fingerprint": p.Fingerprint}, 200, nil)
	b.must("POST", "/api/servers/"+id+"/disable", nil, 200, nil)
	draft := stdioConfig(t, "draft")
	b.must("POST", "/api/servers/preview", map[string]any{"config": draft}, 200, &d)
	var dc created
	b.must("POST", "/api/servers", map[string]any{"config": draft}, 201, &dc)
	b.must("POST", "/api/servers/"+itoa(dc.Server.ID)+"/approve", map[string]string{"fingerprint": d.Fingerprint}, 200, nil)
	ts.bearer()
	b.must("DELETE", "/api/servers/"+id, nil, 200, nil)
	records, err := ts.w.audit.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ action, fingerprint string }{
		{"auth.sign_in", ""}, {"server.create", p.Fingerprint}, {"server.enable", p.Fingerprint},
		{"server.tools_approved", p.Fingerprint}, {"server.test", p.Fingerprint},
		{"server.edit", e.Fingerprint}, {"server.disable", e.Fingerprint}, {"server.draft", d.Fingerprint},
		{"server.approve", d.Fingerprint}, {"token.create", ""}, {"server.delete", e.Fingerprint},
	}
	if len(records) != len(want) {
		t.Fatalf("%d audit records, want %d: %+v", len(records), len(want), records)
	}
	for i, r := range records {
		if r.Action != want[i].action || r.Fingerprint != want[i].fingerprint || r.Actor == "" || r.Time.IsZero() {
			t.Errorf("record %d: %s %q by %q at %v; want %s %q", i, r.Action, r.Fingerprint, r.Actor, r.Time, want[i].action, want[i].fingerprint)
		}
	}
	if err := ts.w.audit.Verify(); err != nil {
		t.Fatalf("an untouched log fails to verify: %v", err)
	}
	ts.tamper("server.disable", "server.enable")
	if err := ts.w.audit.Verify(); err == nil {
		t.Error("a tampered record was not detected")
	}
}

// TestRestartKeepsApprovalsAndSecrets: a new process on the same
// $ZERO_HOME finds every approval, and its secrets still open.
func TestRestartKeepsApprovalsAndSecrets(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	first := start(t, Options{Home: home})
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("a new $ZERO_HOME: %v %v, want mode 0700", fi.Mode(), err)
	}
	cfg := stdioConfig(t, "kept", "API_KEY")
	var p servers.Preview
	first.browser.must("POST", "/api/servers/preview", map[string]any{"config": cfg}, 200, &p)
	var c created
	first.browser.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": p.Fingerprint, "enable": true,
		"secrets": map[string]any{"env": map[string]string{"API_KEY": "survives-restarts"}}}, 201, &c)
	first.w.Close()

	second := start(t, Options{Home: home})
	var s servers.Server
	second.browser.must("GET", "/api/servers/"+itoa(c.Server.ID), nil, 200, &s)
	if !s.Approved || !s.Enabled || s.ApprovedFingerprint != p.Fingerprint {
		t.Fatalf("after a restart: %+v", s)
	}
	second.browser.must("POST", "/api/servers/"+itoa(c.Server.ID)+"/test", nil, 200, &s)
	if envOf(t, s)["API_KEY"] != shortHash("survives-restarts") {
		t.Error("the secret did not survive the restart")
	}
	if err := second.w.audit.Verify(); err != nil {
		t.Errorf("the audit log after a restart: %v", err)
	}
}

// TestCreateRunsNothing creates, approves and enables a server whose command
// would leave a mark: nothing runs until the Test action, which does run it.
func TestCreateRunsNothing(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	marker := filepath.Join(t.TempDir(), "ran")
	cfg := servers.Config{Name: "marker", Kind: servers.KindStdio, Command: "/usr/bin/touch", Args: []string{marker}}
	var p servers.Preview
	b.must("POST", "/api/servers/preview", map[string]any{"config": cfg}, 200, &p)
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": cfg}, 201, &c)
	b.must("POST", "/api/servers/"+itoa(c.Server.ID)+"/approve", map[string]any{"fingerprint": p.Fingerprint}, 200, nil)
	b.must("POST", "/api/servers/"+itoa(c.Server.ID)+"/enable", map[string]any{"fingerprint": p.Fingerprint}, 200, nil)
	b.must("GET", "/api/servers", nil, 200, nil)
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("creating, approving or enabling ran the command: %v", err)
	}
	var s servers.Server
	b.must("POST", "/api/servers/"+itoa(c.Server.ID)+"/test", nil, 200, &s)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the Test action did not run the command: %v", err)
	}
	if s.Status != servers.StatusFailed {
		t.Errorf("touch is no MCP server, yet the status is %q", s.Status)
	}
}

// TestSecretsBoundToApprovedFingerprint changes a server's configuration
// and its approved fingerprint directly in the database, as someone with
// write access to the SQLite file could: the secret sealed for the old
// approval does not open, and the changed command does not run.
func TestSecretsBoundToApprovedFingerprint(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	cfg := stdioConfig(t, "bound", "API_KEY")
	var p servers.Preview
	b.must("POST", "/api/servers/preview", map[string]any{"config": cfg}, 200, &p)
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": p.Fingerprint, "enable": true,
		"secrets": map[string]any{"env": map[string]string{"API_KEY": "bound-to-one-approval"}}}, 201, &c)

	marker := filepath.Join(t.TempDir(), "ran")
	evil := servers.Config{Name: "bound", Kind: servers.KindStdio, Command: "/usr/bin/touch", Program: must(filepath.EvalSymlinks("/usr/bin/touch")),
		Args: []string{marker}, Env: []string{"API_KEY"}}
	data, _ := json.Marshal(evil)
	if _, err := ts.w.db.Exec(`UPDATE servers SET config = ?, approved_fingerprint = ? WHERE id = ?`,
		string(data), evil.Fingerprint(), c.Server.ID); err != nil {
		t.Fatal(err)
	}
	status, body := b.do("POST", "/api/servers/"+itoa(c.Server.ID)+"/test", nil)
	if status != http.StatusConflict || errorCode(body) != "secret_unavailable" {
		t.Fatalf("a tampered approval: status %d: %s", status, body)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the tampered command ran: %v", err)
	}
	if bytes.Contains(body, []byte("bound-to-one-approval")) {
		t.Fatal("the answer holds the secret")
	}
}

// TestSessionsAndTokens: the session cookie is HttpOnly and SameSite=Strict;
// sessions, links and tokens are stored only as hashes; an expired session
// or link and a revoked token are refused.
func TestSessionsAndTokens(t *testing.T) {
	ts := start(t, Options{})
	link, err := ts.w.auth.LoginLink(context.Background(), ts.w.ownerID)
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(ts.base + "/login?token=" + link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Path != "/" {
		t.Fatalf("session cookie: %+v", cookies)
	}
	agent := ts.bearer()
	link2, _ := ts.w.auth.LoginLink(context.Background(), ts.w.ownerID) // unused, so still stored
	for table, cred := range map[string]string{"sessions": cookies[0].Value, "tokens": agent.token, "login_links": link2} {
		sum := sha256.Sum256([]byte(cred))
		var clear, hashed int
		err := ts.w.db.QueryRow(`SELECT count(*) FILTER (WHERE hash = ?), count(*) FILTER (WHERE hash = ?) FROM `+table,
			cred, hex.EncodeToString(sum[:])).Scan(&clear, &hashed)
		if err != nil || clear != 0 || hashed != 1 {
			t.Errorf("%s: %d in clear, %d hashed, %v", table, clear, hashed, err)
		}
	}
	agent.must("GET", "/api/servers", nil, 200, nil)
	var toks []struct {
		ID int64 `json:"id"`
	}
	ts.browser.must("GET", "/api/tokens", nil, 200, &toks)
	ts.browser.must("DELETE", "/api/tokens/"+itoa(toks[0].ID), nil, 200, nil)
	if st, data := agent.do("GET", "/api/servers", nil); st != 401 || errorCode(data) != "unauthenticated" {
		t.Errorf("a revoked token: %d %s", st, data)
	}
	// Expire every session and link.
	stale := "2000-01-01T00:00:00Z"
	ts.w.db.Exec(`UPDATE sessions SET expires_at = ?`, stale)
	ts.w.db.Exec(`UPDATE login_links SET expires_at = ?`, stale)
	if st, data := ts.browser.do("GET", "/api/servers", nil); st != 401 || errorCode(data) != "unauthenticated" {
		t.Errorf("an expired session: %d %s", st, data)
	}
	resp, err = noFollow.Get(ts.base + "/login?token=" + link2)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("an expired login link: %d", resp.StatusCode)
	}
}

// TestLogoFetchedByTheServer: a server's declared icon is fetched by the
// workspace, from an allowed origin only, and kept as a data: URL; an icon
// on a private host that is not allowed is never requested.
func TestLogoFetchedByTheServer(t *testing.T) {
	var pngBytes bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	png.Encode(&pngBytes, img)
	var hits, otherHits atomic.Int32
	icons := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		rw.Header().Set("Content-Type", "image/png")
		rw.Write(pngBytes.Bytes())
	}))
	defer icons.Close()
	other := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	defer other.Close()
	pool := x509.NewCertPool()
	pool.AddCert(icons.Certificate())
	pool.AddCert(other.Certificate())
	ts := start(t, Options{AllowedLocalOrigins: []string{icons.URL}, TLS: &tls.Config{RootCAs: pool}})
	cfg := stdioConfig(t, "iconic")
	cfg.Args = []string{"--icon=" + other.URL + "/logo.png", "--icon=" + icons.URL + "/logo.png"}
	var s servers.Server
	ts.browser.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": ts.fingerprint(0, cfg)}, 201, &s)
	ts.browser.must("POST", "/api/servers/1/test", nil, 200, &s)
	if !strings.HasPrefix(s.Logo, "data:image/png;base64,") || hits.Load() != 1 {
		t.Errorf("logo %.40q after %d requests", s.Logo, hits.Load())
	}
	if otherHits.Load() != 0 {
		t.Error("an icon on a private host that is not allowed was requested")
	}
}

// TestLocalCAFile: a local https server with its own certificate can be
// tested once its CA file is given (zero serve --local-ca), and fails
// without it; the CA is trusted for the allowed local origins only.
func TestLocalCAFile(t *testing.T) {
	local, _ := remoteMCP(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: local.Certificate().Raw}), 0o600)
	cfg := servers.Config{Name: "local", Kind: servers.KindHTTP, URL: local.URL + "/mcp"}
	for _, tc := range []struct {
		caFile string
		want   string
	}{{"", servers.StatusFailed}, {caFile, servers.StatusOK}} {
		ts := start(t, Options{AllowedLocalOrigins: []string{local.URL}, LocalCAFile: tc.caFile})
		var c created
		ts.browser.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": ts.fingerprint(0, cfg)}, 201, &c)
		var s servers.Server
		ts.browser.must("POST", "/api/servers/"+itoa(c.Server.ID)+"/test", nil, 200, &s)
		if s.Status != tc.want || tc.caFile == "" && !strings.Contains(s.LastError, "certificate") {
			t.Errorf("with CA file %q: status %s (%s), want %s", tc.caFile, s.Status, s.LastError, tc.want)
		}
	}
	if _, err := Open(context.Background(), Options{Home: t.TempDir(), LocalCAFile: filepath.Join(t.TempDir(), "missing.pem")}); err == nil {
		t.Error("a missing CA file was accepted")
	}
}

// countingResolver fails every lookup and counts them: a test that must
// never resolve a name uses it to prove it.
type countingResolver struct{ n atomic.Int32 }

func (r *countingResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.n.Add(1)
	return nil, &net.DNSError{Err: "lookups are refused in this test", IsNotFound: true}
}

// TestNumericHostsReadAsAddresses: every spelling a resolver reads as an
// address (WHATWG URL host rules) is judged as that address at validation,
// with no lookup: loopback in any spelling is refused, the configuration
// stores the canonical URL, and an allowed local origin works in any
// spelling too.
func TestNumericHostsReadAsAddresses(t *testing.T) {
	remote, pool := remoteMCP(t)
	port := strings.TrimPrefix(remote.URL, "https://127.0.0.1:")
	origins, err := servers.ParseOrigins("https://0x7f000001:" + port)
	if err != nil || len(origins) != 1 || origins[0] != remote.URL {
		t.Fatalf("ParseOrigins of a hex spelling: %q %v, want %s", origins, err, remote.URL)
	}
	resolver := &countingResolver{}
	ts := start(t, Options{AllowedLocalOrigins: origins, TLS: &tls.Config{RootCAs: pool}, Resolver: resolver})
	for _, host := range []string{"127.1", "2130706433", "0x7f000001", "0177.0.0.1", "017700000001", "127.0.1", "0",
		"[::ffff:7f00:1]", "[::ffff:127.0.0.1]", "[::127.0.0.1]", "１２７.０.０.１", "0xa.0x1.2.3", "0251.0376.0251.0376", "LOCALHOST", "app.localhost"} {
		c := servers.Config{Name: "x", Kind: servers.KindHTTP, URL: "https://" + host + "/mcp"}
		if st, data := ts.browser.do("POST", "/api/servers/preview", map[string]any{"config": c}); st != 400 || errorCode(data) != "invalid_config" {
			t.Errorf("%s: %d %s", host, st, data)
		}
	}
	c := servers.Config{Name: "allowed", Kind: servers.KindHTTP, URL: "https://2130706433:" + port + "/mcp"}
	var p servers.Preview
	ts.browser.must("POST", "/api/servers/preview", map[string]any{"config": c}, 200, &p)
	if p.Config.URL != remote.URL+"/mcp" {
		t.Errorf("the preview's URL is %q, want the canonical %s/mcp", p.Config.URL, remote.URL)
	}
	var cr created
	ts.browser.must("POST", "/api/servers", map[string]any{"config": c, "fingerprint": p.Fingerprint}, 201, &cr)
	var s servers.Server
	ts.browser.must("POST", "/api/servers/"+itoa(cr.Server.ID)+"/test", nil, 200, &s)
	if s.Status != servers.StatusOK {
		t.Errorf("the allowed origin in another spelling: %+v", s)
	}
	if n := resolver.n.Load(); n != 0 {
		t.Errorf("%d name lookups; numeric hosts must never reach a resolver", n)
	}
}
