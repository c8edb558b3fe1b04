package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/database/databasetest"
	"github.com/zero-dev/zero/internal/workspace/servers"
)

// replica is one `zero serve --database` of several, and an owner's
// browser session on it.
type replica struct {
	*serveProcess
	browser *http.Client
	csrf    string
}

// startReplicas starts n `zero serve` processes on one PostgreSQL, each
// with its own $ZERO_HOME and the same secrets key file, and signs the
// owner in on each with the link it printed.
func startReplicas(t *testing.T, n int) ([]*replica, string) {
	t.Helper()
	env, dsn := replicaEnv(t)
	var out []*replica
	for range n {
		out = append(out, startReplica(t, env))
	}
	return out, dsn
}

// replicaEnv is the environment of replicas on one new PostgreSQL, and
// its DSN.
func replicaEnv(t *testing.T) ([]string, string) {
	t.Helper()
	dsn := databasetest.Postgres(t)
	key := filepath.Join(t.TempDir(), "secrets.key")
	k := make([]byte, 32)
	rand.Read(k)
	os.WriteFile(key, k, 0o600)
	return []string{"ZERO_DATABASE_URL=" + dsn, "ZERO_SECRETS_KEY_FILE=" + key}, dsn
}

// startReplica starts one replica with env and signs the owner in on it.
func startReplica(t *testing.T, env []string) *replica {
	t.Helper()
	p := startServe(t, env)
	jar, _ := cookiejar.New(nil)
	r := &replica{serveProcess: p, browser: &http.Client{Jar: jar}}
	resp, err := r.browser.Get(p.link)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("login link of %s: %v %v", p.base, resp, err)
	}
	resp.Body.Close()
	var session struct {
		CSRF string `json:"csrf_token"`
	}
	getJSON(t, r.browser, "GET", p.base+"/api/session", nil, nil, &session)
	r.csrf = session.CSRF
	return r
}

// api sends an owner's API request to the replica and returns its status,
// decoding a 2xx answer into out.
func (r *replica) api(t *testing.T, method, path string, body, out any) {
	t.Helper()
	getJSON(t, r.browser, method, r.base+path, body,
		map[string]string{"X-CSRF-Token": r.csrf, "Sec-Fetch-Site": "same-origin", "Origin": r.base}, out)
}

// status is api for a request expected to fail: its status and body.
func (r *replica) status(t *testing.T, method, path string, body any) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, r.base+path, strings.NewReader(mustJSON(body)))
	req.Header.Set("X-CSRF-Token", r.csrf)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", r.base)
	resp, err := r.browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// TestServeReplicasShareOnePostgres: two `zero serve` replicas on one
// PostgreSQL. A server approved on one, with a secret, is approved,
// enabled and runnable on the other, which opens the secret with the
// shared key; after an edit on one, approving the stale fingerprint is
// refused on both; a token revoked on one is refused on both; a login
// link used on both at once opens one session; a replica with another
// secrets key is refused; tokens made on both at once leave
// one audit chain that `zero audit verify --database` checks whole.
func TestServeReplicasShareOnePostgres(t *testing.T) {
	rs, dsn := startReplicas(t, 2)
	a, b := rs[0], rs[1]
	cfg := servers.Config{Name: "env", Kind: "stdio", Command: buildEnvserver(t), Env: []string{"API_KEY"}}
	var p servers.Preview
	a.api(t, "POST", "/api/servers/preview", map[string]any{"config": cfg}, &p)
	var created struct {
		Server servers.Server `json:"server"`
	}
	a.api(t, "POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": p.Fingerprint, "enable": true,
		"secrets": map[string]any{"env": map[string]string{"API_KEY": "shared-secret"}}}, &created)
	id := fmt.Sprint(created.Server.ID)

	var s servers.Server
	b.api(t, "GET", "/api/servers/"+id, nil, &s)
	if !s.Approved || !s.Enabled || s.ApprovedFingerprint != p.Fingerprint {
		t.Fatalf("on the other replica, the server approved on the first: %+v", s)
	}
	b.api(t, "POST", "/api/servers/"+id+"/test", nil, &s)
	sum := sha256.Sum256([]byte("shared-secret"))
	if len(s.Tools) != 1 || !strings.Contains(s.Tools[0].Description, "API_KEY="+hex.EncodeToString(sum[:4])) {
		t.Fatalf("the other replica did not run the server with its secret: %+v", s.Tools)
	}

	// An edit on b: the fingerprint a approved is stale on both.
	edited := cfg
	edited.Args = []string{"--edited"}
	var e servers.Preview
	b.api(t, "POST", "/api/servers/preview", map[string]any{"config": edited, "id": created.Server.ID}, &e)
	b.api(t, "PUT", "/api/servers/"+id, map[string]any{"config": edited, "fingerprint": e.Fingerprint, "base_fingerprint": p.Fingerprint}, &s)
	for _, r := range rs {
		if code, body := r.status(t, "POST", "/api/servers/"+id+"/approve", map[string]string{"fingerprint": p.Fingerprint}); code != 409 {
			t.Errorf("%s approved a stale fingerprint: %d %s", r.base, code, body)
		}
	}
	a.api(t, "GET", "/api/servers/"+id, nil, &s)
	if s.ApprovedFingerprint != e.Fingerprint {
		t.Errorf("after the edit on the other replica: approved %q, want %q", s.ApprovedFingerprint, e.Fingerprint)
	}

	// A token made on a, used there, then revoked on b, is refused on a.
	var tok struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	a.api(t, "POST", "/api/tokens", map[string]string{"name": "agent"}, &tok)
	bearer := func(r *replica) int {
		req, _ := http.NewRequest("GET", r.base+"/api/servers", nil)
		req.Header.Set("Authorization", "Bearer "+tok.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := bearer(a); code != 200 {
		t.Fatalf("a new token: %d", code)
	}
	b.api(t, "DELETE", fmt.Sprint("/api/tokens/", tok.ID), nil, &map[string]any{})
	for _, r := range rs {
		if code := bearer(r); code != 401 {
			t.Errorf("%s took a token revoked on the other replica: %d", r.base, code)
		}
	}

	// zero login on a's home makes a link in the shared database; used on
	// both replicas at once, it opens one session.
	login := exec.Command(zeroBinary(t), "login")
	login.Env = append(os.Environ(), "ZERO_HOME="+a.home, "ZERO_DATABASE_URL="+dsn)
	linkOut, err := login.Output()
	link := strings.TrimSpace(string(linkOut))
	if err != nil || !strings.HasPrefix(link, a.base+"/login?token=") {
		t.Fatalf("zero login: %v %q", err, linkOut)
	}
	var signedIn sync.WaitGroup
	codes := make([]int, 2)
	for i, r := range rs {
		signedIn.Go(func() {
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := c.Get(r.base + strings.TrimPrefix(link, a.base))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if len(jar.Cookies(resp.Request.URL)) > 0 {
				codes[i] = 1
			}
		})
	}
	signedIn.Wait()
	if codes[0]+codes[1] != 1 {
		t.Errorf("one login link used on both replicas at once opened %d sessions, want 1", codes[0]+codes[1])
	}

	// A third replica without the shared key (so with a key of its own) is
	// refused before it serves.
	third := exec.Command(zeroBinary(t), "serve", "--addr", "127.0.0.1:0")
	third.Env = append(os.Environ(), "ZERO_HOME="+filepath.Join(t.TempDir(), "third"), "ZERO_DATABASE_URL="+dsn)
	if out, err := third.CombinedOutput(); err == nil || !strings.Contains(string(out), "give every replica of a database the same ZERO_SECRETS_KEY_FILE") {
		t.Errorf("a replica with another secrets key: %v\n%s", err, out)
	}

	// Writes from both at once: one chain.
	var wg sync.WaitGroup
	const each = 25
	for i, r := range rs {
		for j := range each {
			wg.Go(func() {
				code, body := r.status(t, "POST", "/api/tokens", map[string]string{"name": fmt.Sprintf("t-%d-%d", i, j)})
				if code != 201 && code != 200 {
					t.Errorf("token %d-%d: %d %s", i, j, code, body)
				}
			})
		}
	}
	wg.Wait()
	out, err := exec.Command(zeroBinary(t), "audit", "verify", "--database", dsn).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "the chain verifies") {
		t.Fatalf("zero audit verify --database: %v\n%s", err, out)
	}
	verify := exec.Command(zeroBinary(t), "audit", "verify") // the database zero serve was given
	verify.Env = append(os.Environ(), "ZERO_HOME="+a.home, "ZERO_DATABASE_URL="+dsn)
	if out, err := verify.CombinedOutput(); err != nil || !strings.Contains(string(out), "audit_records: ") {
		t.Fatalf("zero audit verify with ZERO_DATABASE_URL: %v\n%s", err, out)
	}
	var records []struct {
		Action string `json:"action"`
	}
	b.api(t, "GET", "/api/audit", nil, &records)
	tokens := 0
	for _, r := range records {
		if r.Action == "token.create" {
			tokens++
		}
	}
	if tokens != 2*each+1 { // and the one revoked
		t.Errorf("%d token.create records in the chain, want %d", tokens, 2*each+1)
	}
}

func mustJSON(v any) string {
	if v == nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestReplicasEndpointFollowsTheOther: an agent's /mcp session on one
// replica calls a server approved on the other; when the other disables it,
// the next call on the first is refused, and once it is enabled again the
// call runs: neither replica keeps what the other can change.
func TestReplicasEndpointFollowsTheOther(t *testing.T) {
	rs, _ := startReplicas(t, 2)
	a, b := rs[0], rs[1]
	headers := map[string]string{"X-CSRF-Token": a.csrf, "Sec-Fetch-Site": "same-origin", "Origin": a.base}
	tools := filepath.Join(t.TempDir(), "tools.json")
	os.WriteFile(tools, []byte(`{"echo": {"description": "Echoes."}}`), 0o600)
	srv := wsAddToolserver(t, a.serveProcess, a.browser, headers, "echoer", []string{"--tools=" + tools}, nil)
	cs, _, _ := wsMCP(t, b.serveProcess, wsToken(t, a.serveProcess, a.browser, headers))
	defer cs.Close()
	if text, isErr := wsCall(t, cs, "echoer__echo", map[string]any{"say": "first"}); isErr || !strings.Contains(text, "first") {
		t.Fatalf("a call on the other replica: error %v, %q", isErr, text)
	}
	id := fmt.Sprint(srv.ID)
	a.api(t, "POST", "/api/servers/"+id+"/disable", nil, &map[string]any{})
	if text, isErr := wsCall(t, cs, "echoer__echo", map[string]any{"say": "second"}); !isErr || strings.Contains(text, "second") {
		t.Errorf("a call after the other replica disabled the server: error %v, %q", isErr, text)
	}
	var s servers.Server
	a.api(t, "GET", "/api/servers/"+id, nil, &s)
	a.api(t, "POST", "/api/servers/"+id+"/enable", map[string]string{"fingerprint": s.ApprovedFingerprint}, &s)
	if text, isErr := wsCall(t, cs, "echoer__echo", map[string]any{"say": "third"}); isErr || !strings.Contains(text, "third") {
		t.Errorf("a call after the other replica enabled the server again: error %v, %q", isErr, text)
	}
}

// TestReplicasEndpointListsWhatTheOtherChanged: issue 28's stale replicas.
// A token's /mcp session on replica b, which listed the tools once, is told
// (notifications/tools/list_changed) of a server that replica a approves,
// enables and tests, and lists it; so does a new session of the same token
// on b. After a renames a server, b lists and runs it under its new name
// only, and refuses the old one.
func TestReplicasEndpointListsWhatTheOtherChanged(t *testing.T) {
	rs, _ := startReplicas(t, 2)
	a, b := rs[0], rs[1]
	headers := map[string]string{"X-CSRF-Token": a.csrf, "Sec-Fetch-Site": "same-origin", "Origin": a.base}
	tools := filepath.Join(t.TempDir(), "tools.json")
	os.WriteFile(tools, []byte(`{"echo": {"description": "Echoes."}}`), 0o600)
	first := wsAddToolserver(t, a.serveProcess, a.browser, headers, "first", []string{"--tools=" + tools}, nil)
	token := wsToken(t, a.serveProcess, a.browser, headers)
	cs, _, changed := wsMCP(t, b.serveProcess, token)
	names := func(cs *mcp.ClientSession) []string {
		t.Helper()
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range res.Tools {
			out = append(out, tool.Name)
		}
		return out
	}
	if got := names(cs); !slices.Contains(got, "first__echo") {
		t.Fatalf("b's first listing: %v", got)
	}
	for len(changed) > 0 {
		<-changed
	}

	wsAddToolserver(t, a.serveProcess, a.browser, headers, "second", []string{"--tools=" + tools}, nil)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Error("b's session was not told of the server a added")
	}
	if got := names(cs); !slices.Contains(got, "second__echo") {
		t.Errorf("b's session does not list the server a added: %v", got)
	}
	fresh, _, _ := wsMCP(t, b.serveProcess, token)
	if got := names(fresh); !slices.Contains(got, "second__echo") {
		t.Errorf("a new session on b does not list the server a added: %v", got)
	}

	var s servers.Server
	a.api(t, "GET", fmt.Sprint("/api/servers/", first.ID), nil, &s)
	renamed := s.Config
	renamed.Name = "renamed"
	var p servers.Preview
	a.api(t, "POST", "/api/servers/preview", map[string]any{"config": renamed, "id": first.ID}, &p)
	a.api(t, "PUT", fmt.Sprint("/api/servers/", first.ID), map[string]any{"config": renamed, "fingerprint": p.Fingerprint,
		"base_fingerprint": s.ApprovedFingerprint}, &s)
	if s.Config.Name != "renamed" || !s.Enabled {
		t.Fatalf("the rename on a: %+v", s)
	}
	if got := names(cs); slices.Contains(got, "first__echo") || !slices.Contains(got, "renamed__echo") {
		t.Errorf("b lists after a's rename: %v", got)
	}
	if text, isErr := wsCall(t, cs, "first__echo", map[string]any{"say": "old"}); !isErr || strings.Contains(text, "old") {
		t.Errorf("b ran the old name after a's rename: %q", text)
	}
	if text, isErr := wsCall(t, cs, "renamed__echo", map[string]any{"say": "new"}); isErr || !strings.Contains(text, "new") {
		t.Errorf("b refused the new name after a's rename: %q", text)
	}
}
