package children

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/hiddentext"
	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/workspace/runtime/runtimetest"
)

// fixture is a workspace to run children in, and a check, at the end of
// the test, that none is left.
type fixture struct {
	t     *testing.T
	dir   string
	roots *fsroot.Set
	ctx   context.Context
	env   map[string]string
	asked atomic.Int32 // Getenv calls
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	work := filepath.Join(dir, "workspace")
	os.Mkdir(work, 0o700)
	roots, err := fsroot.Open([]string{work})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	f := &fixture{t: t, dir: dir, roots: roots, ctx: ctx, env: map[string]string{}}
	t.Cleanup(func() {
		cancel()
		roots.Close()
		if kids := runtimetest.Children(t); kids != nil {
			t.Errorf("child processes left: %v", kids)
		}
	})
	return f
}

func (f *fixture) options() Options {
	return Options{Roots: f.roots, Getenv: func(name string) string {
		f.asked.Add(1)
		return f.env[name]
	}}
}

// toolserver is a stdio child of the test server; tools, if not nil, are
// its echo tools (see its doc), with the tool env.
func (f *fixture) toolserver(name string, tools map[string]any, args ...string) Config {
	f.t.Helper()
	if tools != nil {
		data, _ := json.Marshal(tools)
		file := filepath.Join(f.dir, name+".json")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			f.t.Fatal(err)
		}
		args = append(args, "--tools="+file)
	}
	return Config{Name: name, Command: runtimetest.Toolserver(f.t), Args: append(args, "--env")}
}

func (f *fixture) start(cfgs []Config, o Options) *Set {
	f.t.Helper()
	s, err := Start(f.ctx, cfgs, o)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { s.Close() })
	return s
}

func names(tools []Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Server+"/"+t.Name)
	}
	return out
}

func (f *fixture) call(s *Set, server, tool, args string) (string, bool) {
	f.t.Helper()
	text, isError, err := s.Call(f.ctx, server, tool, json.RawMessage(args))
	if err != nil {
		f.t.Fatalf("call %s/%s: %v", server, tool, err)
	}
	return text, isError
}

// TestStdioChild: a stdio child starts in the workspace with a scrubbed
// environment and its declared entries, ${VAR} replaced in a value; a
// selected tool is offered and called, one not selected is neither.
func TestStdioChild(t *testing.T) {
	f := newFixture(t)
	t.Setenv("ZERO_PARENT_ONLY", "not for children")
	f.env["ZERO_TEST_TOKEN"] = "tok-12345"
	cfg := f.toolserver("fs", map[string]any{"read": map[string]any{"description": "Read a file."}, "write": map[string]any{}})
	cfg.Env = map[string]string{"TOKEN": "${ZERO_TEST_TOKEN}!", "MODE": "plain"}
	s := f.start([]Config{cfg}, f.options())
	tools, err := s.Select([]string{"fs/read", "fs/env"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"fs/env", "fs/read"}, names(tools)); diff != "" {
		t.Errorf("offered (-want +got):\n%s", diff)
	}
	if tools[1].Description != "Read a file." || string(tools[1].InputSchema) != `{"type":"object"}` {
		t.Errorf("fs/read: %+v", tools[1])
	}
	if text, isError := f.call(s, "fs", "read", `{"path":"a"}`); text != `{"path":"a"}` || isError {
		t.Errorf("read: %q %v", text, isError)
	}
	for name, want := range map[string]string{
		"TOKEN": "TOKEN: set true, 10 bytes", "MODE": "MODE: set true, 5 bytes",
		"ZERO_PARENT_ONLY": "ZERO_PARENT_ONLY: set false, 0 bytes", "PATH": "PATH: set true",
		AgentChildEnv: AgentChildEnv + ": set true, 1 bytes",
	} {
		if text, _ := f.call(s, "fs", "env", `{"name":"`+name+`"}`); !strings.HasPrefix(text, want) {
			t.Errorf("env %s: %q, want %q", name, text, want)
		}
	}
	if _, _, err := s.Call(f.ctx, "fs", "write", nil); err == nil || !strings.Contains(err.Error(), "not offered") {
		t.Errorf("a tool not selected was called: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Call(f.ctx, "fs", "read", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("a call after Close: %v", err)
	}
}

// TestAnnotationsDoNotGrant: a tool annotated read-only (or anything else)
// is offered only when a selector names it.
func TestAnnotationsDoNotGrant(t *testing.T) {
	f := newFixture(t)
	cfg := f.toolserver("fs", map[string]any{
		"look":  map[string]any{"annotations": map[string]any{"readOnlyHint": true, "idempotentHint": true}},
		"other": map[string]any{},
	})
	s := f.start([]Config{cfg}, f.options())
	for _, allow := range [][]string{nil, {"fs/other"}} {
		tools, err := s.Select(allow, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools {
			if tool.Name == "look" {
				t.Errorf("allow %q: the read-only tool is offered", allow)
			}
		}
		if _, _, err := s.Call(f.ctx, "fs", "look", nil); err == nil {
			t.Errorf("allow %q: the read-only tool was called", allow)
		}
	}
}

// TestDenyWins: a tool both allowed (by name or by server/*) and denied is
// not offered, nor called.
func TestDenyWins(t *testing.T) {
	f := newFixture(t)
	s := f.start([]Config{f.toolserver("a", nil), f.toolserver("b", nil)}, f.options())
	tools, err := s.Select([]string{"a/*", "b/echo", "b/pid"}, []string{"a/crash", "a/slow", "b/pid"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a/big", "a/echo", "a/env", "a/grow", "a/hidden", "a/pid", "b/echo"}
	if diff := cmp.Diff(want, names(tools)); diff != "" {
		t.Errorf("offered (-want +got):\n%s", diff)
	}
	if _, _, err := s.Call(f.ctx, "a", "crash", nil); err == nil || !strings.Contains(err.Error(), "not offered") {
		t.Errorf("a denied tool was called: %v", err)
	}
	if _, _, err := s.Call(f.ctx, "b", "pid", nil); err == nil {
		t.Error("a denied tool was called")
	}
}

// TestSelectorErrors: a selector naming no child, a tool the child does
// not list, or of another form, is an error naming it, in allow and deny
// alike.
func TestSelectorErrors(t *testing.T) {
	f := newFixture(t)
	s := f.start([]Config{f.toolserver("fs", nil)}, f.options())
	for _, tc := range []struct {
		allow, deny []string
		want        string
	}{
		{[]string{"nope/echo"}, nil, `"nope/echo" names no child server`},
		{[]string{"nope/*"}, nil, `"nope/*" names no child server`},
		{[]string{"fs/missing"}, nil, `"fs/missing" names a tool child "fs" does not list`},
		{[]string{"fs"}, nil, `"fs" is not server/tool`},
		{[]string{"/echo"}, nil, `"/echo" is not server/tool`},
		{[]string{"fs/echo"}, []string{"other/echo"}, `"other/echo" names no child server`},
		{[]string{"fs/echo"}, []string{"fs/gone"}, `"fs/gone" names a tool`},
	} {
		tools, err := s.Select(tc.allow, tc.deny)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("allow %q deny %q: %v %v, want %s", tc.allow, tc.deny, names(tools), err, tc.want)
		}
	}
}

// TestDescriptions: a tool's description loses its hidden characters and
// is cut at MaxDescription, with a note.
func TestDescriptions(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("é", 3000) // 6000 bytes
	s := f.start([]Config{f.toolserver("fs", map[string]any{
		"secretive": map[string]any{"description": "Read\u200b the\u202e file\U000E0041\U000E0042."},
		"long":      map[string]any{"description": long},
	})}, f.options())
	tools, err := s.Select([]string{"fs/long", "fs/secretive"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tools[1].Description != "Read the file." {
		t.Errorf("secretive: %q", tools[1].Description)
	}
	d := tools[0].Description
	if len(d) > MaxDescription || !strings.HasSuffix(d, "[zero: description cut at 4096 bytes]") || !strings.HasPrefix(long, strings.TrimSuffix(d, " [zero: description cut at 4096 bytes]")) {
		t.Errorf("long: %d bytes, ending %q", len(d), d[len(d)-60:])
	}
}

// TestOutput: a result loses its hidden characters and is cut at
// MaxOutput, with a note saying so.
func TestOutput(t *testing.T) {
	f := newFixture(t)
	s := f.start([]Config{f.toolserver("fs", nil)}, f.options())
	if _, err := s.Select([]string{"fs/*"}, nil); err != nil {
		t.Fatal(err)
	}
	text, _ := f.call(s, "fs", "hidden", "")
	if text != "Do not read this 👩\u200d💻" {
		t.Errorf("hidden: %q", text)
	}
	text, _ = f.call(s, "fs", "big", fmt.Sprintf(`{"bytes":%d}`, 3<<20))
	if len(text) > MaxOutput || !strings.Contains(text, "[zero: the result was cut at") ||
		!strings.HasPrefix(text, strings.Repeat("x", MaxOutput-100)) {
		t.Errorf("big: %d bytes, ending %q", len(text), text[len(text)-100:])
	}
	text, _ = f.call(s, "fs", "big", fmt.Sprintf(`{"bytes":%d}`, MaxOutput))
	if text != strings.Repeat("x", MaxOutput) {
		t.Errorf("a result of MaxOutput bytes was changed: %d bytes", len(text))
	}
}

// TestCrashDuringCall: a child that ends in the middle of a call is an
// error saying so.
func TestCrashDuringCall(t *testing.T) {
	f := newFixture(t)
	s := f.start([]Config{f.toolserver("fs", nil)}, f.options())
	s.Select([]string{"fs/crash"}, nil)
	_, _, err := s.Call(f.ctx, "fs", "crash", nil)
	if err == nil || !strings.Contains(err.Error(), `child "fs" ended during the call of "crash"`) || !strings.Contains(err.Error(), "crashing on purpose") {
		t.Errorf("crash: %v", err)
	}
}

// TestVariables: ${VAR} is replaced in env and header values only; a
// variable that is not set fails the start naming it; a ${ in a command,
// an argument or a URL is refused, and the environment is not read.
func TestVariables(t *testing.T) {
	f := newFixture(t)
	bin := runtimetest.Toolserver(t)
	f.env["ZERO_SET"] = "value-of-zero-set"
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Name: "c", Command: "${ZERO_SET}"}, `child "c": command holds ${...}`},
		{Config{Name: "c", Command: bin, Args: []string{"--tools", "${ZERO_SET}"}}, `child "c": args[1] holds ${...}`},
		{Config{Name: "c", URL: "http://127.0.0.1:1/${ZERO_SET}"}, `child "c": url holds ${...}`},
		{Config{Name: "c", URL: "http://${ZERO_SET}/mcp"}, `child "c": url holds ${...}`},
	} {
		f.asked.Store(0)
		if _, err := Start(f.ctx, []Config{tc.cfg}, f.options()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %s", tc.cfg, err, tc.want)
		}
		if f.asked.Load() != 0 {
			t.Errorf("%+v: the environment was read", tc.cfg)
		}
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Name: "c", Command: bin, Env: map[string]string{"A": "${ZERO_SET}", "B": "x${ZERO_MISSING}"}}, `child "c": env B: the environment variable ZERO_MISSING is not set`},
		{Config{Name: "c", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"Authorization": "Bearer ${ZERO_MISSING}"}}, `child "c": header Authorization: the environment variable ZERO_MISSING is not set`},
		{Config{Name: "c", Command: bin, Env: map[string]string{"A": "${ZERO-SET}"}}, `child "c": env A: a "${" that is not "${NAME}"`},
		{Config{Name: "c", Command: bin, Env: map[string]string{"A": "${ZERO_SET"}}, `child "c": env A: a "${" that is not "${NAME}"`},
		// A value from the environment may not steer which code runs.
		{Config{Name: "c", Command: bin, Env: map[string]string{"PATH": "${ZERO_SET}"}}, `child "c": env PATH: `},
		{Config{Name: "c", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"X-Key": "${ZERO_SET}\r\nX-Other: 1"}}, `child "c": header X-Key: its value holds a control character`},
	} {
		_, err := Start(f.ctx, []Config{tc.cfg}, f.options())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %s", tc.cfg, err, tc.want)
		} else if strings.Contains(err.Error(), "value-of-zero-set") {
			t.Errorf("%+v: the error shows a variable's value: %v", tc.cfg, err)
		}
	}
	got, fromEnv, err := interpolate("${A}-${B}$C ${A}", func(n string) string { return map[string]string{"A": "1", "B": "${A}"}[n] })
	if got != "1-${A}$C 1" || !fromEnv || err != nil {
		t.Errorf("interpolate: %q %v %v", got, fromEnv, err)
	}
}

// TestEnvRejects: an env entry envscrub refuses refuses the child, with
// an error naming it, before anything runs.
func TestEnvRejects(t *testing.T) {
	f := newFixture(t)
	events := filepath.Join(f.dir, "events")
	for _, name := range []string{"LD_PRELOAD", "NODE_OPTIONS", "BASH_ENV"} {
		good := f.toolserver("good", nil, "--events="+events)
		bad := f.toolserver("bad", nil, "--events="+events)
		bad.Env = map[string]string{name: "/tmp/x"}
		_, err := Start(f.ctx, []Config{good, bad}, f.options())
		if !errors.Is(err, envscrub.ErrRejected) || !strings.Contains(err.Error(), `child "bad": env `+name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(events); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a child ran: %v", err)
	}
}

// TestStartTimeout: a child that never answers fails the start within the
// start timeout, with an error naming it; the child that started is
// stopped, and no process is left.
func TestStartTimeout(t *testing.T) {
	f := newFixture(t)
	o := f.options()
	o.StartTimeout = 500 * time.Millisecond
	events := filepath.Join(f.dir, "events")
	start := time.Now()
	_, err := Start(f.ctx, []Config{f.toolserver("good", nil, "--events="+events), {Name: "mute", Command: "sleep", Args: []string{"60"}}}, o)
	if err == nil || !strings.Contains(err.Error(), `child "mute": it did not start within 500ms`) {
		t.Fatalf("%v", err)
	}
	if strings.Contains(err.Error(), `"good"`) {
		t.Errorf("the good child is blamed: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the start took %v", d)
	}
	if data, _ := os.ReadFile(events); !strings.HasPrefix(string(data), "start ") {
		t.Errorf("the good child did not start: %q", data)
	}
	if kids := runtimetest.Children(t); kids != nil {
		t.Errorf("child processes left: %v", kids)
	}
	_, err = Start(f.ctx, []Config{{Name: "gone", Command: "zero-no-such-program"}}, o)
	if err == nil || !strings.Contains(err.Error(), `child "gone": spawn "zero-no-such-program"`) {
		t.Errorf("a missing program: %v", err)
	}
}

// TestCloseEndsEveryProcess: Close ends every child and what each started
// in its process group; nothing is left. (A child runs in the workspace's
// root.)
func TestCloseEndsEveryProcess(t *testing.T) {
	f := newFixture(t)
	pidFile, dirFile := filepath.Join(f.dir, "pid"), filepath.Join(f.dir, "dir")
	group := Config{Name: "group", Command: "sh",
		Args: []string{"-c", `pwd > "$3"; sleep 300 & echo $! > "$1"; exec "$2" --env`, "sh", pidFile, runtimetest.Toolserver(t), dirFile}}
	s := f.start([]Config{f.toolserver("a", nil), f.toolserver("b", nil), group}, f.options())
	work, _ := filepath.EvalSymlinks(filepath.Join(f.dir, "workspace"))
	if data, _ := os.ReadFile(dirFile); strings.TrimSpace(string(data)) != work {
		t.Errorf("the child ran in %q, want %q", data, work)
	}
	if n := len(runtimetest.Children(t)); n != 3 {
		t.Fatalf("%d children run, want 3", n)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	sleeper, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if !alive(sleeper) {
		t.Fatalf("the background process %d does not run", sleeper)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if kids := runtimetest.Children(t); kids != nil {
		t.Errorf("children after Close: %v", kids)
	}
	// Reaped by init, which may take a moment after the kill.
	deadline := time.Now().Add(5 * time.Second)
	for alive(sleeper) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(sleeper) {
		t.Errorf("the background process %d survived Close", sleeper)
	}
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(data), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// remote is an MCP server over streamable HTTP on 127.0.0.1 whose tools
// answer only requests carrying auth in their Authorization header.
func remote(t *testing.T, auth string) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "hello", Description: "Say\u200b hello.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string","description":"who` + "\U000E0041\u200b" + `"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Who string }
			json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + args.Who},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte("png")}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it failed"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != auth {
			http.Error(rw, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// TestHTTPChild: an HTTP child on loopback gets its header, ${VAR}
// replaced; its tools are listed without hidden characters, selected and
// called; an isError result comes back as one.
func TestHTTPChild(t *testing.T) {
	f := newFixture(t)
	f.env["ZERO_TEST_TOKEN"] = "tok-54321"
	url := remote(t, "Bearer tok-54321")
	s := f.start([]Config{{Name: "web", URL: url, Headers: map[string]string{"authorization": "Bearer ${ZERO_TEST_TOKEN}"}}}, f.options())
	tools, err := s.Select([]string{"web/*"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"web/fail", "web/hello"}, names(tools)); diff != "" {
		t.Fatalf("offered (-want +got):\n%s", diff)
	}
	if tools[1].Description != "Say hello." || hiddentext.Unprintable(string(tools[1].InputSchema)) ||
		!strings.Contains(string(tools[1].InputSchema), `"description":"who"`) {
		t.Errorf("hello: %q %s", tools[1].Description, tools[1].InputSchema)
	}
	if text, isError := f.call(s, "web", "hello", `{"who":"you"}`); text != "hello you\n[image: image/png, 3 bytes, not shown]" || isError {
		t.Errorf("hello: %q %v", text, isError)
	}
	if text, isError := f.call(s, "web", "fail", `{}`); text != "it failed" || !isError {
		t.Errorf("fail: %q %v", text, isError)
	}
	if _, _, err := s.Call(f.ctx, "web", "hello", json.RawMessage(`[1]`)); err == nil {
		t.Error("arguments that are not an object were sent")
	}
	_, err = Start(f.ctx, []Config{{Name: "web", URL: url}}, f.options())
	if err == nil || !strings.Contains(err.Error(), `child "web": initialize: `) {
		t.Errorf("without its header: %v", err)
	}
}

// TestHTTPRedirect: a redirect from an HTTP child is not followed, and
// where it points gets no request.
func TestHTTPRedirect(t *testing.T) {
	f := newFixture(t)
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(target.Close)
	redirect := httptest.NewServer(http.RedirectHandler(target.URL+"/mcp", http.StatusTemporaryRedirect))
	t.Cleanup(redirect.Close)
	_, err := Start(f.ctx, []Config{{Name: "moved", URL: redirect.URL + "/mcp", Headers: map[string]string{"X-Key": "k"}}}, f.options())
	if err == nil || !strings.Contains(err.Error(), `child "moved"`) || !strings.Contains(err.Error(), "redirects are not followed") {
		t.Errorf("%v", err)
	}
	if hits.Load() != 0 {
		t.Errorf("the redirect was followed: %d requests", hits.Load())
	}
}

// resolver resolves every name to one address, and counts its lookups.
type resolver struct {
	addr    netip.Addr
	lookups atomic.Int32
}

func (r *resolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.lookups.Add(1)
	return []netip.Addr{r.addr}, nil
}

// TestHTTPPrivateAddresses: an HTTP child at a private address is refused:
// written in the URL, before anything is sent or looked up; behind a name,
// when it is dialled. Loopback is reachable only when the URL's host is
// loopback, and plain http only there.
func TestHTTPPrivateAddresses(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		url     string
		resolve string
		want    error
		lookups int32
	}{
		{"https://10.0.0.1/mcp", "", netguard.ErrBlocked, 0},
		{"https://192.168.1.10:8443/mcp", "", netguard.ErrBlocked, 0},
		{"https://[fd00::1]/mcp", "", netguard.ErrBlocked, 0},
		{"https://169.254.169.254/mcp", "", netguard.ErrBlocked, 0},
		{"http://10.0.0.1/mcp", "", netguard.ErrURL, 0},
		{"http://mcp.example/mcp", "", netguard.ErrURL, 0},
		{"https://mcp.example/mcp", "192.168.1.10", netguard.ErrBlocked, 1},
		{"https://mcp.example/mcp", "127.0.0.1", netguard.ErrBlocked, 1},
	} {
		o := f.options()
		r := &resolver{}
		if tc.resolve != "" {
			r.addr = netip.MustParseAddr(tc.resolve)
		}
		o.Resolver = r
		_, err := Start(f.ctx, []Config{{Name: "web", URL: tc.url}}, o)
		// The SDK keeps the text of a transport's error, not the error.
		if err == nil || !strings.Contains(err.Error(), tc.want.Error()) || !strings.Contains(err.Error(), `child "web"`) ||
			tc.lookups == 0 && !errors.Is(err, tc.want) {
			t.Errorf("%s (%s): %v, want %v", tc.url, tc.resolve, err, tc.want)
		}
		if r.lookups.Load() != tc.lookups {
			t.Errorf("%s: %d lookups, want %d", tc.url, r.lookups.Load(), tc.lookups)
		}
	}
}

// TestProtocolVersion: a child that answers initialize in a protocol
// version the client does not support is refused, naming it.
func TestProtocolVersion(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	var methods []string
	old := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		methods = append(methods, req.Method)
		mu.Unlock()
		if req.Method != "initialize" {
			rw.WriteHeader(http.StatusAccepted)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(rw, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2023-01-01","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"0"}}}`, req.ID)
	}))
	t.Cleanup(old.Close)
	_, err := Start(f.ctx, []Config{{Name: "old", URL: old.URL}}, f.options())
	if err == nil || !strings.Contains(err.Error(), `child "old": initialize: unsupported protocol version: "2023-01-01"`) {
		t.Errorf("%v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"initialize"}, methods); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestConfigErrors: a configuration that is not one child of one kind is
// refused before anything runs.
func TestConfigErrors(t *testing.T) {
	f := newFixture(t)
	bin := runtimetest.Toolserver(t)
	for _, tc := range []struct {
		cfgs []Config
		want string
	}{
		{[]Config{{Name: "a", Command: bin}, {Name: "a", Command: bin}}, `child "a" is declared twice`},
		{[]Config{{Name: "a/b", Command: bin}}, `child "a/b": a child's name is`},
		{[]Config{{Name: "", Command: bin}}, `child "": a child's name is`},
		{[]Config{{Name: "a", Command: bin, URL: "http://127.0.0.1/"}}, "both a command and a url"},
		{[]Config{{Name: "a"}}, "neither a command nor a url"},
		{[]Config{{Name: "a", Command: bin, Headers: map[string]string{"X": "1"}}}, "headers are for a child with a url"},
		{[]Config{{Name: "a", URL: "http://127.0.0.1/", Env: map[string]string{"X": "1"}}}, "args and env are for a child with a command"},
		{[]Config{{Name: "a", URL: "http://127.0.0.1/", Headers: map[string]string{"Mcp-Session-Id": "1"}}}, "header Mcp-Session-Id is the MCP transport's own"},
		{[]Config{{Name: "a", URL: "http://127.0.0.1/", Headers: map[string]string{"Bad Name": "1"}}}, `header "Bad Name" is not a valid header name`},
	} {
		if _, err := Start(f.ctx, tc.cfgs, f.options()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %s", tc.cfgs, err, tc.want)
		}
	}
	o := f.options()
	o.Roots = nil
	if _, err := Start(f.ctx, []Config{{Name: "a", Command: bin}}, o); err == nil || !strings.Contains(err.Error(), "no workspace") {
		t.Errorf("no roots: %v", err)
	}
}

// TestContextEndsChildren: when the context given to Start ends (a
// client's cancel), every stdio child ends, without Close.
func TestContextEndsChildren(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(f.ctx)
	s, err := Start(ctx, []Config{f.toolserver("a", nil), f.toolserver("b", nil)}, f.options())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := len(runtimetest.Children(t)); n != 2 {
		t.Fatalf("%d children run, want 2", n)
	}
	cancel()
	for name, c := range s.children {
		select {
		case <-c.proc.Done():
		case <-f.ctx.Done():
			t.Fatalf("child %s still runs", name)
		}
	}
	if kids := runtimetest.Children(t); kids != nil {
		t.Errorf("children after the cancel: %v", kids)
	}
}

// TestCallTimeout: a call the child does not answer within the call
// timeout is an error saying so, and the set goes on working.
func TestCallTimeout(t *testing.T) {
	f := newFixture(t)
	o := f.options()
	o.CallTimeout = 300 * time.Millisecond
	s := f.start([]Config{f.toolserver("fs", nil)}, o)
	s.Select([]string{"fs/slow", "fs/echo"}, nil)
	_, _, err := s.Call(f.ctx, "fs", "slow", json.RawMessage(`{"ms":60000}`))
	if err == nil || !strings.Contains(err.Error(), `child "fs": tool "slow": no answer within the call timeout (300ms`) {
		t.Errorf("slow: %v", err)
	}
	if text, _ := f.call(s, "fs", "echo", `{"a":1}`); text != `{"a":1}` {
		t.Errorf("echo after the timeout: %q", text)
	}
}

// FuzzInterpolate: what interpolate returns holds no "${", and a value
// without one is returned as it is.
func FuzzInterpolate(f *testing.F) {
	for _, s := range []string{"${A}", "a${B}c", "${", "$${A}}", "${A", "${1}", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, fromEnv, err := interpolate(v, func(string) string { return "v" })
		switch {
		case err != nil:
		case strings.Contains(got, "${"):
			t.Errorf("%q: %q", v, got)
		case !strings.Contains(v, "${") && (got != v || fromEnv):
			t.Errorf("%q: %q %v", v, got, fromEnv)
		}
	})
}
