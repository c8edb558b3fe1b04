package mcptest

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/mcpserver"
)

// Serve runs srv with mcpserver.Serve, as `zero mcp` does, over in-process
// pipes, with the reply budget maxReply (0: the default), and returns a
// connected client session. Both end with the test.
func Serve(t testing.TB, srv *mcp.Server, maxReply int) *mcp.ClientSession {
	t.Helper()
	cs, _ := ServeWire(t, srv, maxReply)
	return cs
}

// ServeWire is Serve that also returns the wire the server answers on.
func ServeWire(t testing.TB, srv *mcp.Server, maxReply int) (*mcp.ClientSession, *Wire) {
	t.Helper()
	wire := &Wire{}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptest", Version: "0"}, nil)
	cs := connect(t, client, nil, wire, func(ctx context.Context, in io.ReadCloser, out io.Writer) error {
		return mcpserver.Serve(ctx, srv, mcpserver.Options{Stdin: in, Stdout: out, Stderr: io.Discard, MaxReply: maxReply})
	})
	return cs, wire
}

// A Wire passes on what a server writes and measures its lines, each one
// message.
type Wire struct {
	w       io.Writer
	mu      sync.Mutex
	partial int // bytes of the line being written
	last    int // bytes of the last whole line, its newline left out
}

func (w *Wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	for q := p; len(q) > 0; {
		i := bytes.IndexByte(q, '\n')
		if i < 0 {
			w.partial += len(q)
			break
		}
		w.last, w.partial = w.partial+i, 0
		q = q[i+1:]
	}
	w.mu.Unlock()
	return w.w.Write(p)
}

// Last returns the size of the last message the server wrote.
func (w *Wire) Last() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}
