package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// zeroBinary builds the real zero binary once per test run.
func zeroBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "zero-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "zero")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err, string(out)}
		}
	})
	if buildErr != nil {
		t.Fatalf("go build: %v", buildErr)
	}
	return binPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

func workDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\n"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(dir, "passwd"))
	return dir
}

// TestStdioEndToEnd spawns the real binary and speaks MCP to it over stdio
// with the official SDK client, in the newest protocol and in 2025-11-25.
func TestStdioEndToEnd(t *testing.T) {
	bin := zeroBinary(t)
	dir := workDir(t)
	for _, version := range []string{"", "2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run("protocol "+version, func(t *testing.T) {
			cmd := exec.Command(bin, "mcp", "filesystem", dir)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v; stderr: %s", err, stderr.String())
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) != 14 {
				t.Fatalf("tools/list: %d tools, %v", len(tools.Tools), err)
			}
			if text, isError := mcptest.Call(t, cs, "read_text_file", map[string]any{"path": "hello.txt"}); isError || text != "hello\n" {
				t.Errorf("read: %q %v", text, isError)
			}
			if _, isError := mcptest.Call(t, cs, "write_file", map[string]any{"path": "new.txt", "content": "x"}); isError {
				t.Errorf("write failed")
			}
			if text, isError := mcptest.Call(t, cs, "read_text_file", map[string]any{"path": "passwd"}); !isError {
				t.Errorf("symlink to /etc/passwd was read: %q", text)
			}
			if err := cs.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if stderr.Len() != 0 {
				t.Errorf("successful calls logged to stderr: %s", stderr.String())
			}
		})
	}
}

var listenLine = regexp.MustCompile(`serving MCP over streamable HTTP at (http://\S+)/`)

// startHTTP runs the binary with args and returns the URL it serves.
func startHTTP(t *testing.T, args ...string) (url string, stderr *strings.Builder, cmd *exec.Cmd) {
	t.Helper()
	cmd = exec.Command(zeroBinary(t), args...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	stderr = &strings.Builder{}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			if m := listenLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case url = <-found:
	case <-time.After(20 * time.Second):
		t.Fatalf("no listen line; stderr: %s", stderr.String())
	}
	return url, stderr, cmd
}

// TestHTTPEndToEnd serves streamable HTTP from the real binary: an SDK client
// works, and requests whose Host or Origin is not local are refused.
func TestHTTPEndToEnd(t *testing.T) {
	dir := workDir(t)
	url, _, cmd := startHTTP(t, "mcp", "filesystem", "--http", "127.0.0.1:0", dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if text, isError := mcptest.Call(t, cs, "read_text_file", map[string]any{"path": "hello.txt"}); isError || text != "hello\n" {
		t.Errorf("read over HTTP: %q %v", text, isError)
	}
	cs.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, tc := range []struct {
		name, host, origin string
		want               int
	}{
		{"rebinding host", "attacker.example", "", http.StatusForbidden},
		{"foreign origin", "", "https://attacker.example", http.StatusForbidden},
		{"local origin", "", "http://localhost:5173", 0},
	} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		resp.Body.Close()
		if tc.want != 0 && resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
		if tc.want == 0 && resp.StatusCode == http.StatusForbidden {
			t.Errorf("%s: refused", tc.name)
		}
	}

	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("server did not stop on SIGTERM")
	}
}

// TestAllowRemoteWarns checks that a non-loopback address, allowed with
// --allow-remote, is served with a loud warning.
func TestAllowRemoteWarns(t *testing.T) {
	_, stderr, _ := startHTTP(t, "mcp", "filesystem", "--http", "0.0.0.0:0", "--allow-remote", workDir(t))
	if !strings.Contains(stderr.String(), "WARNING: serving MCP on 0.0.0.0:") ||
		!strings.Contains(stderr.String(), "never expose them on a network you do not control") {
		t.Errorf("no warning for a remote address; stderr: %s", stderr.String())
	}
}

// TestTypeScriptClient drives the real binary with the official TypeScript
// SDK client (node/tsclient.mjs), which validates every inputSchema and every
// structuredContent against the tool's outputSchema. It needs the npm
// packages in node/ (npm ci --prefix node); the README's test command
// installs them and sets ZERO_REQUIRE_NODE=1 so that this test cannot skip.
func TestTypeScriptClient(t *testing.T) {
	script, _ := filepath.Abs("../../node/tsclient.mjs")
	modules, _ := filepath.Abs("../../node/node_modules/@modelcontextprotocol/sdk")
	if _, err := os.Stat(modules); err != nil {
		if os.Getenv("ZERO_REQUIRE_NODE") != "" {
			t.Fatalf("ZERO_REQUIRE_NODE is set but the npm packages are missing: %v", err)
		}
		t.Skip("npm packages not installed; run: npm ci --prefix node")
	}
	out, err := exec.Command("node", script, zeroBinary(t), workDir(t)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"ok":true`) {
		t.Fatalf("TypeScript client: %v\n%s", err, out)
	}
}

// TestHTTPClientRoots checks that client roots narrow the directories over
// streamable HTTP too, where the server's roots/list request travels on the
// client's event stream.
func TestHTTPClientRoots(t *testing.T) {
	dir := workDir(t)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	url, _, _ := startHTTP(t, "mcp", "filesystem", "--http", "127.0.0.1:0", dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil)
	client.AddRoots(&mcp.Root{URI: "file://" + sub})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if text, _ := mcptest.Call(t, cs, "list_allowed_directories", nil); text != "Allowed directories:\n"+sub {
		t.Errorf("list_allowed_directories = %q", text)
	}
	if _, isError := mcptest.Call(t, cs, "read_text_file", map[string]any{"path": filepath.Join(dir, "hello.txt")}); !isError {
		t.Error("a file outside the client's root was readable over HTTP")
	}
}

// TestStdioSignal checks that SIGTERM ends a stdio server quietly, with exit
// code 0, while its client still holds stdin open.
func TestStdioSignal(t *testing.T) {
	cmd := exec.Command(zeroBinary(t), "mcp", "filesystem", workDir(t))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Serving: it answers initialize (a loaded machine may take a while to
	// get there, which a sleep would not wait for).
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("initialize: %q, %v", line, err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil || stderr.Len() != 0 {
			t.Errorf("after SIGTERM: %v, stderr %q", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("server did not stop on SIGTERM")
	}
}

// connectBinary starts the real binary with args and connects the SDK
// client to it over stdio.
func connectBinary(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(zeroBinary(t), args...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestShellEndToEnd runs execute_command through the real binary: a
// non-zero exit code, a timeout, and working directories that escape
// through a symbolic link or .. are refused.
func TestShellEndToEnd(t *testing.T) {
	dir := workDir(t)
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	os.Symlink(outside, filepath.Join(dir, "out"))
	cs := connectBinary(t, "mcp", "shell", "--timeout", "5s", "--max-timeout", "10s", dir)

	text, isError := mcptest.Call(t, cs, "execute_command", map[string]any{"program": "sh", "args": []string{"-c", "exit 7"}})
	if isError || !strings.HasPrefix(text, "exit code: 7\n") {
		t.Errorf("non-zero exit: %q %v", text, isError)
	}
	began := time.Now()
	text, isError = mcptest.Call(t, cs, "execute_command", map[string]any{"program": "sleep", "args": []string{"30"}, "timeout_ms": 200})
	if isError || !strings.Contains(text, "\ntimed out: ") || time.Since(began) > 5*time.Second {
		t.Errorf("timeout: %q %v after %v", text, isError, time.Since(began))
	}
	marker := filepath.Join(outside, "ran")
	for _, cwd := range []string{filepath.Join(dir, "out"), filepath.Join(dir, ".."), "../" + filepath.Base(outside)} {
		if text, isError := mcptest.Call(t, cs, "execute_command", map[string]any{"program": "touch", "args": []string{marker}, "cwd": cwd}); !isError {
			t.Errorf("cwd %q accepted: %q", cwd, text)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a command ran from a refused cwd")
	}
	text, isError = mcptest.Call(t, cs, "execute_command", map[string]any{"program": "cat", "args": []string{"hello.txt"}})
	if isError || !strings.Contains(text, "--- stdout: 6 bytes ---\nhello\n") {
		t.Errorf("cat in the allowed directory: %q %v", text, isError)
	}
}

// TestSkillsEndToEnd lists and activates a skill through the real binary,
// and checks that its script never runs.
func TestSkillsEndToEnd(t *testing.T) {
	ws := workDir(t)
	skill := filepath.Join(ws, ".claude", "skills", "greet")
	os.MkdirAll(filepath.Join(skill, "scripts"), 0o755)
	marker := filepath.Join(ws, "ran")
	os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: greet\ndescription: Says hello.\n---\nRun scripts/hello.sh first.\n"), 0o644)
	os.WriteFile(filepath.Join(skill, "scripts", "hello.sh"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
	cs := connectBinary(t, "mcp", "skills", "--workspace", ws)
	if text, isError := mcptest.Call(t, cs, "list_skills", nil); isError || !strings.Contains(text, "Says hello.") {
		t.Errorf("list_skills: %q %v", text, isError)
	}
	text, isError := mcptest.Call(t, cs, "activate_skill", map[string]any{"name": "greet"})
	if isError || !strings.Contains(text, "Run scripts/hello.sh first.") || !strings.Contains(text, "scripts/hello.sh") {
		t.Errorf("activate_skill: %q %v", text, isError)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("activating a skill ran its script")
	}
}

// TestShellIsolateEndToEnd runs commands with --isolate through the real
// binary: they run under bubblewrap, cannot reach a loopback server the test
// started, and can write in their working directory but not outside it.
func TestShellIsolateEndToEnd(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil && os.Getenv("ZERO_REQUIRE_BWRAP") == "" {
		t.Skip("bubblewrap is not installed; scripts/test installs it and sets ZERO_REQUIRE_BWRAP=1")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	dir := workDir(t)
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	cs := connectBinary(t, "mcp", "shell", "--isolate", dir)
	port := ln.Addr().(*net.TCPAddr).Port
	probe := fmt.Sprintf("echo hi > /dev/tcp/127.0.0.1/%d && echo connected", port)
	text, isError := mcptest.Call(t, cs, "execute_command", map[string]any{"program": "bash", "args": []string{"-c", probe}})
	if isError || strings.Contains(text, "connected") || !strings.Contains(text, "\nisolation: bubblewrap\n") {
		t.Errorf("network under --isolate: %q %v", text, isError)
	}
	text, isError = mcptest.Call(t, cs, "execute_command", map[string]any{"program": "touch", "args": []string{"inside.txt", filepath.Join(outside, "outside.txt")}})
	if isError || strings.HasPrefix(text, "exit code: 0\n") {
		t.Errorf("touch outside the working directory under --isolate: %q %v", text, isError)
	}
	if _, err := os.Stat(filepath.Join(dir, "inside.txt")); err != nil {
		t.Errorf("the working directory is not writable under --isolate: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "outside.txt")); err == nil {
		t.Error("a command under --isolate wrote outside its working directory")
	}
}

// TestFetchEndToEnd fetches a page from a loopback server through the real
// binary, and checks that --block-private-networks refuses the same page.
func TestFetchEndToEnd(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<html><body><h1>Hello</h1><script>leak()</script><p>from the test server</p></body></html>")
	}))
	defer srv.Close()
	cs := connectBinary(t, "mcp", "fetch")
	text, isError := mcptest.Call(t, cs, "fetch", map[string]any{"url": srv.URL})
	if isError || !strings.Contains(text, "# Hello") || !strings.Contains(text, "from the test server") || strings.Contains(text, "leak()") {
		t.Errorf("fetch: %q %v", text, isError)
	}
	blocked := connectBinary(t, "mcp", "fetch", "--block-private-networks")
	if text, isError := mcptest.Call(t, blocked, "fetch", map[string]any{"url": srv.URL}); !isError {
		t.Errorf("--block-private-networks fetched a loopback page: %q", text)
	}
}

// TestMemoryEndToEnd writes to the graph through the real binary, and reads
// it back from the file the reference server would read and from a second
// process.
func TestMemoryEndToEnd(t *testing.T) {
	file := filepath.Join(workDir(t), "graph.jsonl")
	cs := connectBinary(t, "mcp", "memory", "--memory-file", file)
	args := map[string]any{"entities": []map[string]any{{"name": "Ada", "entityType": "person", "observations": []string{"wrote the first program"}}}}
	if text, isError := mcptest.Call(t, cs, "create_entities", args); isError {
		t.Fatalf("create_entities: %q", text)
	}
	cs.Close() // the server exits and compacts its log into the file
	waitFor := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(file)
		if string(b) == `{"type":"entity","name":"Ada","entityType":"person","observations":["wrote the first program"]}` {
			break
		}
		if time.Now().After(waitFor) {
			t.Fatalf("graph file = %q", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	again := connectBinary(t, "mcp", "memory", "--memory-file", file)
	if text, isError := mcptest.Call(t, again, "search_nodes", map[string]any{"query": "first program"}); isError || !strings.Contains(text, "Ada") {
		t.Errorf("search_nodes after a restart: %q %v", text, isError)
	}
}

// serveProcess is a running `zero serve`.
type serveProcess struct {
	cmd              *exec.Cmd
	home, base, link string
	stderr           *serveLog
}

// serveLog is everything a zero serve writes to its stderr.
type serveLog struct {
	mu   sync.Mutex
	buf  strings.Builder
	done chan struct{} // closed once zero serve closed its stderr
}

func (l *serveLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns what was written so far.
func (l *serveLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// startServe runs the real `zero serve` on a free loopback port with a
// fresh $ZERO_HOME, and reads the URL and login link it prints.
func startServe(t *testing.T, env []string, args ...string) *serveProcess {
	t.Helper()
	return startServeIn(t, filepath.Join(t.TempDir(), "home"), env, args...)
}

// startServeIn is startServe on the given $ZERO_HOME.
func startServeIn(t *testing.T, home string, env []string, args ...string) *serveProcess {
	t.Helper()
	p := &serveProcess{home: home, stderr: &serveLog{done: make(chan struct{})}}
	p.cmd = exec.Command(zeroBinary(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	p.cmd.Env = append(append(os.Environ(), "ZERO_HOME="+p.home), env...)
	pipe, _ := p.cmd.StderrPipe()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	out := io.TeeReader(pipe, p.stderr)
	lines := bufio.NewScanner(out)
	for p.link == "" && lines.Scan() {
		l := lines.Text()
		if i := strings.Index(l, " at http://"); i >= 0 {
			p.base = strings.TrimSpace(l[i+4:])
		}
		if strings.Contains(l, "/login?token=") {
			p.link = strings.TrimSpace(l)
		}
	}
	if p.base == "" || !strings.HasPrefix(p.link, p.base+"/login?token=") {
		t.Fatalf("no URL or login link printed: %q %q", p.base, p.link)
	}
	go func() {
		io.Copy(io.Discard, out)
		close(p.stderr.done)
	}()
	return p
}

// TestServeEndToEnd runs zero serve as a user would: the login link opens a
// browser session, the owner creates a token, zero servers adds a draft
// with it, and zero audit verify checks, then catches a tampered, log.
func TestServeEndToEnd(t *testing.T) {
	p := startServe(t, nil)
	cmd, home, base, link := p.cmd, p.home, p.base, p.link

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(link)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("login link: %v %v", resp, err)
	}
	resp.Body.Close()
	var session struct {
		CSRF string `json:"csrf_token"`
	}
	getJSON(t, browser, "GET", base+"/api/session", nil, nil, &session)
	var tok struct {
		Token string `json:"token"`
	}
	getJSON(t, browser, "POST", base+"/api/tokens", map[string]string{"name": "cli"},
		map[string]string{"X-CSRF-Token": session.CSRF, "Sec-Fetch-Site": "same-origin", "Origin": base}, &tok)
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(tok.Token+"\n"), 0o600)

	addr := strings.TrimPrefix(base, "http://")
	out, err := exec.Command(zeroBinary(t), "servers", "add", "--addr", addr, "--token-file", tokenFile,
		"--name", "tiny", "--command", "/bin/true", "--arg", "x").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "approve it in your browser: "+base+"/servers/1") {
		t.Fatalf("zero servers add: %v\n%s", err, out)
	}
	out, err = exec.Command(zeroBinary(t), "servers", "list", "--addr", addr, "--token-file", tokenFile).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "tiny") {
		t.Fatalf("zero servers list: %v\n%s", err, out)
	}

	verify := exec.Command(zeroBinary(t), "audit", "verify")
	verify.Env = append(os.Environ(), "ZERO_HOME="+home)
	// The sign-in, the token's creation and first use, the draft.
	if out, err := verify.CombinedOutput(); err != nil || !strings.Contains(string(out), "4 records") {
		t.Fatalf("zero audit verify: %v\n%s", err, out)
	}
	log := filepath.Join(home, "audit.log")
	data, _ := os.ReadFile(log)
	os.WriteFile(log, []byte(strings.Replace(string(data), `"cli"`, `"CLI"`, 1)), 0o600)
	verify = exec.Command(zeroBinary(t), "audit", "verify")
	verify.Env = append(os.Environ(), "ZERO_HOME="+home)
	if out, err := verify.CombinedOutput(); err == nil || !strings.Contains(string(out), "modified") {
		t.Errorf("zero audit verify missed a tampered record: %v\n%s", err, out)
	}
	cmd.Process.Signal(syscall.SIGTERM)
}

func getJSON(t *testing.T, c *http.Client, method, url string, body any, headers map[string]string, out any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, url, r)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, data)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("%s %s: %v: %s", method, url, err, data)
	}
}
