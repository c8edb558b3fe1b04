package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Large text results take a shortcut to the stdio transport.
//
// The SDK encodes a text result by escaping the text for the content block,
// escaping it again for the structured output, and re-scanning the output at
// each level of its nested marshalers; for a directory tree of a few hundred
// kilobytes that is most of the call. So, over stdio, encodeLargeText
// escapes the text once, parks it in the connection's splicer and hands the
// SDK the same result with a short placeholder instead of the text; the
// transport puts the escaped text back where the placeholder is, as it
// writes the response. The bytes on the wire are exactly those the SDK would
// have written (TestSplicedResultMatchesSDK). Over HTTP nothing changes.

// largeText is the size from which a text result takes the shortcut.
const largeText = 16 << 10

// A splicer holds the escaped texts that responses on one connection are
// waiting for, by placeholder.
type splicer struct {
	prefix  string // "zero-text-" and a random part, the start of every placeholder
	mu      sync.Mutex
	pending map[string][]byte
	next    uint64
}

func newSplicer() *splicer {
	var b [8]byte
	rand.Read(b[:])
	return &splicer{prefix: "zero-text-" + hex.EncodeToString(b[:]) + "-", pending: map[string][]byte{}}
}

type splicerKey struct{}

// add parks an escaped text and returns its placeholder. A text whose
// response is never written (the connection ends first) stays parked until
// the connection's splicer goes.
func (s *splicer) add(escaped []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	placeholder := s.prefix + strconv.FormatUint(s.next, 10)
	s.pending[placeholder] = escaped
	return placeholder
}

// appendSpliced appends result to dst with every quoted placeholder replaced
// by its text, and forgets the texts it used.
func (s *splicer) appendSpliced(dst, result []byte) []byte {
	if s == nil || !bytes.Contains(result, []byte(s.prefix)) {
		return append(dst, result...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		i := bytes.Index(result, []byte(`"`+s.prefix))
		if i < 0 {
			return append(dst, result...)
		}
		end := bytes.IndexByte(result[i+1:], '"')
		if end < 0 {
			return append(dst, result...)
		}
		placeholder := string(result[i+1 : i+1+end])
		escaped, ok := s.pending[placeholder]
		if !ok {
			dst = append(dst, result[:i+1]...)
			result = result[i+1:]
			continue
		}
		dst = append(append(dst, result[:i]...), escaped...)
		result = result[i+1+end+1:]
		if !bytes.Contains(result, []byte(`"`+placeholder+`"`)) {
			delete(s.pending, placeholder)
		}
	}
}

// encodeLargeText is receiving middleware for tools/call: see above.
func encodeLargeText(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		sp, _ := ctx.Value(splicerKey{}).(*splicer)
		r, ok := res.(*mcp.CallToolResult)
		if sp == nil || !ok || err != nil || method != "tools/call" {
			return res, err
		}
		text, ok := plainText(r)
		if !ok {
			return res, err
		}
		escaped, merr := json.Marshal(text) // as the SDK's marshalers escape it
		if merr != nil {
			return res, err
		}
		placeholder := sp.add(escaped)
		shell := *r
		shell.Content = []mcp.Content{&mcp.TextContent{Text: placeholder}}
		shell.StructuredContent = TextOutput{Content: placeholder}
		return &shell, nil
	}
}

// plainText returns the text of a result made by [TextResult] with at least
// largeText bytes of it.
func plainText(r *mcp.CallToolResult) (string, bool) {
	if len(r.Content) != 1 {
		return "", false
	}
	tc, ok := r.Content[0].(*mcp.TextContent)
	if !ok || tc.Meta != nil || tc.Annotations != nil || len(tc.Text) < largeText {
		return "", false
	}
	if out, ok := r.StructuredContent.(TextOutput); !ok || out.Content != tc.Text {
		return "", false
	}
	return tc.Text, true
}
