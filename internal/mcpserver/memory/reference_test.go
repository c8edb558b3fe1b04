package memory

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
	text := sameResource(t, ref, zero)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	sameFile(t, refPath, zeroPath)
	var g graphstore.Graph
	if json.Unmarshal([]byte(text), &g) != nil || len(g.Entities) != 5 {
		t.Errorf("resource text does not hold the graph: %s", text)
	}
}

// sameResource reads the graph's resource from both servers, requires the
// same contents, and returns Zero's text.
func sameResource(t *testing.T, ref, zero *mcp.ClientSession) string {
	t.Helper()
	refRes, err1 := ref.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: ResourceURI})
	zeroRes, err2 := zero.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: ResourceURI})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	a, b := refRes.Contents[0], zeroRes.Contents[0]
	if a.Text != b.Text || a.MIMEType != b.MIMEType || a.URI != b.URI {
		t.Errorf("resource:\nreference %+v\nzero      %+v", a, b)
	}
	return b.Text
}

// sameFile requires the two files to hold the same bytes.
func sameFile(t *testing.T, refPath, zeroPath string) {
	t.Helper()
	refFile, _ := os.ReadFile(refPath)
	zeroFile, _ := os.ReadFile(zeroPath)
	if string(refFile) != string(zeroFile) {
		t.Errorf("files differ:\nreference %q\nzero      %q", refFile, zeroFile)
	}
}

// TestDuplicatesMatchReference gives the reference server and Zero's the
// same file with a name and a relation twice, as hand edits or the
// reference's lost updates leave it, and requires the same answers to
// reads (every copy, in the file's order), to writes, and the same file
// afterwards. Then delete_observations, where Zero departs from the
// reference: it deletes from every copy, the reference from the first.
func TestDuplicatesMatchReference(t *testing.T) {
	file := strings.Join([]string{
		`{"type":"entity","name":"a","entityType":"t","observations":["x","y"]}`,
		`{"type":"entity","name":"b","entityType":"t","observations":[]}`,
		`{"type":"entity","name":"a","entityType":"u","observations":["y","z"]}`,
		`{"type":"relation","from":"a","to":"b","relationType":"r"}`,
		`{"type":"relation","from":"b","to":"b","relationType":"s"}`,
		`{"type":"relation","from":"a","to":"b","relationType":"r"}`,
	}, "\n")
	refPath := filepath.Join(t.TempDir(), "memory.jsonl")
	zeroPath := filepath.Join(t.TempDir(), "memory.jsonl")
	os.WriteFile(refPath, []byte(file), 0o600)
	os.WriteFile(zeroPath, []byte(file), 0o600)
	ref := testref.Memory(t, refPath)
	st, err := graphstore.Open(zeroPath)
	if err != nil {
		t.Fatal(err)
	}
	zero := mcptest.Connect(t, New(st, os.Stderr), nil)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"read_graph", map[string]any{}},
		{"search_nodes", map[string]any{"query": "Z"}},
		{"search_nodes", map[string]any{"query": "y"}},
		{"search_nodes", map[string]any{"query": "b"}},
		{"open_nodes", map[string]any{"names": []string{"a"}}},
		{"open_nodes", map[string]any{"names": []string{"b", "a", "a"}}},
		{"create_entities", map[string]any{"entities": []any{map[string]any{"name": "a", "entityType": "v", "observations": []string{}}}}},
		{"create_relations", map[string]any{"relations": []any{map[string]any{"from": "a", "to": "b", "relationType": "r"}}}},
		{"add_observations", map[string]any{"observations": []any{map[string]any{"entityName": "a", "contents": []string{"z", "w"}}}}},
		{"read_graph", map[string]any{}},
	}
	for i, c := range calls {
		refText, refErr, refStructured := call(t, ref, c.tool, c.args)
		zeroText, zeroErr, zeroStructured := call(t, zero, c.tool, c.args)
		if refText != zeroText || refErr != zeroErr || !sameJSON(refStructured, zeroStructured) {
			t.Errorf("call %d, %s %v:\nreference %v %q\nzero      %v %q", i, c.tool, c.args, refErr, refText, zeroErr, zeroText)
		}
	}
	sameResource(t, ref, zero)
	if err := st.Compact(); err != nil {
		t.Fatal(err)
	}
	sameFile(t, refPath, zeroPath)

	args := map[string]any{"deletions": []any{map[string]any{"entityName": "a", "observations": []string{"y", "z"}}}}
	if _, isErr, _ := call(t, zero, "delete_observations", args); isErr {
		t.Fatal("delete_observations failed")
	}
	_, _, structured := call(t, zero, "open_nodes", map[string]any{"names": []string{"a"}})
	want := `{"entities":[{"name":"a","entityType":"t","observations":["x","w"]},{"name":"a","entityType":"u","observations":[]}],` +
		`"relations":[{"from":"a","to":"b","relationType":"r"},{"from":"a","to":"b","relationType":"r"}]}`
	if !sameJSON(structured, want) {
		t.Errorf("after delete_observations: %s\nwant %s", structured, want)
	}
}
