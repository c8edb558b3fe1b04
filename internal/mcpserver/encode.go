package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// largeText is the size from which a text result is encoded by
// encodeLargeText rather than by the SDK's marshaler.
const largeText = 16 << 10

// encodeLargeText is receiving middleware for tools/call. The SDK encodes a
// text result by escaping the text once for the content block and once more
// for the structured output, and re-scanning the output at every level of
// its nested marshalers: for a directory tree of a few hundred kilobytes
// that is most of the call. This middleware wraps a large plain-text result
// in encodedText, which escapes the text once and lets the SDK encode
// everything else, so the bytes on the wire stay exactly the SDK's.
func encodeLargeText(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && err == nil && method == "tools/call" {
			if _, ok := plainText(r); ok {
				return encodedText{r}, nil
			}
		}
		return res, err
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

// encodedText is a CallToolResult (it embeds one, so the SDK can still set
// its metadata) that marshals its text once.
type encodedText struct {
	*mcp.CallToolResult
}

// MarshalJSON has the SDK marshal the result with a random placeholder for
// the text, then puts the text, escaped once by encoding/json as the SDK
// would, where the placeholder is.
func (r encodedText) MarshalJSON() ([]byte, error) {
	text, ok := plainText(r.CallToolResult)
	if !ok {
		return json.Marshal(r.CallToolResult)
	}
	var nonce [16]byte
	rand.Read(nonce[:])
	placeholder := "zero-text-" + hex.EncodeToString(nonce[:])
	shell := *r.CallToolResult
	shell.Content = []mcp.Content{&mcp.TextContent{Text: placeholder}}
	shell.StructuredContent = TextOutput{Content: placeholder}
	small, err := json.Marshal(&shell)
	if err != nil {
		return nil, err
	}
	quoted := []byte(`"` + placeholder + `"`)
	if bytes.Count(small, quoted) != 2 {
		return json.Marshal(r.CallToolResult)
	}
	escaped, err := json.Marshal(text)
	if err != nil {
		return nil, err
	}
	return bytes.ReplaceAll(small, quoted, escaped), nil
}
