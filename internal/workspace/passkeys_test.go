package workspace

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/workspace/passkeys"
	"github.com/zero-dev/zero/internal/workspace/passkeys/passkeytest"
	"github.com/zero-dev/zero/internal/workspace/servers"
)

// assertion asks the workspace for a challenge for exactly (method, path,
// body as JSON) and has a sign it: the Zero-Passkey header's value, or ""
// when the request needs no passkey.
func (c *client) assertion(a *passkeytest.Authenticator, method, path string, body any) string {
	c.ts.t.Helper()
	text := ""
	if body != nil {
		b, _ := json.Marshal(body)
		text = string(b)
	}
	var ch challengeAnswer
	c.must("POST", "/api/passkeys/challenge", challengeRequest{Method: method, Path: path, Body: &text}, 200, &ch)
	if !ch.Needed {
		return ""
	}
	cred, err := a.Get(ch.Options)
	if err != nil {
		c.ts.t.Fatalf("the authenticator: %v", err)
	}
	raw, _ := json.Marshal(map[string]any{"nonce": ch.Nonce, "credential": json.RawMessage(cred)})
	return base64.RawURLEncoding.EncodeToString(raw)
}

// withPasskey sends a request with an assertion.
func withPasskey(header string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set(passkeyHeader, header) }
}

// confirmed sends a request confirmed by a's passkey, when it needs one.
func (c *client) confirmed(a *passkeytest.Authenticator, method, path string, body any) (int, []byte) {
	c.ts.t.Helper()
	h := c.assertion(a, method, path, body)
	if h == "" {
		return c.do(method, path, body)
	}
	return c.do(method, path, body, withPasskey(h))
}

// registerPasskey adds a passkey of a's for c, through the API.
func (c *client) registerPasskey(a *passkeytest.Authenticator, name string) passkeys.Passkey {
	c.ts.t.Helper()
	return c.registerPasskeyBy(a, a, name)
}

// registerPasskeyBy adds a passkey of a's for c, confirmed by by's, which
// c has already, as a second passkey must be.
func (c *client) registerPasskeyBy(a, by *passkeytest.Authenticator, name string) passkeys.Passkey {
	c.ts.t.Helper()
	var begin struct {
		Nonce   string          `json:"nonce"`
		Options json.RawMessage `json:"options"`
	}
	c.must("POST", "/api/passkeys/registrations", map[string]any{}, 200, &begin)
	cred, err := a.Create(begin.Options)
	if err != nil {
		c.ts.t.Fatalf("the authenticator: %v", err)
	}
	body := map[string]any{"nonce": begin.Nonce, "name": name, "credential": json.RawMessage(cred)}
	st, data := c.confirmed(by, "POST", "/api/passkeys", body)
	var pk passkeys.Passkey
	if st != 201 || json.Unmarshal(data, &pk) != nil {
		c.ts.t.Fatalf("register a passkey: %d %s", st, data)
	}
	return pk
}

// passkeyRefusals counts the access.refused records of reason passkey.
func (ts *testServer) passkeyRefusals() int {
	ts.t.Helper()
	records, err := ts.w.audit.ReadAll()
	if err != nil {
		ts.t.Fatal(err)
	}
	n := 0
	for _, r := range records {
		if r.Action == "access.refused" && r.Detail["reason"] == "passkey" {
			n++
		}
	}
	return n
}

// TestPasskeyBindsTheApproval: once the owner has a passkey, approving
// needs an assertion made for that exact approval. Without one, with one
// made for server A sent for server B, with one made for A's fingerprint
// sent with another fingerprint, and with one used already, the approval
// is refused (403), audited as access.refused with reason passkey, and the
// server stays unapproved; one made for A's old fingerprint after A
// changed confirms a request the fingerprint check then refuses. The
// approval an assertion confirms is recorded with its credential.
func TestPasskeyBindsTheApproval(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	key := passkeytest.New(ts.base)
	var c struct {
		Server servers.Server `json:"server"`
	}
	b.must("POST", "/api/servers", map[string]any{"config": stdioConfig(t, "alpha")}, 201, &c)
	alpha := c.Server
	b.must("POST", "/api/servers", map[string]any{"config": stdioConfig(t, "beta")}, 201, &c)
	beta := c.Server

	// Before any passkey, approvals need none.
	var pl passkeyList
	b.must("GET", "/api/passkeys", nil, 200, &pl)
	if pl.Required || len(pl.Passkeys) != 0 {
		t.Fatalf("before a passkey: %+v", pl)
	}
	pk := b.registerPasskey(key, "laptop")
	b.must("GET", "/api/passkeys", nil, 200, &pl)
	if !pl.Required || len(pl.Passkeys) != 1 || pl.Passkeys[0].Name != "laptop" {
		t.Fatalf("after a passkey: %+v", pl)
	}

	approveA := map[string]any{"fingerprint": alpha.Fingerprint}
	pathA, pathB := "/api/servers/"+itoa(alpha.ID)+"/approve", "/api/servers/"+itoa(beta.ID)+"/approve"
	refusals := ts.passkeyRefusals()
	expectRefused := func(what string, st int, data []byte, code string) {
		t.Helper()
		if st != 403 || errorCode(data) != code {
			t.Errorf("%s: %d %s, want 403 %s", what, st, data, code)
		}
		if n := ts.passkeyRefusals(); n != refusals+1 {
			t.Errorf("%s: %d refusals audited, want 1", what, n-refusals)
		}
		refusals = ts.passkeyRefusals()
	}
	st, data := b.do("POST", pathA, approveA)
	expectRefused("no assertion", st, data, "passkey_required")

	forA := b.assertion(key, "POST", pathA, approveA)
	st, data = b.do("POST", pathB, map[string]any{"fingerprint": beta.Fingerprint}, withPasskey(forA))
	expectRefused("A's assertion for B", st, data, "passkey_refused")
	// The refused use consumed it: it is no good for A either.
	st, data = b.do("POST", pathA, approveA, withPasskey(forA))
	expectRefused("an assertion used once", st, data, "passkey_refused")

	forA = b.assertion(key, "POST", pathA, approveA)
	st, data = b.do("POST", pathA, map[string]any{"fingerprint": alpha.Fingerprint, "enable": true}, withPasskey(forA))
	expectRefused("A's assertion with another body", st, data, "passkey_refused")

	// A changes (approved anew, here by the manager itself): an assertion
	// made for its old fingerprint confirms a request whose approval is
	// refused as stale, and A keeps the configuration approved last.
	forOld := b.assertion(key, "POST", pathA, approveA)
	changed := stdioConfig(t, "alpha", "EXTRA")
	newFP := ts.fingerprint(alpha.ID, changed)
	if _, err := ts.w.servers.Update(context.Background(), "user:owner", alpha.ID, changed, servers.Secrets{}, newFP, alpha.Fingerprint); err != nil {
		t.Fatal(err)
	}
	if st, data := b.do("POST", pathA, approveA, withPasskey(forOld)); st != 409 || errorCode(data) != "approval_required" {
		t.Errorf("an assertion for A's old fingerprint: %d %s", st, data)
	}
	var now servers.Server
	b.must("GET", "/api/servers/"+itoa(alpha.ID), nil, 200, &now)
	if now.Fingerprint != newFP {
		t.Errorf("A's fingerprint is %s, want the one approved last, %s", now.Fingerprint, newFP)
	}
	b.must("GET", "/api/servers/"+itoa(beta.ID), nil, 200, &now)
	if now.Approved {
		t.Fatal("B was approved by a refused request")
	}

	// The right assertion approves B, and the record names the credential.
	approveB := map[string]any{"fingerprint": beta.Fingerprint}
	if st, data := b.confirmed(key, "POST", pathB, approveB); st != 200 {
		t.Fatalf("the approval with its assertion: %d %s", st, data)
	}
	b.must("GET", "/api/servers/"+itoa(beta.ID), nil, 200, &now)
	if !now.Approved {
		t.Fatal("not approved")
	}
	records, err := ts.w.audit.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(records, func(r audit.Record) bool { return r.Action == "server.approve" && r.Target == "server:"+itoa(beta.ID) })
	if i < 0 || records[i].Actor != "user:owner passkey:"+shortCredential(pk.CredentialID) {
		t.Errorf("the approval's record does not name the credential %s: %+v", pk.CredentialID, records)
	}

	// A credential never registered is refused.
	stranger := passkeytest.New(ts.base)
	if _, err := stranger.Create(mustRegistrationOptions(t, b)); err != nil {
		t.Fatal(err)
	}
	var ch challengeAnswer
	text := `{"fingerprint":"x"}`
	b.must("POST", "/api/passkeys/challenge", challengeRequest{Method: "POST", Path: pathA, Body: &text}, 200, &ch)
	if _, err := stranger.Get(ch.Options); err == nil {
		t.Error("the challenge lets a credential never registered answer")
	}
	stranger.AnyCredential = true // an attacker's authenticator answers anyway
	cred, err := stranger.Get(ch.Options)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"nonce": ch.Nonce, "credential": json.RawMessage(cred)})
	st, data = b.do("POST", pathA, map[string]any{"fingerprint": "x"}, withPasskey(base64.RawURLEncoding.EncodeToString(raw)))
	expectRefused("a credential never registered", st, data, "passkey_refused")
}

// mustRegistrationOptions begins a registration that is never finished.
func mustRegistrationOptions(t *testing.T, c *client) []byte {
	t.Helper()
	var begin struct {
		Options json.RawMessage `json:"options"`
	}
	c.must("POST", "/api/passkeys/registrations", map[string]any{}, 200, &begin)
	return begin.Options
}

// TestPasskeyRoutesInTheTable walks docs/api.md: with approvals needing a
// passkey, every route it documents for a browser owner refuses a change
// sent without an assertion (403 passkey_required), and the route the
// workspace serves for it is one the gate guards.
func TestPasskeyRoutesInTheTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	ts := start(t, Options{RegistryURL: "http://127.0.0.1:1"})
	b := ts.browser
	b.registerPasskey(passkeytest.New(ts.base), "key")
	row := regexp.MustCompile("(?m)^\\| (`[^|]+) \\| ([^|]+) \\|")
	item := regexp.MustCompile("`((?:POST|PUT|DELETE) /[^` ]+)`")
	value := regexp.MustCompile(`\{[a-z_]+\}`)
	var routes [][2]string
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		if access := strings.TrimSpace(m[2]); strings.Contains(access, "browser owner") {
			for _, it := range item.FindAllStringSubmatch(m[1], -1) {
				routes = append(routes, [2]string{it[1], access})
			}
		}
	}
	checked := 0
	for _, ra := range routes {
		route, access := ra[0], ra[1]
		method, path, _ := strings.Cut(route, " ")
		path = value.ReplaceAllString(path, "1")
		var body any
		var edit []func(*http.Request)
		switch route { // an approval when it carries a fingerprint
		case "POST /api/servers":
			body = map[string]any{"config": stdioConfig(t, "table"), "fingerprint": "sha256:x"}
		case "POST /servers/create":
			form := url.Values{"csrf_token": {b.csrf}, "config": {encodeConfig(stdioConfig(t, "table"))}, "fingerprint": {"sha256:x"}}.Encode()
			edit = append(edit, func(r *http.Request) {
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				r.Body, r.ContentLength = io.NopCloser(strings.NewReader(form)), int64(len(form))
			})
		}
		st, data := b.do(method, path, body, edit...)
		if !strings.HasPrefix(path, "/api/") { // a page: an error page that says so
			if st != 403 || !strings.Contains(string(data), "needs your passkey") {
				t.Errorf("%s (%s) without an assertion: %d %s", route, access, st, data)
			}
		} else if st != 403 || errorCode(data) != "passkey_required" {
			t.Errorf("%s (%s) without an assertion: %d %s", route, access, st, data)
		}
		checked++
	}
	if checked < 40 {
		t.Errorf("only %d approval routes found in docs/api.md", checked)
	}
}

// TestPasskeyManagement: a second passkey, a new name and a removal each
// need an assertion once a person has a passkey; approvals need one until
// the owner turns the setting off, itself confirmed; and a passkey that
// was removed confirms nothing.
func TestPasskeyManagement(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	first, second := passkeytest.New(ts.base), passkeytest.New(ts.base)
	pk1 := b.registerPasskey(first, "first")
	pk2 := b.registerPasskeyBy(second, first, "second")
	var pl passkeyList
	b.must("GET", "/api/passkeys", nil, 200, &pl)
	if len(pl.Passkeys) != 2 {
		t.Fatalf("passkeys: %+v", pl)
	}
	rename := map[string]string{"name": "renamed"}
	if st, data := b.do("PUT", "/api/passkeys/"+itoa(pk2.ID), rename); st != 403 || errorCode(data) != "passkey_required" {
		t.Errorf("a rename without an assertion: %d %s", st, data)
	}
	if st, data := b.confirmed(second, "PUT", "/api/passkeys/"+itoa(pk2.ID), rename); st != 200 {
		t.Errorf("a rename: %d %s", st, data)
	}
	if st, data := b.do("DELETE", "/api/passkeys/"+itoa(pk1.ID), nil); st != 403 || errorCode(data) != "passkey_required" {
		t.Errorf("a removal without an assertion: %d %s", st, data)
	}
	if st, data := b.confirmed(second, "DELETE", "/api/passkeys/"+itoa(pk1.ID), nil); st != 200 {
		t.Errorf("a removal: %d %s", st, data)
	}
	// The removed passkey's authenticator can no longer confirm anything.
	var ch challengeAnswer
	text := `{"name":"x"}`
	b.must("POST", "/api/passkeys/challenge", challengeRequest{Method: "PUT", Path: "/api/passkeys/" + itoa(pk2.ID), Body: &text}, 200, &ch)
	if _, err := first.Get(ch.Options); err == nil {
		t.Error("the removed passkey is still offered to the authenticator")
	}

	off := map[string]bool{"required": false}
	if st, data := b.do("PUT", "/api/passkeys/settings", off); st != 403 || errorCode(data) != "passkey_required" {
		t.Errorf("turning the setting off without an assertion: %d %s", st, data)
	}
	if st, data := b.confirmed(second, "PUT", "/api/passkeys/settings", off); st != 200 {
		t.Fatalf("turning the setting off: %d %s", st, data)
	}
	var c struct {
		Server servers.Server `json:"server"`
	}
	b.must("POST", "/api/servers", map[string]any{"config": stdioConfig(t, "s")}, 201, &c)
	b.must("POST", "/api/servers/"+itoa(c.Server.ID)+"/approve", map[string]any{"fingerprint": c.Server.Fingerprint}, 200, nil)
}

// TestPasskeysInTeamMode: a member's own passkeys are theirs to manage
// and never make the owner's approvals need one; only the owner's do.
func TestPasskeysInTeamMode(t *testing.T) {
	ts := start(t, Options{Team: true})
	b := ts.browser
	var member struct {
		ID int64 `json:"id"`
	}
	b.must("POST", "/api/users", map[string]string{"name": "mia", "role": "member"}, 201, &member)
	mia := ts.login(member.ID)
	mine := mia.registerPasskey(passkeytest.New(ts.base), "mia's")
	var pl passkeyList
	b.must("GET", "/api/passkeys", nil, 200, &pl)
	if pl.Required || len(pl.Passkeys) != 0 {
		t.Fatalf("the owner's view after a member's passkey: %+v", pl)
	}
	if st, data := b.do("DELETE", "/api/passkeys/"+itoa(mine.ID), nil); st != 404 {
		t.Errorf("the owner removed a member's passkey: %d %s", st, data)
	}
	if st, data := mia.do("PUT", "/api/passkeys/settings", map[string]bool{"required": false}); st != 403 || errorCode(data) != "owner_required" {
		t.Errorf("a member set the setting: %d %s", st, data)
	}
}

// TestResetPasskeys: zero login --reset-passkeys's work removes every
// passkey and the setting, and the audit log records it; it refuses while
// a zero serve holds the home.
func TestResetPasskeys(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	o := Options{Home: home}
	ts := startOn(t, o)
	ts.browser.registerPasskey(passkeytest.New(ts.base), "key")
	lock, err := lockServe(home)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ResetPasskeys(context.Background(), home, ""); err == nil || !strings.Contains(err.Error(), "stop it") {
		t.Errorf("a reset while a zero serve runs: %v", err)
	}
	lock.release()
	ts.w.audit.Close() // the serving workspace's hold on the log, as a stopped zero serve would
	n, err := ResetPasskeys(context.Background(), home, "")
	if err != nil || n != 1 {
		t.Fatalf("reset: %d %v", n, err)
	}
	log, err := audit.Open(filepath.Join(home, auditFile))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	records, err := log.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if last := records[len(records)-1]; last.Action != "passkey.reset" || last.Actor != "shell" || last.Detail["removed"] != "1" {
		t.Errorf("the last record: %+v", last)
	}
	if req, err := ts.w.passkeys.Required(context.Background(), ts.w.ownerID); err != nil || req {
		t.Errorf("after the reset, approvals need a passkey: %v %v", req, err)
	}
}
