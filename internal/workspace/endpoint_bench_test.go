package workspace

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime/debug"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/workspace/runtime/runtimetest"
)

// The endpoint's cost, for issue 14's targets: at most 0.3 ms added at the
// median to a no-op call (the toolserver's echo) over calling the same
// server directly, and at least 1,000 calls/s with 8 in flight. Run both in
// one go and compare their ns/op (bench/endpoint.sh does, with medians):
//
//	go test -run '^$' -bench 'BenchmarkEcho' -count 5 ./internal/workspace
//
// Each call is one client round trip; the endpoint's includes its audit
// record. Client and workspace share this process and its collector, run
// at zero serve's percentage (serveGCPercent). BenchmarkSDKFloor is the
// Go SDK's own streamable HTTP round trip to a tool that does nothing, in
// this process: the part of the endpoint's cost that is not Zero's.

// BenchmarkEchoDirect calls the toolserver's echo over stdio from the Go
// SDK's client, as a local client would without the workspace.
func BenchmarkEchoDirect(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(serveGCPercent))
	benchEcho(b, toolserver(b), "echo")
}

// toolserver starts the toolserver and connects the Go SDK's client to it
// over stdio, closed when b ends.
func toolserver(b *testing.B) *mcp.ClientSession {
	cmd := exec.Command(runtimetest.Toolserver(b))
	cmd.Env = append(os.Environ(), "CANARY=")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// BenchmarkEchoEndpoint calls the same echo through /mcp: the HTTP
// exchange, the bearer check, the endpoint, the runtime's drift gate and
// audit record, and the runtime's own stdio connection to the server.
func BenchmarkEchoEndpoint(b *testing.B) {
	cs := benchEndpoint(b)
	benchEcho(b, cs, "drifter__echo")
}

// BenchmarkEchoEndpoint8 keeps 8 calls in flight through /mcp and reports
// calls/s.
func BenchmarkEchoEndpoint8(b *testing.B) {
	cs := benchEndpoint(b)
	benchEcho(b, cs, "drifter__echo") // warm
	b.ResetTimer()
	start := time.Now()
	work := make(chan struct{})
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			var first error
			for range work {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "drifter__echo", Arguments: map[string]any{}})
				if first == nil && (err != nil || res.IsError) {
					first = err
					if first == nil {
						first = context.Canceled
					}
				}
			}
			errs <- first
		}()
	}
	for range b.N {
		work <- struct{}{}
	}
	close(work)
	for range 8 {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
}

func benchEndpoint(b *testing.B) *mcp.ClientSession {
	b.Cleanup(func(old int) func() { return func() { debug.SetGCPercent(old) } }(debug.SetGCPercent(serveGCPercent)))
	ts := start(b, Options{})
	id, _ := ts.driftServer(`{"echo": {"description": "Echoes."}}`)
	ts.browser.must("POST", "/api/servers/"+id+"/test", nil, 200, nil)
	cs, _ := ts.mcpClient(ts.bearer().token)
	return cs
}

func benchEcho(b *testing.B, cs *mcp.ClientSession, name string) {
	b.Helper()
	call := func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", name, err, res)
		}
	}
	for range 20 {
		call()
	}
	b.ResetTimer()
	for range b.N {
		call()
	}
}

// BenchmarkSDKFloor calls a tool that does nothing on an SDK server behind
// the SDK's streamable HTTP handler (JSON answers, as /mcp), from the SDK's
// client, in this process: the SDK's share of BenchmarkEchoEndpoint.
func BenchmarkSDKFloor(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(serveGCPercent))
	s := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "0"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	defer hs.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchEcho(b, cs, "echo")
}

// BenchmarkSDKProxy calls the toolserver's echo through the least an SDK
// proxy does: an SDK server behind the SDK's streamable HTTP handler whose
// tool calls the server over stdio with the SDK's client and returns its
// result. BenchmarkEchoEndpoint minus this is what Zero adds to a bare
// proxy: the bearer check, the gate, sanitizing and the call record.
func BenchmarkSDKProxy(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(serveGCPercent))
	upstream := toolserver(b)
	s := mcp.NewServer(&mcp.Implementation{Name: "proxy", Version: "0"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return upstream.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: req.Params.Arguments})
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	defer hs.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchEcho(b, cs, "echo")
}
