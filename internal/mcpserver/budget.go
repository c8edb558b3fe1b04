package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every reply has a budget: the bytes it takes on the wire, the JSON-RPC
// envelope and a tool result's text content and structured content
// together. The TypeScript SDK's stdio client ends the session when one
// message passes 10 MiB, the Go SDK's at 16 MiB, and every later call then
// fails; a reply within the budget never does that.
//
// A tool whose answer would pass the budget says so itself, with a
// truncation the model can continue from or an error naming the way around
// it. Whatever a tool returns, a tools/call result over the budget becomes a
// tool error naming the limit (see [ReplyHinter]), so no tool can end a
// session by answering.

// DefaultReplyBudget is the largest reply a server sends unless
// [Options].MaxReply lowers it (the CLI's --max-reply).
const DefaultReplyBudget = 8 << 20

// MinReplyBudget is the smallest budget the CLI's --max-reply takes: room
// for an error that explains the budget.
const MinReplyBudget = 4 << 10

// envelope is the room kept in every budget for what wraps a result: the
// JSON-RPC envelope with a request ID of up to a few hundred bytes, or an
// SSE event's framing.
const envelope = 512

type budgetKey struct{}

// WithReplyBudget returns ctx carrying the reply budget n; n of zero or less
// means [DefaultReplyBudget], and n is never taken above it.
func WithReplyBudget(ctx context.Context, n int) context.Context {
	if n <= 0 || n > DefaultReplyBudget {
		n = DefaultReplyBudget
	}
	return context.WithValue(ctx, budgetKey{}, n)
}

// ReplyBudget returns the most bytes the reply to the call ctx belongs to
// may take on the wire: [DefaultReplyBudget] unless the server was started
// with a lower one.
func ReplyBudget(ctx context.Context) int {
	if n, ok := ctx.Value(budgetKey{}).(int); ok {
		return n
	}
	return DefaultReplyBudget
}

// QuotedSize returns the bytes s takes on the wire as a JSON string, quotes
// included, as the servers write it: `"`, `\` and the control characters
// \b \f \n \r \t take 2 bytes, other control characters 6, an invalid UTF-8
// byte 6 (\ufffd), U+2028 and U+2029 6; `<`, `>` and `&` stay 1.
func QuotedSize(s string) int {
	n := 2 + len(s)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n += int(asciiExtra[c])
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 5
		case r == '\u2028' || r == '\u2029':
			n += 3
		}
		i += size
	}
	return n
}

// asciiExtra is what escaping adds to each ASCII byte.
var asciiExtra = func() (t [utf8.RuneSelf]uint8) {
	for c := range 0x20 {
		t[c] = 5
	}
	for _, c := range []byte{'"', '\\', '\b', '\f', '\n', '\r', '\t'} {
		t[c] = 1
	}
	return t
}()

// CutQuoted returns the longest prefix of s, in whole characters, whose
// [QuotedSize] is at most max.
func CutQuoted(s string, max int) string {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		cost, size := 1, 1
		if c < utf8.RuneSelf {
			cost += int(asciiExtra[c])
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				cost = 6
			case r == '\u2028' || r == '\u2029':
				cost = 6
			default:
				cost = size
			}
		}
		if n+cost > max {
			return s[:i]
		}
		n += cost
		i += size
	}
	return s
}

// textResultSize is the wire size of a reply carrying [TextResult] of a
// text whose quoted size is quoted.
func textResultSize(quoted int) int {
	return envelope + len(`{"content":[{"type":"text","text":}],"structuredContent":{"content":}}`) + 2*quoted
}

// TextLimit returns the largest [QuotedSize] the text of a [TextResult]
// may have for the reply to fit ReplyBudget(ctx).
func TextLimit(ctx context.Context) int {
	return (ReplyBudget(ctx) - textResultSize(0)) / 2
}

// TextFits reports whether [TextResult] of text fits ReplyBudget(ctx). It
// scans text only when it is long enough for escaping to matter.
func TextFits(ctx context.Context, text string) bool {
	limit := TextLimit(ctx)
	return 6*len(text)+2 <= limit || QuotedSize(text) <= limit
}

// ResultSize returns the bytes a reply carrying r takes on the wire, the
// envelope included: at least what it takes, and near it.
func ResultSize(r *mcp.CallToolResult) int {
	n := envelope + len(`{"content":[]}`) + max(len(r.Content)-1, 0)
	if r.StructuredContent != nil {
		n += len(`,"structuredContent":`)
	}
	if r.IsError {
		n += len(`,"isError":true`)
	}
	if r.Meta != nil {
		n += len(`"_meta":,`) + marshalSize(r.Meta)
	}
	var firstText *mcp.TextContent
	var firstQuoted int
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok && firstText == nil {
			firstText, firstQuoted = tc, QuotedSize(tc.Text)
			n += len(`{"type":"text","text":}`) + firstQuoted + extrasSize(tc.Meta, tc.Annotations)
			continue
		}
		n += contentSize(c)
	}
	switch v := r.StructuredContent.(type) {
	case nil:
	case TextOutput:
		q := firstQuoted
		if firstText == nil || v.Content != firstText.Text {
			q = QuotedSize(v.Content)
		}
		n += len(`{"content":}`) + q
	case json.RawMessage:
		n += rawSize(v)
	default:
		n += marshalSize(v)
	}
	return n
}

func contentSize(c mcp.Content) int {
	switch c := c.(type) {
	case *mcp.TextContent:
		return len(`{"type":"text","text":}`) + QuotedSize(c.Text) + extrasSize(c.Meta, c.Annotations)
	case *mcp.ImageContent:
		return len(`{"type":"image","mimeType":,"data":""}`) + QuotedSize(c.MIMEType) +
			base64.StdEncoding.EncodedLen(len(c.Data)) + extrasSize(c.Meta, c.Annotations)
	case *mcp.AudioContent:
		return len(`{"type":"audio","mimeType":,"data":""}`) + QuotedSize(c.MIMEType) +
			base64.StdEncoding.EncodedLen(len(c.Data)) + extrasSize(c.Meta, c.Annotations)
	case *mcp.EmbeddedResource:
		n := len(`{"type":"resource","resource":}`) + extrasSize(c.Meta, c.Annotations)
		if rc := c.Resource; rc != nil {
			n += len(`{"uri":,"mimeType":,"text":,"blob":""}`) + QuotedSize(rc.URI) + QuotedSize(rc.MIMEType) +
				QuotedSize(rc.Text) + base64.StdEncoding.EncodedLen(len(rc.Blob)) + extrasSize(rc.Meta, nil)
		}
		return n
	}
	return marshalSize(c)
}

func extrasSize(meta mcp.Meta, ann *mcp.Annotations) int {
	n := 0
	if meta != nil {
		n += len(`,"_meta":`) + marshalSize(meta)
	}
	if ann != nil {
		n += len(`,"annotations":`) + marshalSize(ann)
	}
	return n
}

// rawSize is the size of raw JSON once the SDK has compacted it: at most its
// length, plus 3 for each U+2028 or U+2029, which compacting escapes.
func rawSize(raw []byte) int {
	return len(raw) + 3*(bytes.Count(raw, []byte("\u2028"))+bytes.Count(raw, []byte("\u2029")))
}

// marshalSize marshals v as the SDK would, without HTML escaping.
func marshalSize(v any) int {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return 0 // the SDK cannot send it either
	}
	return b.Len() - 1 // Encode's newline
}

// A ReplyHinter is tool arguments that can say how to ask the tool for a
// smaller answer, for the error that an answer over the budget becomes.
type ReplyHinter interface {
	ReplyHint() string
}

// BudgetError returns the error for an answer whose reply would take size
// bytes, over ReplyBudget(ctx); hint says how to ask for less.
func BudgetError(ctx context.Context, size int, hint string) error {
	return fmt.Errorf("the answer would make a %d-byte reply, over this server's reply budget of %d bytes (--max-reply): %s", size, ReplyBudget(ctx), hint)
}

// toolCall is what a tools/call handler tells the middleware around it; it
// travels in the call's context.
type toolCall struct {
	hint     string
	readOnly bool

	splicing     bool                // over stdio: a quoted text may be spliced in
	quoted       []byte              // the text QuotedTextResult was given
	quotedResult *mcp.CallToolResult // the result it made of it
}

type toolCallKey struct{}

// noteCall records, for the call ctx belongs to, whether tool t only reads
// and the hint of its arguments.
func noteCall(ctx context.Context, t *mcp.Tool, args any) {
	call, ok := ctx.Value(toolCallKey{}).(*toolCall)
	if !ok {
		return
	}
	call.readOnly = t.Annotations != nil && t.Annotations.ReadOnlyHint
	if h, ok := args.(ReplyHinter); ok {
		call.hint = h.ReplyHint()
	}
}

// overBudget is the tool error a result of size bytes becomes.
func overBudget(ctx context.Context, tool string, size int, call *toolCall) *mcp.CallToolResult {
	hint := "ask for less in one call"
	if call.hint != "" {
		hint = call.hint
	}
	err := fmt.Errorf("%s: %w", tool, BudgetError(ctx, size, hint))
	if !call.readOnly {
		err = fmt.Errorf("%w; the call itself was carried out, only its answer is left out", err)
	}
	return ErrorResult(err)
}
