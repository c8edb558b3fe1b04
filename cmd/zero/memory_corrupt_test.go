package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
)

// memoryCalls are arguments each memory tool accepts.
var memoryCalls = map[string]map[string]any{
	"create_entities":     {"entities": []any{map[string]any{"name": "b", "entityType": "t", "observations": []string{}}}},
	"create_relations":    {"relations": []any{map[string]any{"from": "a", "to": "b", "relationType": "r"}}},
	"add_observations":    {"observations": []any{map[string]any{"entityName": "a", "contents": []string{"o"}}}},
	"delete_entities":     {"entityNames": []string{"a"}},
	"delete_observations": {"deletions": []any{map[string]any{"entityName": "a", "observations": []string{"o"}}}},
	"delete_relations":    {"relations": []any{map[string]any{"from": "a", "to": "b", "relationType": "r"}}},
	"read_graph":          {},
	"search_nodes":        {"query": "a"},
	"open_nodes":          {"names": []string{"a"}},
}

// corruptGraph writes a graph file whose second line does not read, and
// returns its path, its content and the words every answer must carry.
func corruptGraph(t *testing.T) (path, content string, says func(string) bool) {
	path = filepath.Join(workDir(t), "graph.jsonl")
	content = `{"type":"entity","name":"a","entityType":"t","observations":[]}` + "\n{oops"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, content, func(msg string) bool {
		return strings.Contains(msg, path+": line 2, byte offset 65") && strings.Contains(msg, "fix or remove that line")
	}
}

// TestMemoryCorruptFileEndToEnd runs the real binary on a graph file with a
// line that does not read, with the Go SDK client. The session starts
// (today's server exits, and the client sees the connection close); every
// tool answers with a tool error naming the file, the line, the byte
// offset and what to do, and reading the resource fails with the same
// words and code -32603. Stderr carries the error; the file is byte for
// byte as it was once the server exits, with exit code 2, as a file that
// cannot be used always made it exit.
func TestMemoryCorruptFileEndToEnd(t *testing.T) {
	path, content, says := corruptGraph(t)
	cmd := exec.Command(zeroBinary(t), "mcp", "memory", "--memory-file", path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v; stderr: %s", err, stderr.String())
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != len(memoryCalls) {
		t.Fatalf("tools/list: %v, %+v", err, tools)
	}
	for _, tool := range tools.Tools {
		if text, isError := mcptest.Call(t, cs, tool.Name, memoryCalls[tool.Name]); !isError || !says(text) {
			t.Errorf("%s: %v %q", tool.Name, isError, text)
		}
	}
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory://knowledge-graph"})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInternalError || !says(we.Message) {
		t.Errorf("resources/read: %v", err)
	}
	err = cs.Close()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Errorf("exit: %v", err)
	}
	if !says(stderr.String()) {
		t.Errorf("stderr does not name the error: %q", stderr.String())
	}
	if b, _ := os.ReadFile(path); string(b) != content {
		t.Errorf("the file changed to %q", b)
	}
	if _, err := os.Stat(path + ".zero-log"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a change log was made: %v", err)
	}
}

// tsMemoryClient calls every tool of `zero mcp memory` with the TypeScript
// SDK's client and prints, as JSON, each tool's isError and text.
const tsMemoryClient = `
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const [zero, file, calls] = process.argv.slice(1);
const client = new Client({ name: "e2e-ts", version: "0" });
await client.connect(new StdioClientTransport({ command: zero, args: ["mcp", "memory", "--memory-file", file], stderr: "ignore" }));
const { tools } = await client.listTools();
const out = { tools: tools.length, answers: {} };
for (const [name, args] of Object.entries(JSON.parse(calls))) {
  const res = await client.callTool({ name, arguments: args });
  out.answers[name] = { isError: !!res.isError, text: res.content.map((c) => c.text).join("\n") };
}
try { await client.readResource({ uri: "memory://knowledge-graph" }); } catch (e) { out.resource = { code: e.code, message: e.message }; }
await client.close();
console.log(JSON.stringify(out));
`

// TestMemoryCorruptFileTypeScriptClient is the same with the TypeScript
// SDK's client, which reported "Connection closed" for such a file: every
// tool answers with the error, and the file stays as it was.
func TestMemoryCorruptFileTypeScriptClient(t *testing.T) {
	nodeDir, _ := filepath.Abs("../../node")
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		if os.Getenv("ZERO_REQUIRE_NODE") != "" {
			t.Fatalf("ZERO_REQUIRE_NODE is set but the npm packages are missing: %v", err)
		}
		t.Skip("npm packages not installed; run: npm ci --prefix node")
	}
	path, content, says := corruptGraph(t)
	calls, _ := json.Marshal(memoryCalls)
	cmd := exec.Command("node", "--input-type=module", "-e", tsMemoryClient, zeroBinary(t), path, string(calls))
	cmd.Dir = nodeDir // where node finds the SDK
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v\n%s%s", err, out, stderr.String())
	}
	var got struct {
		Tools   int
		Answers map[string]struct {
			IsError bool
			Text    string
		}
		Resource *struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Tools != len(memoryCalls) || len(got.Answers) != len(memoryCalls) {
		t.Errorf("%d tools listed, %d answered", got.Tools, len(got.Answers))
	}
	for name, a := range got.Answers {
		if !a.IsError || !says(a.Text) {
			t.Errorf("%s: %v %q", name, a.IsError, a.Text)
		}
	}
	if got.Resource == nil || got.Resource.Code != jsonrpc.CodeInternalError || !says(got.Resource.Message) {
		t.Errorf("resources/read: %+v", got.Resource)
	}
	if b, _ := os.ReadFile(path); string(b) != content {
		t.Errorf("the file changed to %q", b)
	}
}

// TestMemoryUnusablePath checks that a --memory-file no graph can be kept
// at (a directory, a missing directory) still stops the server before it
// serves: exit code 2 and the reason on stderr, nothing on stdout, and no
// lock file left beside it.
func TestMemoryUnusablePath(t *testing.T) {
	dir := workDir(t)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	for path, reason := range map[string]string{sub: "is a directory", filepath.Join(dir, "missing", "graph.jsonl"): "no such file or directory"} {
		cmd := exec.Command(zeroBinary(t), "mcp", "memory", "--memory-file", path)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr.String(), reason) || stdout.Len() != 0 {
			t.Errorf("%s: %v, stdout %q, stderr %q", path, err, stdout.String(), stderr.String())
		}
	}
	if _, err := os.Stat(sub + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a lock file was left beside the directory: %v", err)
	}
}
