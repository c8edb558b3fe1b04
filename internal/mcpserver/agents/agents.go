// Package agents is the agents MCP server: it runs the agents a workspace
// defines, each a conversation with its configured model provider that may
// call the child MCP tools its definition selects. It owns the sessions
// (spawn_agent, send_input, wait_agent), their limits, the run loop over
// [model.Client], and the cancellation that ends every run and closes every
// toolbox when the server closes.
//
// Definitions and skills are trusted workspace input, not a security
// boundary: an agent acts through its provider and its child tools with the
// user's permissions. What the server guards is what it hands back: no
// answer, error, progress notification or log line carries the provider's
// key, a progress notification never carries a prompt, model text or a
// tool's arguments, and a tool's output reaches the model wrapped as
// untrusted data. Agents cannot spawn agents: a toolbox is built from an
// agent's child servers, never from this one.
package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/mcpserver"
	"github.com/zero-dev/zero/internal/model"
)

// Name is the server's implementation name.
const Name = "zero-agents"

// Limits.
const (
	MaxRuns         = 8       // runs at once; one more is capacity_exceeded
	MaxRetained     = 64      // finished sessions kept; the least recently used goes first
	MaxQueued       = 16      // inputs waiting for a running session; one more is queue_full
	MaxTargets      = 64      // sessions one wait_agent waits for
	MaxHistory      = 1 << 20 // bytes of a session's conversation; over it, context_limit
	MaxToolResult   = 128 << 10
	DefaultMaxTurns = 32
	MaxMaxTurns     = 1000
	DefaultWait     = 30 * time.Second
	MaxWait         = 300 * time.Second
	// ConnectTimeout and RequestTimeout bound each provider request.
	ConnectTimeout = 10 * time.Second
	RequestTimeout = 120 * time.Second
	// closeWait bounds how long Close waits for runs to end.
	closeWait = 15 * time.Second
)

// Error codes: a tool error's text and a failed session's error start with
// one, then ": ".
const (
	CodeCapacity     = "capacity_exceeded"
	CodeUnknown      = "unknown_agent"
	CodeContextLimit = "context_limit"
	CodeQueueFull    = "queue_full"
	CodeInvalid      = "invalid_arguments"
	CodeMaxTurns     = "max_turns"
	CodeModel        = "model_error"
	CodeTools        = "tools_error"
	CodeSkill        = "skill_error"
	CodeClosed       = "server_closed"
)

// An Agent is one runnable definition, as the catalog builds it.
type Agent struct {
	Name, Description, Instructions string
	// MaxTurns bounds the model requests one input gets; 0 means
	// [DefaultMaxTurns], and more than [MaxMaxTurns] is that.
	MaxTurns int
	// Model is the provider; its APIKey is read from the definition's
	// env_key when the catalog is asked, at spawn time, and goes nowhere but
	// the model client.
	Model           model.Config
	Temperature     *float64
	ReasoningEffort string // sent to the wires that have it
	// Tools starts the agent's child servers; it is called in the
	// background, once per run. Nil: the agent has no tools.
	Tools func(ctx context.Context) (Toolbox, error)
	// Skills are loaded into the system prompt ([Options.LoadSkill]); a
	// missing one fails the run.
	Skills []string
}

// A Toolbox is the child tools one run may call.
type Toolbox interface {
	// Tools are the tools offered, named as the model sees them
	// (server__tool).
	Tools() []model.Tool
	// Call runs one tool; its text is handed to the model wrapped as
	// untrusted data, and so is an error's.
	Call(ctx context.Context, name string, args json.RawMessage) (string, error)
	// Close ends the children.
	Close() error
}

// Options configure a [Server].
type Options struct {
	// Catalog returns the agents, afresh: it is asked when the server is
	// built (for spawn_agent's names) and at every spawn.
	Catalog func() ([]Agent, error)
	// LoadSkill returns a skill's instructions by name.
	LoadSkill func(name string) (string, error)
	// Stderr receives the server's warnings.
	Stderr io.Writer

	httpClient *http.Client // tests: the provider client; nil, providerClient()
}

// A Server is the agents MCP server and the sessions it runs.
type Server struct {
	mcp   *mcp.Server
	o     Options
	http  *http.Client
	ctx   context.Context // every run's; Close cancels it
	stop  context.CancelFunc
	runs  sync.WaitGroup
	names []string // spawn_agent's enum, as last registered; guarded by namesMu
	// namesMu orders re-registrations of spawn_agent.
	namesMu sync.Mutex

	mu       sync.Mutex
	sessions map[string]*session
	running  int
	clock    uint64        // ticks on every use, for least-recently-used eviction
	changed  chan struct{} // closed and replaced on every change of a session
	closed   bool
}

// New returns the server; it asks the catalog once, for spawn_agent's
// names, and fails if it cannot.
func New(o Options) (*Server, error) {
	if o.Catalog == nil {
		return nil, errors.New("agents: no catalog")
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	list, err := o.Catalog()
	if err != nil {
		return nil, fmt.Errorf("agents catalog: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{
		o: o, http: o.httpClient, ctx: ctx, stop: stop,
		sessions: map[string]*session{}, changed: make(chan struct{}),
	}
	if s.http == nil {
		s.http = providerClient()
	}
	s.mcp = mcpserver.NewServer(Name, o.Stderr, &mcp.ServerOptions{
		Instructions: "Agents defined in this workspace, each a conversation with its own model provider that may call " +
			"the child MCP tools its definition selects. spawn_agent starts one on a task and returns its agent_id at once; " +
			"wait_agent waits for one or more to finish and returns their results; send_input continues a session, " +
			"finished or not, or interrupts it. Agents act with the user's permissions through their tools.",
	})
	s.addTools(names(list))
	return s, nil
}

// MCP returns the MCP server, to serve with [mcpserver.Serve]; call
// [Server.Close] when serving ends.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Serve serves over o until ctx is done or the client leaves, then closes
// the server: every run is cancelled and every toolbox closed.
func (s *Server) Serve(ctx context.Context, o mcpserver.Options) error {
	err := mcpserver.Serve(ctx, s.mcp, o)
	return errors.Join(err, s.Close())
}

// Close cancels every run and waits (up to 15 s) for each to end and close
// its toolbox. Sessions cannot be spawned or continued after.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop()
	done := make(chan struct{})
	go func() { s.runs.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(closeWait):
		return errors.New("agents: runs still ending after 15 s")
	}
}

// providerClient is the HTTP client of every provider request: the model
// package's scheme policy (https, or http to loopback), its body cap, and
// the connect and request timeouts. The model client turns redirects off.
func providerClient() *http.Client {
	return netguard.NewClient(netguard.Options{
		Schemes:        netguard.HTTPSOrLoopbackHTTP,
		Timeout:        RequestTimeout,
		ConnectTimeout: ConnectTimeout,
		MaxBody:        model.MaxResponseBody + 1,
	})
}

// names returns the agents' names, sorted.
func names(list []Agent) []string {
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, a.Name)
	}
	slices.Sort(out)
	return out
}
