package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The bytes on the wire.
//
// JSON goes out without HTML escaping: `<`, `>` and `&` are written as
// themselves, as the reference servers (JSON.stringify) write them, where
// Go's encoding/json, which the SDK marshals with, writes each as a 6-byte
// \u003c, \u003e or \u0026. Every message the stdio transport writes and
// every JSON or SSE body the HTTP transport writes passes through
// [appendUnescapedHTML], which undoes exactly those three escapes; nothing
// else changes (TestStdioMatchesSDK, TestSplicedResultMatchesSDK).
//
// Large text results take a shortcut to the stdio transport. The SDK
// encodes a text result by escaping the text for the content block,
// escaping it again for the structured output, and re-scanning the output at
// each level of its nested marshalers; for a directory tree of a few hundred
// kilobytes that is most of the call. So, over stdio, [encodeResult]
// escapes the text once, parks it in the connection's splicer and hands the
// SDK the same result with a short placeholder instead of the text; the
// transport puts the escaped text back where the placeholder is, as it
// writes the response. The bytes on the wire are exactly those the SDK would
// have written, HTML escapes undone. Over HTTP nothing is spliced.
//
// The same middleware enforces the reply budget (budget.go): a tools/call
// result over it becomes a tool error.

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

// appendSpliced appends result to dst with HTML escapes undone and every
// quoted placeholder replaced by its text, and forgets the texts it used.
func (s *splicer) appendSpliced(dst, result []byte) []byte {
	if s == nil || !bytes.Contains(result, []byte(s.prefix)) {
		return appendUnescapedHTML(dst, result)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		i := bytes.Index(result, []byte(`"`+s.prefix))
		if i < 0 {
			return appendUnescapedHTML(dst, result)
		}
		end := bytes.IndexByte(result[i+1:], '"')
		if end < 0 {
			return appendUnescapedHTML(dst, result)
		}
		placeholder := string(result[i+1 : i+1+end])
		escaped, ok := s.pending[placeholder]
		if !ok {
			dst = appendUnescapedHTML(dst, result[:i+1])
			result = result[i+1:]
			continue
		}
		dst = append(appendUnescapedHTML(dst, result[:i]), escaped...)
		result = result[i+1+end+1:]
		if !bytes.Contains(result, []byte(`"`+placeholder+`"`)) {
			delete(s.pending, placeholder)
		}
	}
}

// appendUnescapedHTML appends the JSON text src to dst with each \u003c,
// \u003e and \u0026 escape written as the character itself. src must be
// valid JSON, as the SDK writes it: every backslash in it then starts an
// escape, so an escaped backslash followed by "u003c" stays as it is.
func appendUnescapedHTML(dst, src []byte) []byte {
	dst, tail := appendUnescapedHTMLPart(dst, src)
	return append(dst, tail...)
}

// appendUnescapedHTMLPart is appendUnescapedHTML for a part of the JSON
// text: it leaves out, and returns, a tail of src that may be an escape
// that the next part completes.
func appendUnescapedHTMLPart(dst, src []byte) (out, tail []byte) {
	for {
		i := bytes.IndexByte(src, '\\')
		switch {
		case i < 0:
			return append(dst, src...), nil
		case i+1 >= len(src) || src[i+1] == 'u' && i+6 > len(src):
			return append(dst, src[:i]...), src[i:]
		}
		if src[i+1] == 'u' && src[i+2] == '0' && src[i+3] == '0' {
			if c := htmlEscaped(src[i+4], src[i+5]); c != 0 {
				dst = append(append(dst, src[:i]...), c)
				src = src[i+6:]
				continue
			}
		}
		dst = append(dst, src[:i+2]...)
		src = src[i+2:]
	}
}

// htmlEscaped returns the character that \u00XY escapes if it is one that
// encoding/json escapes for HTML, in the lower case it writes, else 0.
func htmlEscaped(x, y byte) byte {
	switch {
	case x == '3' && y == 'c':
		return '<'
	case x == '3' && y == 'e':
		return '>'
	case x == '2' && y == '6':
		return '&'
	}
	return 0
}

// appendQuoted appends s as a JSON string, escaped as encoding/json escapes
// it but without HTML escaping (FuzzUnescapedHTML compares the two): `"`,
// `\` and the control characters, U+2028 and U+2029, and invalid UTF-8 as
// \ufffd. It writes into dst directly, with no encoder between.
func appendQuoted(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = slices.Grow(dst, len(s)+len(s)/4+2)
	dst = append(dst, '"')
	start := 0 // s[start:i] is written as it is, later
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiExtra[c] == 0 {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			if short := shortEscape[c]; short != 0 {
				dst = append(dst, '\\', short)
			} else {
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// shortEscape is the two-character escape of the ASCII bytes that have one.
var shortEscape = [utf8.RuneSelf]byte{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// encodeResult is receiving middleware for tools/call: it turns a result
// over the reply budget into a tool error and, over stdio, splices large
// texts (see above).
func encodeResult(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		sp, _ := ctx.Value(splicerKey{}).(*splicer)
		call := &toolCall{splicing: sp != nil}
		res, err := next(context.WithValue(ctx, toolCallKey{}, call), method, req)
		r, ok := res.(*mcp.CallToolResult)
		if !ok || err != nil {
			return res, err
		}
		tool := ""
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
			tool = p.Name
		}
		if r == call.quotedResult && r != nil {
			if size := textResultSize(len(call.quoted)); size > ReplyBudget(ctx) {
				return overBudget(ctx, tool, size, call), nil
			}
			return spliceText(sp, r, call.quoted), nil
		}
		text, ok := plainText(r)
		if sp == nil || !ok {
			if size := ResultSize(r); size > ReplyBudget(ctx) {
				return overBudget(ctx, tool, size, call), nil
			}
			return res, nil
		}
		escaped := appendQuoted(nil, text)
		size := textResultSize(len(escaped))
		if r.Meta != nil || r.IsError {
			size = ResultSize(r)
		}
		if size > ReplyBudget(ctx) {
			return overBudget(ctx, tool, size, call), nil
		}
		return spliceText(sp, r, escaped), nil
	}
}

// spliceText parks the quoted text of r, a [TextResult], and returns r with
// a placeholder in its place.
func spliceText(sp *splicer, r *mcp.CallToolResult, quoted []byte) *mcp.CallToolResult {
	placeholder := sp.add(quoted)
	shell := *r
	shell.Content = []mcp.Content{&mcp.TextContent{Text: placeholder}}
	shell.StructuredContent = TextOutput{Content: placeholder}
	return &shell
}

// QuotedTextResult is [TextResult] for a text, valid UTF-8, that the tool
// has written as a JSON string already: quotes included, escaped as
// encoding/json escapes but without HTML escaping (appendQuoted). Over stdio, the quoted text goes
// into the reply as it is, which spares escaping a large text after it was
// made; the reply budget holds as for any result. Elsewhere (over HTTP, or
// called outside a server) the text is read back, and the result is
// TextResult's.
func QuotedTextResult(ctx context.Context, quoted []byte) *mcp.CallToolResult {
	if call, ok := ctx.Value(toolCallKey{}).(*toolCall); ok && call.splicing {
		r := TextResult("")
		call.quoted, call.quotedResult = quoted, r
		return r
	}
	var text string
	if err := json.Unmarshal(quoted, &text); err != nil {
		return ErrorResult(fmt.Errorf("internal error: a quoted text does not read back: %w", err))
	}
	return TextResult(text)
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
