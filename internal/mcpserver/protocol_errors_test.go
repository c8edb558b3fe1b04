package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/graphstore"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/mcpserver"
	"github.com/zero-dev/zero/internal/mcpserver/fetch"
	"github.com/zero-dev/zero/internal/mcpserver/filesystem"
	"github.com/zero-dev/zero/internal/mcpserver/memory"
	"github.com/zero-dev/zero/internal/mcpserver/shell"
	"github.com/zero-dev/zero/internal/mcpserver/skills"
)

// servers returns every server, built for a test, by name. The memory
// server's graph is named "a"; corruptMemory is a memory server whose
// file does not read.
func servers(t *testing.T) map[string]*mcp.Server {
	t.Helper()
	dir := t.TempDir()
	roots, err := fsroot.Open([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { roots.Close() })
	openStore := func(content string) *graphstore.Store {
		path := filepath.Join(t.TempDir(), "memory.jsonl")
		os.WriteFile(path, []byte(content), 0o600)
		st, err := graphstore.OpenEvenIfCorrupt(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	good := `{"type":"entity","name":"a","entityType":"t","observations":[]}`
	return map[string]*mcp.Server{
		"filesystem":    filesystem.New(roots, io.Discard),
		"fetch":         fetch.New(fetch.Options{}, io.Discard),
		"memory":        memory.New(openStore(good), io.Discard),
		"corruptMemory": memory.New(openStore(good+"\n{oops"), io.Discard),
		"shell":         shell.New(shell.Options{Roots: roots}, io.Discard),
		"skills":        skills.New(roots, io.Discard),
	}
}

// A rawSession speaks JSON-RPC to a server line by line, so that a test
// can send what an SDK client would not, and read each error's code.
type rawSession struct {
	t      *testing.T
	w      io.Writer
	lines  chan string
	nextID int
}

// rawConnect serves srv over Zero's stdio transport and initializes a
// session under protocol version.
func rawConnect(t *testing.T, srv *mcp.Server, version string) *rawSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	done := make(chan struct{})
	go func() {
		srv.Run(ctx, &mcpserver.StdioTransport{In: serverIn, Out: serverOut})
		serverOut.Close()
		close(done)
	}()
	s := &rawSession{t: t, w: clientOut, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(clientIn)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		clientOut.Close()
		cancel()
		<-done
	})
	init := fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}`, version)
	if res, e := s.request("initialize", init); e != nil {
		t.Fatalf("initialize: %+v %s", e, res)
	}
	fmt.Fprintln(s.w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

// request sends a request with params (raw JSON, or "" for none) and
// returns its result or its error.
func (s *rawSession) request(method, params string) (json.RawMessage, *jsonrpc.Error) {
	s.t.Helper()
	s.nextID++
	msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q`, s.nextID, method)
	if params != "" {
		msg += `,"params":` + params
	}
	fmt.Fprintln(s.w, msg+"}")
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("%s: the session ended", method)
			}
			var resp struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *jsonrpc.Error  `json:"error"`
			}
			if json.Unmarshal([]byte(line), &resp) != nil || resp.ID == nil || *resp.ID != s.nextID {
				continue // a notification, or a request from the server
			}
			return resp.Result, resp.Error
		case <-timeout:
			s.t.Fatalf("%s: no answer", method)
		}
	}
}

// TestProtocolErrorCodes lists the protocol errors of every server, each
// with the code the MCP specification gives it. Tool failures are not in
// it: they are results with isError, which TestArgumentErrorText and the
// servers' own tests check. An unknown resource is invalid params
// (-32602), as the SDK answers resources/read and as the specification
// has it since SEP-2164 (it was -32002 before), with the URI in the data.
func TestProtocolErrorCodes(t *testing.T) {
	const (
		invalidParams  = jsonrpc.CodeInvalidParams  // -32602
		methodNotFound = jsonrpc.CodeMethodNotFound // -32601
		internal       = jsonrpc.CodeInternalError  // -32603
		invalidRequest = jsonrpc.CodeInvalidRequest // -32600
	)
	type row struct {
		method, params string
		code           int64  // 0: no error
		says           string // in the message
	}
	common := []row{
		{"no/such/method", `{}`, methodNotFound, ""},
		{"tools/call", `{"name":"no_such_tool","arguments":{}}`, invalidParams, "no_such_tool"},
		{"tools/call", `{"name":5}`, invalidParams, ""},
		{"tools/call", `[1]`, invalidParams, ""},
		{"resources/read", `{"uri":"file:///etc/passwd"}`, invalidParams, "not found"},
		{"prompts/get", `{"name":"no_such_prompt"}`, invalidParams, "no_such_prompt"},
	}
	tests := map[string][]row{
		"memory": {
			{"resources/read", `{"uri":"memory://other"}`, invalidParams, "not found"},
			{"resources/read", `{"uri":5}`, invalidParams, ""},
			{"resources/read", `{"uri":"memory://knowledge-graph"}`, 0, ""},
			{"resources/subscribe", `{"uri":"memory://other"}`, invalidParams, "memory://other"},
			{"resources/subscribe", `{"uri":5}`, invalidParams, ""},
			{"resources/subscribe", `{}`, invalidParams, "the only one is memory://knowledge-graph"},
			{"resources/subscribe", ``, invalidRequest, "params"}, // the SDK's answer to missing params
			{"resources/subscribe", `{"uri":"memory://knowledge-graph"}`, 0, ""},
			{"resources/unsubscribe", `{"uri":"memory://other"}`, 0, ""},
			{"resources/templates/list", `{}`, 0, ""},
		},
		"corruptMemory": {
			{"resources/read", `{"uri":"memory://knowledge-graph"}`, internal, "line 2, byte offset 65"},
			{"resources/subscribe", `{"uri":"memory://knowledge-graph"}`, 0, ""},
		},
		"fetch": {
			{"prompts/get", `{"name":"fetch","arguments":{}}`, invalidParams, "URL is required"},
			{"prompts/get", `{"name":"fetch","arguments":{"url":5}}`, invalidParams, ""},
			{"resources/subscribe", `{"uri":"file:///etc/passwd"}`, methodNotFound, ""},
		},
		"filesystem": {
			{"resources/subscribe", `{"uri":"file:///etc/passwd"}`, methodNotFound, ""},
		},
		"shell": {
			{"resources/subscribe", `{"uri":"file:///etc/passwd"}`, methodNotFound, ""},
		},
		"skills": {
			{"resources/subscribe", `{"uri":"file:///etc/passwd"}`, methodNotFound, ""},
		},
	}
	for name, srv := range servers(t) {
		t.Run(name, func(t *testing.T) {
			s := rawConnect(t, srv, "2025-06-18")
			for _, r := range append(tests[name], common...) {
				res, e := s.request(r.method, r.params)
				switch {
				case r.code == 0 && e != nil:
					t.Errorf("%s %s: error %d %q, want a result", r.method, r.params, e.Code, e.Message)
				case r.code == 0:
				case e == nil:
					t.Errorf("%s %s: result %s, want error %d", r.method, r.params, res, r.code)
				case e.Code != r.code || !strings.Contains(e.Message, r.says):
					t.Errorf("%s %s: error %d %q, want %d with %q", r.method, r.params, e.Code, e.Message, r.code, r.says)
				}
			}
		})
	}
}
