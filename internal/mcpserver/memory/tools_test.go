package memory

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/graphstore"
	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
)

// connect serves a memory server for the file at path and returns a
// session with it. The store is closed when the test ends.
func connect(t *testing.T, path string, opts *mcp.ClientOptions) (*mcp.ClientSession, *graphstore.Store) {
	t.Helper()
	st, err := graphstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return mcptest.Connect(t, New(st, io.Discard), opts), st
}

// call calls a tool and returns its text, whether it is an error, and its
// structured content as JSON.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) (string, bool, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", tool, err)
	}
	structured := ""
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		structured = string(b)
	}
	return mcptest.Text(res), res.IsError, structured
}

func TestToolSchemas(t *testing.T) {
	cs, _ := connect(t, filepath.Join(t.TempDir(), "m.jsonl"), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	required := mcptest.CheckSchemas(t, res.Tools, map[string]any{
		"create_entities":     createEntitiesArgs{},
		"create_relations":    createRelationsArgs{},
		"add_observations":    addObservationsArgs{},
		"delete_entities":     deleteEntitiesArgs{},
		"delete_observations": deleteObservationsArgs{},
		"delete_relations":    deleteRelationsArgs{},
		"read_graph":          readGraphArgs{},
		"search_nodes":        searchNodesArgs{},
		"open_nodes":          openNodesArgs{},
	})
	if len(required) != 9 {
		t.Errorf("%d tools checked, want 9", len(required))
	}
}

// TestSchemasMatchReference compares each tool with the reference's, as
// its tools/list gives them (testdata/reference-tools.json): names,
// titles, annotations and output schemas the same; input schemas the same
// but for additionalProperties false at every level.
func TestSchemasMatchReference(t *testing.T) {
	b, err := os.ReadFile("testdata/reference-tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref []map[string]any
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, filepath.Join(t.TempDir(), "m.jsonl"), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]map[string]any{}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool)
		var m map[string]any
		json.Unmarshal(b, &m)
		ours[tool.Name] = m
	}
	if len(ours) != len(ref) {
		t.Errorf("%d tools, the reference has %d", len(ours), len(ref))
	}
	for _, r := range ref {
		name := r["name"].(string)
		o := ours[name]
		if o == nil {
			t.Errorf("no tool %s", name)
			continue
		}
		if o["title"] != r["title"] {
			t.Errorf("%s: title %v, reference %v", name, o["title"], r["title"])
		}
		ann := o["annotations"].(map[string]any)
		delete(ann, "title")
		for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if ann[k] == nil {
				ann[k] = false
			}
		}
		if diff := cmp.Diff(r["annotations"], ann); diff != "" {
			t.Errorf("%s: annotations (-reference +ours):\n%s", name, diff)
		}
		refOut := r["outputSchema"].(map[string]any)
		delete(refOut, "$schema")
		if diff := cmp.Diff(refOut, o["outputSchema"]); diff != "" {
			t.Errorf("%s: output schema (-reference +ours):\n%s", name, diff)
		}
		refIn := r["inputSchema"].(map[string]any)
		delete(refIn, "$schema")
		closeObjects(refIn)
		if refIn["required"] == nil {
			refIn["required"] = []any{}
		}
		if diff := cmp.Diff(refIn, o["inputSchema"]); diff != "" {
			t.Errorf("%s: input schema (-reference, closed +ours):\n%s", name, diff)
		}
	}
}

// closeObjects sets additionalProperties false on every object schema in v.
func closeObjects(v any) {
	switch v := v.(type) {
	case map[string]any:
		if v["type"] == "object" {
			v["additionalProperties"] = false
		}
		for _, x := range v {
			closeObjects(x)
		}
	case []any:
		for _, x := range v {
			closeObjects(x)
		}
	}
}

// TestTools runs each tool through MCP and checks its text, as
// JSON.stringify(result, null, 2) writes it, and its structured content.
func TestTools(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	cs, _ := connect(t, path, nil)
	steps := []struct {
		tool       string
		args       string
		text       string
		isError    bool
		structured string
	}{
		{"read_graph", `{}`, "{\n  \"entities\": [],\n  \"relations\": []\n}", false, `{"entities":[],"relations":[]}`},
		{"create_entities", `{"entities":[{"name":"Ada","entityType":"person","observations":["wrote \"notes\""]},{"name":"Engine","entityType":"machine","observations":[]},{"name":"Ada","entityType":"dup","observations":[]}]}`,
			"[\n  {\n    \"name\": \"Ada\",\n    \"entityType\": \"person\",\n    \"observations\": [\n      \"wrote \\\"notes\\\"\"\n    ]\n  },\n  {\n    \"name\": \"Engine\",\n    \"entityType\": \"machine\",\n    \"observations\": []\n  }\n]", false,
			`{"entities":[{"name":"Ada","entityType":"person","observations":["wrote \"notes\""]},{"name":"Engine","entityType":"machine","observations":[]}]}`},
		{"create_entities", `{"entities":[{"name":"Ada","entityType":"again","observations":[]}]}`, "[]", false, `{"entities":[]}`},
		{"create_relations", `{"relations":[{"from":"Ada","to":"Engine","relationType":"programs"}]}`,
			"[\n  {\n    \"from\": \"Ada\",\n    \"to\": \"Engine\",\n    \"relationType\": \"programs\"\n  }\n]", false,
			`{"relations":[{"from":"Ada","to":"Engine","relationType":"programs"}]}`},
		{"add_observations", `{"observations":[{"entityName":"Engine","contents":["steam","steam"]}]}`,
			"[\n  {\n    \"entityName\": \"Engine\",\n    \"addedObservations\": [\n      \"steam\"\n    ]\n  }\n]", false,
			`{"results":[{"entityName":"Engine","addedObservations":["steam"]}]}`},
		{"add_observations", `{"observations":[{"entityName":"Engine","contents":["gears"]},{"entityName":"Nobody","contents":["x"]}]}`,
			"Entity with name Nobody not found", true, ``},
		{"search_nodes", `{"query":"STEAM"}`,
			"{\n  \"entities\": [\n    {\n      \"name\": \"Engine\",\n      \"entityType\": \"machine\",\n      \"observations\": [\n        \"steam\"\n      ]\n    }\n  ],\n  \"relations\": [\n    {\n      \"from\": \"Ada\",\n      \"to\": \"Engine\",\n      \"relationType\": \"programs\"\n    }\n  ]\n}", false,
			`{"entities":[{"name":"Engine","entityType":"machine","observations":["steam"]}],"relations":[{"from":"Ada","to":"Engine","relationType":"programs"}]}`},
		{"open_nodes", `{"names":["Ada","Missing"]}`, "", false,
			`{"entities":[{"name":"Ada","entityType":"person","observations":["wrote \"notes\""]}],"relations":[{"from":"Ada","to":"Engine","relationType":"programs"}]}`},
		{"delete_observations", `{"deletions":[{"entityName":"Engine","observations":["steam"]}]}`, "Observations deleted successfully", false,
			`{"success":true,"message":"Observations deleted successfully"}`},
		{"delete_relations", `{"relations":[{"from":"Ada","to":"Engine","relationType":"programs"}]}`, "Relations deleted successfully", false,
			`{"success":true,"message":"Relations deleted successfully"}`},
		{"delete_entities", `{"entityNames":["Engine"]}`, "Entities deleted successfully", false,
			`{"success":true,"message":"Entities deleted successfully"}`},
		{"read_graph", `{}`, "", false,
			`{"entities":[{"name":"Ada","entityType":"person","observations":["wrote \"notes\""]}],"relations":[]}`},
	}
	for i, s := range steps {
		text, isErr, structured := call(t, cs, s.tool, json.RawMessage(s.args))
		if isErr != s.isError || (s.text != "" && text != s.text) || (s.structured != "" && !sameJSON(structured, s.structured)) {
			t.Errorf("step %d, %s %s:\ngot  %v %q\n     %s\nwant %v %q\n     %s", i, s.tool, s.args, isErr, text, structured, s.isError, s.text, s.structured)
		}
	}
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(a, b string) bool {
	var va, vb any
	return json.Unmarshal([]byte(a), &va) == nil && json.Unmarshal([]byte(b), &vb) == nil && cmp.Equal(va, vb)
}

// TestStrictArguments checks that arguments the reference would silently
// drop or misread are refused, and change nothing.
func TestStrictArguments(t *testing.T) {
	cs, st := connect(t, filepath.Join(t.TempDir(), "m.jsonl"), nil)
	bad := []struct{ tool, args, want string }{
		{"create_entities", `{"entities":[{"name":"a","entityType":"t","observations":[],"extra":1}]}`, "unknown key"},
		{"create_entities", `{"entities":[{"name":"a","entityType":"t"}]}`, "entities[0].observations is required"},
		{"create_entities", `{"entities":[{"name":"a","entitytype":"t","observations":[]}]}`, "unknown key"},
		{"create_entities", `{}`, "entities is required"},
		{"create_entities", `{"entities":[{"name":1,"entityType":"t","observations":[]}]}`, "entities[0].name: expected string, received number"},
		{"create_relations", `{"relations":[{"from":"a","to":"b"}]}`, "relations[0].relationType is required"},
		{"add_observations", `{"observations":[{"entityName":"a"}]}`, "observations[0].contents is required"},
		{"delete_entities", `{"entityNames":null}`, "entityNames is required"},
		{"delete_observations", `{"deletions":[{"observations":[]}]}`, "deletions[0].entityName is required"},
		{"search_nodes", `{}`, "query is required"},
		{"search_nodes", `{"query":"a","limit":3}`, "unknown key"},
		{"open_nodes", `{"names":"a"}`, "names: expected array, received string"},
		{"read_graph", `{"x":1}`, "unknown key"},
	}
	for _, b := range bad {
		text, isErr, _ := call(t, cs, b.tool, json.RawMessage(b.args))
		if !isErr || !strings.Contains(text, b.want) {
			t.Errorf("%s %s: %v %q, want an error with %q", b.tool, b.args, isErr, text, b.want)
		}
	}
	if g, _ := st.Read(); len(g.Entities)+len(g.Relations) != 0 {
		t.Errorf("refused calls changed the graph: %+v", g)
	}
}

// TestResource reads memory://knowledge-graph and checks that a subscribed
// client hears of each change, under the protocol's older subscription
// (resources/subscribe) and its newer one (subscriptions/listen).
func TestResource(t *testing.T) {
	for _, version := range []string{"2025-06-18", ""} {
		t.Run("protocol "+version, func(t *testing.T) {
			updated := make(chan string, 10)
			client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
					updated <- req.Params.URI
				},
			})
			st, err := graphstore.Open(filepath.Join(t.TempDir(), "m.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			cs := mcptest.ConnectClient(t, New(st, io.Discard), client, &mcp.ClientSessionOptions{ProtocolVersion: version})
			ctx := context.Background()
			list, err := cs.ListResources(ctx, nil)
			if err != nil || len(list.Resources) != 1 || list.Resources[0].URI != ResourceURI || list.Resources[0].MIMEType != "application/json" {
				t.Fatalf("resources: %v %+v", err, list)
			}
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: ResourceURI}); err != nil {
				t.Fatal(err)
			}
			if version != "" {
				if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "memory://other"}); err == nil {
					t.Error("subscribed to a resource that does not exist")
				}
			}
			deadline := time.After(5 * time.Second)
			for heard := false; !heard; {
				// Under the newer protocol the subscription starts in the
				// background: change the graph until the client hears.
				call(t, cs, "create_entities", map[string]any{"entities": []map[string]any{{"name": "a", "entityType": "t", "observations": []string{"o"}}}})
				select {
				case uri := <-updated:
					if uri != ResourceURI {
						t.Errorf("update for %s", uri)
					}
					heard = true
				case <-time.After(50 * time.Millisecond):
				case <-deadline:
					t.Fatal("no resource update after a change")
				}
			}
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: ResourceURI})
			if err != nil {
				t.Fatal(err)
			}
			want := "{\n  \"entities\": [\n    {\n      \"name\": \"a\",\n      \"entityType\": \"t\",\n      \"observations\": [\n        \"o\"\n      ]\n    }\n  ],\n  \"relations\": []\n}"
			if len(res.Contents) != 1 || res.Contents[0].Text != want || res.Contents[0].MIMEType != "application/json" {
				t.Errorf("resource: %+v", res.Contents)
			}
		})
	}
}

// TestConcurrentCreateEntities makes 50 create_entities calls at once
// through MCP; every entity must be in the graph and in the file.
func TestConcurrentCreateEntities(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	cs, st := connect(t, path, nil)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			name := "entity " + strings.Repeat("x", i)
			text, isErr, _ := call(t, cs, "create_entities", map[string]any{"entities": []map[string]any{
				{"name": name, "entityType": "t", "observations": []string{"made by call " + name}}}})
			if isErr || !strings.Contains(text, name) {
				t.Errorf("call %d: %v %s", i, isErr, text)
			}
		})
	}
	wg.Wait()
	g, err := st.Read()
	if err != nil || len(g.Entities) != 50 {
		t.Fatalf("%d entities in the graph, want 50 (%v)", len(g.Entities), err)
	}
	// And in the file, as another store reads it.
	other, err := graphstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if g2, _ := other.Read(); len(g2.Entities) != 50 {
		t.Errorf("%d entities in the file, want 50", len(g2.Entities))
	}
}

func TestFilePath(t *testing.T) {
	tests := []struct{ flag, env, want string }{
		{"", "", "/work/dir/memory.jsonl"},
		{"", "/abs/env.jsonl", "/abs/env.jsonl"},
		{"", "rel/env.jsonl", "/work/dir/rel/env.jsonl"},
		{"/abs/flag.jsonl", "/abs/env.jsonl", "/abs/flag.jsonl"},
		{"flag.jsonl", "/abs/env.jsonl", "/work/dir/flag.jsonl"},
		{"../up.jsonl", "", "/work/up.jsonl"},
	}
	for _, tt := range tests {
		if got := FilePath(tt.flag, tt.env, "/work/dir"); got != tt.want {
			t.Errorf("FilePath(%q, %q) = %q, want %q", tt.flag, tt.env, got, tt.want)
		}
	}
}
