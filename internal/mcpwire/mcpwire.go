// Package mcpwire reads the JSON-RPC messages of MCP's stdio transport as
// the official SDK (v1.8.0) reads them, but each decoded once, in place: the
// SDK's transport decodes every message twice (once with a streaming decoder,
// once more as a batch attempt), allocating a fresh 32 KiB buffer each time.
// Zero's stdio servers (package mcpserver), the workspace runtime's client
// of a stdio server and an agent's client of its child servers
// ([ClientConn]) share it.
package mcpwire

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	segjson "github.com/segmentio/encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MaxDepth bounds the nesting of a message, as the SDK's decoder does.
const MaxDepth = 1000

// Errors of ReadFrame.
var (
	ErrFrameTooLarge = errors.New("inbound JSON-RPC frame exceeded the configured maximum line length")
	ErrTooDeep       = fmt.Errorf("json: exceeded maximum nesting depth of %d", MaxDepth)
	ErrTrailing      = errors.New("invalid trailing data at the end of stream")
)

// ReadFrame returns the next JSON value as the SDK's decoder reads it:
// whitespace before it is skipped, and the byte after it, if any, must be a
// newline or a carriage return. A value may span lines and reads. The frame's
// bytes, the whitespace before it included, count towards max; past it the
// error is ErrFrameTooLarge.
func ReadFrame(r *bufio.Reader, max int) ([]byte, error) {
	n := 0
	for {
		if _, err := r.Peek(1); err != nil {
			return nil, err // io.EOF after whitespace alone is a clean end
		}
		chunk, _ := r.Peek(r.Buffered())
		i := 0
		for i < len(chunk) && isSpace(chunk[i]) {
			i++
		}
		r.Discard(i)
		if n += i; n > max {
			return nil, ErrFrameTooLarge
		}
		if i < len(chunk) {
			break
		}
	}
	var s valueScanner
	var data []byte
	for {
		if _, err := r.Peek(1); err != nil {
			if !errors.Is(err, io.EOF) {
				return nil, err
			}
			if !s.endsAtEOF() {
				return nil, io.ErrUnexpectedEOF
			}
			return data, nil
		}
		chunk, _ := r.Peek(r.Buffered())
		end, complete, err := s.scan(chunk)
		if err != nil {
			return nil, err
		}
		if n+len(data)+end > max {
			return nil, ErrFrameTooLarge
		}
		data = append(data, chunk[:end]...)
		r.Discard(end)
		if complete {
			break
		}
	}
	next, err := r.Peek(1)
	switch {
	case err == nil && next[0] != '\n' && next[0] != '\r':
		return nil, ErrTrailing
	case err != nil && !errors.Is(err, io.EOF):
		return nil, err
	}
	return data, nil
}

// A valueScanner finds where a JSON value ends, across reads, checking the
// nesting depth on the way. It does not validate the JSON; the decoder does
// that.
type valueScanner struct {
	depth             int
	inString, escaped bool
}

// scan goes on through b from where the last call left off and returns
// where in b the value ends; complete is false when it goes on past b.
func (s *valueScanner) scan(b []byte) (end int, complete bool, err error) {
	for i, ch := range b {
		if s.inString {
			switch {
			case s.escaped:
				s.escaped = false
			case ch == '\\':
				s.escaped = true
			case ch == '"':
				s.inString = false
				if s.depth == 0 {
					return i + 1, true, nil
				}
			}
			continue
		}
		switch ch {
		case '"':
			s.inString = true
		case '{', '[':
			s.depth++
			if s.depth > MaxDepth {
				return 0, false, ErrTooDeep
			}
		case '}', ']':
			s.depth--
			if s.depth <= 0 {
				return i + 1, true, nil
			}
		case ' ', '\t', '\r', '\n':
			if s.depth == 0 {
				return i, true, nil // the end of a bare literal
			}
		}
	}
	return len(b), false, nil
}

// endsAtEOF reports whether the value scanned so far is complete if the
// input ends here: a bare literal is.
func (s *valueScanner) endsAtEOF() bool { return s.depth == 0 && !s.inString }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// wireMessage is the JSON-RPC envelope, decoded as the SDK decodes it.
type wireMessage struct {
	Version string          `json:"jsonrpc"`
	ID      any             `json:"id,omitempty"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *jsonrpc.Error  `json:"error,omitempty"`
}

// Decode decodes one message exactly as jsonrpc.DecodeMessage does,
// without that function's per-call decoder buffer.
func Decode(data []byte) (jsonrpc.Message, error) {
	var w wireMessage
	if _, err := segjson.Parse(data, &w, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if w.Version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", w.Version, "2.0")
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, err
	}
	if len(w.Method) > 0 {
		var method string
		if _, err := segjson.Parse(w.Method, &method, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request"}
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		resp.Error = w.Error
	}
	return resp, nil
}

// DecodeBatch decodes a JSON-RPC batch: an array of one or more messages,
// each as Decode decodes it.
func DecodeBatch(data []byte) ([]jsonrpc.Message, error) {
	var raws []json.RawMessage
	if _, err := segjson.Parse(data, &raws, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, errors.New("empty batch")
	}
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, raw := range raws {
		msg, err := Decode(raw)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, msg)
	}
	return msgs, nil
}
