// Package children runs the child MCP servers of one agent run: it starts
// them, lists their tools, offers only the tools a definition selects, calls
// them and stops them.
//
// A stdio child (a command, its arguments and env) runs through package
// spawn: argv, never a shell; the program looked up in the child's PATH; its
// working directory the workspace's root; an environment scrubbed by
// envscrub holding the safe defaults and the declared entries only, whose
// hard rejects (LD_*, NODE_OPTIONS, ...) refuse the child; and its own
// process group, which [Set.Close] ends whole. A streamable HTTP child (a
// URL and headers) is reached through netguard: https, or plain http to a
// loopback host as netguard's canonical host judges it; every other private
// address refused, at the URL and again at dial time; no redirect followed;
// its headers sent to its own origin only.
//
// A ${NAME} in an env value or a header value is replaced by the variable's
// value ([Options.Getenv]); a variable that is not set (or empty) fails the
// start with an error naming it, never a value. Command, arguments and URL
// are taken as written: a ${ in them is refused, so that the environment
// never decides what runs or where requests go. An env entry whose value
// came from the environment is given to the child as a secret
// (envscrub.Spec.Secret): it may not name a variable that steers which code
// runs, such as PATH.
//
// Every child is started at once, initialized with a protocol version the
// SDK's client negotiates, and listed, within the start timeout; if one
// fails, the others are stopped and the error names it. Tool descriptions
// lose their hidden characters (hiddentext) and are cut at
// [MaxDescription]. Nothing is offered by default: [Set.Select] offers a
// tool only when an allow selector names it ("server/tool" or "server/*"),
// deny wins, and annotations never grant. [Set.Call] calls only an offered
// tool, and returns its result as plain text, hidden characters removed, cut
// at [MaxOutput]: data from the child, which the caller hands on as
// untrusted.
package children

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/buildinfo"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/hiddentext"
	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/guard/redact"
	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/mcpwire"
)

// Defaults of [Options], and the bounds of what a child sends.
const (
	DefaultStartTimeout = 15 * time.Second
	DefaultCallTimeout  = 60 * time.Second
	DefaultStopTimeout  = 5 * time.Second

	// MaxDescription bounds a tool's description, its note of the cut
	// included.
	MaxDescription = 4 << 10
	// MaxOutput bounds the text of a call's result, its note of the cut
	// included.
	MaxOutput = 1 << 20
	// MaxTools bounds the tools one child may list; MaxSchema one tool's
	// input schema. A child past either is refused.
	MaxTools  = 1000
	MaxSchema = 64 << 10

	// ProtocolVersion is the version the client asks for; the SDK accepts
	// a child's answer only in a version it supports.
	ProtocolVersion = "2025-11-25"

	maxFrame   = 32 << 20       // one message from a stdio child
	maxBody    = 32 << 20       // one HTTP response from a child
	lifetime   = 24 * time.Hour // the longest a stdio child runs (spawn's Timeout)
	stderrKept = 64 << 10
	stderrTail = 1000 // of it in an error
)

// ErrClosed reports a call after [Set.Close].
var ErrClosed = errors.New("the child servers are stopped")

// Config is one child server, as a definition declares it: Command (with
// Args and Env) for stdio, or URL (with Headers) for streamable HTTP.
type Config struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string // values may hold ${VAR}
	URL     string
	Headers map[string]string // values may hold ${VAR}
}

// AgentChildEnv is set to "1" in every stdio child's environment: an
// agents server started as an agent's child sees it and refuses to run, so
// that agents do not spawn agents through their children. (A child that
// clears its environment before starting one is not stopped by it.)
const AgentChildEnv = "ZERO_AGENTS_CHILD"

// Options configure a [Set].
type Options struct {
	Roots    *fsroot.Set         // the workspace: a stdio child's working directory is its root
	Getenv   func(string) string // for ${VAR}; a missing (or empty) variable fails the start; nil: none is set
	Resolver netguard.Resolver   // nil: the system's; tests make names resolve to chosen addresses

	StartTimeout, CallTimeout, StopTimeout time.Duration // 0: the defaults above
}

// A Tool is one tool a child lists, as the model may be offered it: its
// description without hidden characters and at most MaxDescription bytes,
// its input schema without hidden characters.
type Tool struct {
	Server, Name, Description string
	InputSchema               json.RawMessage
}

// A Set is the running children of one agent run. It is safe for
// concurrent use.
type Set struct {
	o        Options
	children map[string]*child
	names    []string // sorted
	end      context.CancelFunc

	mu      sync.Mutex
	offered map[string]bool // "server/tool", from the last Select
	closed  bool
	stopped chan struct{} // closed once Close has stopped every child
	stopErr error
}

// child is one running child server.
type child struct {
	name    string
	cs      *mcp.ClientSession
	proc    *spawn.Process // a stdio child's
	hc      *http.Client   // an HTTP child's
	red     *redact.Redactor
	tools   map[string]Tool
	order   []string        // names of tools, sorted
	invalid map[string]bool // listed names outside MCP's characters: never offered
}

// Start starts every child, initializes and lists each, all at once; a
// child that does not start within the start timeout is an error naming
// it, and so is a configuration refused before anything runs. On an error
// nothing is left running. ctx bounds the children's life too: when it
// ends, every stdio child is killed, as Close would stop it.
func Start(ctx context.Context, cfgs []Config, o Options) (*Set, error) {
	o = o.withDefaults()
	plans := make([]plan, 0, len(cfgs))
	seen := map[string]bool{}
	for _, c := range cfgs {
		if seen[c.Name] {
			return nil, fmt.Errorf("child %q is declared twice", c.Name)
		}
		seen[c.Name] = true
		p, err := prepare(c, o)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	life, end := context.WithCancel(ctx)
	s := &Set{o: o, children: map[string]*child{}, end: end, stopped: make(chan struct{})}
	started := make([]*child, len(plans))
	errs := make([]error, len(plans))
	var wg sync.WaitGroup
	for i, p := range plans {
		wg.Go(func() { started[i], errs[i] = p.start(life, o) })
	}
	wg.Wait()
	for _, c := range started {
		if c != nil {
			s.children[c.name] = c
			s.names = append(s.names, c.name)
		}
	}
	slices.Sort(s.names)
	if err := errors.Join(errs...); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (o Options) withDefaults() Options {
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	return o
}

// start starts the child p describes: spawns or dials it, initializes and
// lists it within the start timeout. On an error nothing of it is left.
func (p plan) start(life context.Context, o Options) (*child, error) {
	c := &child{name: p.name, red: p.red}
	ctx, cancel := context.WithTimeout(life, o.StartTimeout)
	defer cancel()
	var transport mcp.Transport
	if p.cmd != nil {
		proc, err := spawn.Start(life, *p.cmd)
		if err != nil {
			return nil, fmt.Errorf("child %q: %w", p.name, p.red.Error(err))
		}
		c.proc = proc
		transport = stdio{proc}
	} else {
		c.hc = p.client(o)
		transport = &mcp.StreamableClientTransport{Endpoint: p.url.String(), HTTPClient: c.hc, MaxRetries: -1,
			DisableStandaloneSSE: true, MaxEventSize: maxBody}
	}
	err := c.connect(ctx, transport)
	if err == nil {
		err = c.list(ctx)
	}
	if err != nil {
		if ctx.Err() != nil && life.Err() == nil {
			err = fmt.Errorf("it did not start within %s (%w)", o.StartTimeout, err)
		}
		c.stop()
		return nil, fmt.Errorf("child %q: %w%s", p.name, p.red.Error(err), c.stderr())
	}
	return c, nil
}

// stdio is the transport over a stdio child's pipes.
type stdio struct{ proc *spawn.Process }

func (t stdio) Connect(context.Context) (mcp.Connection, error) {
	return mcpwire.NewClientConn(t.proc.Stdout, t.proc.Stdin, maxFrame, nil), nil
}

// connect initializes the session; the SDK refuses an answer in a protocol
// version it does not support.
func (c *child) connect(ctx context.Context, t mcp.Transport) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "zero-agents", Version: buildinfo.Version()}, nil)
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	c.cs = cs
	return nil
}

// stop ends the child: its session, and a stdio child's whole process
// group.
func (c *child) stop() {
	if c.cs != nil {
		c.cs.Close()
	}
	if c.proc != nil {
		c.proc.Stop()
	}
	if c.hc != nil {
		c.hc.CloseIdleConnections()
	}
}

// stderr is the end of a stdio child's stderr for an error, redacted and
// without hidden characters; "" when it wrote none.
func (c *child) stderr() string {
	if c.proc == nil {
		return ""
	}
	text, _ := hiddentext.Strip(c.red.String(string(c.proc.Stderr())))
	text = strings.TrimSpace(text)
	if text == "" {
		return ""
	}
	if len(text) > stderrTail {
		text = "..." + strings.ToValidUTF8(text[len(text)-stderrTail:], "")
	}
	return "; its stderr: " + text
}

// Close ends every child, a stdio child's whole process group included,
// within the stop timeout; one that does not end by then is killed and
// named in the error. Calls after it fail with ErrClosed; Close may be
// called more than once.
func (s *Set) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.stopped
		return s.stopErr
	}
	s.closed = true
	s.mu.Unlock()
	pending := map[string]bool{}
	done := make(chan string, len(s.children))
	for name, c := range s.children {
		pending[name] = true
		go func() {
			c.stop()
			done <- name
		}()
	}
	timer := time.NewTimer(s.o.StopTimeout)
	defer timer.Stop()
wait:
	for len(pending) > 0 {
		select {
		case name := <-done:
			delete(pending, name)
		case <-timer.C:
			break wait
		}
	}
	// Ends the life of every stdio child: spawn kills what is left of it.
	s.end()
	if len(pending) > 0 {
		late := make([]string, 0, len(pending))
		for name := range pending {
			late = append(late, name)
		}
		slices.Sort(late)
		s.stopErr = fmt.Errorf("children %q did not stop within %s and were killed", late, s.o.StopTimeout)
	}
	close(s.stopped)
	return s.stopErr
}
