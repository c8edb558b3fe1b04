package runtime

import (
	"bufio"
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/mcpwire"
)

// stdioTransport is the client's side of a stdio server's pipes, in place of
// the SDK's mcp.IOTransport: each message is read as the SDK reads it but
// decoded once, in place (package mcpwire), and changed is told of the
// server's notifications/tools/list_changed as it is read, before the
// message after it.
type stdioTransport struct {
	proc    *spawn.Process
	changed func()
}

func (t stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	return &stdioConn{in: bufio.NewReaderSize(t.proc.Stdout, 64<<10), proc: t.proc, changed: t.changed}, nil
}

type stdioConn struct {
	in      *bufio.Reader // read by one Read at a time, the SDK's reader
	queue   []jsonrpc.Message
	proc    *spawn.Process
	changed func()

	mu  sync.Mutex // guards buf and writes
	buf []byte

	closeOnce sync.Once
}

// Read returns the next message; closing the connection ends a Read that
// waits.
func (c *stdioConn) Read(context.Context) (jsonrpc.Message, error) {
	if len(c.queue) == 0 {
		data, err := mcpwire.ReadFrame(c.in, maxFrame)
		if err != nil {
			return nil, err
		}
		if c.queue, err = decodeFrame(data); err != nil {
			return nil, err
		}
	}
	msg := c.queue[0]
	c.queue = c.queue[1:]
	if r, ok := msg.(*jsonrpc.Request); ok && !r.IsCall() && r.Method == "notifications/tools/list_changed" {
		c.changed()
	}
	return msg, nil
}

// decodeFrame decodes a frame's message, or a batch's, which a server of a
// protocol version before 2025-06-18 may send.
func decodeFrame(data []byte) ([]jsonrpc.Message, error) {
	if data[0] == '[' {
		return mcpwire.DecodeBatch(data)
	}
	msg, err := mcpwire.Decode(data)
	if err != nil {
		return nil, err
	}
	return []jsonrpc.Message{msg}, nil
}

// Write writes msg and a newline in one write.
func (c *stdioConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(append(c.buf[:0], data...), '\n')
	_, err = c.proc.Stdin.Write(c.buf)
	return err
}

// Close closes both pipes: the server reads the end of its input, and a
// Read waiting on its output ends.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.proc.Stdin.Close()
		c.proc.Stdout.Close()
	})
	return nil
}

// SessionID implements mcp.Connection: stdio has none.
func (c *stdioConn) SessionID() string { return "" }
