// Package runtime is THE way the workspace calls an MCP tool. Nothing else
// in the workspace opens an MCP client connection (an archtest rule keeps
// it so): the Test action's listing ([Runtime.Probe]) and every tool call
// ([Runtime.Call]) go through here, and so does the list of tools a caller
// is offered ([Runtime.Tools]).
//
// A [Spec] says how to reach one approved server: package servers builds it
// from the approved configuration and the secrets released for its approved
// fingerprint, with the approved tool set and the owner's switches. The
// runtime starts the server on demand (stdio through spawn, with a scrubbed
// environment holding only its secrets and nothing but the approved program;
// http and sse through netguard, https only, private networks blocked but for
// the allowed local origins, its headers sent to its own origin only), keeps
// it for later calls, stops it when idle, restarts it with a backoff after a
// crash, and replaces it when the Spec's fingerprint is not the one it runs
// under. Calls are bounded per server and in total, and each by a timeout;
// a call whose context ends cancels the request on the server
// (notifications/cancelled).
//
// # The drift gate
//
// Every connection lists the server's tools and hashes each ([pin.ToolHash]).
// A tool may be called only if it is in the approved tool set with the very
// hash this connection listed, and the owner has not switched it off; the
// same rule decides which tools are offered. The listing decided on is
// current: made after every change the server announced before the call
// is sent (see connect), so a call never runs on a listing a change made
// stale, however calls and listings interleave. Anything else is refused with
// a [*RefusedError] that says why: a changed or new tool is quarantined
// until the owner approves the new tool set, an approved tool the server no
// longer lists is removed. [Compare] reports the drift between the approved
// set and a listing; [Options.Observe] hears of every listing, so that the
// workspace records it and audits the first sight of a drift.
//
// # Results are untrusted data
//
// A result's text has its invisible characters removed ([hiddentext.Strip]:
// Unicode tags, zero-width characters but the joiners, bidirectional
// controls), in its content, its structured content and a server's error
// message alike; it is cut at [MaxResultBytes], with a note saying so; and its
// _meta carries [MetaUntrusted] (true) and [MetaServer] (the server's name),
// which replace whatever the server put under "zero.", so that whoever reads
// the result can tell it is a server's data, not an instruction.
//
// # Logs and audit
//
// Each server's stderr is kept, redacted with its secrets, in a ring of
// [StderrRing] bytes, beside a history of its runs (starts, ends, exit codes,
// crashes); [Runtime.Logs] returns both. Every call is recorded in the audit
// log (action "tool.call": server, tool, caller, duration, outcome), never
// its arguments or result; the records of calls are group-committed
// ([audit.Log.AppendBatched]): written at once, synced within
// [audit.FlushInterval]. With the owner's debug switch on, arguments and
// results are kept too, redacted, in a ring of [DebugRing] bytes in memory,
// never in the audit log and never on disk.
package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/netguard"
)

// Defaults for [Options], and the bounds that have none.
const (
	DefaultIdleTimeout  = 5 * time.Minute  // a server with no call for this long is stopped
	DefaultCallTimeout  = 60 * time.Second // one call, waiting for a slot and starting the server included
	DefaultStartTimeout = 30 * time.Second // starting a server: spawn or connect, initialize, list tools
	DefaultMaxPerServer = 16               // calls in flight to one server, unless its Spec says otherwise
	DefaultMaxTotal     = 64               // calls in flight to all servers

	// MaxPerServerLimit is the largest Spec.MaxCalls.
	MaxPerServerLimit = 64

	// MaxLifetime bounds how long one run of a server lasts (spawn's
	// lifetime of a stdio server, netguard's exchange of an SSE stream);
	// the next call starts it again.
	MaxLifetime = 24 * time.Hour
	// MinBackoff and MaxBackoff bound the wait before a server that crashed
	// starts again: MinBackoff after one crash, doubling with each crash in
	// a row, at most MaxBackoff. A call that comes meanwhile waits (within
	// its own deadline); a successful call resets it.
	MinBackoff = 100 * time.Millisecond
	MaxBackoff = 5 * time.Second
	// MaxTools bounds the tools a listing may hold.
	MaxTools = 1000
	// MaxToolBytes bounds one listed tool: its name, title, description,
	// schemas and annotations together. MaxListingBytes bounds them all.
	// A listing past either is refused whole, as one past MaxTools is:
	// every tool is shown to a person and offered to every client.
	MaxToolBytes    = 64 << 10
	MaxListingBytes = 4 << 20
)

// ErrClosed reports a call after [Runtime.Close].
var ErrClosed = errors.New("the tool runtime is closed")

// ErrCrashed reports a server that ended in the middle of a call.
var ErrCrashed = errors.New("the server ended during the call")

// ErrStale reports a Spec built before the server last changed (see
// [Runtime.Epoch]): build it again.
var ErrStale = errors.New("the server changed after this call was prepared (disabled, edited, deleted or a tool switched off); prepare it again")

// Options configure a [Runtime].
type Options struct {
	// Roots is the thread workspace: a stdio server's working directory is
	// inside it. Required to start stdio servers.
	Roots *fsroot.Set
	// Audit receives a "tool.call" record for every call.
	Audit *audit.Log
	// Observe, if set, hears of every listing a pooled connection makes
	// (when it starts, and again after the server says its tools changed),
	// with the Spec it was made under. What it does decides nothing here: an
	// error is logged.
	Observe func(ctx context.Context, s Spec, l Listing) error
	// Resolver is for tests that make a name resolve to a chosen address;
	// nil means the system's resolver.
	Resolver netguard.Resolver
	// DataDir is Zero's data directory, where the plugin host is written;
	// required to run plugins.
	DataDir string
	// Log receives what goes wrong in the background (an Observe that
	// fails, say); nil discards it.
	Log *slog.Logger

	IdleTimeout  time.Duration // 0: DefaultIdleTimeout
	CallTimeout  time.Duration // 0: DefaultCallTimeout
	StartTimeout time.Duration // 0: DefaultStartTimeout
	MaxPerServer int           // 0: DefaultMaxPerServer; a Spec's MaxCalls comes first
	MaxTotal     int           // 0: DefaultMaxTotal
}

// A Runtime runs the approved servers and calls their tools. It is safe for
// concurrent use.
type Runtime struct {
	o     Options
	slots chan struct{} // one per call in flight, all servers
	life  context.Context
	end   context.CancelFunc

	mu      sync.Mutex
	closed  bool
	servers map[key]*server
	epochs  map[key]uint64 // per server or plugin, one more at each Stop and Invalidate
	wg      sync.WaitGroup // connections' watchers
}

// New returns a runtime; it starts nothing until a call needs it.
func New(o Options) *Runtime {
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.MaxPerServer <= 0 {
		o.MaxPerServer = DefaultMaxPerServer
	}
	if o.MaxTotal <= 0 {
		o.MaxTotal = DefaultMaxTotal
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	life, end := context.WithCancel(context.Background())
	return &Runtime{o: o, slots: make(chan struct{}, o.MaxTotal), life: life, end: end, servers: map[key]*server{},
		epochs: map[key]uint64{}}
}

// Close stops every server and waits until each has been reaped. Calls
// after Close fail with [ErrClosed].
func (r *Runtime) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	all := make([]*server, 0, len(r.servers))
	for _, s := range r.servers {
		all = append(all, s)
	}
	r.mu.Unlock()
	for _, s := range all {
		s.stop(endClosed)
	}
	r.end()
	r.wg.Wait()
	return nil
}

// A key names one pool entry: a server, or a plugin, each numbered in its
// own table.
type key struct {
	plugin bool
	id     int64
}

// key is the pool entry s runs in.
func (s Spec) key() key {
	if s.Kind == KindPlugin {
		if s.Plugin == nil {
			return key{plugin: true}
		}
		return key{plugin: true, id: s.Plugin.ID}
	}
	return key{id: s.ServerID}
}

// Epoch returns server id's epoch, which Stop and Invalidate advance. A
// Spec carries the epoch read before the state it was built from, and a
// call with an older one is refused with [ErrStale]: a server disabled, or
// a tool switched off, while a caller held its Spec is not run for it.
func (r *Runtime) Epoch(id int64) uint64 { return r.epoch(key{id: id}) }

// Epochs returns the epoch of every server whose epoch is not 0.
func (r *Runtime) Epochs() map[int64]uint64 { return r.epochsOf(false) }

// Invalidate advances server id's epoch: Specs built before refuse to run.
func (r *Runtime) Invalidate(id int64) { r.invalidate(key{id: id}) }

// Stop invalidates server id's Specs and ends its connections at once,
// calls in flight included (it was disabled, edited or deleted); the next
// call with a new Spec starts it again.
func (r *Runtime) Stop(id int64) { r.stopKey(key{id: id}) }

// Forget stops server id for good (it was deleted) and drops what the
// runtime kept of it: its logs and run history.
func (r *Runtime) Forget(id int64) { r.forget(key{id: id}) }

// Renew takes server id's running connection out of service (a Test saw
// its tools, or the owner approved a new tool set): the next call starts a
// fresh connection, which lists the tools again, and the calls in flight
// finish on the old one.
func (r *Runtime) Renew(id int64) { r.renew(key{id: id}) }

// Plugins returns the runtime's controls of plugins (Specs of KindPlugin),
// which are numbered apart from servers: plugin 3 is not server 3.
func (r *Runtime) Plugins() Plugins { return Plugins{r} }

// Plugins are the runtime's controls of plugins, by plugin id: the same as
// the Runtime's own for servers.
type Plugins struct{ r *Runtime }

// Epoch returns plugin id's epoch (see [Runtime.Epoch]).
func (p Plugins) Epoch(id int64) uint64 { return p.r.epoch(key{true, id}) }

// Epochs returns the epoch of every plugin whose epoch is not 0.
func (p Plugins) Epochs() map[int64]uint64 { return p.r.epochsOf(true) }

// Invalidate advances plugin id's epoch: Specs built before refuse to run.
func (p Plugins) Invalidate(id int64) { p.r.invalidate(key{true, id}) }

// Stop invalidates plugin id's Specs and ends its process at once, calls
// in flight included (it was disabled, updated or removed).
func (p Plugins) Stop(id int64) { p.r.stopKey(key{true, id}) }

// Forget stops plugin id for good (it was removed) and drops its logs.
func (p Plugins) Forget(id int64) { p.r.forget(key{true, id}) }

// Renew takes plugin id's running process out of service: the next call
// starts a fresh one, and the calls in flight finish on the old one.
func (p Plugins) Renew(id int64) { p.r.renew(key{true, id}) }

// Logs returns what the runtime keeps of plugin id (see [Runtime.Logs]).
func (p Plugins) Logs(id int64) Logs { return p.r.logsOf(key{true, id}) }

func (r *Runtime) epoch(k key) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.epochs[k]
}

func (r *Runtime) epochsOf(plugin bool) map[int64]uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[int64]uint64{}
	for k, e := range r.epochs {
		if k.plugin == plugin {
			out[k.id] = e
		}
	}
	return out
}

func (r *Runtime) invalidate(k key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.epochs[k]++
}

func (r *Runtime) stopKey(k key) {
	r.invalidate(k)
	r.mu.Lock()
	s := r.servers[k]
	r.mu.Unlock()
	if s != nil {
		s.stop(endStopped)
	}
}

func (r *Runtime) forget(k key) {
	r.stopKey(k)
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.servers, k)
}

func (r *Runtime) renew(k key) {
	r.mu.Lock()
	s := r.servers[k]
	r.mu.Unlock()
	if s != nil {
		s.retire(endRenewed)
	}
}

// server returns the pool entry of the server s describes, creating it,
// if s is of its current epoch.
func (r *Runtime) server(s Spec) (*server, error) {
	srv, err := r.entry(s.key())
	if err == nil && s.Epoch < r.epoch(s.key()) {
		return nil, fmt.Errorf("%s: %w", s.label(), ErrStale)
	}
	return srv, err
}

// entry returns the pool entry k, creating it.
func (r *Runtime) entry(k key) (*server, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	s := r.servers[k]
	if s == nil {
		s = &server{rt: r, logs: newLogs(), conns: map[*conn]bool{}}
		r.servers[k] = s
	}
	return s, nil
}

// maxCalls is the most calls in flight to the server s describes.
func (r *Runtime) maxCalls(s Spec) int {
	if s.MaxCalls > 0 {
		return min(s.MaxCalls, MaxPerServerLimit)
	}
	return r.o.MaxPerServer
}

// An Outcome is how a call ended, as the audit log records it.
type Outcome string

// Outcomes.
const (
	OK                 Outcome = "ok"                  // the tool answered
	ToolError          Outcome = "tool_error"          // the tool answered with isError
	RefusedQuarantined Outcome = "refused_quarantined" // changed or new since the approved tool set
	RefusedDisabled    Outcome = "refused_disabled"    // the owner switched the tool off
	RefusedRemoved     Outcome = "refused_removed"     // approved, and no longer listed by the server
	RefusedUnknown     Outcome = "refused_unknown"     // neither approved nor listed
	Timeout            Outcome = "timeout"             // no answer before the deadline
	Cancelled          Outcome = "cancelled"           // the caller gave up
	Crashed            Outcome = "crashed"             // the server ended during the call
	Unavailable        Outcome = "unavailable"         // the server did not start, or was stopped
	Failed             Outcome = "error"               // the server answered with a protocol error
)

// A RefusedError is the drift gate's refusal of a call: Outcome says which
// rule refused it, Reason says why in words a caller can act on.
type RefusedError struct {
	Server, Tool string // Server is the plugin's name when Plugin is set
	Plugin       bool
	Outcome      Outcome
	Reason       string
}

func (e *RefusedError) Error() string {
	of := "server"
	if e.Plugin {
		of = "plugin"
	}
	return fmt.Sprintf("tool %q of %s %q cannot be called: %s", e.Tool, of, e.Server, e.Reason)
}

// Call calls tool on the server s describes, starting the server if need
// be, with args (a JSON object; empty means {}) on behalf of caller (an
// audit actor, such as "token:3:owner"). The drift gate decides first: a
// tool that is not in the approved set with the hash this connection
// listed, or that the owner switched off, is refused with a
// [*RefusedError] and the server is not asked. A result is returned
// sanitized and marked (see the package doc), an isError one too. The call
// is bounded by ctx and by the call timeout; when either ends, the server
// is told to cancel the request. Every call is recorded in the audit log.
func (r *Runtime) Call(ctx context.Context, s Spec, tool string, args json.RawMessage, caller string) (*mcp.CallToolResult, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout(r.o.CallTimeout))
	defer cancel()
	res, c, outcome, err := r.call(ctx, s, tool, args)
	d := time.Since(start)
	srv, _ := r.entry(s.key())
	if srv != nil && s.Debug {
		srv.logs.debug(s, c, caller, tool, outcome, d, args, res, err)
	}
	if aerr := r.record(s, tool, caller, outcome, d); aerr != nil {
		return nil, fmt.Errorf("record the call of %s (%s): %w", tool, outcome, aerr)
	}
	return res, err
}

// call is Call without the timeout, debug log and audit record.
func (r *Runtime) call(ctx context.Context, s Spec, tool string, args json.RawMessage) (*mcp.CallToolResult, *conn, Outcome, error) {
	args, err := objectArgs(args)
	if err != nil {
		return nil, nil, Failed, err
	}
	srv, err := r.server(s)
	if err != nil {
		return nil, nil, Unavailable, err
	}
	release, err := srv.acquire(ctx, r.maxCalls(s))
	if err != nil {
		return nil, nil, ctxOutcome(ctx), fmt.Errorf("%s: waiting for a free slot: %w", s.label(), err)
	}
	defer release()
	c, err := srv.get(ctx, s)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctxOutcome(ctx), err
		}
		return nil, nil, Unavailable, err
	}
	defer srv.done(c)
	for {
		l, err := srv.listing(ctx, c)
		if err != nil {
			return nil, c, Unavailable, err
		}
		if refused := gate(s, l.Listing, tool); refused != nil {
			return nil, c, refused.Outcome, refused
		}
		// Decided on a listing still current as the call is sent: a
		// change announced while the gate decided is listed and decided
		// again.
		if c.current(l) {
			break
		}
	}
	if s.Kind == KindPlugin {
		if err := s.Plugin.checkArguments(tool, args); err != nil {
			return nil, c, Failed, err
		}
	}
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		outcome, err := srv.callFailed(ctx, c, tool, err)
		return nil, c, outcome, err
	}
	srv.succeeded()
	res = sanitize(res, s)
	if c.sandbox != nil {
		res.Content = append(res.Content, refusedNotes(c.sandbox.Refusals())...)
	}
	if res.IsError {
		return res, c, ToolError, nil
	}
	return res, c, OK, nil
}

// Tools returns the tools of the server s describes that a caller is
// offered: listed on its connection (started if need be), in the approved
// set with the same hash, and not switched off; by name. A plugin's are
// its manifest's, and it is not started.
func (r *Runtime) Tools(ctx context.Context, s Spec) ([]Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.CallTimeout)
	defer cancel()
	srv, err := r.server(s)
	if err != nil {
		return nil, err
	}
	var l Listing
	if s.Kind == KindPlugin {
		// Its manifest's: nothing to start.
		if l, err = manifestListing(s); err != nil {
			return nil, err
		}
	} else {
		c, err := srv.get(ctx, s)
		if err != nil {
			return nil, err
		}
		defer srv.done(c)
		cur, err := srv.listing(ctx, c)
		if err != nil {
			return nil, err
		}
		l = cur.Listing
	}
	var out []Tool
	for _, t := range l.Tools {
		if gate(s, l, t.Name) == nil {
			out = append(out, t)
		}
	}
	return out, nil
}

// reasons are the drift gate's words for each refusal but a switched-off
// tool's.
type reasons struct{ removed, unknown, none, added, changed string }

var serverReasons = reasons{
	removed: "the server no longer lists it",
	unknown: "the server lists no such tool",
	none:    "quarantined: no tool set of this server is approved yet; the owner's Test records it",
	added:   "quarantined: the tool appeared after the owner approved this server's tools, and waits for the owner to approve the new tool set",
	changed: "quarantined: the tool changed (its title, description, input or output schema, or annotations) since the owner approved it, and waits for the owner to approve the new tool set",
}

// gate is the drift gate: nil if tool may be called under s on a
// connection that listed l, else why not.
func gate(s Spec, l Listing, tool string) *RefusedError {
	why := serverReasons
	if s.Kind == KindPlugin {
		why = pluginReasons
	}
	refuse := func(o Outcome, reason string) *RefusedError {
		return &RefusedError{Server: s.Name, Tool: tool, Plugin: s.Kind == KindPlugin, Outcome: o, Reason: reason}
	}
	listed, ok := l.tool(tool)
	approved, isApproved := s.ToolSet[tool]
	switch {
	case !ok && isApproved:
		return refuse(RefusedRemoved, why.removed)
	case !ok:
		return refuse(RefusedUnknown, why.unknown)
	case slices.Contains(s.Disabled, tool):
		return refuse(RefusedDisabled, "the workspace owner switched it off")
	case s.ToolSet == nil:
		return refuse(RefusedQuarantined, why.none)
	case !isApproved:
		return refuse(RefusedQuarantined, why.added)
	case listed.HashV1 != "" && approved == listed.HashV1:
		return refuse(RefusedQuarantined, "quarantined: the owner approved it under the first tool hash, which covered neither its title nor its output schema, and it waits for the owner to approve the tool set again under the hash that covers both")
	case approved != listed.Hash:
		return refuse(RefusedQuarantined, why.changed)
	}
	return nil
}

// objectArgs checks that args is a JSON object, and makes absent ones
// (empty or null) {}.
func objectArgs(args json.RawMessage) (json.RawMessage, error) {
	if len(args) == 0 || string(bytes.TrimSpace(args)) == "null" {
		return json.RawMessage("{}"), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return nil, errors.New("a tool's arguments must be a JSON object")
	}
	return args, nil
}

func ctxOutcome(ctx context.Context) Outcome {
	if errors.Is(ctx.Err(), context.Canceled) {
		return Cancelled
	}
	return Timeout
}

// record writes a call's audit record: who called which tool of which
// server, how long it took and how it ended; never its arguments or result.
// It is group-committed: written at once, synced within audit.FlushInterval.
func (r *Runtime) record(s Spec, tool, caller string, o Outcome, d time.Duration) error {
	if r.o.Audit == nil {
		return nil
	}
	_, err := r.o.Audit.AppendBatched(audit.Event{
		Actor: caller, Action: "tool.call", Target: s.target(), Fingerprint: s.Fingerprint,
		Detail: map[string]string{"name": s.Name, "tool": tool, "outcome": string(o), "duration_ms": strconv.FormatInt(d.Milliseconds(), 10)},
	})
	return err
}

// wireError reports whether err is an error the server answered with.
func wireError(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we)
}
