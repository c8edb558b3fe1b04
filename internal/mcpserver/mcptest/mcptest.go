// Package mcptest connects, for tests, an SDK client to a server over Zero's
// own stdio transport (through in-process pipes), and reads tool results.
package mcptest

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/mcpserver"
)

// Connect serves srv over mcpserver.StdioTransport and returns a connected
// client session. Both end with the test.
func Connect(t testing.TB, srv *mcp.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	return ConnectClient(t, srv, mcp.NewClient(&mcp.Implementation{Name: "mcptest", Version: "0"}, opts), nil)
}

// ConnectClient is Connect with a client the test configured, for instance
// with roots, and session options, for instance an older protocol version.
func ConnectClient(t testing.TB, srv *mcp.Server, client *mcp.Client, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	return connect(t, client, opts, nil, func(ctx context.Context, in io.ReadCloser, out io.Writer) error {
		return srv.Run(ctx, &mcpserver.StdioTransport{In: in, Out: out})
	})
}

// connect runs a server with run on a pair of pipes, its output through
// wire when it is set, and connects client to it; the test's cleanup stops
// both.
func connect(t testing.TB, client *mcp.Client, opts *mcp.ClientSessionOptions, wire *Wire,
	run func(ctx context.Context, in io.ReadCloser, out io.Writer) error) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	var out io.Writer = serverOut
	if wire != nil {
		wire.w, out = serverOut, wire
	}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, serverIn, out)
		serverOut.Close()
	}()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, opts)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return cs
}

// Call calls a tool and returns its text and whether it is a tool error. A
// protocol error fails the test.
func Call(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) (text string, isError bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error: %v", tool, args, err)
	}
	return Text(res), res.IsError
}

// ToolNames lists the tools cs is offered, by name, sorted; a list that
// fails, or takes more than 30 seconds, fails the test.
func ToolNames(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// Text joins the text content blocks of a result.
func Text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// CheckSchemas checks each tool's input schema against the argument struct
// its handler decodes (argTypes maps tool names to a value of that struct):
// an object without additional properties, whose properties are exactly the
// struct's JSON fields and whose required names are among them. It checks
// too that every tool has an output schema and complete annotations, and
// returns each tool's required names, sorted.
func CheckSchemas(t testing.TB, tools []*mcp.Tool, argTypes map[string]any) map[string][]string {
	t.Helper()
	required := map[string][]string{}
	for _, tool := range tools {
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
			Additional *bool                      `json:"additionalProperties"`
		}
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatalf("%s: schema: %v", tool.Name, err)
		}
		if schema.Type != "object" || schema.Additional == nil || *schema.Additional {
			t.Errorf("%s: schema must be an object without additional properties: %s", tool.Name, b)
		}
		props := slices.Sorted(maps.Keys(schema.Properties))
		typ := reflect.TypeOf(argTypes[tool.Name])
		if typ == nil {
			t.Errorf("%s: no argument type given for it", tool.Name)
			continue
		}
		var fields []string
		for i := range typ.NumField() {
			fields = append(fields, strings.Split(typ.Field(i).Tag.Get("json"), ",")[0])
		}
		slices.Sort(fields)
		if !slices.Equal(fields, props) {
			t.Errorf("%s: schema properties %v differ from argument fields %v", tool.Name, props, fields)
		}
		for _, r := range schema.Required {
			if !slices.Contains(props, r) {
				t.Errorf("%s: required %q is not a property", tool.Name, r)
			}
		}
		required[tool.Name] = slices.Sorted(slices.Values(schema.Required))
		if a := tool.Annotations; a == nil || a.Title == "" || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations incomplete: %+v", tool.Name, a)
		}
		if tool.OutputSchema == nil {
			t.Errorf("%s: no output schema", tool.Name)
		}
	}
	return required
}
