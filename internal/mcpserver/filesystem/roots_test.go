package filesystem

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/fsroot/escapetest"
	"github.com/zero-dev/zero/internal/mcpserver"
	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
)

func fileURI(p string) string { return (&url.URL{Scheme: "file", Path: p}).String() }

func startWithRoots(t *testing.T, cliDir string, roots ...string) (*mcp.ClientSession, *mcp.Client) {
	t.Helper()
	set, err := fsroot.Open([]string{cliDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "roots-test", Version: "0"}, nil)
	for _, r := range roots {
		client.AddRoots(&mcp.Root{URI: r})
	}
	// Roots belong to the session handshake of protocol versions up to
	// 2025-11-25; 2026-07-28 deprecated them and has no handshake.
	return mcptest.ConnectClient(t, New(set, io.Discard), client, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}), client
}

// Client roots narrow the command-line directories; they never widen them.
func TestClientRootsNarrowOnly(t *testing.T) {
	tr := escapetest.New(t)
	cs, client := startWithRoots(t, tr.Allowed, fileURI(tr.In("sub")), fileURI(tr.Outside))
	// The first call after initialization already sees the narrowed set.
	text, isError := mcptest.Call(t, cs, "read_text_file", map[string]any{"path": tr.In("file.txt")})
	if !isError {
		t.Fatalf("a path outside the client's roots was readable: %q", text)
	}
	text, isError = mcptest.Call(t, cs, "read_text_file", map[string]any{"path": tr.In("sub/inner.txt")})
	if isError || text != "inner\n" {
		t.Fatalf("inside the client's root: %q %v", text, isError)
	}
	text, _ = mcptest.Call(t, cs, "list_allowed_directories", nil)
	if text != "Allowed directories:\n"+tr.In("sub") {
		t.Errorf("list_allowed_directories = %q", text)
	}
	if _, isError := mcptest.Call(t, cs, "read_text_file", map[string]any{"path": tr.Outside + "/secret.txt"}); !isError {
		t.Errorf("a client root outside the command-line directories widened access")
	}

	// A changed list is fetched again, and still only narrows.
	client.RemoveRoots(fileURI(tr.In("sub")))
	client.AddRoots(&mcp.Root{URI: fileURI(tr.Base)})
	waitFor(t, func() bool {
		text, _ := mcptest.Call(t, cs, "list_allowed_directories", nil)
		return text == "Allowed directories:\n"+tr.Allowed
	})
	if text, isError := mcptest.Call(t, cs, "read_text_file", map[string]any{"path": tr.In("file.txt")}); isError || text != "inside\n" {
		t.Errorf("after roots changed: %q %v", text, isError)
	}
}

func TestClientRootsOutsideAllowNothing(t *testing.T) {
	tr := escapetest.New(t)
	cs, _ := startWithRoots(t, tr.Allowed, fileURI(tr.Outside), "https://example.com/")
	text, isError := mcptest.Call(t, cs, "read_text_file", map[string]any{"path": "file.txt"})
	if !isError || !strings.Contains(text, "no directory is allowed in this session") {
		t.Errorf("read with no usable client root: %q %v", text, isError)
	}
	text, _ = mcptest.Call(t, cs, "list_allowed_directories", nil)
	if !strings.Contains(text, "(none: ") {
		t.Errorf("list_allowed_directories = %q", text)
	}
}

// A client without roots keeps the command-line directories, as does a
// client that offers an empty list.
func TestNoClientRoots(t *testing.T) {
	tr := escapetest.New(t)
	cs := start(t, tr.Allowed)
	if text, isError := mcptest.Call(t, cs, "read_text_file", map[string]any{"path": "file.txt"}); isError || text != "inside\n" {
		t.Errorf("read: %q %v", text, isError)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal("condition not met within 5s")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// A client that offers roots but answers roots/list with an error gets no
// directory at all: it meant to narrow, and the server cannot tell how.
func TestClientRootsUnreadableAllowNothing(t *testing.T) {
	tr := escapetest.New(t)
	set, err := fsroot.Open([]string{tr.Allowed})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go New(set, io.Discard).Run(ctx, &mcpserver.StdioTransport{In: serverIn, Out: serverOut})
	lines := bufio.NewReader(clientIn)
	send := func(s string) { io.WriteString(clientOut, s+"\n") }
	read := func() map[string]any {
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.Unmarshal([]byte(line), &m)
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"0"}}}`)
	read()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	req := read()
	if req["method"] != "roots/list" {
		t.Fatalf("server sent %v, want roots/list", req)
	}
	id, _ := json.Marshal(req["id"])
	send(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32603,"message":"no roots today"}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_allowed_directories","arguments":{}}}`)
	resp := read()
	text := resp["result"].(map[string]any)["structuredContent"].(map[string]any)["content"].(string)
	if !strings.Contains(text, "(none: the client's roots could not be read") {
		t.Errorf("list_allowed_directories = %q", text)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"file.txt"}}}`)
	if resp := read(); resp["result"].(map[string]any)["isError"] != true {
		t.Errorf("read allowed with unreadable roots: %v", resp)
	}
}
