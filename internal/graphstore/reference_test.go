package graphstore

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// referenceServer is the reference memory server's script, installed by
// npm in the checkout's node folder.
const referenceServer = "../../node/node_modules/@modelcontextprotocol/server-memory/dist/index.js"

// startReference runs the reference memory server on the file at path. It
// skips the test when node or the package is missing, unless
// ZERO_REQUIRE_NODE is set.
func startReference(t *testing.T, path string) *mcp.ClientSession {
	t.Helper()
	node, err := exec.LookPath("node")
	script, _ := filepath.Abs(referenceServer)
	if err == nil {
		_, err = os.Stat(script)
	}
	if err != nil {
		if os.Getenv("ZERO_REQUIRE_NODE") != "" {
			t.Fatalf("the reference server is required (ZERO_REQUIRE_NODE): %v", err)
		}
		t.Skipf("the reference server is not available: %v", err)
	}
	cmd := exec.Command(node, script)
	cmd.Env = []string{"MEMORY_FILE_PATH=" + path, "PATH=" + os.Getenv("PATH")}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: "graphstore-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start the reference server: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callReference calls a tool of the reference server and decodes its
// structured result into out.
func callReference(t *testing.T, cs *mcp.ClientSession, tool string, args any, out any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", tool, err, res)
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
	}
}

// wireGraph is a graph as the tools' structured output has it.
type wireGraph struct {
	Entities []struct {
		Name         string   `json:"name"`
		EntityType   string   `json:"entityType"`
		Observations []string `json:"observations"`
	} `json:"entities"`
	Relations []struct {
		From         string `json:"from"`
		To           string `json:"to"`
		RelationType string `json:"relationType"`
	} `json:"relations"`
}

func (w wireGraph) graph() Graph {
	g := Graph{Entities: []Entity{}, Relations: []Relation{}}
	for _, e := range w.Entities {
		g.Entities = append(g.Entities, ent(e.Name, e.EntityType, e.Observations...))
	}
	for _, r := range w.Relations {
		g.Relations = append(g.Relations, rel(r.From, r.To, r.RelationType))
	}
	return g
}

func wireEntities(es []Entity) []map[string]any {
	var out []map[string]any
	for _, e := range es {
		out = append(out, map[string]any{"name": e.Name, "entityType": e.EntityType, "observations": e.Observations})
	}
	return out
}

func wireRelations(rs []Relation) []map[string]any {
	var out []map[string]any
	for _, r := range rs {
		out = append(out, map[string]any{"from": r.From, "to": r.To, "relationType": r.RelationType})
	}
	return out
}

// TestReferenceReadsZeroFile has Zero write a graph, then the reference
// server read it and change it, and Zero read the change.
func TestReferenceReadsZeroFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	s := openT(t, path)
	must(s.CreateEntities(append(append([]Entity{}, referenceGraph.Entities...), goldenGraph.Entities...)))(t)
	must(s.CreateRelations(append(append([]Relation{}, referenceGraph.Relations...), goldenGraph.Relations...)))(t)
	must(s.AddObservations([]Observations{{"Empty", []string{"added by zero"}}}))(t)
	if err := s.DeleteObservations([]Observations{{"Empty", []string{"no longer empty"}}}); err != nil {
		t.Fatal(err)
	}
	want := must(s.Read())(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	cs := startReference(t, path)
	var got wireGraph
	callReference(t, cs, "read_graph", map[string]any{}, &got)
	if diff := cmp.Diff(want, got.graph()); diff != "" {
		t.Errorf("the reference read (-zero +reference):\n%s", diff)
	}
	callReference(t, cs, "create_entities", map[string]any{"entities": wireEntities([]Entity{ent("by reference", "t", "é \"q\"")})}, nil)
	want.Entities = append(want.Entities, ent("by reference", "t", "é \"q\""))
	if diff := cmp.Diff(want, readAll(t, path)); diff != "" {
		t.Errorf("zero read the reference's write (-want +got):\n%s", diff)
	}
}

// TestReferenceWritesGolden has the reference server write goldenGraph and
// requires the bytes of testdata/golden.jsonl, which TestFormatGolden
// requires of Zero.
func TestReferenceWritesGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	cs := startReference(t, path)
	callReference(t, cs, "create_entities", map[string]any{"entities": wireEntities(goldenGraph.Entities)}, nil)
	callReference(t, cs, "create_relations", map[string]any{"relations": wireRelations(goldenGraph.Relations)}, nil)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("the reference wrote:\n%q\ngolden:\n%q", got, want)
	}
}
