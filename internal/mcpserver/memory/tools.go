package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/graphstore"
	"github.com/zero-dev/zero/internal/mcpserver"
)

// The tools keep the reference server's names, arguments, descriptions,
// output schemas and annotations. Each input schema is written out by hand,
// like the reference's with additionalProperties false at every level, and
// matches the argument struct its handler decodes into; a test checks that
// they agree, and another that the output schemas are the reference's.

const (
	entityItem = `{"type":"object","properties":{` +
		`"name":{"type":"string","description":"The name of the entity"},` +
		`"entityType":{"type":"string","description":"The type of the entity"},` +
		`"observations":{"type":"array","items":{"type":"string"},"description":"An array of observation contents associated with the entity"}},` +
		`"required":["name","entityType","observations"],"additionalProperties":false}`
	relationItem = `{"type":"object","properties":{` +
		`"from":{"type":"string","description":"The name of the entity where the relation starts"},` +
		`"to":{"type":"string","description":"The name of the entity where the relation ends"},` +
		`"relationType":{"type":"string","description":"The type of the relation"}},` +
		`"required":["from","to","relationType"],"additionalProperties":false}`
	stringArray = `{"type":"array","items":{"type":"string"}}`
)

func objectSchema(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	if required == nil {
		req = []byte("[]")
	}
	return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `,"additionalProperties":false}`)
}

var (
	createEntitiesIn  = objectSchema(`"entities":{"type":"array","items":`+entityItem+`}`, "entities")
	createRelationsIn = objectSchema(`"relations":{"type":"array","items":`+relationItem+`}`, "relations")
	addObservationsIn = objectSchema(`"observations":{"type":"array","items":{"type":"object","properties":{`+
		`"entityName":{"type":"string","description":"The name of the entity to add the observations to"},`+
		`"contents":{"type":"array","items":{"type":"string"},"description":"An array of observation contents to add"}},`+
		`"required":["entityName","contents"],"additionalProperties":false}}`, "observations")
	deleteEntitiesIn     = objectSchema(`"entityNames":{"type":"array","items":{"type":"string"},"description":"An array of entity names to delete"}`, "entityNames")
	deleteObservationsIn = objectSchema(`"deletions":{"type":"array","items":{"type":"object","properties":{`+
		`"entityName":{"type":"string","description":"The name of the entity containing the observations"},`+
		`"observations":{"type":"array","items":{"type":"string"},"description":"An array of observations to delete"}},`+
		`"required":["entityName","observations"],"additionalProperties":false}}`, "deletions")
	deleteRelationsIn = objectSchema(`"relations":{"type":"array","items":`+relationItem+`,"description":"An array of relations to delete"}`, "relations")
	readGraphIn       = objectSchema("")
	searchNodesIn     = objectSchema(`"query":{"type":"string","description":"The search query to match against entity names, types, and observation content"}`, "query")
	openNodesIn       = objectSchema(`"names":{"type":"array","items":{"type":"string"},"description":"An array of entity names to retrieve"}`, "names")

	entitiesOut  = objectSchema(`"entities":{"type":"array","items":`+entityItem+`}`, "entities")
	relationsOut = objectSchema(`"relations":{"type":"array","items":`+relationItem+`}`, "relations")
	resultsOut   = objectSchema(`"results":{"type":"array","items":{"type":"object","properties":{`+
		`"entityName":{"type":"string"},"addedObservations":`+stringArray+`},`+
		`"required":["entityName","addedObservations"],"additionalProperties":false}}`, "results")
	successOut = objectSchema(`"success":{"type":"boolean"},"message":{"type":"string"}`, "success", "message")
	graphOut   = objectSchema(`"entities":{"type":"array","items":`+entityItem+`},"relations":{"type":"array","items":`+relationItem+`}`, "entities", "relations")
)

// Annotations, as the reference's. The graph is local (a closed world).
func annotations(title string, readOnly, destructive, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: readOnly, DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: new(false)}
}

func (s *server) addTools() {
	tool := func(name, title, desc string, in, out json.RawMessage, ann *mcp.ToolAnnotations) *mcp.Tool {
		return &mcp.Tool{Name: name, Title: title, Description: desc, InputSchema: in, OutputSchema: out, Annotations: ann}
	}
	mcpserver.AddTool(s.srv, tool("create_entities", "Create Entities",
		"Create multiple new entities in the knowledge graph. An entity whose name already exists, or repeats an "+
			"earlier one in the list, is left out; the result lists the entities created.",
		createEntitiesIn, entitiesOut, annotations("Create Entities", false, false, false)), s.createEntities)
	mcpserver.AddTool(s.srv, tool("create_relations", "Create Relations",
		"Create multiple new relations between entities in the knowledge graph. Relations should be in active voice. "+
			"A relation that already exists is left out; the result lists the relations created.",
		createRelationsIn, relationsOut, annotations("Create Relations", false, false, false)), s.createRelations)
	mcpserver.AddTool(s.srv, tool("add_observations", "Add Observations",
		"Add new observations to existing entities in the knowledge graph. Observations an entity already has are "+
			"left out. If an entity does not exist, nothing is added.",
		addObservationsIn, resultsOut, annotations("Add Observations", false, false, false)), s.addObservations)
	mcpserver.AddTool(s.srv, tool("delete_entities", "Delete Entities",
		"Delete multiple entities and their associated relations from the knowledge graph",
		deleteEntitiesIn, successOut, annotations("Delete Entities", false, true, true)), s.deleteEntities)
	mcpserver.AddTool(s.srv, tool("delete_observations", "Delete Observations",
		"Delete specific observations from entities in the knowledge graph",
		deleteObservationsIn, successOut, annotations("Delete Observations", false, true, true)), s.deleteObservations)
	mcpserver.AddTool(s.srv, tool("delete_relations", "Delete Relations",
		"Delete multiple relations from the knowledge graph",
		deleteRelationsIn, successOut, annotations("Delete Relations", false, true, true)), s.deleteRelations)
	mcpserver.AddTool(s.srv, tool("read_graph", "Read Graph",
		"Read the entire knowledge graph",
		readGraphIn, graphOut, annotations("Read Graph", true, false, true)), s.readGraph)
	mcpserver.AddTool(s.srv, tool("search_nodes", "Search Nodes",
		"Search for nodes in the knowledge graph based on a query: the entities whose name, type or an observation "+
			"contains it, ignoring case, and the relations from or to them.",
		searchNodesIn, graphOut, annotations("Search Nodes", true, false, true)), s.searchNodes)
	mcpserver.AddTool(s.srv, tool("open_nodes", "Open Nodes",
		"Open specific nodes in the knowledge graph by their names: the entities that exist, and the relations "+
			"from or to them.",
		openNodesIn, graphOut, annotations("Open Nodes", true, false, true)), s.openNodes)
}

// Arguments. Required strings are pointers, so that a missing one can be
// told from an empty one; a missing or null array decodes as nil.

type entityArg struct {
	Name         *string  `json:"name"`
	EntityType   *string  `json:"entityType"`
	Observations []string `json:"observations"`
}

type relationArg struct {
	From         *string `json:"from"`
	To           *string `json:"to"`
	RelationType *string `json:"relationType"`
}

type createEntitiesArgs struct {
	Entities []entityArg `json:"entities"`
}

type createRelationsArgs struct {
	Relations []relationArg `json:"relations"`
}

type observationsArg struct {
	EntityName *string  `json:"entityName"`
	Contents   []string `json:"contents"`
}

type addObservationsArgs struct {
	Observations []observationsArg `json:"observations"`
}

type deletionArg struct {
	EntityName   *string  `json:"entityName"`
	Observations []string `json:"observations"`
}

type deleteEntitiesArgs struct {
	EntityNames []string `json:"entityNames"`
}

type deleteObservationsArgs struct {
	Deletions []deletionArg `json:"deletions"`
}

type deleteRelationsArgs struct {
	Relations []relationArg `json:"relations"`
}

type readGraphArgs struct{}

type searchNodesArgs struct {
	Query *string `json:"query"`
}

type openNodesArgs struct {
	Names []string `json:"names"`
}

// required returns an error naming the first missing field of item i of
// list: fields alternates names and whether each is present.
func required(list string, i int, fields ...any) error {
	for k := 0; k < len(fields); k += 2 {
		if !fields[k+1].(bool) {
			if list == "" {
				return fmt.Errorf("%s is required", fields[k])
			}
			return fmt.Errorf("%s[%d].%s is required", list, i, fields[k])
		}
	}
	return nil
}

func (a *createEntitiesArgs) Validate() error {
	if a.Entities == nil {
		return errors.New("entities is required")
	}
	for i, e := range a.Entities {
		if err := required("entities", i, "name", e.Name != nil, "entityType", e.EntityType != nil,
			"observations", e.Observations != nil); err != nil {
			return err
		}
	}
	return nil
}

func validRelations(field string, rs []relationArg) error {
	if rs == nil {
		return fmt.Errorf("%s is required", field)
	}
	for i, r := range rs {
		if err := required(field, i, "from", r.From != nil, "to", r.To != nil, "relationType", r.RelationType != nil); err != nil {
			return err
		}
	}
	return nil
}

func (a *createRelationsArgs) Validate() error { return validRelations("relations", a.Relations) }
func (a *deleteRelationsArgs) Validate() error { return validRelations("relations", a.Relations) }

func (a *addObservationsArgs) Validate() error {
	if a.Observations == nil {
		return errors.New("observations is required")
	}
	for i, o := range a.Observations {
		if err := required("observations", i, "entityName", o.EntityName != nil, "contents", o.Contents != nil); err != nil {
			return err
		}
	}
	return nil
}

func (a *deleteEntitiesArgs) Validate() error {
	return required("", 0, "entityNames", a.EntityNames != nil)
}

func (a *deleteObservationsArgs) Validate() error {
	if a.Deletions == nil {
		return errors.New("deletions is required")
	}
	for i, d := range a.Deletions {
		if err := required("deletions", i, "entityName", d.EntityName != nil, "observations", d.Observations != nil); err != nil {
			return err
		}
	}
	return nil
}

func (a *searchNodesArgs) Validate() error { return required("", 0, "query", a.Query != nil) }
func (a *openNodesArgs) Validate() error   { return required("", 0, "names", a.Names != nil) }

// Hints for an answer over the reply budget.
func (*searchNodesArgs) ReplyHint() string {
	return "search with a narrower query, or open_nodes for entities by name"
}
func (*openNodesArgs) ReplyHint() string { return "open fewer names in one call" }

func relations(rs []relationArg) []graphstore.Relation {
	out := make([]graphstore.Relation, len(rs))
	for i, r := range rs {
		out[i] = graphstore.Relation{From: *r.From, To: *r.To, RelationType: *r.RelationType}
	}
	return out
}

// result is a tool's answer: text and structured content written from the
// same value.
func result(write func(b []byte, st style) []byte) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(write(nil, indented))}},
		StructuredContent: json.RawMessage(write(nil, compact)),
	}
}

// success is the answer of the delete tools.
func success(message string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: message}},
		StructuredContent: json.RawMessage(`{"success":true,"message":"` + message + `"}`),
	}
}

func (s *server) createEntities(ctx context.Context, _ *mcp.CallToolRequest, in *createEntitiesArgs) (*mcp.CallToolResult, error) {
	es := make([]graphstore.Entity, len(in.Entities))
	for i, e := range in.Entities {
		es[i] = graphstore.Entity{Name: *e.Name, EntityType: *e.EntityType, Observations: e.Observations}
	}
	created, err := s.store.CreateEntities(es)
	if err != nil {
		return nil, err
	}
	s.changed(ctx)
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: string(indented.entities(nil, 0, created))}},
		StructuredContent: json.RawMessage(appendField(nil, compact, "entities", func(b []byte, depth int) []byte {
			return compact.entities(b, depth, created)
		})),
	}, nil
}

func (s *server) createRelations(ctx context.Context, _ *mcp.CallToolRequest, in *createRelationsArgs) (*mcp.CallToolResult, error) {
	created, err := s.store.CreateRelations(relations(in.Relations))
	if err != nil {
		return nil, err
	}
	s.changed(ctx)
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: string(indented.relations(nil, 0, created))}},
		StructuredContent: json.RawMessage(appendField(nil, compact, "relations", func(b []byte, depth int) []byte {
			return compact.relations(b, depth, created)
		})),
	}, nil
}

func (s *server) addObservations(ctx context.Context, _ *mcp.CallToolRequest, in *addObservationsArgs) (*mcp.CallToolResult, error) {
	adds := make([]graphstore.Observations, len(in.Observations))
	for i, o := range in.Observations {
		adds[i] = graphstore.Observations{EntityName: *o.EntityName, Contents: o.Contents}
	}
	results, err := s.store.AddObservations(adds)
	var nf *graphstore.EntityNotFoundError
	if errors.As(err, &nf) {
		//lint:ignore ST1005 the reference server's words, which TestMatchesReference requires byte for byte
		return nil, fmt.Errorf("Entity with name %s not found", nf.Name)
	}
	if err != nil {
		return nil, err
	}
	s.changed(ctx)
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: string(indented.results(nil, 0, results))}},
		StructuredContent: json.RawMessage(appendField(nil, compact, "results", func(b []byte, depth int) []byte {
			return compact.results(b, depth, results)
		})),
	}, nil
}

func (s *server) deleteEntities(ctx context.Context, _ *mcp.CallToolRequest, in *deleteEntitiesArgs) (*mcp.CallToolResult, error) {
	if err := s.store.DeleteEntities(in.EntityNames); err != nil {
		return nil, err
	}
	s.changed(ctx)
	return success("Entities deleted successfully"), nil
}

func (s *server) deleteObservations(ctx context.Context, _ *mcp.CallToolRequest, in *deleteObservationsArgs) (*mcp.CallToolResult, error) {
	dels := make([]graphstore.Observations, len(in.Deletions))
	for i, d := range in.Deletions {
		dels[i] = graphstore.Observations{EntityName: *d.EntityName, Contents: d.Observations}
	}
	if err := s.store.DeleteObservations(dels); err != nil {
		return nil, err
	}
	s.changed(ctx)
	return success("Observations deleted successfully"), nil
}

func (s *server) deleteRelations(ctx context.Context, _ *mcp.CallToolRequest, in *deleteRelationsArgs) (*mcp.CallToolResult, error) {
	if err := s.store.DeleteRelations(relations(in.Relations)); err != nil {
		return nil, err
	}
	s.changed(ctx)
	return success("Relations deleted successfully"), nil
}

func graphResult(g graphstore.Graph, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		return nil, err
	}
	return result(func(b []byte, st style) []byte { return appendGraph(b, g, st) }), nil
}

// readGraph answers with the whole graph, or refuses one too large for the
// reply budget, naming the tools that read it in parts.
func (s *server) readGraph(ctx context.Context, _ *mcp.CallToolRequest, _ *readGraphArgs) (*mcp.CallToolResult, error) {
	res, err := graphResult(s.store.Read())
	if err != nil {
		return nil, err
	}
	if n := mcpserver.ResultSize(res); n > mcpserver.ReplyBudget(ctx) {
		return nil, fmt.Errorf("the graph is too large to read whole: %w", mcpserver.BudgetError(ctx, n, partsHint))
	}
	return res, nil
}

func (s *server) searchNodes(_ context.Context, _ *mcp.CallToolRequest, in *searchNodesArgs) (*mcp.CallToolResult, error) {
	return graphResult(s.store.Search(*in.Query))
}

func (s *server) openNodes(_ context.Context, _ *mcp.CallToolRequest, in *openNodesArgs) (*mcp.CallToolResult, error) {
	return graphResult(s.store.Nodes(in.Names))
}
