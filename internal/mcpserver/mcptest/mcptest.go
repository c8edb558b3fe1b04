// Package mcptest connects, for tests, an SDK client to a server over Zero's
// own stdio transport (through in-process pipes), and reads tool results.
package mcptest

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/mcpserver"
)

// Connect serves srv over mcpserver.StdioTransport and returns a connected
// client session. Both end with the test.
func Connect(t testing.TB, srv *mcp.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	return ConnectClient(t, srv, mcp.NewClient(&mcp.Implementation{Name: "mcptest", Version: "0"}, opts), nil)
}

// ConnectClient is Connect with a client the test configured, for instance
// with roots, and session options, for instance an older protocol version.
func ConnectClient(t testing.TB, srv *mcp.Server, client *mcp.Client, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- srv.Run(ctx, &mcpserver.StdioTransport{In: serverIn, Out: serverOut})
		serverOut.Close()
	}()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, opts)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return cs
}

// Call calls a tool and returns its text and whether it is a tool error. A
// protocol error fails the test.
func Call(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) (text string, isError bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error: %v", tool, args, err)
	}
	return Text(res), res.IsError
}

// Text joins the text content blocks of a result.
func Text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
