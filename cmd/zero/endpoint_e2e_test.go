package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
	"github.com/zero-dev/zero/internal/workspace/runtime/runtimetest"
)

// wsServer is the part of a workspace server's JSON the tests read.
type wsServer struct {
	ID                int64  `json:"id"`
	Status            string `json:"status"`
	LastError         string `json:"last_error"`
	ListedToolSetHash string `json:"listed_tool_set_hash"`
	Logo              string `json:"logo"`
}

// wsAddToolserver adds, in the owner's browser session, the runtime's test
// server (runtimetest.Toolserver) named name, with args and the secret
// environment variables env; approves and enables it, as reviewed (the
// fingerprint of its preview); and tests it, which records its tools as the
// approved tool set.
func wsAddToolserver(t *testing.T, p *serveProcess, browser *http.Client, headers map[string]string, name string, args []string, env map[string]string) wsServer {
	t.Helper()
	cfg := map[string]any{"name": name, "kind": "stdio", "command": runtimetest.Toolserver(t), "args": args}
	var names []string
	for n := range env {
		names = append(names, n)
	}
	if names != nil {
		cfg["env"] = names
	}
	return wsAdd(t, p, browser, headers, cfg, map[string]any{"env": env})
}

// wsAdd adds the server cfg with secrets in the owner's browser session,
// approves and enables it as reviewed, and tests it, which records its
// tools as the approved tool set.
func wsAdd(t *testing.T, p *serveProcess, browser *http.Client, headers map[string]string, cfg, secrets map[string]any) wsServer {
	t.Helper()
	var preview struct {
		Fingerprint string `json:"fingerprint"`
	}
	getJSON(t, browser, "POST", p.base+"/api/servers/preview", map[string]any{"config": cfg, "secrets": secrets}, headers, &preview)
	var created struct {
		Server wsServer `json:"server"`
	}
	getJSON(t, browser, "POST", p.base+"/api/servers", map[string]any{"config": cfg, "secrets": secrets, "fingerprint": preview.Fingerprint, "enable": true}, headers, &created)
	var tested wsServer
	getJSON(t, browser, "POST", p.base+"/api/servers/"+strconv.FormatInt(created.Server.ID, 10)+"/test", nil, headers, &tested)
	if tested.Status != "ok" {
		t.Fatalf("the Test of %s: %+v", cfg["name"], tested)
	}
	return tested
}

// wsToken creates a bearer token, for every server, in the owner's session.
func wsToken(t *testing.T, p *serveProcess, browser *http.Client, headers map[string]string) string {
	t.Helper()
	var tok struct {
		Token string `json:"token"`
	}
	getJSON(t, browser, "POST", p.base+"/api/tokens", map[string]string{"name": "agent"}, headers, &tok)
	return tok.Token
}

// wsTransport sends a bearer token with every request and keeps every
// answer's body, as the client read it.
type wsTransport struct {
	token string
	mu    sync.Mutex
	seen  bytes.Buffer
}

func (tr *wsTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+tr.token)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = &keptBody{resp.Body, tr}
	}
	return resp, err
}

// bodies returns every answer's body read so far.
func (tr *wsTransport) bodies() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.seen.String()
}

type keptBody struct {
	io.ReadCloser
	tr *wsTransport
}

func (b *keptBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.tr.mu.Lock()
	b.tr.seen.Write(p[:n])
	b.tr.mu.Unlock()
	return n, err
}

// wsMCP connects the Go SDK's client to p's /mcp with token; changed
// receives a value at each notifications/tools/list_changed.
func wsMCP(t *testing.T, p *serveProcess, token string) (*mcp.ClientSession, *wsTransport, chan struct{}) {
	t.Helper()
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "endpoint-e2e", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	tr := &wsTransport{token: token}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.base + "/mcp", HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect to %s/mcp: %v", p.base, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, tr, changed
}

// callTimeout bounds one tools/call of these tests: a call that hangs fails
// the test instead.
const callTimeout = 30 * time.Second

// wsCall calls a tool and returns its text (the error's, for a JSON-RPC
// error) and whether it failed, within callTimeout.
func wsCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if ctx.Err() != nil {
		t.Fatalf("tools/call %s: no answer within %s", name, callTimeout)
	}
	if err != nil {
		return err.Error(), true
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n"), res.IsError
}

// stopServe stops p as a person does (SIGINT) and waits until it has
// exited and closed its stderr.
func stopServe(t *testing.T, p *serveProcess) {
	t.Helper()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.stderr.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		t.Fatal("zero serve did not stop within 30s of SIGINT")
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("zero serve after SIGINT: %v; stderr:\n%s", err, p.stderr.String())
	}
}

// runningProgram returns the ids of the processes that run program (by
// the executable /proc says each runs), on any parent: a server zero serve
// left behind is orphaned when it exits.
func runningProgram(t *testing.T, program string) []string {
	t.Helper()
	exes, _ := filepath.Glob("/proc/[0-9]*/exe")
	var out []string
	for _, exe := range exes {
		if target, err := os.Readlink(exe); err == nil && target == program {
			out = append(out, filepath.Base(filepath.Dir(exe)))
		}
	}
	return out
}

// descendants returns the ids of pid's descendant processes, as
// runtimetest.Children counts a test's own children.
func descendants(t *testing.T, pid string) []string {
	t.Helper()
	tasks, _ := filepath.Glob("/proc/" + pid + "/task/*/children")
	var out []string
	for _, task := range tasks {
		data, _ := os.ReadFile(task)
		for _, child := range strings.Fields(string(data)) {
			out = append(out, child)
			out = append(out, descendants(t, child)...)
		}
	}
	return out
}

// TestEndpointCrashRestarts runs the real zero serve with the runtime's
// test server: a tool call through /mcp during which the server crashes
// gets a clear error, within a bound, that says the server ended during
// the call; the next call starts it again and succeeds. Stopping zero
// serve leaves no server process behind.
func TestEndpointCrashRestarts(t *testing.T) {
	p := startServe(t, nil)
	browser, headers := owner(t, p, p.link)
	tools := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(tools, []byte(`{"echo": {"description": "Echoes."}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	wsAddToolserver(t, p, browser, headers, "crasher", []string{"--tools=" + tools}, nil)
	cs, _, _ := wsMCP(t, p, wsToken(t, p, browser, headers))
	if names := mcptest.ToolNames(t, cs); !slices.Contains(names, "crasher__crash") || !slices.Contains(names, "crasher__echo") {
		t.Fatalf("tools: %v", names)
	}
	first, isErr := wsCall(t, cs, "crasher__pid", nil)
	if isErr {
		t.Fatalf("pid: %s", first)
	}

	start := time.Now()
	text, isErr := wsCall(t, cs, "crasher__crash", nil)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the crashed call took %s", took)
	}
	if !isErr || !strings.Contains(text, "the server ended during the call") || !strings.Contains(text, "exit code 2") {
		t.Errorf("the crashed call: error %v, %q; want an error saying the server ended during the call (exit code 2)", isErr, text)
	}
	if text, isErr := wsCall(t, cs, "crasher__echo", map[string]any{"after": "the crash"}); isErr || !strings.Contains(text, "the crash") {
		t.Fatalf("echo after the crash: error %v, %q", isErr, text)
	}
	second, _ := wsCall(t, cs, "crasher__pid", nil)
	if second == first {
		t.Errorf("the server runs as process %s before and after the crash", first)
	}

	// The process that runs now is zero serve's child, and the one way of
	// counting finds it: after zero serve stops, it finds none.
	program := runtimetest.Toolserver(t)
	if kids := descendants(t, strconv.Itoa(p.cmd.Process.Pid)); !slices.Contains(kids, second) {
		t.Errorf("zero serve's descendants %v lack the server's process %s", kids, second)
	}
	if running := runningProgram(t, program); !slices.Equal(running, []string{second}) {
		t.Errorf("processes running the toolserver: %v, want [%s]", running, second)
	}
	cs.Close()
	stopServe(t, p)
	if left := runningProgram(t, program); left != nil {
		t.Errorf("server processes left after zero serve stopped: %v", left)
	}
	data, err := os.ReadFile(filepath.Join(p.home, "audit.log"))
	if err != nil || !bytes.Contains(data, []byte(`"crashed"`)) {
		t.Errorf("the audit log records no crashed call (%v)", err)
	}
}

// TestEndpointSecretsStayHidden: a server's secret environment variable
// reaches the server (its env tool says it is set, with the value's
// length) and nothing else: not an answer of /mcp (tools/list, results,
// the error of a crash and of a start that failed, whose stderr it is in),
// not zero serve's stderr, not the audit log, not the server's page or its
// API answer, where the Logs show the server's stderr with the value
// replaced by [redacted ...].
func TestEndpointSecretsStayHidden(t *testing.T) {
	b := make([]byte, 16)
	rand.Read(b)
	canary := "canary-" + hex.EncodeToString(b)
	p := startServe(t, nil)
	browser, headers := owner(t, p, p.link)
	tools := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(tools, []byte(`{"echo": {"description": "Echoes."}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := wsAddToolserver(t, p, browser, headers, "keeper", []string{"--tools=" + tools, "--env"}, map[string]string{"CANARY": canary})
	id := strconv.FormatInt(s.ID, 10)
	cs, tr, _ := wsMCP(t, p, wsToken(t, p, browser, headers))
	if names := mcptest.ToolNames(t, cs); !slices.Contains(names, "keeper__env") {
		t.Fatalf("tools: %v", names)
	}
	want := fmt.Sprintf("CANARY: set true, %d bytes", len(canary))
	if text, isErr := wsCall(t, cs, "keeper__env", map[string]any{"name": "CANARY"}); isErr || text != want {
		t.Fatalf("the server's env tool says %q (error %v), want %q", text, isErr, want)
	}
	if text, isErr := wsCall(t, cs, "keeper__echo", map[string]any{"word": "plain"}); isErr || !strings.Contains(text, "plain") {
		t.Fatalf("echo: %q %v", text, isErr)
	}
	if text, isErr := wsCall(t, cs, "keeper__crash", nil); !isErr || !strings.Contains(text, "the server ended during the call") {
		t.Fatalf("crash: %q %v", text, isErr)
	}
	// A start that fails (the tools file is no JSON now) answers with the
	// end of the server's stderr, which names the canary: redacted.
	if err := os.WriteFile(tools, []byte(`not JSON`), 0o600); err != nil {
		t.Fatal(err)
	}
	text, isErr := wsCall(t, cs, "keeper__echo", nil)
	if !isErr || !strings.Contains(text, "my CANARY is [redacted") {
		t.Errorf("a call whose server fails to start: error %v, %q; want the server's stderr, redacted", isErr, text)
	}
	os.WriteFile(tools, []byte(`{"echo": {"description": "Echoes."}}`), 0o600)
	if text, isErr := wsCall(t, cs, "keeper__echo", map[string]any{"word": "again"}); isErr || !strings.Contains(text, "again") {
		t.Fatalf("echo once the server starts again: %q %v", text, isErr)
	}

	page := pageOf(t, browser, p.base+"/servers/"+id)
	logs := page[max(0, strings.Index(page, `id="logs"`)):]
	if !strings.Contains(logs, "my CANARY is [redacted") {
		t.Errorf("the server's Logs do not show its stderr, redacted:\n%s", logs)
	}
	api := pageOf(t, browser, p.base+"/api/servers/"+id)
	cs.Close()
	stopServe(t, p)
	audit, err := os.ReadFile(filepath.Join(p.home, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{
		"the answers of /mcp": tr.bodies(), "zero serve's stderr": p.stderr.String(), "the audit log": string(audit),
		"the server's page": page, "the server's API answer": api,
	} {
		if text == "" {
			t.Errorf("%s: nothing to look in", where)
		}
		for _, form := range []string{canary, base64.StdEncoding.EncodeToString([]byte(canary))} {
			if strings.Contains(text, form) {
				t.Errorf("%s holds the secret value (%q)", where, form)
			}
		}
	}
	if !strings.Contains(tr.bodies(), "my CANARY is [redacted") {
		t.Error("the recorded /mcp answers lack the failed start's error: is the recorder working?")
	}
}

// pageOf GETs url in a session and returns its body, requiring 200.
func pageOf(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, data)
	}
	return string(data)
}

// bearerRequest sends a request with a bearer token, as an agent or a
// script does, and returns the status and the error code of its answer.
func bearerRequest(t *testing.T, method, url, token string, body any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, url, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Error.Code
}
