package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
	"github.com/zero-dev/zero/internal/testnet"
)

// connectFixture is a running zero serve with two approved, enabled
// servers: files, Zero's own `zero mcp filesystem` on dir (stdio), and
// remote, a streamable HTTP server on a loopback TLS listener whose
// certificate zero serve trusts through --local-ca. The token for every
// server is in $ZERO_HOME/client-token, where the bridge reads it.
type connectFixture struct {
	p     *serveProcess
	dir   string
	token string
}

func startConnectFixture(t *testing.T) connectFixture {
	t.Helper()
	greeter := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "0"}, nil)
	greeter.AddTool(&mcp.Tool{Name: "greet", Description: "Greets someone.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Who string }
			json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello, " + args.Who + ", over https"}}}, nil
		})
	remote := httptest.NewTLSServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return greeter }, nil))
	t.Cleanup(remote.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: remote.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	p := startServe(t, []string{"ZERO_ALLOWED_LOCAL_ORIGINS=" + remote.URL}, "--local-ca", ca)
	browser, headers := owner(t, p, p.link)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("approved, then used\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wsAdd(t, p, browser, headers, map[string]any{"name": "files", "kind": "stdio", "command": zeroBinary(t),
		"args": []string{"mcp", "filesystem", dir}}, nil)
	wsAdd(t, p, browser, headers, map[string]any{"name": "remote", "kind": "http", "url": remote.URL + "/mcp"}, nil)
	saveToken(t, p, browser, headers)
	if err := os.Rename(filepath.Join(p.home, "cli-token"), filepath.Join(p.home, "client-token")); err != nil {
		t.Fatal(err)
	}
	token, err := os.ReadFile(filepath.Join(p.home, "client-token"))
	if err != nil {
		t.Fatal(err)
	}
	return connectFixture{p: p, dir: dir, token: strings.TrimSpace(string(token))}
}

// bridge connects the Go SDK's client to the real `zero mcp workspace`,
// started as Claude Desktop starts it: a command with ZERO_HOME set.
func (f connectFixture) bridge(t *testing.T) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(zeroBinary(t), "mcp", "workspace", "--addr", strings.TrimPrefix(f.p.base, "http://"))
	cmd.Env = append(os.Environ(), "ZERO_HOME="+f.p.home)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bridge-e2e", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect through zero mcp workspace: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// useBoth lists and calls the tools of both servers through cs.
func (f connectFixture) useBoth(t *testing.T, how string, cs *mcp.ClientSession) {
	t.Helper()
	names := mcptest.ToolNames(t, cs)
	for _, want := range []string{"files__read_text_file", "files__list_directory", "remote__greet"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s: tools/list lacks %s: %v", how, want, names)
		}
	}
	if text, isErr := wsCall(t, cs, "files__read_text_file", map[string]any{"path": filepath.Join(f.dir, "note.txt")}); isErr || text != "approved, then used\n" {
		t.Errorf("%s: files__read_text_file: error %v, %q", how, isErr, text)
	}
	if text, isErr := wsCall(t, cs, "files__read_text_file", map[string]any{"path": "/etc/passwd"}); !isErr || !strings.Contains(text, "outside") {
		t.Errorf("%s: a read outside the approved directory: error %v, %q", how, isErr, text)
	}
	if text, isErr := wsCall(t, cs, "remote__greet", map[string]any{"who": "Ada"}); isErr || text != "hello, Ada, over https" {
		t.Errorf("%s: remote__greet: error %v, %q", how, isErr, text)
	}
}

// TestConnectRealClients: the Go SDK's client, over /mcp and over the
// stdio bridge `zero mcp workspace`, lists and calls the tools of an
// approved stdio server (zero mcp filesystem) and an approved https server
// with a test CA. Once the clients are gone and zero serve stopped, no
// server or bridge process is left.
func TestConnectRealClients(t *testing.T) {
	f := startConnectFixture(t)
	direct, _, _ := wsMCP(t, f.p, f.token)
	f.useBoth(t, "/mcp", direct)
	bridged := f.bridge(t)
	f.useBoth(t, "zero mcp workspace", bridged)

	if kids := descendants(t, strconv.Itoa(f.p.cmd.Process.Pid)); len(kids) == 0 {
		t.Errorf("zero serve runs no server process after the calls")
	}
	direct.Close()
	bridged.Close()
	stopServe(t, f.p)
	if left := runningProgram(t, zeroBinary(t)); left != nil {
		t.Errorf("zero processes left after the clients closed and zero serve stopped: %v", left)
	}
}

// TestConnectTypeScriptClient: the TypeScript SDK's client
// (node/tsworkspace.mjs), over /mcp (StreamableHTTPClientTransport) and
// over `zero mcp workspace` (StdioClientTransport), lists and calls the
// same two servers' tools.
func TestConnectTypeScriptClient(t *testing.T) {
	script, _ := filepath.Abs("../../node/tsworkspace.mjs")
	modules, _ := filepath.Abs("../../node/node_modules/@modelcontextprotocol/sdk")
	if _, err := os.Stat(modules); err != nil {
		if os.Getenv("ZERO_REQUIRE_NODE") != "" {
			t.Fatalf("ZERO_REQUIRE_NODE is set but the npm packages are missing: %v", err)
		}
		t.Skip("npm packages not installed; run: npm ci --prefix node")
	}
	f := startConnectFixture(t)
	cmd := exec.Command("node", script, f.p.base, zeroBinary(t), f.dir)
	cmd.Env = append(os.Environ(), "ZERO_HOME="+f.p.home, "ZERO_TOKEN="+f.token)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"ok":true`) {
		t.Fatalf("TypeScript client: %v\n%s", err, out)
	}
	stopServe(t, f.p)
	if left := runningProgram(t, zeroBinary(t)); left != nil {
		t.Errorf("zero processes left after the client closed and zero serve stopped: %v", left)
	}
}

// TestBridgeSaysWhatToDo runs `zero mcp workspace` where it cannot work:
// an address that is not loopback (exit 2), no
// workspace at the address (exit 1, "is zero serve running?"), and a
// token the workspace refuses (exit 1, create a new one on the Connect
// page). Neither writes anything to stdout, where the client reads.
func TestBridgeSaysWhatToDo(t *testing.T) {
	p := startServe(t, nil)
	if err := os.WriteFile(filepath.Join(p.home, "client-token"), []byte("zt_not-a-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	closed := testnet.Listen(t)
	closedAddr := closed.Addr
	closed.Close()
	for _, tc := range []struct {
		addr, want string
		code       int
	}{
		{"10.1.2.3:7077", "--addr: ", 2},
		{closedAddr, "is zero serve running?", 1},
		{strings.TrimPrefix(p.base, "http://"), "refused the token in " + filepath.Join(p.home, "client-token") + " (revoked, or another workspace's): create a new token on " + p.base + "/connect", 1},
	} {
		cmd := exec.Command(zeroBinary(t), "mcp", "workspace", "--addr", tc.addr)
		cmd.Env = append(os.Environ(), "ZERO_HOME="+p.home)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != tc.code || !strings.Contains(stderr.String(), tc.want) || stdout.Len() != 0 {
			t.Errorf("--addr %s: exit code %d (%v), stdout %q, stderr %q; want %d and %q", tc.addr, code, err, stdout.String(), stderr.String(), tc.code, tc.want)
		}
	}
}
