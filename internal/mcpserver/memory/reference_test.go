package memory

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/graphstore"
	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
	"github.com/zero-dev/zero/internal/testref"
)

// TestMatchesReference makes the same calls to the reference server and to
// Zero's, each on a fresh file, and requires the same answers (text byte
// for byte, structured content, error or not), the same resource text, and
// the same file.
func TestMatchesReference(t *testing.T) {
	refPath := filepath.Join(t.TempDir(), "memory.jsonl")
	ref := testref.Memory(t, refPath)
	zeroPath := filepath.Join(t.TempDir(), "memory.jsonl")
	st, err := graphstore.Open(zeroPath)
	if err != nil {
		t.Fatal(err)
	}
	zero := mcptest.Connect(t, New(st, os.Stderr), nil)

	e := func(name, typ string, obs ...string) map[string]any {
		if obs == nil {
			obs = []string{}
		}
		return map[string]any{"name": name, "entityType": typ, "observations": obs}
	}
	r := func(from, to, typ string) map[string]any {
		return map[string]any{"from": from, "to": to, "relationType": typ}
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"read_graph", map[string]any{}},
		{"create_entities", map[string]any{"entities": []any{e("Ada", "person", "wrote \"notes\"", "tab\there"), e("Zürich ☃", "place", "é 😀 \\ \n"), e("empty", "thing"), e("Ctrl\x01", "odd", "\u2028<&>")}}},
		{"create_entities", map[string]any{"entities": []any{e("Ada", "again"), e("Babbage", "person", "Designed the ENGINE")}}},
		{"create_relations", map[string]any{"relations": []any{r("Ada", "Babbage", "knows"), r("Babbage", "Engine", "designed"), r("Zürich ☃", "Ada", "hosted")}}},
		{"create_relations", map[string]any{"relations": []any{r("Ada", "Babbage", "knows"), r("Ada", "Ada", "is")}}},
		{"add_observations", map[string]any{"observations": []any{map[string]any{"entityName": "empty", "contents": []string{"no longer", "really"}}, map[string]any{"entityName": "Ada", "contents": []string{"tab\there", "new"}}}}},
		{"add_observations", map[string]any{"observations": []any{map[string]any{"entityName": "Ada", "contents": []string{"lost"}}, map[string]any{"entityName": "Nobody", "contents": []string{"x"}}}}},
		{"search_nodes", map[string]any{"query": "engine"}},
		{"search_nodes", map[string]any{"query": "ZÜRICH"}},
		{"search_nodes", map[string]any{"query": ""}},
		{"search_nodes", map[string]any{"query": "nothing at all"}},
		{"open_nodes", map[string]any{"names": []string{"Babbage", "Nobody", "Ada"}}},
		{"open_nodes", map[string]any{"names": []string{}}},
		{"delete_observations", map[string]any{"deletions": []any{map[string]any{"entityName": "empty", "observations": []string{"really", "absent"}}, map[string]any{"entityName": "Nobody", "observations": []string{"x"}}}}},
		{"delete_relations", map[string]any{"relations": []any{r("Ada", "Ada", "is"), r("x", "y", "z")}}},
		{"delete_entities", map[string]any{"entityNames": []string{"Babbage", "Nobody"}}},
		{"create_entities", map[string]any{"entities": []any{e("Babbage", "person, again")}}},
		{"read_graph", map[string]any{}},
	}
	for i, c := range calls {
		refText, refErr, refStructured := call(t, ref, c.tool, c.args)
		zeroText, zeroErr, zeroStructured := call(t, zero, c.tool, c.args)
		if refText != zeroText || refErr != zeroErr || !sameJSON(refStructured, zeroStructured) && refStructured+zeroStructured != "" {
			t.Errorf("call %d, %s:\nreference %v %q\n          %s\nzero      %v %q\n          %s", i, c.tool, refErr, refText, refStructured, zeroErr, zeroText, zeroStructured)
		}
	}
	refRes, err1 := ref.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: ResourceURI})
	zeroRes, err2 := zero.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: ResourceURI})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if a, b := refRes.Contents[0], zeroRes.Contents[0]; a.Text != b.Text || a.MIMEType != b.MIMEType || a.URI != b.URI {
		t.Errorf("resource:\nreference %+v\nzero      %+v", a, b)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	refFile, _ := os.ReadFile(refPath)
	zeroFile, _ := os.ReadFile(zeroPath)
	if string(refFile) != string(zeroFile) {
		t.Errorf("files differ:\nreference %q\nzero      %q", refFile, zeroFile)
	}
	var g graphstore.Graph
	if json.Unmarshal([]byte(zeroRes.Contents[0].Text), &g) != nil || len(g.Entities) != 5 {
		t.Errorf("resource text does not hold the graph: %s", zeroRes.Contents[0].Text)
	}
}
