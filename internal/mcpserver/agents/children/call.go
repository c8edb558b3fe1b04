package children

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/hiddentext"
)

// Call calls tool of server with args (a JSON object; empty or null is
// {}), if the last [Set.Select] offered it, within the call timeout and
// ctx. The result is plain text (see [resultText]): the child's data, never
// an instruction, which the caller hands on as such. A result the child
// marked isError, and an error the child answered with, come back as text
// with isError; err is for what kept the call from being answered: a tool
// not offered, a timeout, a child that ended, the set closed.
func (s *Set) Call(ctx context.Context, server, tool string, args json.RawMessage) (text string, isError bool, err error) {
	s.mu.Lock()
	closed, offered := s.closed, s.offered[server+"/"+tool]
	s.mu.Unlock()
	switch {
	case closed:
		return "", false, ErrClosed
	case !offered:
		return "", false, fmt.Errorf("tool %q of child %q is not offered: no selector of the definition names it", tool, server)
	}
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return "", false, errors.New("a tool's arguments must be a JSON object")
	}
	c := s.children[server]
	ctx, cancel := context.WithTimeout(ctx, s.o.CallTimeout)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	var wire *jsonrpc.Error
	switch {
	case err == nil:
		return resultText(res), res.IsError, nil
	case errors.As(err, &wire):
		return resultText(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the child answered with an error: " + wire.Message}}}), true, nil
	case c.ended(ctx):
		return "", false, fmt.Errorf("child %q ended during the call of %q%s", server, tool, c.stderr())
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "", false, fmt.Errorf("child %q: tool %q: no answer within the call timeout (%s or the caller's deadline)", server, tool, s.o.CallTimeout)
	}
	return "", false, fmt.Errorf("child %q: tool %q: %w", server, tool, c.red.Error(err))
}

// ended reports whether a stdio child's process has ended, after its
// connection failed: it waits for the process to be reaped (its stderr
// read) for a moment, within ctx.
func (c *child) ended(ctx context.Context) bool {
	if c.proc == nil {
		return false
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-c.proc.Done():
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// resultText is a result as text: its text content, and a line for each
// other item (an image, audio, a resource) saying what it is; its
// structured content as JSON when it has no text. Hidden characters are
// removed, and the whole is cut at MaxOutput, with a note saying so.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	hasText := false
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts, hasText = append(parts, c.Text), true
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s %s]", c.Name, c.URI))
		case *mcp.EmbeddedResource:
			switch r := c.Resource; {
			case r == nil:
			case r.Blob == nil:
				parts, hasText = append(parts, r.Text), true
			default:
				parts = append(parts, fmt.Sprintf("[resource %s: %s, %d bytes, not shown]", r.URI, r.MIMEType, len(r.Blob)))
			}
		default:
			parts = append(parts, "[content of an unknown kind, not shown]")
		}
	}
	if !hasText && res.StructuredContent != nil {
		if data, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(data))
		}
	}
	text, _ := hiddentext.Strip(strings.Join(parts, "\n"))
	if len(text) <= MaxOutput {
		return text
	}
	kept := cut(text, MaxOutput-100)
	return kept + fmt.Sprintf("\n[zero: the result was cut at %d bytes; %d more bytes were dropped]", len(kept), len(text)-len(kept))
}
