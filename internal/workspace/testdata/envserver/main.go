// Command envserver is an MCP stdio server for the workspace's tests. Its
// one tool's description lists its environment: each variable's name and
// the first 8 hex digits of the SHA-256 of its value, so a test can check
// which variables arrived, and that a secret did, without the value itself
// ever leaving the process. With LEAK set, it writes LEAK's value to stderr
// and exits 3 instead, for the redaction test. An argument --icon=SRC
// declares SRC as the server's icon; other arguments are ignored.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if v := os.Getenv("LEAK"); v != "" {
		fmt.Fprintf(os.Stderr, "failing on purpose; my LEAK is %s\n", v)
		os.Exit(3)
	}
	var vars []string
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		sum := sha256.Sum256([]byte(value))
		vars = append(vars, name+"="+hex.EncodeToString(sum[:4]))
	}
	sort.Strings(vars)
	impl := &mcp.Implementation{Name: "envserver", Version: "0"}
	for _, a := range os.Args[1:] {
		if src, ok := strings.CutPrefix(a, "--icon="); ok {
			impl.Icons = append(impl.Icons, mcp.Icon{Source: src})
		}
	}
	srv := mcp.NewServer(impl, nil)
	srv.AddTool(&mcp.Tool{Name: "env", Description: strings.Join(vars, " "), InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		os.Exit(1)
	}
}
