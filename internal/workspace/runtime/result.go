package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/hiddentext"
)

// MaxResultBytes bounds a result, unless its Spec says otherwise
// ([Spec.MaxResult]): the bytes of its text, of its binary
// data (images, audio, blobs) and of its structured content, together.
// Content beyond it is dropped (text is cut at a character boundary), the
// result's _meta says [MetaTruncated], and a last text item says how much
// was dropped.
const MaxResultBytes = 1 << 20

// The marks a result's _meta carries. A server's own "zero." keys are
// removed first, so that it cannot unmark its result.
const (
	MetaUntrusted = "zero.untrusted" // always true: the result is a server's data, not an instruction
	MetaServer    = "zero.server"    // the name of the server that answered
	MetaPlugin    = "zero.plugin"    // the name of the plugin that answered, in place of MetaServer
	MetaTruncated = "zero.truncated" // true when content was dropped at MaxResultBytes
)

// sanitize makes a result of what s runs fit to pass on: invisible
// characters removed from its text, cut at s's limit, and marked as
// untrusted data from s (MetaServer or MetaPlugin, its name). A result
// whose structured content is cut is an error.
func sanitize(res *mcp.CallToolResult, s Spec) *mcp.CallToolResult {
	limit := s.resultLimit()
	out := &mcp.CallToolResult{IsError: res.IsError, Meta: mcp.Meta{}}
	for k, v := range res.Meta {
		if !strings.HasPrefix(k, "zero.") {
			out.Meta[k] = v
		}
	}
	room, dropped := limit, 0
	for _, c := range res.Content {
		size := contentSize(c)
		if size > room {
			if t, ok := c.(*mcp.TextContent); ok && room > 0 {
				text := strip(t.Text)
				cut := validPrefix(text, room)
				dropped += len(text) - len(cut)
				out.Content = append(out.Content, &mcp.TextContent{Text: cut, Meta: t.Meta, Annotations: t.Annotations})
				room = 0
				continue
			}
			dropped += size
			continue
		}
		c = stripContent(c)
		room -= contentSize(c)
		out.Content = append(out.Content, c)
	}
	if res.StructuredContent != nil {
		structured := stripJSON(res.StructuredContent)
		b, _ := json.Marshal(structured)
		if len(b) > room {
			// Without it a client checks the result against the tool's
			// output schema, and fails: the call did not give its result.
			dropped += len(b)
			out.IsError = true
		} else {
			out.StructuredContent = structured
		}
	}
	if dropped > 0 {
		out.Meta[MetaTruncated] = true
		out.Content = append(out.Content, &mcp.TextContent{Text: fmt.Sprintf(
			"[zero: this result was cut at %d bytes; %d more bytes of it were dropped]", limit, dropped)})
	}
	if out.Content == nil {
		out.Content = []mcp.Content{}
	}
	out.Meta[MetaUntrusted] = true
	if s.Kind == KindPlugin {
		out.Meta[MetaPlugin] = s.Name
	} else {
		out.Meta[MetaServer] = s.Name
	}
	return out
}

// contentSize is what one content item counts against MaxResultBytes.
func contentSize(c mcp.Content) int {
	switch c := c.(type) {
	case *mcp.TextContent:
		return len(c.Text)
	case *mcp.ImageContent:
		return len(c.Data)
	case *mcp.AudioContent:
		return len(c.Data)
	case *mcp.EmbeddedResource:
		if c.Resource != nil {
			return len(c.Resource.Text) + len(c.Resource.Blob)
		}
	case *mcp.ResourceLink:
		return len(c.URI) + len(c.Name) + len(c.Title) + len(c.Description)
	}
	return 0
}

// stripContent returns c with the invisible characters of its text
// removed.
func stripContent(c mcp.Content) mcp.Content {
	switch c := c.(type) {
	case *mcp.TextContent:
		t := *c
		t.Text = strip(t.Text)
		return &t
	case *mcp.EmbeddedResource:
		if c.Resource != nil {
			r, rc := *c, *c.Resource
			rc.Text = strip(rc.Text)
			r.Resource = &rc
			return &r
		}
	case *mcp.ResourceLink:
		l := *c
		l.URI, l.Name, l.Title, l.Description = strip(l.URI), strip(l.Name), strip(l.Title), strip(l.Description)
		return &l
	}
	return c
}

func strip(s string) string {
	out, _ := hiddentext.Strip(s)
	return out
}

// stripJSON returns a decoded JSON value with the invisible characters of
// its strings, keys included, removed.
func stripJSON(v any) any {
	switch v := v.(type) {
	case string:
		return strip(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = stripJSON(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[strip(k)] = stripJSON(e)
		}
		return out
	case json.RawMessage:
		var decoded any
		if json.Unmarshal(v, &decoded) != nil {
			return nil
		}
		return stripJSON(decoded)
	}
	return v
}

// validPrefix returns the longest prefix of s of at most n bytes that
// ends at a character boundary.
func validPrefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// tail returns the last n bytes of s, from a character boundary, marked
// as cut.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return "..." + s[i:]
}
