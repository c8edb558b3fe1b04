package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
)

const bound = 10 * time.Second

// testServer is an MCP server with an echo tool and a wait tool, which
// blocks until its call is cancelled.
type testServer struct {
	srv       *mcp.Server
	started   chan struct{} // a wait call started
	cancelled chan struct{} // a wait call saw its context cancelled
}

func newTestServer() *testServer {
	ts := &testServer{started: make(chan struct{}, 1), cancelled: make(chan struct{}, 1)}
	ts.srv = mcp.NewServer(&mcp.Implementation{Name: "test", Version: "0"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	ts.srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	ts.srv.AddTool(&mcp.Tool{Name: "wait", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ts.started <- struct{}{}
			select {
			case <-ctx.Done():
				ts.cancelled <- struct{}{}
				return nil, ctx.Err()
			case <-time.After(time.Minute):
				return &mcp.CallToolResult{}, nil
			}
		})
	return ts
}

// addLate adds a tool, which tells connected clients their list changed.
func (ts *testServer) addLate() {
	ts.srv.AddTool(&mcp.Tool{Name: "late", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
}

// relayed starts Relay between remote and a local in-memory connection and
// returns the client's transport and Relay's result.
func relayed(t *testing.T, remote mcp.Connection) (mcp.Transport, chan error) {
	t.Helper()
	localSide, clientSide := mcp.NewInMemoryTransports()
	local, err := localSide.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Relay(context.Background(), local, remote) }()
	t.Cleanup(func() {
		local.Close()
		remote.Close()
	})
	return clientSide, done
}

// client connects an SDK client over t; changed hears list_changed.
func client(t *testing.T, tr mcp.Transport, version string, roots ...*mcp.Root) (*mcp.ClientSession, chan struct{}) {
	t.Helper()
	changed := make(chan struct{}, 8)
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	c.AddRoots(roots...)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect through the relay: %v", err)
	}
	return cs, changed
}

func echo(t *testing.T, cs *mcp.ClientSession, arg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"x": arg}})
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != `{"x":"`+arg+`"}` {
		t.Fatalf("echo %q: %+v %v", arg, res, err)
	}
}

func wait(t *testing.T, c chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(bound):
		t.Fatalf("no %s within %v", what, bound)
	}
}

// cancelWait calls the wait tool and cancels the call: the server sees the
// client's notifications/cancelled.
func cancelWait(t *testing.T, ts *testServer, cs *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
		errc <- err
	}()
	wait(t, ts.started, "wait call at the server")
	cancel()
	wait(t, ts.cancelled, "cancellation at the server")
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled call returned %v", err)
	}
}

func ended(t *testing.T, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(bound):
		t.Fatal("Relay did not return")
		return nil
	}
}

// TestRelayInMemory relays an SDK client to an SDK server over in-memory
// transports, in the newest protocol and in 2025-11-25: the handshake,
// tools/list and tools/call go through; so do the server's
// notifications/tools/list_changed, the client's notifications/cancelled
// (the server's handler sees its context cancelled), and, in 2025-11-25,
// a server's roots/list request and the client's answer. Closing the
// client ends Relay with nil, and closes the server's side.
func TestRelayInMemory(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol "+version, func(t *testing.T) {
			ts := newTestServer()
			serverSide, remoteSide := mcp.NewInMemoryTransports()
			ss, err := ts.srv.Connect(context.Background(), serverSide, nil)
			if err != nil {
				t.Fatal(err)
			}
			remote, _ := remoteSide.Connect(context.Background())
			tr, done := relayed(t, remote)
			cs, changed := client(t, tr, version, &mcp.Root{URI: "file:///tmp/root"})

			if diff := cmp.Diff([]string{"echo", "wait"}, mcptest.ToolNames(t, cs)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			echo(t, cs, "one")
			if version != "" {
				ctx, cancel := context.WithTimeout(context.Background(), bound)
				roots, err := ss.ListRoots(ctx, nil)
				cancel()
				if err != nil || len(roots.Roots) != 1 || roots.Roots[0].URI != "file:///tmp/root" {
					t.Errorf("roots/list from the server: %+v %v", roots, err)
				}
			}
			ts.addLate()
			wait(t, changed, "notifications/tools/list_changed")
			if diff := cmp.Diff([]string{"echo", "late", "wait"}, mcptest.ToolNames(t, cs)); diff != "" {
				t.Errorf("tools after list_changed (-want +got):\n%s", diff)
			}
			cancelWait(t, ts, cs)
			echo(t, cs, "after the cancel")

			cs.Close()
			if err := ended(t, done); err != nil {
				t.Errorf("Relay after the client closed: %v", err)
			}
			waited := make(chan struct{})
			go func() { ss.Wait(); close(waited) }()
			wait(t, waited, "end of the server's session")
		})
	}
}

// fakeRemote is a remote connection whose Write fails with writeErr for
// calls, and whose Read fails with readErr once told to.
type fakeRemote struct {
	writeErr error
	readErr  chan error
	once     sync.Once
	closed   chan struct{}
	written  chan jsonrpc.Message
}

func newFakeRemote(writeErr error) *fakeRemote {
	return &fakeRemote{writeErr: writeErr, readErr: make(chan error, 1), closed: make(chan struct{}), written: make(chan jsonrpc.Message, 16)}
}

func (f *fakeRemote) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case err := <-f.readErr:
		return nil, err
	case <-f.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fakeRemote) Write(_ context.Context, msg jsonrpc.Message) error {
	f.written <- msg
	if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() {
		return f.writeErr
	}
	return nil
}

func (f *fakeRemote) Close() error      { f.once.Do(func() { close(f.closed) }); return nil }
func (f *fakeRemote) SessionID() string { return "" }

// rawClient is the client's end of a relay, speaking raw JSON-RPC.
func rawClient(t *testing.T, tr mcp.Transport) mcp.Connection {
	t.Helper()
	c, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func read(t *testing.T, c mcp.Connection) (jsonrpc.Message, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	return c.Read(ctx)
}

// TestRelayAnswersRefusedCalls: a call the remote side does not take is
// answered to the client with an error carrying the remote side's
// JSON-RPC error code and message, so that no call hangs; a notification
// goes on in order; the relay keeps going.
func TestRelayAnswersRefusedCalls(t *testing.T) {
	refusal := &jsonrpc.Error{Code: -32020, Message: "protocol version not supported", Data: json.RawMessage(`{"supported":["2025-11-25"]}`)}
	remote := newFakeRemote(errors.Join(errors.New(`sending "tools/list"`), refusal))
	tr, done := relayed(t, remote)
	c := rawClient(t, tr)
	ctx := context.Background()
	id, _ := jsonrpc.MakeID(float64(7))
	c.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized"})
	c.Write(ctx, &jsonrpc.Request{ID: id, Method: "tools/list", Params: json.RawMessage(`{}`)})
	msg, err := read(t, c)
	resp, ok := msg.(*jsonrpc.Response)
	if err != nil || !ok {
		t.Fatalf("the client got %v %v, want an answer", msg, err)
	}
	var wire *jsonrpc.Error
	if resp.ID != id || !errors.As(resp.Error, &wire) || wire.Code != -32020 || !strings.Contains(wire.Message, "protocol version not supported") || string(wire.Data) != string(refusal.Data) {
		t.Errorf("answer %+v (%v)", resp, resp.Error)
	}
	if m := <-remote.written; m.(*jsonrpc.Request).Method != "notifications/initialized" {
		t.Errorf("the first message sent on is %+v", m)
	}
	select {
	case err := <-done:
		t.Fatalf("Relay ended after a refused call: %v", err)
	default:
	}
}

// TestRelayEndsWithRemote: when the remote side fails, Relay returns its
// error and closes the client's side.
func TestRelayEndsWithRemote(t *testing.T) {
	remote := newFakeRemote(nil)
	tr, done := relayed(t, remote)
	c := rawClient(t, tr)
	broken := errors.New("the server went away")
	remote.readErr <- broken
	if err := ended(t, done); !errors.Is(err, broken) {
		t.Errorf("Relay returned %v, want %v", err, broken)
	}
	if _, err := read(t, c); err == nil {
		t.Error("the client's side is still open")
	}
}

// TestRelayEndsWithLocal: the client's end of input ends Relay with nil
// and closes the remote side.
func TestRelayEndsWithLocal(t *testing.T) {
	remote := newFakeRemote(nil)
	tr, done := relayed(t, remote)
	rawClient(t, tr).Close()
	if err := ended(t, done); err != nil {
		t.Errorf("Relay returned %v", err)
	}
	select {
	case <-remote.closed:
	default:
		t.Error("the remote side is still open")
	}
}
