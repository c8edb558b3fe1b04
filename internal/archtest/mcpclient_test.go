package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mcpPackage is the MCP SDK package whose client side the rule watches.
const mcpPackage = "github.com/modelcontextprotocol/go-sdk/mcp"

// clientOwner is the one workspace package that may open an MCP client
// connection: the tool runtime, so that every call passes its drift gate.
const clientOwner = "internal/workspace/runtime"

// mcpClientNames are the SDK's client side: the client and its session,
// and the transports a client connects over. Naming any of them is how a
// package would open a connection.
var mcpClientNames = []string{
	"NewClient", "Client", "ClientOptions", "ClientSession", "ClientSessionOptions",
	"CommandTransport", "StreamableClientTransport", "SSEClientTransport", "IOTransport",
	"NewInMemoryTransports", "InMemoryTransport",
}

// mcpClientUses returns, for one parsed file of package directory dir, its
// uses of the SDK's client side as "file:line: what": a reference to one of
// mcpClientNames through whatever name the file imports the SDK by, a dot
// import of it, and any call of a method named Connect in a file that
// imports it ((*mcp.Client).Connect on a client from anywhere). Files of the
// owner, and of packages outside internal/workspace, have none.
func mcpClientUses(fset *token.FileSet, dir string, f *ast.File) []string {
	if dir == clientOwner || !(dir == "internal/workspace" || strings.HasPrefix(dir, "internal/workspace/")) {
		return nil
	}
	var name string
	var found []string
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p != mcpPackage {
			continue
		}
		name = path.Base(mcpPackage)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "." {
			found = append(found, fmt.Sprintf("%s: dot import of %s", fset.Position(imp.Pos()), mcpPackage))
		}
	}
	if name == "" {
		return nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && id.Name == name && id.Obj == nil && slices.Contains(mcpClientNames, n.Sel.Name) {
				found = append(found, fmt.Sprintf("%s: mcp.%s", fset.Position(n.Pos()), n.Sel.Name))
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Connect" {
				if id, ok := sel.X.(*ast.Ident); !ok || id.Obj != nil || id.Name != name {
					found = append(found, fmt.Sprintf("%s: a Connect call", fset.Position(n.Pos())))
				}
			}
		}
		return true
	})
	return found
}

// TestOnlyTheRuntimeConnects: no workspace package but the tool runtime
// opens an MCP client connection, so that no tool is called past the drift
// gate. Tests are free to.
func TestOnlyTheRuntimeConnects(t *testing.T) {
	fset := token.NewFileSet()
	watched := 0
	for _, f := range parseGoFiles(t, fset, 0) {
		if f.test {
			continue
		}
		if strings.HasPrefix(f.dir, "internal/workspace") {
			watched++
		}
		for _, use := range mcpClientUses(fset, f.dir, f.ast) {
			t.Errorf("%s: only %s opens MCP client connections", use, clientOwner)
		}
	}
	if watched < 10 {
		t.Fatalf("watched only %d workspace files; is moduleRoot right?", watched)
	}
}

// TestOnlyTheRuntimeConnectsSeesThrough proves the rule finds what the
// Test action did before the runtime existed, however the SDK is named,
// and leaves the runtime, other packages and the SDK's server side alone.
func TestOnlyTheRuntimeConnectsSeesThrough(t *testing.T) {
	const imp = `import "github.com/modelcontextprotocol/go-sdk/mcp"; `
	tests := []struct {
		name, dir, src string
		want           []string
	}{
		{"the old Test action", "internal/workspace/servers", imp + `func f(ctx any, p struct{ Stdout, Stdin any }) {
			client := mcp.NewClient(&mcp.Implementation{Name: "x"}, nil)
			transport := &mcp.IOTransport{Reader: nil, Writer: nil}
			cs, _ := client.Connect(ctx, transport, &mcp.ClientSessionOptions{})
			_ = cs
		}`, []string{"mcp.NewClient", "mcp.IOTransport", "a Connect call", "mcp.ClientSessionOptions"}},
		{"http transports", "internal/workspace", imp + `var a = &mcp.StreamableClientTransport{}; var b = &mcp.SSEClientTransport{}; var c = mcp.CommandTransport{}`,
			[]string{"mcp.StreamableClientTransport", "mcp.SSEClientTransport", "mcp.CommandTransport"}},
		{"renamed import", "internal/workspace/endpoint", `import sdk "github.com/modelcontextprotocol/go-sdk/mcp"; var c *sdk.Client`, []string{"mcp.Client"}},
		{"dot import", "internal/workspace/x", `import . "github.com/modelcontextprotocol/go-sdk/mcp"; var c *Client`, []string{"dot import of " + mcpPackage}},
		{"a client from elsewhere", "internal/workspace/x", imp + `func f(c interface{ Connect(a, b, d any) }) { c.Connect(nil, nil, nil); _ = mcp.Implementation{} }`, []string{"a Connect call"}},
		{"the owner", clientOwner, imp + `var c = mcp.NewClient(nil, nil)`, nil},
		{"outside the workspace", "internal/mcpserver", imp + `var c = mcp.NewClient(nil, nil)`, nil},
		{"server side", "internal/workspace/endpoint", imp + `var s = mcp.NewServer(nil, nil); var h = mcp.NewStreamableHTTPHandler(nil, nil)`, nil},
		{"no SDK", "internal/workspace/x", `func f(c interface{ Connect() }) { c.Connect() }`, nil},
	}
	for _, tt := range tests {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", "package x\n"+tt.src, 0)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got []string
		for _, use := range mcpClientUses(fset, tt.dir, f) {
			_, what, _ := strings.Cut(use, ": ")
			got = append(got, what)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: uses (-want +got):\n%s", tt.name, diff)
		}
	}
}
