package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/mcpserver/agents/children"
	"github.com/zero-dev/zero/internal/mcpserver/agents/definitions"
	"github.com/zero-dev/zero/internal/mcpserver/skills"
	"github.com/zero-dev/zero/internal/model"
)

// WorkspaceOptions returns the Options of the agents a workspace defines:
// its definitions (package definitions), discovered afresh whenever the
// catalog is asked, each joined with its child servers (package children),
// which start when a run starts, and the workspace's skills. A provider's
// key is read through getenv from the variable the definition's env_key
// names when the catalog is asked, at spawn time. A definition that cannot
// be used is said once on stderr, and left out.
func WorkspaceOptions(workspace *fsroot.Set, getenv func(string) string, stderr io.Writer) Options {
	w := &workspaceCatalog{roots: workspace, getenv: getenv, stderr: stderr, said: map[string]bool{}}
	return Options{
		Catalog:   w.agents,
		LoadSkill: func(name string) (string, error) { return skills.Instructions(workspace, name) },
	}
}

type workspaceCatalog struct {
	roots  *fsroot.Set
	getenv func(string) string
	stderr io.Writer

	mu   sync.Mutex
	said map[string]bool // warnings written already
}

// warn writes a warning once per server.
func (w *workspaceCatalog) warn(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.said[msg] {
		return
	}
	w.said[msg] = true
	fmt.Fprintf(w.stderr, "zero-agents: %s\n", msg)
}

func (w *workspaceCatalog) agents() ([]Agent, error) {
	defs, err := definitions.Discover(w.roots, w.warn)
	if err != nil {
		return nil, err
	}
	out := make([]Agent, 0, len(defs))
	for _, d := range defs {
		out = append(out, w.agent(d))
	}
	return out, nil
}

// agent joins definition d with its child servers.
func (w *workspaceCatalog) agent(d definitions.Definition) Agent {
	a := Agent{Name: d.Name, Description: d.Description, Instructions: d.Instructions, MaxTurns: d.MaxTurns,
		Model:       model.Config{BaseURL: d.BaseURL, APIKey: w.getenv(d.EnvKey), Model: d.Model, WireAPI: d.WireAPI},
		Temperature: d.Temperature, ReasoningEffort: d.ReasoningEffort, Skills: d.Skills}
	if len(d.Servers) == 0 {
		if len(d.Tools) > 0 {
			tools := d.Tools
			a.Tools = func(context.Context) (Toolbox, error) {
				return nil, fmt.Errorf("%s: tools %s name servers, and the definition has no mcp_servers", d.Source, strings.Join(tools, ", "))
			}
		}
		return a
	}
	cfgs := make([]children.Config, 0, len(d.Servers))
	for _, s := range d.Servers {
		cfgs = append(cfgs, children.Config{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Headers: s.Headers})
	}
	a.Tools = func(ctx context.Context) (Toolbox, error) {
		set, err := children.Start(ctx, cfgs, children.Options{Roots: w.roots, Getenv: w.getenv})
		if err != nil {
			return nil, err
		}
		tools, err := set.Select(d.Tools, d.DisallowedTools)
		if err != nil {
			set.Close()
			return nil, fmt.Errorf("%s: %w", d.Source, err)
		}
		return newChildToolbox(set, tools), nil
	}
	return a
}

// A childToolbox offers the selected tools of one run's children, named
// server__tool (a server's name never holds "__").
type childToolbox struct {
	set   *children.Set
	tools []model.Tool
	names map[string][2]string // model name to server and tool
}

func newChildToolbox(set *children.Set, selected []children.Tool) *childToolbox {
	t := &childToolbox{set: set, names: map[string][2]string{}}
	for _, c := range selected {
		name := c.Server + "__" + c.Name
		t.names[name] = [2]string{c.Server, c.Name}
		t.tools = append(t.tools, model.Tool{Type: "function",
			Function: model.FunctionDef{Name: name, Description: c.Description, Parameters: c.InputSchema}})
	}
	return t
}

func (t *childToolbox) Tools() []model.Tool { return t.tools }

func (t *childToolbox) Call(ctx context.Context, name string, args json.RawMessage) (string, error) {
	st, ok := t.names[name]
	if !ok {
		return "", fmt.Errorf("no tool %q is offered to this agent", name)
	}
	text, isError, err := t.set.Call(ctx, st[0], st[1], args)
	if err != nil {
		return "", err
	}
	if isError {
		return "", errors.New("the tool answered with an error: " + text)
	}
	return text, nil
}

func (t *childToolbox) Close() error { return t.set.Close() }
