package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
)

const goodToken = "zt_good"

// seen is one request the test workspace got.
type seen struct {
	method, rpc                  string // HTTP method; JSON-RPC method of a POST's request
	auth, session, version, last string // Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID
}

// fakeWorkspace serves ts as zero serve's /mcp does: the SDK's streamable
// HTTP handler answering with JSON, behind a bearer check that answers 401
// with the workspace's error body.
type fakeWorkspace struct {
	*httptest.Server
	mu   sync.Mutex
	seen []seen
}

func startWorkspace(t *testing.T, ts *testServer, idle time.Duration) *fakeWorkspace {
	t.Helper()
	fw := &fakeWorkspace{}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ts.srv },
		&mcp.StreamableHTTPOptions{JSONResponse: true, SessionTimeout: idle})
	fw.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{method: r.Method, auth: r.Header.Get("Authorization"), session: r.Header.Get("Mcp-Session-Id"),
			version: r.Header.Get("Mcp-Protocol-Version"), last: r.Header.Get("Last-Event-ID")}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var m struct{ Method string }
			json.Unmarshal(body, &m)
			s.rpc = m.Method
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		fw.mu.Lock()
		fw.seen = append(fw.seen, s)
		fw.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+goodToken {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"code":"unauthenticated","message":"a bearer token is required"}}`)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(fw.Close)
	return fw
}

func (fw *fakeWorkspace) requests() []seen {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return append([]seen(nil), fw.seen...)
}

func (fw *fakeWorkspace) workspace(token string) *Workspace {
	return &Workspace{URL: fw.URL + "/mcp", Token: token, retryDelay: 10 * time.Millisecond}
}

// bridged connects ws and relays an SDK client to it.
func bridged(t *testing.T, ws *Workspace) (mcp.Transport, chan error) {
	t.Helper()
	remote, err := ws.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return relayed(t, remote)
}

// TestWorkspaceBridge relays an SDK client (newest protocol: it falls back
// to 2025-11-25, as with zero serve) to an SDK streamable HTTP server that
// answers with JSON: tools are listed and called; the server's
// notifications/tools/list_changed arrive over the event stream the bridge
// opens; the client's notifications/cancelled reach the server; keepalive
// pings keep a session the server would close when idle; the client's
// end ends the session with a DELETE. Every request carries the token;
// every one after initialize the session id and the protocol version.
func TestWorkspaceBridge(t *testing.T) {
	ts := newTestServer()
	fw := startWorkspace(t, ts, 400*time.Millisecond)
	ws := fw.workspace(goodToken)
	ws.KeepAlive = 100 * time.Millisecond
	if err := ws.Probe(context.Background()); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	tr, done := bridged(t, ws)
	cs, changed := client(t, tr, "")
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Errorf("negotiated %q", got)
	}
	if names := mcptest.ToolNames(t, cs); strings.Join(names, ",") != "echo,wait" {
		t.Errorf("tools: %v", names)
	}
	echo(t, cs, "one")
	time.Sleep(time.Second) // over twice the server's idle timeout
	echo(t, cs, "after a second idle")
	ts.addLate()
	wait(t, changed, "notifications/tools/list_changed")
	cancelWait(t, ts, cs)
	cs.Close()
	if err := ended(t, done); err != nil {
		t.Errorf("Relay: %v", err)
	}

	session := ""
	var pings, gets, deletes int
	for i, s := range fw.requests() {
		if s.auth != "Bearer "+goodToken {
			t.Errorf("request %d (%s %s) carried Authorization %q", i, s.method, s.rpc, s.auth)
		}
		switch {
		case s.method == http.MethodPost && (s.rpc == "server/discover" || s.rpc == "initialize"):
			continue
		case s.method == http.MethodGet && s.session == "":
			continue // Probe
		}
		if session == "" {
			session = s.session
		}
		if s.session == "" || s.session != session || s.version != "2025-11-25" {
			t.Errorf("request %d (%s %s): session %q, version %q; want %q and 2025-11-25", i, s.method, s.rpc, s.session, s.version, session)
		}
		switch {
		case s.rpc == "ping":
			pings++
		case s.method == http.MethodGet:
			gets++
		case s.method == http.MethodDelete:
			deletes++
		}
	}
	if session == "" || pings < 3 || gets == 0 || deletes != 1 {
		t.Errorf("session %q, %d pings, %d event streams, %d DELETEs; want pings, a stream and one DELETE", session, pings, gets, deletes)
	}
}

// TestWorkspaceTokenRefused: a token the workspace refuses is
// ErrTokenRefused, from Probe and from the relay, and the client's
// initialize gets an error answer instead of waiting.
func TestWorkspaceTokenRefused(t *testing.T) {
	fw := startWorkspace(t, newTestServer(), 0)
	ws := fw.workspace("zt_revoked")
	if err := ws.Probe(context.Background()); !errors.Is(err, ErrTokenRefused) {
		t.Errorf("Probe: %v, want ErrTokenRefused", err)
	}
	tr, done := bridged(t, ws)
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if _, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}); err == nil || !strings.Contains(err.Error(), "refused the token") {
		t.Errorf("connect with a refused token: %v", err)
	}
	if err := ended(t, done); !errors.Is(err, ErrTokenRefused) {
		t.Errorf("Relay: %v, want ErrTokenRefused", err)
	}
}

// TestWorkspaceUnreachable: nothing listening is ErrUnreachable, from
// Probe and from the relay; the client's initialize gets an error answer.
func TestWorkspaceUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ws := &Workspace{URL: "http://" + addr + "/mcp", Token: goodToken}
	if err := ws.Probe(context.Background()); !errors.Is(err, ErrUnreachable) {
		t.Errorf("Probe: %v, want ErrUnreachable", err)
	}
	tr, done := bridged(t, ws)
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	// 2025-11-25: initialize is the first call (the newest protocol's
	// server/discover gets the error answer, and the client then finds
	// the relay ended).
	if _, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}); err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("connect to nothing: %v", err)
	}
	if err := ended(t, done); !errors.Is(err, ErrUnreachable) {
		t.Errorf("Relay: %v, want ErrUnreachable", err)
	}
}

// TestWorkspaceEnds: the workspace closing the session (a revoked token's
// sessions, an idle one) ends the relay with ErrSessionEnded, and the
// workspace stopping ends it with ErrUnreachable, each within a bound and
// with no client message needed to notice.
func TestWorkspaceEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(*testServer, *fakeWorkspace)
		want error
	}{
		{"session closed", func(ts *testServer, _ *fakeWorkspace) {
			for ss := range ts.srv.Sessions() {
				ss.Close()
			}
		}, ErrSessionEnded},
		{"workspace stopped", func(_ *testServer, fw *fakeWorkspace) {
			fw.CloseClientConnections()
			fw.Close()
		}, ErrUnreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer()
			fw := startWorkspace(t, ts, 0)
			tr, done := bridged(t, fw.workspace(goodToken))
			cs, _ := client(t, tr, "2025-11-25")
			defer cs.Close()
			echo(t, cs, "one")
			deadline := time.Now().Add(bound)
			for !streaming(fw) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			tc.end(ts, fw)
			if err := ended(t, done); !errors.Is(err, tc.want) {
				t.Errorf("Relay: %v, want %v", err, tc.want)
			}
		})
	}
}

func streaming(fw *fakeWorkspace) bool {
	for _, s := range fw.requests() {
		if s.method == http.MethodGet && s.session != "" {
			return true
		}
	}
	return false
}

// TestWorkspaceStaysLocal: the token goes to loopback only, and never
// follows a redirect.
func TestWorkspaceStaysLocal(t *testing.T) {
	for _, u := range []string{"http://example.com/mcp", "http://10.0.0.1:7077/mcp", "ftp://127.0.0.1/mcp", "127.0.0.1:7077"} {
		ws := &Workspace{URL: u, Token: goodToken}
		if err := ws.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "on loopback") {
			t.Errorf("Probe of %s: %v", u, err)
		}
		if _, err := ws.Connect(context.Background()); err == nil {
			t.Errorf("Connect to %s succeeded", u)
		}
	}
	var followed bool
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed = true }))
	defer target.Close()
	redirect := httptest.NewServer(http.RedirectHandler(target.URL+"/mcp", http.StatusTemporaryRedirect))
	defer redirect.Close()
	ws := &Workspace{URL: redirect.URL + "/mcp", Token: goodToken}
	if err := ws.Probe(context.Background()); !errors.Is(err, ErrNotWorkspace) {
		t.Errorf("Probe of a redirect: %v, want ErrNotWorkspace", err)
	}
	if followed {
		t.Error("the redirect was followed")
	}
}
