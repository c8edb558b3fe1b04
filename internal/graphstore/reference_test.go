package graphstore

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/testref"
)

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

	cs := testref.Memory(t, path)
	var got Graph // encoding/json matches entityType and the like to its fields
	callReference(t, cs, "read_graph", map[string]any{}, &got)
	if diff := cmp.Diff(want, got); diff != "" {
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
	cs := testref.Memory(t, path)
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
