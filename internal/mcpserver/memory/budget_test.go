package memory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/graphstore"
	"github.com/zero-dev/zero/internal/mcpserver"
	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
)

// TestReadGraphOverBudget serves a 10 MB graph, whose whole would make a
// reply over the default budget: read_graph refuses with a tool error that
// names the budget and the tools that read part of the graph, and so does
// reading the resource (code -32603); the session goes on, and
// search_nodes and open_nodes answer. Under a lower budget, that one is
// named.
func TestReadGraphOverBudget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	var b strings.Builder
	obs := strings.Repeat("an observation of fifty bytes, give or take a few ", 9)
	for i := 0; b.Len() < 10<<20; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, `{"type":"entity","name":"entity %d","entityType":"t","observations":[%q]}`, i, obs)
	}
	os.WriteFile(path, []byte(b.String()), 0o600)
	st, err := graphstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cs := mcptest.Connect(t, New(st, io.Discard), nil)

	budget := strconv.Itoa(mcpserver.DefaultReplyBudget)
	text, isErr, _ := call(t, cs, "read_graph", map[string]any{})
	if !isErr || !strings.Contains(text, budget) || !strings.Contains(text, "search_nodes") || !strings.Contains(text, "open_nodes") {
		t.Errorf("read_graph: %v %.300q", isErr, text)
	}
	_, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: ResourceURI})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInternalError || !strings.Contains(we.Message, budget) || !strings.Contains(we.Message, "search_nodes") {
		t.Errorf("resources/read: %v", err)
	}
	if text, isErr, _ := call(t, cs, "search_nodes", map[string]any{"query": "entity 12345"}); isErr || !strings.Contains(text, `"entity 12345"`) {
		t.Errorf("search_nodes after the refusal: %v %.300q", isErr, text)
	}
	if text, isErr, _ := call(t, cs, "open_nodes", map[string]any{"names": []string{"entity 7"}}); isErr || !strings.Contains(text, `"entity 7"`) {
		t.Errorf("open_nodes after the refusal: %v %.300q", isErr, text)
	}

	// A lower budget, as --max-reply sets it, is the one named.
	low := mcptest.Serve(t, New(st, io.Discard), 1<<20)
	if text, isErr, _ := call(t, low, "read_graph", map[string]any{}); !isErr || !strings.Contains(text, strconv.Itoa(1<<20)) || !strings.Contains(text, "search_nodes") {
		t.Errorf("read_graph under a 1 MiB budget: %v %.300q", isErr, text)
	}
}
