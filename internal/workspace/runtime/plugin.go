package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/pin"
	"github.com/zero-dev/zero/internal/plugin"
	"github.com/zero-dev/zero/internal/plugin/host"
)

// KindPlugin is a Spec that runs an enabled plugin: Zero's fixed host
// (package host) runs the plugin's entry file in a sandbox that grants
// what the plugin was approved for, and speaks MCP over stdio like a stdio
// server; what it offers is its manifest's tools, never what it lists.
const KindPlugin = "plugin"

// A Plugin is what runs one enabled plugin, for a Spec of KindPlugin. The
// Spec's Program is the node the approval showed, its Env the granted
// secrets' values, its Allow the allowed local origins (for the broker of
// network.hosts), and its ToolSet the tool hashes approved when the plugin
// was enabled.
type Plugin struct {
	ID           int64               // the plugin's id, numbered apart from servers'
	Dir          string              // the installed plugin's folder, absolute
	Entry        string              // the entry file, relative to Dir
	Capabilities plugin.Capabilities // as granted: what the permission hash covers
	Node         host.Node           // the node approved (its Path is the Spec's Program)
	// Tools are the manifest's tools (see [PluginTool]): the plugin's
	// listing, whatever its process says.
	Tools []Tool
}

// PluginTool is a manifest's tool as the runtime lists it: its input
// schema as MCP offers it, hashed with its plugin tool hash.
func PluginTool(t plugin.Tool) (Tool, error) {
	schema, err := t.InputSchema()
	if err != nil {
		return Tool{}, err
	}
	h, err := t.Hash()
	if err != nil {
		return Tool{}, err
	}
	return Tool{Name: t.Name, Description: t.Description, InputSchema: schema, Hash: h}, nil
}

// noun is what s runs, for messages: "server" or "plugin".
func (s Spec) noun() string {
	if s.Kind == KindPlugin {
		return "plugin"
	}
	return "server"
}

// label is s's kind and name, for messages: server "name", plugin "name".
func (s Spec) label() string { return fmt.Sprintf("%s %q", s.noun(), s.Name) }

// manifestListing is a plugin's listing: its manifest's tools, by name,
// and the hash of their set. The process is never asked: the host answers
// tools/list with nothing, and a plugin's code that made it answer
// otherwise would change nothing here.
func manifestListing(s Spec) (Listing, error) {
	if s.Plugin == nil {
		return Listing{}, fmt.Errorf("%s: no plugin in its Spec", s.label())
	}
	tools := slices.Clone(s.Plugin.Tools)
	if len(tools) > MaxTools {
		return Listing{}, fmt.Errorf("%s declares more than %d tools", s.label(), MaxTools)
	}
	slices.SortFunc(tools, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(tools); i++ {
		if tools[i].Name == tools[i-1].Name {
			return Listing{}, fmt.Errorf("%s declares tool %q twice", s.label(), visibleName(tools[i].Name))
		}
	}
	if tools == nil {
		tools = []Tool{}
	}
	return Listing{Tools: tools, Hash: pin.ToolSetHash(SetOf(tools))}, nil
}

// pluginReasons are the drift gate's reasons for a plugin's tool: its
// listing is its manifest's tools, and its approved set the tool hashes of
// the manifest the owner enabled.
var pluginReasons = reasons{
	removed: "the plugin's installed manifest no longer declares it",
	unknown: "the plugin declares no such tool",
	none:    "quarantined: no tool of this plugin is approved; the owner enables the plugin to approve them",
	added:   "quarantined: the tool is not among those the owner approved when enabling the plugin, and waits for the owner to enable it again",
	changed: "quarantined: the tool changed (its description, parameters, required list or capabilities) since the owner enabled the plugin, and waits for the owner to enable it again",
}

// target is what a call's audit record names: "server:ID", or
// "plugin:ID" for a plugin (ids are numbered apart).
func (s Spec) target() string {
	if s.Kind == KindPlugin {
		return "plugin:" + strconv.FormatInt(s.key().id, 10)
	}
	return "server:" + strconv.FormatInt(s.ServerID, 10)
}

// launchPlugin starts s's plugin: Zero's fixed host, sandboxed as
// host.Command builds it for what the plugin was granted. The link's
// release stops the plugin's broker once the process ended; its sandbox
// says what a call's result should add (refused hosts, a limit reached).
func (r *Runtime) launchPlugin(life context.Context, s Spec, lifetime time.Duration) (link, error) {
	if s.Plugin == nil {
		return link{}, fmt.Errorf("%s: no plugin in its Spec", s.label())
	}
	if r.o.DataDir == "" {
		return link{}, fmt.Errorf("%s: this runtime runs no plugins (no data directory)", s.label())
	}
	node := s.Plugin.Node
	node.Path = s.Program // the approved one: spawn runs nothing else
	sb, err := host.Command(life, host.Options{Dir: s.Plugin.Dir, Entry: s.Plugin.Entry, Capabilities: s.Plugin.Capabilities,
		Workspace: r.o.Roots, Secrets: s.Env, Node: node, DataDir: r.o.DataDir, Allow: s.Allow, Resolver: r.o.Resolver})
	if err != nil {
		return link{}, err
	}
	sb.Cmd.Timeout = min(sb.Cmd.Timeout, lifetime)
	p, err := spawn.Start(life, sb.Cmd)
	if err != nil {
		sb.Close()
		return link{}, err
	}
	return link{proc: p, release: func() { sb.Close() }, sandbox: sb}, nil
}

// refusedNotes tell a call's caller which connections the plugin's
// broker refused during the call: a text content each, from Zero, not
// from the plugin.
func refusedNotes(refused []netguard.Refusal) []mcp.Content {
	var out []mcp.Content
	for _, r := range refused {
		out = append(out, &mcp.TextContent{Text: "[zero] the plugin's network request was refused: " + r.String()})
	}
	return out
}

// callTimeout bounds one call under s: a plugin's limits.timeout_ms (or
// Zero's default), a server's the runtime's call timeout.
func (s Spec) callTimeout(server time.Duration) time.Duration {
	if s.Kind != KindPlugin {
		return server
	}
	if s.Plugin == nil {
		return plugin.Limits{}.Timeout()
	}
	return s.Plugin.Capabilities.EffectiveLimits().Timeout()
}

// checkArguments checks a call's arguments against the input schema the
// plugin's manifest declares for tool, as offered (plugin.CheckArguments).
func (p *Plugin) checkArguments(tool string, args json.RawMessage) error {
	i := slices.IndexFunc(p.Tools, func(t Tool) bool { return t.Name == tool })
	if i < 0 {
		return fmt.Errorf("the plugin declares no tool %q", visibleName(tool))
	}
	if err := plugin.CheckArguments(p.Tools[i].InputSchema, args); err != nil {
		return fmt.Errorf("tool %q: %w", visibleName(tool), err)
	}
	return nil
}

// ErrArguments refuses a plugin call whose arguments do not fit the tool's
// input schema: nothing was sent to the plugin.
var ErrArguments = plugin.ErrArguments
