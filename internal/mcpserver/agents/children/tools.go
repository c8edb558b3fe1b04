package children

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/zero-dev/zero/internal/guard/hiddentext"
)

// list lists the child's tools. A child that lists more than MaxTools,
// one name twice, or an input schema over MaxSchema is refused. A name
// outside MCP's characters is kept aside: never offered.
func (c *child) list(ctx context.Context) error {
	c.tools, c.invalid = map[string]Tool{}, map[string]bool{}
	for t, err := range c.cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
		if len(c.tools)+len(c.invalid) == MaxTools {
			return fmt.Errorf("it lists more than %d tools", MaxTools)
		}
		if _, dup := c.tools[t.Name]; dup || c.invalid[t.Name] {
			return fmt.Errorf("it lists tool %q twice", shorten(t.Name))
		}
		if !validName(t.Name, 128) {
			c.invalid[t.Name] = true
			continue
		}
		schema, err := cleanJSON(t.InputSchema)
		if err != nil {
			return fmt.Errorf("tool %q: input schema: %w", t.Name, err)
		}
		if len(schema) > MaxSchema {
			return fmt.Errorf("tool %q: its input schema takes %d bytes, more than %d", t.Name, len(schema), MaxSchema)
		}
		c.tools[t.Name] = Tool{Server: c.name, Name: t.Name, Description: description(t.Description), InputSchema: schema}
		c.order = append(c.order, t.Name)
	}
	slices.Sort(c.order)
	return nil
}

// description is d without hidden characters, cut to MaxDescription with
// a note saying so.
func description(d string) string {
	d, _ = hiddentext.Strip(d)
	if len(d) <= MaxDescription {
		return d
	}
	note := fmt.Sprintf(" [zero: description cut at %d bytes]", MaxDescription)
	return cut(d, MaxDescription-len(note)) + note
}

// cleanJSON encodes v (decoded JSON) again without hidden characters: the
// encoder writes them as they are, never escaped, and taking them out of a
// string or a key leaves the JSON valid.
func cleanJSON(v any) (json.RawMessage, error) {
	data, err := json.Marshal(v)
	if err == nil {
		var decoded any
		if err = json.Unmarshal(data, &decoded); err == nil {
			data, err = json.Marshal(decoded)
		}
	}
	if err != nil {
		return nil, err
	}
	s, _ := hiddentext.Strip(string(data))
	return json.RawMessage(s), nil
}

// cut returns the first n bytes of s, less a character they cut in two
// (s is valid UTF-8).
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// shorten is a name from a child for an error: at most 64 bytes of it.
func shorten(s string) string {
	if len(s) > 64 {
		return cut(s, 64) + "..."
	}
	return s
}

// Select returns the tools the selectors offer, by server and name: a tool
// is offered only when a selector of allow names it ("server/tool", or
// "server/*" for every tool of the server), and none of deny does; a tool's
// annotations play no part. A selector naming no child, or a tool its child
// does not list, or not of that form, is an error naming it. The tools
// returned are the ones [Set.Call] calls from then on.
func (s *Set) Select(allow, deny []string) ([]Tool, error) {
	allowed, err := s.match(allow)
	if err != nil {
		return nil, err
	}
	denied, err := s.match(deny)
	if err != nil {
		return nil, err
	}
	var out []Tool
	offered := map[string]bool{}
	for _, server := range s.names {
		c := s.children[server]
		for _, name := range c.order {
			key := server + "/" + name
			if allowed[key] && !denied[key] {
				out = append(out, c.tools[name])
				offered[key] = true
			}
		}
	}
	s.mu.Lock()
	s.offered = offered
	s.mu.Unlock()
	return out, nil
}

// match returns the tools the selectors name, as "server/tool".
func (s *Set) match(selectors []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, sel := range selectors {
		server, tool, ok := strings.Cut(sel, "/")
		if !ok || server == "" || tool == "" {
			return nil, fmt.Errorf("tool selector %q is not server/tool or server/*", sel)
		}
		c := s.children[server]
		switch {
		case c == nil:
			return nil, fmt.Errorf("tool selector %q names no child server (the children: %s)", sel, strings.Join(s.names, ", "))
		case tool == "*":
			for _, name := range c.order {
				out[server+"/"+name] = true
			}
		case c.invalid[tool]:
			return nil, fmt.Errorf("tool selector %q names a tool whose name is not of MCP's characters (letters, digits, '_', '-', '.'), which is never offered", sel)
		default:
			if _, listed := c.tools[tool]; !listed {
				return nil, fmt.Errorf("tool selector %q names a tool child %q does not list", sel, server)
			}
			out[sel] = true
		}
	}
	return out, nil
}
