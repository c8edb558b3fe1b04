package mcpwire

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A ClientConn is the client's side of a stdio server's pipes, an
// mcp.Connection in place of the one the SDK's mcp.IOTransport makes: each
// message is read as the SDK reads it ([ReadFrame]) but decoded once, in
// place, and a batch, which a server of a protocol version before 2025-06-18
// may send, is handed on a message at a time. The workspace runtime's client
// of a stdio server and an agent's child servers use it.
type ClientConn struct {
	in       *bufio.Reader // read by one Read at a time, the SDK's reader
	max      int
	queue    []jsonrpc.Message
	out      io.WriteCloser
	stdout   io.Closer
	notified func(method string)

	mu  sync.Mutex // guards buf and writes
	buf []byte

	closeOnce sync.Once
}

// NewClientConn returns the connection over a server's stdout and stdin,
// whose frames may hold at most max bytes. notified, if not nil, is told of
// each notification's method as it is read, before the message after it is
// handled. (The SDK hands notifications to handlers of their own, which may
// run after a later response is delivered.)
func NewClientConn(stdout io.ReadCloser, stdin io.WriteCloser, max int, notified func(method string)) *ClientConn {
	return &ClientConn{in: bufio.NewReaderSize(stdout, 64<<10), max: max, out: stdin, stdout: stdout, notified: notified}
}

// Read returns the next message; closing the connection ends a Read that
// waits.
func (c *ClientConn) Read(context.Context) (jsonrpc.Message, error) {
	if len(c.queue) == 0 {
		data, err := ReadFrame(c.in, c.max)
		if err != nil {
			return nil, err
		}
		if c.queue, err = DecodeFrame(data); err != nil {
			return nil, err
		}
	}
	msg := c.queue[0]
	c.queue = c.queue[1:]
	if r, ok := msg.(*jsonrpc.Request); ok && !r.IsCall() && c.notified != nil {
		c.notified(r.Method)
	}
	return msg, nil
}

// DecodeFrame decodes a frame's message, or a batch's.
func DecodeFrame(data []byte) ([]jsonrpc.Message, error) {
	if data[0] == '[' {
		return DecodeBatch(data)
	}
	msg, err := Decode(data)
	if err != nil {
		return nil, err
	}
	return []jsonrpc.Message{msg}, nil
}

// Write writes msg and a newline in one write.
func (c *ClientConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(append(c.buf[:0], data...), '\n')
	_, err = c.out.Write(c.buf)
	return err
}

// Close closes both pipes: the server reads the end of its input, and a
// Read waiting on its output ends.
func (c *ClientConn) Close() error {
	c.closeOnce.Do(func() {
		c.out.Close()
		c.stdout.Close()
	})
	return nil
}

// SessionID implements mcp.Connection: stdio has none.
func (c *ClientConn) SessionID() string { return "" }
