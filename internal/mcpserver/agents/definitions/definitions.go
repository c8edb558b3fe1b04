// Package definitions finds and reads the agent definitions of a workspace:
// the agents `zero mcp agents` can run, each with its model provider, its
// system prompt and the child MCP servers whose tools it may call.
//
// [Discover] searches four places under the workspace, in this order:
// .agents/agents (Zero's own format: Markdown with YAML frontmatter, or
// TOML), .claude/agents (Claude Code's Markdown subagents), .codex/agents
// (Codex's TOML agents) and .opencode/agents (OpenCode's Markdown agents).
// Every path goes through the workspace's [fsroot.Set]: a link leading out
// of the workspace is never read. It reads files at most 8 levels below a
// place and at most [MaxFileSize] bytes each. The first definition of a name
// wins; a later one, and an invalid file, is reported through warn in one
// line naming the file (and the field) and skipped, never hiding the others.
//
// [Parse] reads one file strictly, and refuses, with an error naming the
// field:
//   - any literal key or token field (api_key, apiKey, token, access_token,
//     accessToken, ...), at the top, in a provider block or in an MCP server:
//     the key comes only from the environment variable env_key names;
//   - an env_key that is not a plain upper-case variable name, or is one
//     envscrub refuses outright;
//   - a base_url, or a child server's url, that is not https, except plain
//     http to loopback judged on netguard's canonical host (no DNS);
//   - every value Zero cannot enforce: isolation other than none, sandbox
//     other than default or read-only, a permission mode that bypasses
//     approval (see [AcceptedPermissions]);
//   - ${VAR} anywhere but in a stdio server's env values and an HTTP server's
//     header values, and a literal value in a header or env entry that holds
//     a credential (Authorization, *_TOKEN, *_KEY, ...);
//   - in Zero's own format, any field it does not know. The other formats'
//     fields that Zero does not use are ignored, unless ignoring them would
//     leave out a restriction their author meant (Claude Code's hooks).
//
// Definitions are trusted workspace input, not a security boundary: the
// permission and sandbox fields describe an agent, they do not confine it.
// An agent runs with no approval prompt of its own; the child tools its
// definition selects are what it may call.
package definitions

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/zero-dev/zero/internal/model"
)

// Definition is one agent, parsed, checked and with its defaults filled in.
type Definition struct {
	Name, Description string
	Source            string // the file, relative to the workspace root, with '/'
	Instructions      string // the Markdown body or TOML `instructions`: the system prompt
	Model             string // as written; "" when the definition leaves it to the runner
	Provider          string // "openai", "anthropic", "custom"
	BaseURL           string // canonical (netguard's host), defaults filled in
	EnvKey            string // the environment variable holding the key, defaults filled in
	WireAPI           string // "chat-completions", "responses" or "anthropic-messages"; defaults filled in
	Temperature       *float64
	ReasoningEffort   string
	MaxTurns          int      // default 32, 1..1000
	Tools             []string // selectors "server/tool" or "server/*"
	DisallowedTools   []string
	Skills            []string
	Servers           []Server // mcp_servers, in name order
	Sandbox           string   // "default" or "read-only": it describes, it does not confine
	Permission        string   // one of AcceptedPermissions, or "": it describes, it does not enforce
}

// Server is one child MCP server of an agent: stdio (Command) or streamable
// HTTP (URL), never both.
type Server struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string // stdio; values may hold ${VAR}
	URL     string            // canonical (netguard's host)
	Headers map[string]string // streamable HTTP; values may hold ${VAR}
}

// The places searched, in precedence order.
const (
	PlaceAgents   = ".agents/agents"
	PlaceClaude   = ".claude/agents"
	PlaceCodex    = ".codex/agents"
	PlaceOpenCode = ".opencode/agents"
)

// Places are searched in this order; the first definition of a name wins.
var Places = []string{PlaceAgents, PlaceClaude, PlaceCodex, PlaceOpenCode}

// Limits.
const (
	MaxFileSize          = 1 << 20 // bytes of one definition file
	MaxDepth             = 8       // levels below a place a file may lie
	MaxNameLength        = 64
	MaxDescriptionLength = 1024 // characters
	DefaultMaxTurns      = 32
	MaxMaxTurns          = 1000
	// maxErrorLength bounds an error's text, so that a warning is one short line.
	maxErrorLength = 512
)

// The wire APIs, as package model names them.
const (
	wireChat      = model.WireChat
	wireResponses = model.WireResponses
	wireAnthropic = model.WireAnthropic
)

// AcceptedPermissions are the permission values a definition may give: none
// of them lets an agent act without approval. They describe the agent; Zero
// does not enforce them. The first three are Zero's, Claude Code's and
// OpenCode's; the last three are Codex's approval policies.
var AcceptedPermissions = []string{"default", "plan", "ask", "untrusted", "on-request", "on-failure"}

// ErrNotSubagent reports a file that is a valid definition of something that
// is not a sub-agent (OpenCode's mode: primary, or disable: true): Discover
// skips it without a word.
var ErrNotSubagent = errors.New("not a sub-agent")

// Parse reads one definition file. place is one of [Places]; path is the file,
// relative to the workspace root with '/', whose extension gives the format
// (".md": Markdown with YAML frontmatter; ".toml") and whose name without it
// is the agent's name when the file sets none. Every error names the field
// it is about, and is one line.
func Parse(place, path string, data []byte) (Definition, error) {
	d, err := parse(place, path, data)
	if err != nil {
		return Definition{}, oneLineError{err}
	}
	return d, nil
}

func parse(place, file string, data []byte) (Definition, error) {
	f, err := formatOf(place, path.Ext(file))
	if err != nil {
		return Definition{}, err
	}
	if len(data) > MaxFileSize {
		return Definition{}, fmt.Errorf("the file is %d bytes, more than %d", len(data), MaxFileSize)
	}
	var top map[string]any
	var body string
	if f.markdown {
		top, body, err = decodeMarkdown(data)
	} else {
		top, err = decodeTOML(data)
	}
	if err != nil {
		return Definition{}, err
	}
	r := &reader{f: f, fields: map[string]field{}}
	if err := r.collect(top); err != nil {
		return Definition{}, err
	}
	d := Definition{Source: file, Instructions: body}
	if err := r.build(&d, strings.TrimSuffix(path.Base(file), path.Ext(file))); err != nil {
		return Definition{}, err
	}
	return d, nil
}

// oneLineError folds an error into one bounded line.
type oneLineError struct{ err error }

func (e oneLineError) Error() string {
	s := strings.Join(strings.Fields(strings.ReplaceAll(e.err.Error(), "\n", "; ")), " ")
	if len(s) > maxErrorLength {
		s = strings.ToValidUTF8(s[:maxErrorLength], "") + "..."
	}
	return s
}

func (e oneLineError) Unwrap() error { return e.err }
