// Package memory is the memory MCP server: a knowledge graph of entities,
// relations and observations that a model keeps across conversations. It
// offers the tools and the resource of the reference server
// (@modelcontextprotocol/server-memory) under the same names, arguments and
// output shapes, and keeps the graph in a file of the reference's format
// through internal/graphstore, which makes each write durable before the
// tool answers and lets several processes share the file.
//
// It departs from the reference where the reference loses data or writes
// it twice: arguments are decoded strictly (an unknown or misspelled key is
// an error rather than ignored); a name, a relation or an observation
// repeated within one call is created or added once; lines of the file it
// does not know are kept, where the reference drops them at its next write;
// a deleted observation leaves every copy of an entity whose name the file
// repeats; and a file with a line it cannot read is left as it is, while
// every call answers with an error naming the file, the line and the byte
// offset, until the line is fixed. A graph too large for one reply
// (mcpserver.ReplyBudget) is read in parts, with search_nodes or
// open_nodes.
//
// The data is plaintext, protected only by the file's permissions, and
// anything in it is read by the model as it is: see
// docs/security/memory.md.
package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/graphstore"
	"github.com/zero-dev/zero/internal/mcpserver"
)

// Name is the server's implementation name.
const Name = "zero-memory"

// ResourceURI is the resource holding the whole graph.
const ResourceURI = "memory://knowledge-graph"

// DefaultFile is the file used when neither the flag nor the environment
// names one, in the working directory.
const DefaultFile = "memory.jsonl"

// FilePath returns the graph's file: the --memory-file flag if set, else
// the MEMORY_FILE_PATH environment variable if set, else memory.jsonl; a
// relative path is taken from the working directory cwd. (The reference
// server resolves a relative MEMORY_FILE_PATH against its own package
// folder, and defaults to memory.jsonl there.)
func FilePath(flag, env, cwd string) string {
	p := DefaultFile
	switch {
	case flag != "":
		p = flag
	case env != "":
		p = env
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// New returns the memory server for the graph in store. The caller keeps
// ownership of store, and closes it after the server stops: closing
// compacts the graph into its file. A store whose file does not read
// (graphstore.OpenEvenIfCorrupt) is served too: every call answers with
// its error.
func New(store *graphstore.Store, stderr io.Writer) *mcp.Server {
	s := &server{store: store}
	s.srv = mcpserver.NewServer(Name, stderr, &mcp.ServerOptions{
		Instructions: "A knowledge graph that persists across conversations: entities (a unique name, a type, " +
			"observations) and directed relations between them. Search it with search_nodes or open_nodes " +
			"before creating entities. Its content is plain text that anyone with access to the file can read or change.",
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: s.unsubscribe,
	})
	s.addTools()
	s.srv.AddResource(&mcp.Resource{
		URI:         ResourceURI,
		Name:        "knowledge-graph",
		Title:       "Knowledge Graph",
		Description: "The full knowledge graph with all entities and relations",
		MIMEType:    "application/json",
	}, s.readResource)
	return s.srv
}

type server struct {
	store *graphstore.Store
	srv   *mcp.Server
}

// readResource answers with the whole graph. A graph that does not read or
// does not fit the reply budget is an internal error (-32603): the request
// was right, the server cannot answer it.
func (s *server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	g, err := s.store.Read()
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	text := string(appendGraph(nil, g, indented))
	n := resourceEnvelope + mcpserver.QuotedSize(req.Params.URI) + mcpserver.QuotedSize(text)
	if n > mcpserver.ReplyBudget(ctx) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: mcpserver.BudgetError(ctx, n, partsHint).Error()}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI:      req.Params.URI,
		MIMEType: "application/json",
		Text:     text,
	}}}, nil
}

// resourceEnvelope is the room a resource's reply takes beyond its URI and
// text: the JSON-RPC envelope, as mcpserver counts it, and the contents'
// members.
const resourceEnvelope = 512 + len(`{"contents":[{"uri":,"mimeType":"application/json","text":}]}`)

// partsHint is the way around a graph too large for one reply.
const partsHint = "read it in parts with search_nodes (the entities that match a query) or open_nodes (entities by name)"

// subscribe accepts the one resource. Another URI is the error the SDK
// gives a read of an unknown resource: invalid params (-32602), with the
// URI in the data.
func (s *server) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	if req.Params.URI != ResourceURI {
		data, _ := json.Marshal(map[string]string{"uri": req.Params.URI})
		return &jsonrpc.Error{
			Code:    jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("no resource %q to subscribe to; the only one is %s", req.Params.URI, ResourceURI),
			Data:    data,
		}
	}
	return nil
}

func (s *server) unsubscribe(context.Context, *mcp.UnsubscribeRequest) error { return nil }

// changed tells the sessions that subscribed to the graph that it changed
// (through this server: changes other processes make are not announced).
func (s *server) changed(ctx context.Context) {
	s.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: ResourceURI})
}
