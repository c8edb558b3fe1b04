// Command sdkfloor is the ceiling for a tool call served through the official
// MCP Go SDK: an SDK server on Zero's stdio transport and Zero's settings
// (internal/mcpserver.Serve) with one tool, read_text_file, that does no work
// and answers with the bytes the floor answers with. Timed with rawbench
// beside ../shared/tools/floor, it shows what the SDK's own handling of a
// call costs: no tool of Zero's can be faster than this.
//
//	sdkfloor
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/mcpserver"
)

func main() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdkfloor", Version: "0"}, nil)
	text := "hello world\n"
	srv.AddTool(&mcp.Tool{Name: "read_text_file", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcpserver.TextResult(text), nil
		})
	err := mcpserver.Serve(context.Background(), srv, mcpserver.Options{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
