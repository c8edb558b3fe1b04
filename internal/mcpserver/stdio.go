package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/mcpwire"
)

// This file holds a leaner stdio transport than the SDK's mcp.StdioTransport,
// with the same behaviour on the wire, save the differences listed below. The
// SDK's transport decodes every message twice (once with a streaming decoder,
// once more as a batch attempt), allocating a fresh 32 KiB buffer each time,
// and re-encodes every response, re-validating the result JSON that the SDK
// has just produced. This one finds where a message ends, decodes it once in
// place, and writes the response envelope around the result bytes.
//
// Behaviour kept from the SDK (v1.8.0), which FuzzStdioFraming checks:
//   - a stream of JSON values with whitespace between them: a message may span
//     lines, blank lines are skipped, the last message needs no newline;
//   - the byte right after a message, if any, must be a newline or a carriage
//     return (so a space after a message is an error, and a message may follow
//     a lone carriage return);
//   - a frame over MaxFrame bytes, nesting deeper than 1000, malformed JSON,
//     other trailing data or a bad envelope ends the connection with an error,
//     as the SDK's does (no -32700 reply);
//   - object keys match case-sensitively;
//   - JSON-RPC batches are accepted before a session negotiates 2025-06-18 or
//     later and answered as one array, and refused after.
//
// Deliberate differences:
//   - At the end of the input, every request already read is answered before
//     the connection ends (Read reports the end only once no request waits
//     for its response, or a cancellation dropped it); the SDK's ends at once
//     and drops them, so `printf '%s\n' "$REQUEST" | zero mcp ...` printed
//     nothing.
//   - `<`, `>` and `&` go out as themselves, not as `\u003c` and so on
//     (encode.go), as the reference servers write them.
//   - Zero checks the byte after every message, waiting for it if need be; the
//     SDK checks it only if its decoder has read it already, so a message that
//     ends one of its reads escapes the check.
//   - A batch's notifications wait for no response. The SDK keys a batch's
//     requests by ID, notifications included (all with the zero ID), so it
//     refuses a batch with two notifications, or with one after an earlier
//     batch with one, and never answers a batch that holds one.
//   - MaxFrame counts a frame's bytes, the whitespace before it included; the
//     SDK counts what its decoder reads, which may run into the next frame.

// MaxFrame is the largest message the stdio transport reads, as the SDK's
// mcp.DefaultMaxLineLength.
const MaxFrame = mcp.DefaultMaxLineLength

// batchlessVersion is the first protocol version without JSON-RPC batches.
const batchlessVersion = "2025-06-18"

// A StdioTransport connects an MCP server to a reader and a writer, usually
// the process's stdin and stdout.
type StdioTransport struct {
	In  io.ReadCloser
	Out io.Writer

	splicer *splicer // set by Serve; see encode.go
}

// Connect implements [mcp.Transport].
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		out:      t.Out,
		in:       t.In,
		incoming: make(chan frame),
		closed:   make(chan struct{}),
		splicer:  t.splicer,
	}
	go c.readLoop(bufio.NewReaderSize(t.In, 64<<10))
	return c, nil
}

type frame struct {
	data []byte
	err  error
}

type stdioConn struct {
	in       io.ReadCloser
	incoming chan frame        // from readLoop
	queue    []jsonrpc.Message // the rest of a batch

	mu      sync.Mutex // guards the fields below and writes to out
	out     io.Writer
	buf     []byte
	version string // negotiated protocol version, once known
	initID  jsonrpc.ID
	batches map[jsonrpc.ID]*batch
	splicer *splicer
	open    map[jsonrpc.ID]bool // requests read and not yet answered
	drained chan struct{}       // closed when open empties, while a Read waits at the end

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// batch collects the responses to one incoming batch.
type batch struct {
	pending   int
	responses []*jsonrpc.Response
	index     map[jsonrpc.ID]int
}

// readLoop reads frames and hands them to Read. It runs on its own goroutine
// so that Close can unblock a Read even when the input cannot be interrupted.
func (c *stdioConn) readLoop(r *bufio.Reader) {
	for {
		data, err := mcpwire.ReadFrame(r, MaxFrame)
		select {
		case c.incoming <- frame{data, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read implements [mcp.Connection].
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		msg := c.queue[0]
		c.queue = c.queue[1:]
		c.track(msg)
		return msg, nil
	}
	var f frame
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case f = <-c.incoming:
	case <-c.closed:
		return nil, io.EOF
	}
	if errors.Is(f.err, io.EOF) {
		return nil, c.drain(ctx)
	}
	if f.err != nil {
		return nil, f.err
	}
	if f.data[0] != '[' {
		msg, err := mcpwire.Decode(f.data)
		if err != nil {
			return nil, err
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" && req.ID.IsValid() {
			c.mu.Lock()
			c.initID = req.ID
			c.mu.Unlock()
		}
		c.track(msg)
		return msg, nil
	}
	return c.readBatch(f.data)
}

// track notes a request that waits for its response, and forgets one that
// a notifications/cancelled names.
func (c *stdioConn) track(msg jsonrpc.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trackLocked(msg)
}

// trackLocked is track with c.mu held.
func (c *stdioConn) trackLocked(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return
	}
	if req.ID.IsValid() {
		if c.open == nil {
			c.open = map[jsonrpc.ID]bool{}
		}
		c.open[req.ID] = true
		return
	}
	if req.Method == "notifications/cancelled" {
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
				c.answered(id)
			}
		}
	}
}

// answered forgets a request; c.mu is held.
func (c *stdioConn) answered(id jsonrpc.ID) {
	delete(c.open, id)
	if len(c.open) == 0 && c.drained != nil {
		close(c.drained)
		c.drained = nil
	}
}

// drain waits, at the end of the input, until every request read has been
// answered (or the connection closes, or ctx ends), then reports io.EOF.
func (c *stdioConn) drain(ctx context.Context) error {
	c.mu.Lock()
	if len(c.open) == 0 {
		c.mu.Unlock()
		return io.EOF
	}
	if c.drained == nil {
		c.drained = make(chan struct{})
	}
	done := c.drained
	c.mu.Unlock()
	select {
	case <-done:
		return io.EOF
	case <-c.closed:
		return io.EOF
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *stdioConn) readBatch(data []byte) (jsonrpc.Message, error) {
	msgs, err := mcpwire.DecodeBatch(data)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version >= batchlessVersion {
		return nil, fmt.Errorf("JSON-RPC batching is not supported in %s and later (request version: %s)", batchlessVersion, c.version)
	}
	b := &batch{index: map[jsonrpc.ID]int{}}
	for _, msg := range msgs {
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.ID.IsValid() {
			continue
		}
		if _, dup := b.index[req.ID]; dup {
			return nil, fmt.Errorf("duplicate message ID %q", req.ID)
		}
		if _, seen := c.batches[req.ID]; seen {
			return nil, fmt.Errorf("invalid request: batch contains previously seen request %v", req.ID.Raw())
		}
		b.index[req.ID] = len(b.responses)
		b.responses = append(b.responses, nil)
		b.pending++
	}
	if b.pending > 0 {
		if c.batches == nil {
			c.batches = map[jsonrpc.ID]*batch{}
		}
		for id := range b.index {
			c.batches[id] = b
		}
	}
	c.queue = msgs[1:]
	c.trackLocked(msgs[0])
	return msgs[0], nil
}

// Write implements [mcp.Connection].
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.answered(resp.ID)
		if c.initID.IsValid() && resp.ID == c.initID {
			c.noteVersion(resp)
		}
		if b, ok := c.batches[resp.ID]; ok {
			delete(c.batches, resp.ID)
			b.responses[b.index[resp.ID]] = resp
			if b.pending--; b.pending > 0 {
				return nil
			}
			return c.writeBatch(b.responses)
		}
	}
	c.buf = c.buf[:0]
	var err error
	if c.buf, err = c.appendMessage(c.buf, msg); err != nil {
		return err
	}
	c.buf = append(c.buf, '\n')
	_, err = c.out.Write(c.buf)
	return err
}

func (c *stdioConn) writeBatch(responses []*jsonrpc.Response) error {
	buf := []byte{'['}
	for i, r := range responses {
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = c.appendMessage(buf, r); err != nil {
			return err
		}
	}
	buf = append(buf, ']', '\n')
	_, err := c.out.Write(buf)
	return err
}

// appendMessage appends msg's wire form, without HTML escapes (see
// encode.go). A successful response to a call with a numeric ID is written
// around its result, which the SDK has just marshaled, with any large text
// spliced in; everything else goes through the SDK's encoder.
func (c *stdioConn) appendMessage(buf []byte, msg jsonrpc.Message) ([]byte, error) {
	start := len(buf)
	resp, ok := msg.(*jsonrpc.Response)
	if ok && resp.Error == nil && len(resp.Result) > 0 {
		buf = append(buf, `{"jsonrpc":"2.0","id":`...)
		switch id := resp.ID.Raw().(type) {
		case int64:
			buf = strconv.AppendInt(buf, id, 10)
			buf = append(buf, `,"result":`...)
			buf = c.splicer.appendSpliced(buf, resp.Result)
			return append(buf, '}'), nil
		}
		buf = buf[:start]
		if c.splicer != nil {
			spliced := *resp
			spliced.Result = c.splicer.appendSpliced(nil, resp.Result)
			msg = &spliced
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return buf[:start], fmt.Errorf("marshaling message: %v", err)
	}
	return appendUnescapedHTML(buf[:start], data), nil
}

// noteVersion records the protocol version the server answered initialize
// with: it decides whether batches are still accepted.
func (c *stdioConn) noteVersion(resp *jsonrpc.Response) {
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if resp.Error == nil && json.Unmarshal(resp.Result, &r) == nil {
		c.version = r.ProtocolVersion
	}
}

// Close implements [mcp.Connection].
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.in.Close()
		close(c.closed)
	})
	return c.closeErr
}

// SessionID implements [mcp.Connection]; stdio has no session ID.
func (c *stdioConn) SessionID() string { return "" }
