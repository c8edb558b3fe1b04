package endpoint

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/workspace/runtime"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// ThreadMaxResult bounds a result a thread gets from the runtime: a
// thread keeps what is over threads.MaxInlineResult in a file.
const ThreadMaxResult = runtime.MaxResultLimit

// Threads returns the toolbox of the workspace's threads: the tools of
// every enabled, approved server and every enabled plugin as the runtime
// offers them, under the names the endpoint gives them, each called
// through the runtime only.
func (e *Endpoint) Threads() threads.Toolbox { return threadTools{e} }

type threadTools struct{ e *Endpoint }

// Tools lists what the runtime offers of every runnable server and
// plugin; a server that does not start offers nothing, and the others go
// on.
func (tt threadTools) Tools(ctx context.Context) ([]threads.Tool, error) {
	specs, err := tt.e.o.Servers.Runnables(ctx)
	if err != nil {
		return nil, err
	}
	if tt.e.o.Plugins != nil {
		plugins, err := tt.e.o.Plugins.Runnables(ctx)
		if err != nil {
			return nil, err
		}
		specs = append(specs, plugins...)
	}
	type entry struct {
		spec runtime.Spec
		tool runtime.Tool
	}
	var refs []ref
	found := map[ref]entry{}
	for _, s := range specs {
		from := ref{server: s.ServerID, name: s.Name}
		if s.Kind == runtime.KindPlugin && s.Plugin != nil {
			from = ref{server: s.Plugin.ID, plugin: true, name: s.Name}
		}
		tools, err := tt.e.o.Runtime.Tools(ctx, s)
		if err != nil {
			tt.e.o.Log.Warn("threads: list tools", "of", from.label(), "err", s.Redactor().String(err.Error()))
			continue
		}
		for _, t := range tools {
			r := from
			r.tool = t.Name
			if _, err := offered(t, r); err != nil {
				continue
			}
			refs = append(refs, r)
			found[r] = entry{s, t}
		}
	}
	out := []threads.Tool{}
	for name, r := range Names(refs) {
		f := found[r]
		out = append(out, threads.Tool{Name: name, Server: r.name, Description: f.tool.Description, InputSchema: f.tool.InputSchema,
			Hints: threads.HintsOf(f.tool.Annotations),
			Ref: threads.ToolRef{ServerID: r.server, Plugin: r.plugin, Tool: r.tool, Hash: f.tool.Hash,
				Fingerprint: f.spec.Fingerprint}})
	}
	slices.SortFunc(out, func(a, b threads.Tool) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// Call calls t through the runtime under a Spec narrowed to what the
// decision to run it saw: the server's (or plugin's) approved fingerprint
// and the tool's hash. A server approved again since (a plugin enabled
// again), or a tool set approved again with another definition of the
// tool, refuses the call: it is decided again.
func (tt threadTools) Call(ctx context.Context, t threads.Tool, args json.RawMessage, caller string) (threads.Result, error) {
	r := ref{server: t.Ref.ServerID, plugin: t.Ref.Plugin, name: t.Server, tool: t.Ref.Tool}
	res, err := tt.e.callWith(ctx, r, args, caller, func(s *runtime.Spec) error {
		switch {
		case s.Fingerprint != t.Ref.Fingerprint:
			return fmt.Errorf("%s was approved again since this call was decided: it is not run", r.label())
		case s.ToolSet[t.Ref.Tool] != t.Ref.Hash:
			return fmt.Errorf("tool %q of %s is no longer approved as it was when this call was decided: it is not run", t.Ref.Tool, r.label())
		}
		s.ToolSet = map[string]string{t.Ref.Tool: t.Ref.Hash}
		s.MaxResult = ThreadMaxResult
		return nil
	})
	if err != nil {
		return threads.Result{}, err
	}
	return threads.Result{Text: resultText(res), IsError: res.IsError}, nil
}

// resultText is a result as text for a model: its text content in order,
// a line for each item that is not text, and its structured content when
// it has no text.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[an image, %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio, %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[a link to the resource %s]", c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[the resource %s, %d bytes, not shown]", c.Resource.URI, len(c.Resource.Blob)))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}
