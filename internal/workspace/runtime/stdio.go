package runtime

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/mcpwire"
)

// stdioTransport is the client's side of a stdio server's pipes, in place of
// the SDK's mcp.IOTransport (see mcpwire.ClientConn): changed is told of the
// server's notifications/tools/list_changed as it is read, before the
// message after it.
type stdioTransport struct {
	proc    *spawn.Process
	changed func()
}

func (t stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	return mcpwire.NewClientConn(t.proc.Stdout, t.proc.Stdin, maxFrame, func(method string) {
		if method == "notifications/tools/list_changed" {
			t.changed()
		}
	}), nil
}
