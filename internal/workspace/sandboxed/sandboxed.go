// Package sandboxed is a sandboxed thread's toolbox: the only tools such a
// thread is offered, each call run in one fresh guest on the thread's
// sandbox backend (internal/sandbox), never on the host. The built-ins run
// a program (argv, no shell) and read, write, list and search the thread's
// workspace, through the guest helper (internal/sandbox/guest). The other
// tools are the model's own: plugins it wrote under plugins/NAME/ in its
// workspace, parsed on the host as data (internal/plugin.Parse) and run by
// Zero's fixed plugin host (host.js) under node, in a guest that always
// gets a scratch copy of the workspace, no network and no secrets, whatever
// the manifest asks. No MCP tool and no installed plugin's tool is ever
// offered here.
package sandboxed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/zero-dev/zero/internal/sandbox"
	"github.com/zero-dev/zero/internal/workspace/endpoint"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// Options say what one thread's toolbox runs on.
type Options struct {
	Runner     sandbox.Runner // the thread's backend, chosen when the thread was made
	Workspace  string         // the thread's work folder on the host, canonical
	Copy       bool           // built-in tools get a scratch copy (changes discarded), else the folder itself
	Helper     string         // host path of the guest helper program; HelperArgs go before each command
	HelperArgs []string
	Node       string // host path of node for model-authored plugins ("" offers none of them)
	Limits     sandbox.Limits
	Thread     int64
	Record     func(ctx context.Context, c Call) error // after every call: the workspace audits it
	// Log hears of a model-authored plugin that is not offered, and why
	// (Authored says it too); nil logs nothing.
	Log *slog.Logger
}

// A Call is what Record hears of one call.
type Call struct {
	Tool          string // the name the model called
	Plugin        string // a model-authored plugin's name; "" for a built-in
	ModelAuthored bool
	Backend       sandbox.Backend
	Outcome       string // threads.OutcomeOK, ...
	Caller        string // who the call was made for: the run's actor
}

// A Toolbox is one sandboxed thread's tools (threads.Toolbox).
type Toolbox struct{ o Options }

// New returns the toolbox of o.
func New(o Options) *Toolbox { return &Toolbox{o: o} }

var _ threads.Toolbox = (*Toolbox)(nil)

// Tools lists the built-ins and, when o.Node is set, the tools of every
// model-authored plugin whose manifest Parse accepts, as NAME__TOOL. A
// plugin that is refused is left out, and logged; Authored says why.
func (b *Toolbox) Tools(ctx context.Context) ([]threads.Tool, error) {
	backend := string(b.o.Runner.Backend())
	tools, err := builtinTools(backend)
	if err != nil {
		return nil, err
	}
	if b.o.Node == "" {
		return tools, nil
	}
	plugins, refused := b.Authored()
	for _, r := range refused {
		if b.o.Log != nil {
			b.o.Log.Warn("a model-authored plugin is not offered", "thread", b.o.Thread, "plugin", r.Plugin, "reason", r.Reason)
		}
	}
	for _, p := range plugins {
		tools = append(tools, p.tools(backend)...)
	}
	return tools, nil
}

// Call runs t in a fresh guest, while t is offered with t.Ref's hash and
// fingerprint, and tells Record how it went. The result names the backend.
// An error means the call did not run (refused, or no guest could be made);
// a program or plugin that failed is a result with IsError.
func (b *Toolbox) Call(ctx context.Context, t threads.Tool, args json.RawMessage, caller string) (threads.Result, error) {
	c := Call{Tool: t.Name, Backend: b.o.Runner.Backend(), Caller: caller}
	res, err := b.call(ctx, t, args, &c)
	res.Backend = string(c.Backend)
	if c.Outcome == "" {
		c.Outcome = threads.OutcomeError
	}
	res.Outcome = c.Outcome
	if b.o.Record != nil {
		if rerr := b.o.Record(ctx, c); rerr != nil {
			err = errors.Join(err, fmt.Errorf("record the call: %w", rerr))
		}
	}
	return res, err
}

// errRefused marks a call that was not run.
var errRefused = errors.New("refused")

func (b *Toolbox) call(ctx context.Context, t threads.Tool, args json.RawMessage, c *Call) (threads.Result, error) {
	if plugin, tool, ok := strings.Cut(t.Name, endpoint.Separator); ok && b.o.Node != "" {
		c.Plugin, c.ModelAuthored = plugin, true
		res, err := b.callAuthored(ctx, t, plugin, tool, args, c)
		if errors.Is(err, errRefused) {
			c.Outcome = threads.OutcomeRefused
		}
		return res, err
	}
	bt, ok := builtinNamed(t.Name)
	if !ok {
		c.Outcome = threads.OutcomeRefused
		return threads.Result{}, fmt.Errorf("%w: no tool %q is offered in a sandboxed thread", errRefused, t.Name)
	}
	if err := b.offered(t, bt); err != nil {
		c.Outcome = threads.OutcomeRefused
		return threads.Result{}, err
	}
	return b.callBuiltin(ctx, bt, args, c)
}

// offered checks that t is the built-in bt as Tools offers it now.
func (b *Toolbox) offered(t threads.Tool, bt builtin) error {
	backend := string(b.o.Runner.Backend())
	hash, err := bt.hash()
	if err != nil {
		return err
	}
	if !t.Ref.Sandbox || t.Ref.Hash != hash || t.Ref.Fingerprint != backend {
		return fmt.Errorf("%w: %s is not offered with that hash and backend (offered: %s on %s)", errRefused, t.Name, hash, backend)
	}
	return nil
}

// outcome is how a guest ended: ok only for exit code 0.
func outcome(r sandbox.Result) string {
	switch {
	case r.TimedOut:
		return threads.OutcomeTimedOut
	case r.MemoryKilled:
		return threads.OutcomeMemoryKilled
	case r.ExitCode != 0:
		return threads.OutcomeError
	}
	return threads.OutcomeOK
}

// cut bounds s to n bytes of valid UTF-8, saying so when it cuts.
func cut(s string, n int) string {
	if len(s) <= n {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ToValidUTF8(s[:n], "") + fmt.Sprintf("\n[zero: cut at %d of %d bytes]", n, len(s))
}
