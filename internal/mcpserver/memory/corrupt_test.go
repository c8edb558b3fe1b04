package memory

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/graphstore"
	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
)

// validArgs holds arguments each tool accepts.
var validArgs = map[string]string{
	"create_entities":     `{"entities":[{"name":"b","entityType":"t","observations":[]}]}`,
	"create_relations":    `{"relations":[{"from":"a","to":"b","relationType":"r"}]}`,
	"add_observations":    `{"observations":[{"entityName":"a","contents":["o"]}]}`,
	"delete_entities":     `{"entityNames":["a"]}`,
	"delete_observations": `{"deletions":[{"entityName":"a","observations":["o"]}]}`,
	"delete_relations":    `{"relations":[{"from":"a","to":"b","relationType":"r"}]}`,
	"read_graph":          `{}`,
	"search_nodes":        `{"query":"a"}`,
	"open_nodes":          `{"names":["a"]}`,
}

// TestCorruptFileAnswersEveryCall serves a graph whose file has a line that
// does not read. The session starts; every tool answers with a tool error
// naming the file, the line, the byte and what to do; reading the resource
// fails with the same words and code -32603 (internal error); and the file
// is byte for byte as it was, after the calls and after the store closes.
// Once the line is fixed, the same server reads the graph.
func TestCorruptFileAnswersEveryCall(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.jsonl")
	good := `{"type":"entity","name":"a","entityType":"t","observations":[]}`
	bad := good + "\n{oops"
	os.WriteFile(path, []byte(bad), 0o644)
	st, err := graphstore.OpenEvenIfCorrupt(path)
	if err != nil {
		t.Fatalf("OpenEvenIfCorrupt: %v", err)
	}
	defer st.Close()
	cs := mcptest.Connect(t, New(st, io.Discard), nil)
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != len(validArgs) {
		t.Errorf("%d tools, %d tried", len(tools.Tools), len(validArgs))
	}
	says := func(msg string) bool {
		return strings.Contains(msg, path) && strings.Contains(msg, "line 2, byte offset 65") && strings.Contains(msg, "fix or remove that line")
	}
	for _, tool := range tools.Tools {
		args, ok := validArgs[tool.Name]
		if !ok {
			t.Errorf("no arguments to try %s with", tool.Name)
			continue
		}
		if text, isErr, _ := call(t, cs, tool.Name, json.RawMessage(args)); !isErr || !says(text) {
			t.Errorf("%s: %v %q", tool.Name, isErr, text)
		}
	}
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: ResourceURI})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInternalError || !says(we.Message) {
		t.Errorf("resources/read: %v (%#v)", err, we)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: ResourceURI}); err != nil {
		t.Errorf("resources/subscribe: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != bad {
		t.Errorf("the calls changed the file to %q", b)
	}
	cs.Close()
	var ce *graphstore.CorruptError
	if err := st.Close(); !errors.As(err, &ce) {
		t.Errorf("Close: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != bad {
		t.Errorf("closing changed the file to %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 { // the file and its lock
		t.Errorf("files in the directory: %v", entries)
	}

	st2, err := graphstore.OpenEvenIfCorrupt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	cs2 := mcptest.Connect(t, New(st2, io.Discard), nil)
	os.WriteFile(path, []byte(good), 0o644)
	if text, isErr, _ := call(t, cs2, "open_nodes", map[string]any{"names": []string{"a"}}); isErr || !strings.Contains(text, `"name": "a"`) {
		t.Errorf("after the fix: %v %q", isErr, text)
	}
}
