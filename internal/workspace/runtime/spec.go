package runtime

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/buildinfo"
	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/guard/redact"
	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/pin"
	"github.com/zero-dev/zero/internal/plugin/host"
)

// Kinds of server, as package servers names them.
const (
	KindStdio = "stdio"
	KindHTTP  = "http"
	KindSSE   = "sse"
)

// A Spec is how to reach one approved server, or run one enabled plugin,
// and what of it may be called. Package servers builds a server's from the
// approved configuration and the secrets released for its approved
// fingerprint, package plugins a plugin's from the installed plugin and
// its approval; nothing in it comes from a caller.
type Spec struct {
	ServerID    int64  // a server's id; 0 for a plugin, whose id is Plugin.ID
	Name        string // the server's or the plugin's name
	Fingerprint string // the approved fingerprint: a connection made under another one is replaced
	Kind        string // KindStdio, KindHTTP, KindSSE or KindPlugin
	Epoch       uint64 // Runtime.Epoch (Plugins.Epoch for a plugin), read before the state the Spec was built from

	// A plugin: what runs it, and its manifest's tools. Program, Env and
	// Allow below are its node, its secrets and its allowed local origins.
	Plugin *Plugin

	// A stdio server.
	Command string            // as typed: looked up in the child's PATH
	Program string            // the absolute path the approval pinned; nothing else runs (spawn.Cmd.Expect)
	Args    []string          // the arguments, after the program
	Dir     string            // the working directory, relative to the thread workspace; "" is its root
	Env     map[string]string // the secret values released for Fingerprint (envscrub.Spec.Secret)

	// An http or sse server.
	URL     string            // canonical, https
	Headers map[string]string // secret values, sent with requests to URL's origin and to no other
	Allow   []netip.Prefix    // addresses reachable despite the private-network block (ZERO_ALLOWED_LOCAL_ORIGINS)
	TLS     *tls.Config       // nil: the system's roots; each connection gets a copy (net/http writes to it)

	// ToolSet is the approved tool set, name to pin.ToolHash (a plugin's:
	// to its plugin tool hash), approved for Fingerprint; nil when none is
	// approved yet, and then nothing may be called.
	ToolSet map[string]string
	// Disabled are the tools the owner switched off.
	Disabled []string
	// Debug keeps the arguments and results of calls in the debug log.
	Debug bool
	// MaxCalls bounds the calls in flight to the server (the owner's
	// setting); 0 means Options.MaxPerServer, and it is at most
	// MaxPerServerLimit. A change applies to the calls that start after it.
	MaxCalls int
	// MaxResult bounds a result's bytes instead of MaxResultBytes, for a
	// caller that keeps long results itself (a thread keeps them in a
	// file); 0 means MaxResultBytes, and it is at most MaxResultLimit.
	MaxResult int
}

// MaxResultLimit is the largest [Spec.MaxResult].
const MaxResultLimit = 64 << 20

// resultLimit is the bound of s's results.
func (s Spec) resultLimit() int {
	if s.MaxResult <= 0 {
		return MaxResultBytes
	}
	return min(s.MaxResult, MaxResultLimit)
}

// Redactor redacts s's secret values, those of its environment and its
// headers, each marked with its kind and name ("[redacted env API_KEY]").
func (s Spec) Redactor() *redact.Redactor {
	values := map[string]string{}
	for name, v := range s.Env {
		values["env "+name] = v
	}
	for name, v := range s.Headers {
		values["header "+name] = v
	}
	return redact.New(values)
}

// A Tool is one tool as a server listed it: what the drift gate compares
// (Hash, pin.ToolHash over its name, title, description, input and output
// schemas and annotations) and what a review shows. HashV1 is its hash
// under the first encoding (pin.ToolHashV1), which tells a tool approved
// before the title and output schema were covered; approved sets stored
// before it have none.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Hash         string          `json:"hash"`
	HashV1       string          `json:"hash_v1,omitempty"`
}

// A Listing is what one connection found: the server's tools, by name,
// the hash of their set (pin.ToolSetHash), the icons the server declared,
// and (from Probe) the end of its stderr, redacted.
type Listing struct {
	Tools  []Tool
	Hash   string
	Icons  []mcp.Icon
	Stderr string
}

func (l Listing) tool(name string) (Tool, bool) {
	i := sort.Search(len(l.Tools), func(i int) bool { return l.Tools[i].Name >= name })
	if i < len(l.Tools) && l.Tools[i].Name == name {
		return l.Tools[i], true
	}
	return Tool{}, false
}

// SetOf returns the name-to-hash map of tools, as pin.ToolSetHash takes it.
func SetOf(tools []Tool) map[string]string {
	m := make(map[string]string, len(tools))
	for _, t := range tools {
		m[t.Name] = t.Hash
	}
	return m
}

// Origin returns u's scheme://host:port, the host lower-case and the
// default port written: what a server's headers are scoped to, and what
// ZERO_ALLOWED_LOCAL_ORIGINS names.
func Origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// withHeaders adds a server's configured headers to the requests that go to
// the server's own origin, and to no other: a redirect elsewhere does not
// carry them.
type withHeaders struct {
	base    http.RoundTripper
	origin  string
	headers map[string]string
}

func (t *withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 && Origin(r.URL) == t.origin {
		r = r.Clone(r.Context())
		for name, v := range t.headers {
			r.Header.Set(name, v)
		}
	}
	return t.base.RoundTrip(r)
}

// Cmd is how a stdio server starts: the one description both a review
// (spawn.Resolve, which shows the program that would run) and a run
// (spawn.Start) get. Its working directory is in roots, the thread
// workspace; its secrets go to the child as secrets, whose names may not
// steer which code runs; and the program must resolve to s.Program.
func (s Spec) Cmd(roots *fsroot.Set) spawn.Cmd {
	dir := s.Dir
	if dir == "" {
		dir = "."
	}
	return spawn.Cmd{Program: s.Command, Args: s.Args, Dir: dir, Roots: roots, Env: envscrub.Spec{Secret: s.Env},
		Timeout: MaxLifetime, Expect: s.Program, OutputLimit: stderrKept}
}

// link is a started transport: the process of a stdio server or a
// plugin, or the MCP transport to connect over to an http one.
type link struct {
	transport mcp.Transport
	proc      *spawn.Process
	release   func()        // after the process ended: what was started for it (a plugin's broker); nil for none
	sandbox   *host.Sandbox // a plugin's
}

// dial starts what s describes: a stdio server's process, through spawn
// (its life bounded by life and lifetime), or an http client, through
// netguard. Nothing is sent yet.
func (r *Runtime) dial(life context.Context, s Spec, lifetime, exchange time.Duration) (link, error) {
	switch s.Kind {
	case KindStdio:
		if s.Program == "" {
			return link{}, fmt.Errorf("%s resolves to no executable file: nothing ran", s.Command)
		}
		cmd := s.Cmd(r.o.Roots)
		cmd.Timeout = lifetime
		p, err := spawn.Start(life, cmd)
		if err != nil {
			return link{}, err
		}
		return link{proc: p}, nil
	case KindPlugin:
		return r.launchPlugin(life, s, lifetime)
	case KindHTTP, KindSSE:
		u, err := netguard.Options{Schemes: netguard.HTTPSOnly}.CheckURL(s.URL)
		if err != nil {
			return link{}, err
		}
		timeout, body := exchange, int64(maxResponse)
		if s.Kind == KindSSE {
			// The event stream is one exchange for the connection's life.
			timeout, body = lifetime, maxStream
		}
		hc := netguard.NewClient(netguard.Options{BlockPrivate: true, Schemes: netguard.HTTPSOnly, Allow: s.Allow,
			Timeout: timeout, MaxBody: body, TLS: s.TLS.Clone(), Resolver: r.o.Resolver})
		hc.Transport = &withHeaders{base: hc.Transport, origin: Origin(u), headers: s.Headers}
		if s.Kind == KindSSE {
			return link{transport: &mcp.SSEClientTransport{Endpoint: u.String(), HTTPClient: hc}}, nil
		}
		return link{transport: &mcp.StreamableClientTransport{Endpoint: u.String(), HTTPClient: hc, MaxRetries: -1,
			DisableStandaloneSSE: true, MaxEventSize: maxResponse}}, nil
	}
	return link{}, fmt.Errorf("%s: unknown kind %q", s.label(), s.Kind)
}

// Bounds of what a server sends.
const (
	maxResponse = 16 << 20 // one http response, or one event on it
	// maxFrame bounds one message from a stdio server: a result of
	// MaxResultLimit, with room for its envelope and escapes.
	maxFrame   = MaxResultLimit + 16<<20
	maxStream  = 1 << 30 // an SSE server's whole event stream, over one run
	stderrKept = 256 << 10
)

// connect initializes an MCP session over l, with the one MCP client the
// workspace uses; changed is told when the server says its tools changed.
//
// Over stdio, where messages arrive in the order the server wrote them,
// changed is told as the notification is read off the wire, before any
// message after it is handled (see mcpwire.ClientConn): a call answered after the
// server announced a change is never decided on the listing before it. (The
// SDK hands notifications to a handler of their own, which may run after a
// later response is delivered.) Over http, where a notification and a
// response may come on different streams in any order, the SDK's handler
// tells it.
func connect(ctx context.Context, changed func(), l link) (*mcp.ClientSession, error) {
	var opts *mcp.ClientOptions
	transport := l.transport
	if l.proc != nil {
		transport = stdioTransport{l.proc, changed}
	} else {
		opts = &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed() }}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "zero-workspace", Version: buildinfo.Version()}, opts)
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return cs, nil
}

// list lists a session's tools, hashing each as the drift gate compares
// them, sorted by name. A name listed twice is refused: which one would a
// client call?
func list(ctx context.Context, cs *mcp.ClientSession) (Listing, error) {
	var l Listing
	if res := cs.InitializeResult(); res != nil && res.ServerInfo != nil {
		l.Icons = res.ServerInfo.Icons
	}
	seen := map[string]bool{}
	total := 0
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return Listing{}, fmt.Errorf("list tools: %w", err)
		}
		if len(l.Tools) == MaxTools {
			return Listing{}, fmt.Errorf("the server lists more than %d tools", MaxTools)
		}
		if seen[t.Name] {
			return Listing{}, fmt.Errorf("the server lists tool %q twice", t.Name)
		}
		seen[t.Name] = true
		tool, err := toolOf(t)
		if err != nil {
			return Listing{}, err
		}
		if total += tool.size(); total > MaxListingBytes {
			return Listing{}, fmt.Errorf("the server's tools take more than %d bytes (MaxListingBytes)", MaxListingBytes)
		}
		l.Tools = append(l.Tools, tool)
	}
	sort.Slice(l.Tools, func(i, j int) bool { return l.Tools[i].Name < l.Tools[j].Name })
	if l.Tools == nil {
		l.Tools = []Tool{}
	}
	l.Hash = pin.ToolSetHash(SetOf(l.Tools))
	return l, nil
}

// toolOf is a listed tool as the gate and a review see it.
func toolOf(t *mcp.Tool) (Tool, error) {
	tool := Tool{Name: t.Name, Title: t.Title, Description: t.Description}
	tool.InputSchema, _ = json.Marshal(t.InputSchema)
	if t.OutputSchema != nil {
		tool.OutputSchema, _ = json.Marshal(t.OutputSchema)
	}
	if t.Annotations != nil {
		tool.Annotations, _ = json.Marshal(t.Annotations)
	}
	if n := tool.size(); n > MaxToolBytes {
		return Tool{}, fmt.Errorf("tool %q takes %d bytes (name, title, description, schemas and annotations), more than the %d a tool may take (MaxToolBytes)", visibleName(t.Name), n, MaxToolBytes)
	}
	var err error
	tool.Hash, err = pin.ToolHash(pin.Tool{Name: tool.Name, Title: tool.Title, Description: tool.Description,
		InputSchema: tool.InputSchema, OutputSchema: tool.OutputSchema, Annotations: tool.Annotations})
	if err == nil {
		tool.HashV1, err = pin.ToolHashV1(tool.Name, tool.Description, tool.InputSchema, tool.Annotations)
	}
	if err != nil {
		return Tool{}, fmt.Errorf("tool %q: %w", visibleName(t.Name), err)
	}
	return tool, nil
}

// size is what t takes: its name, title, description, schemas and
// annotations.
func (t Tool) size() int {
	return len(t.Name) + len(t.Title) + len(t.Description) + len(t.InputSchema) + len(t.OutputSchema) + len(t.Annotations)
}

// visibleName is a tool's name for an error: at most 64 bytes of it,
// quoted by the caller.
func visibleName(name string) string {
	if len(name) > 64 {
		return name[:64] + "..."
	}
	return name
}
