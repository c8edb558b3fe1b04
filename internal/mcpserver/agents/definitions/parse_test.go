package definitions

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

// TestParseTestdata: each format's example parses into the definition it
// describes, with defaults filled in; the anchor project's OpenRouter
// example parses unchanged, pointed at OpenRouter and at loopback.
func TestParseTestdata(t *testing.T) {
	anchor := Definition{
		Name: "researcher", Description: "Looks things up in the workspace's files", Source: ".agents/agents/openrouter.toml",
		Instructions: "You answer questions about the files you can read.\n", Model: "openai/gpt-4o-mini", Provider: "custom",
		BaseURL: "https://openrouter.ai/api/v1", EnvKey: "OPENROUTER_API_KEY", WireAPI: wireChat, MaxTurns: 32,
		Tools: []string{"files/*"}, Servers: []Server{{Name: "files", Command: "zero", Args: []string{"mcp", "filesystem", "."}}},
		Sandbox: "default",
	}
	local := anchor
	local.Source, local.BaseURL = ".agents/agents/openrouter-local.toml", "http://127.0.0.1:8931/v1"
	for _, tc := range []struct {
		place, file string
		want        Definition
	}{
		{PlaceAgents, "openrouter.toml", anchor},
		{PlaceAgents, "openrouter-local.toml", local},
		{PlaceClaude, "claude.md", Definition{
			Name: "code-reviewer", Description: "Reviews changes for bugs", Source: ".claude/agents/claude.md",
			Instructions: "You review code.\n", Provider: "anthropic", BaseURL: "https://api.anthropic.com",
			EnvKey: "ANTHROPIC_API_KEY", WireAPI: wireAnthropic, MaxTurns: 12,
			Tools: []string{"git/diff", "files/*"}, DisallowedTools: []string{"files/write_file"}, Skills: []string{"go-style"},
			Servers: []Server{
				{Name: "files", Command: "zero", Args: []string{"mcp", "filesystem"}},
				{Name: "git", Command: "git-mcp", Args: []string{"--read-only"}, Env: map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
			},
			Sandbox: "default", Permission: "plan",
		}},
		{PlaceCodex, "codex.toml", Definition{
			Name: "docs", Description: "Writes docs", Source: ".codex/agents/codex.toml", Instructions: "Write clear docs.",
			Model: "gpt-5", Provider: "custom", BaseURL: "http://localhost:8080/v1", EnvKey: "LOCAL_KEY", WireAPI: wireChat,
			ReasoningEffort: "high", MaxTurns: 32, Tools: []string{"search/query"},
			Servers: []Server{{Name: "search", URL: "https://127.0.0.1:9443/mcp",
				Headers: map[string]string{"Authorization": "Bearer ${SEARCH_TOKEN}", "X-Team": "${TEAM_ID}"}}},
			Sandbox: "read-only", Permission: "on-request",
		}},
		{PlaceOpenCode, "opencode.md", Definition{
			Name: "opencode", Description: "Plans work", Source: ".opencode/agents/opencode.md", Instructions: "Plan, do not act.\n",
			Model: "claude-sonnet-4-5", Provider: "anthropic", BaseURL: "https://api.anthropic.com", EnvKey: "ANTHROPIC_API_KEY",
			WireAPI: wireAnthropic, Temperature: ptr(0.1), MaxTurns: 5,
			Tools: []string{"files/read_file"}, DisallowedTools: []string{"files/write_file"}, Sandbox: "default",
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(tc.place, tc.place+"/"+tc.file, data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

// zero is a valid definition in Zero's Markdown format, to which the
// refusal cases add one line.
const zero = "---\nname: a\n%s\n---\nbody\n"

func md(line string) string { return strings.Replace(zero, "%s", line, 1) }

// TestRefusals: each refused value is an error naming its field, and one
// line.
func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, place, file, data, want string
	}{
		// Literal keys and tokens, everywhere.
		{"api_key", PlaceAgents, "a.md", md("api_key: sk-123"), "api_key: a literal key or token is refused"},
		{"apiKey", PlaceAgents, "a.md", md("apiKey: sk-123"), "apiKey: a literal key or token is refused"},
		{"token", PlaceAgents, "a.toml", "token = \"t\"\n", "token: a literal key or token is refused"},
		{"access_token", PlaceClaude, "a.md", md("access_token: t"), "access_token: a literal key or token is refused"},
		{"accessToken", PlaceOpenCode, "a.md", md("accessToken: t"), "accessToken: a literal key or token is refused"},
		{"provider block", PlaceCodex, "a.toml", "model_provider = \"x\"\n[model_providers.x]\nbase_url = \"https://x.test\"\napi_key = \"k\"\n",
			"model_providers.x.api_key: a literal key or token is refused"},
		{"codex bearer_token", PlaceCodex, "a.toml", "[mcp_servers.s]\nurl = \"https://x.test\"\nbearer_token = \"k\"\n",
			"mcp_servers.s.bearer_token: a literal key or token is refused"},
		{"server token", PlaceAgents, "a.toml", "[mcp_servers.s]\ncommand = \"c\"\ntoken = \"k\"\n", "mcp_servers.s.token: a literal key"},
		{"literal authorization header", PlaceAgents, "a.toml", "[mcp_servers.s]\nurl = \"https://x.test\"\nheaders = { Authorization = \"Bearer sk-1\" }\n",
			"mcp_servers.s.headers.Authorization: a literal credential is refused"},
		{"literal api key header", PlaceAgents, "a.toml", "[mcp_servers.s]\nurl = \"https://x.test\"\nheaders = { X-Api-Key = \"sk-1\" }\n",
			"mcp_servers.s.headers.X-Api-Key: a literal credential is refused"},
		{"literal token env", PlaceAgents, "a.toml", "[mcp_servers.s]\ncommand = \"c\"\nenv = { GITHUB_TOKEN = \"ghp_1\" }\n",
			"mcp_servers.s.env.GITHUB_TOKEN: a literal credential is refused"},
		{"provider key to a child", PlaceAgents, "a.toml", "[mcp_servers.s]\ncommand = \"c\"\nenv = { K = \"${OPENAI_API_KEY}\" }\n",
			"mcp_servers.s.env.K: ${OPENAI_API_KEY} is the provider's key"},
		// env_key.
		{"env_key lower case", PlaceAgents, "a.md", md("env_key: openai_key"), "env_key: \"openai_key\" is not a plain environment variable name"},
		{"env_key with $", PlaceAgents, "a.md", md("env_key: $KEY"), "env_key: \"$KEY\" is not a plain"},
		{"env_key hard rejected", PlaceAgents, "a.md", md("env_key: LD_PRELOAD"), "env_key: environment variable rejected: \"LD_PRELOAD\""},
		{"env_key BASH_ENV", PlaceAgents, "a.md", md("env_key: BASH_ENV"), "env_key: environment variable rejected"},
		{"codex bearer env var", PlaceCodex, "a.toml", "[mcp_servers.s]\nurl = \"https://x.test\"\nbearer_token_env_var = \"a b\"\n",
			"mcp_servers.s.bearer_token_env_var: \"a b\" is not a plain"},
		// base_url and url.
		{"http base_url off loopback", PlaceAgents, "a.md", md("base_url: http://10.0.0.1/v1"), "base_url: URL refused: plain http is allowed only to a loopback host"},
		{"http base_url to a name", PlaceAgents, "a.md", md("base_url: http://example.test/v1"), "base_url: URL refused: plain http"},
		{"http base_url to localhost.example", PlaceAgents, "a.md", md("base_url: http://localhost.example/v1"), "base_url: URL refused: plain http"},
		{"ftp base_url", PlaceAgents, "a.md", md("baseUrl: ftp://127.0.0.1/"), "baseUrl: URL refused"},
		{"base_url with credentials", PlaceAgents, "a.md", md("base_url: https://u:p@x.test/"), "base_url: URL refused: credentials"},
		{"http server url off loopback", PlaceAgents, "a.toml", "[mcp_servers.s]\nurl = \"http://192.168.1.1/mcp\"\n", "mcp_servers.s.url: URL refused: plain http"},
		// What Zero cannot enforce.
		{"isolation worktree", PlaceClaude, "a.md", md("isolation: worktree"), "isolation: \"worktree\" is refused"},
		{"sandbox workspace-write", PlaceCodex, "a.toml", "sandbox_mode = \"workspace-write\"\n", "sandbox_mode: \"workspace-write\" is refused"},
		{"sandbox danger-full-access", PlaceCodex, "a.toml", "sandbox_mode = \"danger-full-access\"\n", "sandbox_mode: \"danger-full-access\" is refused"},
		{"sandbox strict", PlaceAgents, "a.md", md("sandbox: strict"), "sandbox: \"strict\" is refused"},
		{"bypassPermissions", PlaceClaude, "a.md", md("permissionMode: bypassPermissions"), "permissionMode: \"bypassPermissions\" is refused"},
		{"dontAsk", PlaceClaude, "a.md", md("permissionMode: dontAsk"), "permissionMode: \"dontAsk\" is refused"},
		{"acceptEdits", PlaceClaude, "a.md", md("permissionMode: acceptEdits"), "permissionMode: \"acceptEdits\" is refused"},
		{"allow", PlaceAgents, "a.md", md("permission: allow"), "permission: \"allow\" is refused"},
		{"codex never", PlaceCodex, "a.toml", "approval_policy = \"never\"\n", "approval_policy: \"never\" is refused"},
		{"opencode allow", PlaceOpenCode, "a.md", md("permission:\n  bash: allow"), "permission.bash: allow is refused"},
		{"opencode nested allow", PlaceOpenCode, "a.md", md("permission:\n  bash:\n    \"git *\": allow"), "allow is refused"},
		{"claude hooks", PlaceClaude, "a.md", md("hooks:\n  PreToolUse: [{matcher: Bash}]"), "hooks: refused"},
		{"codex cwd", PlaceCodex, "a.toml", "[mcp_servers.s]\ncommand = \"c\"\ncwd = \"/tmp\"\n", "mcp_servers.s.cwd: refused"},
		// ${VAR} where it is not interpolated.
		{"var in command", PlaceAgents, "a.toml", "[mcp_servers.s]\ncommand = \"${BIN}\"\n", "mcp_servers.s.command: ${VAR} is not interpolated"},
		{"var in args", PlaceAgents, "a.toml", "[mcp_servers.s]\ncommand = \"c\"\nargs = [\"--key=${K}\"]\n", "mcp_servers.s.args: ${VAR} is not interpolated"},
		{"var in url", PlaceAgents, "a.toml", "[mcp_servers.s]\nurl = \"https://x.test/${P}\"\n", "mcp_servers.s.url: ${VAR} is not interpolated"},
		{"var in base_url", PlaceAgents, "a.md", md("base_url: https://x.test/${P}"), "base_url: ${VAR} is not interpolated"},
		{"unclosed var", PlaceAgents, "a.toml", "[mcp_servers.s]\ncommand = \"c\"\nenv = { A = \"${B\" }\n", "mcp_servers.s.env.A: a ${ not closed"},
		{"bad var name", PlaceAgents, "a.toml", "[mcp_servers.s]\ncommand = \"c\"\nenv = { A = \"${1B}\" }\n", "mcp_servers.s.env.A: ${1B} does not name"},
		{"env LD_PRELOAD", PlaceAgents, "a.toml", "[mcp_servers.s]\ncommand = \"c\"\nenv = { LD_PRELOAD = \"x.so\" }\n", "mcp_servers.s.env.LD_PRELOAD: environment variable rejected"},
		// Servers.
		{"both transports", PlaceAgents, "a.toml", "[mcp_servers.s]\ncommand = \"c\"\nurl = \"https://x.test\"\n", "mcp_servers.s: a server is either stdio"},
		{"neither transport", PlaceAgents, "a.toml", "[mcp_servers.s]\nargs = [\"x\"]\n", "mcp_servers.s: neither command nor url"},
		{"sse", PlaceClaude, "a.md", md("mcpServers:\n  - s: {type: sse, url: \"https://x.test\"}"), "mcpServers.s.type: \"sse\" is not a transport"},
		{"server by reference", PlaceClaude, "a.md", md("mcpServers: [github]"), "mcpServers[0]: a server configured outside this file is not read"},
		{"server name", PlaceAgents, "a.toml", "[mcp_servers.My__S]\ncommand = \"c\"\n", "mcp_servers.My__S: \"My__S\" may hold only"},
		{"unknown server field", PlaceAgents, "a.toml", "[mcp_servers.s]\ncommand = \"c\"\ntimeout = 3\n", "mcp_servers.s.timeout: not a server field"},
		// Selectors.
		{"selector without server", PlaceAgents, "a.md", md("tools: [read_file]"), "tools: \"read_file\" is not a selector"},
		{"selector bad tool", PlaceAgents, "a.md", md("tools: [\"files/a b\"]"), "tools: \"files/a b\" is not a selector"},
		{"disallowed selector", PlaceAgents, "a.md", md("disallowedTools: [\"files\"]"), "disallowedTools: \"files\" is not a selector"},
		{"claude built-in", PlaceClaude, "a.md", md("tools: Read, Grep"), "tools: \"Read\" is a tool of Claude Code, which Zero's agents do not have"},
		{"claude agents spawning", PlaceClaude, "a.md", md("tools: Agent(x)"), "tools: \"Agent(x)\" is a tool of Claude Code"},
		{"opencode built-in", PlaceOpenCode, "a.md", md("tools:\n  bash: true"), "tools: \"bash\" is a tool of OpenCode"},
		// Fields.
		{"unknown field", PlaceAgents, "a.md", md("colour: red"), "colour: not a field of Zero's definitions"},
		{"unknown claude field", PlaceClaude, "a.md", md("model_provider: openai"), "model_provider: not a field of Claude Code's"},
		{"alias twice", PlaceAgents, "a.md", md("max_turns: 3\nmaxTurns: 4"), "max_turns: the same field as maxTurns"},
		{"instructions in markdown", PlaceAgents, "a.md", md("instructions: x"), "instructions: not a field of Zero's"},
		{"max_turns zero", PlaceAgents, "a.md", md("max_turns: 0"), "max_turns: must be a whole number from 1 to 1000"},
		{"max_turns big", PlaceAgents, "a.md", md("max_turns: 1001"), "max_turns: must be a whole number from 1 to 1000"},
		{"max_turns float", PlaceAgents, "a.md", md("max_turns: 2.5"), "max_turns: must be a whole number"},
		{"temperature", PlaceAgents, "a.md", md("temperature: 3"), "temperature: must be from 0 to 2"},
		{"reasoning_effort", PlaceAgents, "a.md", md("reasoning_effort: extreme"), "reasoning_effort: \"extreme\" is not one of"},
		{"provider", PlaceAgents, "a.md", md("model_provider: azure"), "model_provider: \"azure\" is not a provider Zero knows"},
		{"wire_api", PlaceAgents, "a.md", md("wire_api: grpc"), "wire_api: \"grpc\" is not a wire API"},
		{"codex wire chat only in codex", PlaceAgents, "a.md", md("wire_api: chat"), "wire_api: \"chat\" is not a wire API"},
		{"opencode other provider", PlaceOpenCode, "a.md", md("model: openrouter/x"), "model: \"openrouter/x\": Zero runs OpenCode agents"},
		{"opencode prompt file", PlaceOpenCode, "a.md", md("prompt: \"{file:./p.txt}\""), "prompt: a prompt read from elsewhere is not supported"},
		{"opencode mode", PlaceOpenCode, "a.md", md("mode: helper"), "mode: \"helper\" is not an OpenCode mode"},
		{"skill name", PlaceAgents, "a.md", md("skills: [Go_Style]"), "skills: \"Go_Style\" is not a skill name"},
		{"description type", PlaceAgents, "a.md", md("description: [a]"), "description: must be text"},
		{"yaml alias", PlaceAgents, "a.md", md("x: &a b\ny: *a"), "anchors and aliases are not allowed"},
		{"yaml timestamp", PlaceAgents, "a.md", md("description: 2024-01-01"), "the YAML tag \"!!timestamp\" is not allowed"},
		{"toml date", PlaceAgents, "a.toml", "description = 2024-01-01\n", "description: a date or time"},
		{"yaml duplicate", PlaceAgents, "a.md", md("model: a\nmodel: b"), "model (line 3): given twice"},
		{"no frontmatter", PlaceClaude, "a.md", "just text\n", "frontmatter: the file must start with a line ---"},
		{"unclosed frontmatter", PlaceClaude, "a.md", "---\nname: a\n", "frontmatter: not closed"},
		{"bad toml", PlaceCodex, "a.toml", "name = \n", "invalid TOML on line 1"},
		{"wrong extension", PlaceCodex, "a.md", md(""), "\".md\" files in .codex/agents are not definitions"},
		{"too large", PlaceAgents, "a.md", md("description: " + strings.Repeat("x", MaxFileSize)), "more than 1048576"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.place, tc.place+"/"+tc.file, []byte(tc.data))
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", tc.data)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse error:\n%v\nwant it to hold:\n%s", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") || len(err.Error()) > maxErrorLength+3 {
				t.Errorf("error is not one short line: %q", err)
			}
			for _, secret := range []string{"sk-123", "sk-1", "ghp_1"} {
				if strings.Contains(tc.data, secret) && strings.Contains(err.Error(), secret) {
					t.Errorf("error quotes the secret %q: %v", secret, err)
				}
			}
		})
	}
}

// TestAccepted: the values next to each refusal are accepted, so the
// refusals are about the value, not the field.
func TestAccepted(t *testing.T) {
	for _, tc := range []struct{ name, place, file, data string }{
		{"loopback http base_url", PlaceAgents, "a.md", md("base_url: http://127.0.0.1:9000/v1")},
		{"loopback http localhost", PlaceAgents, "a.md", md("base_url: http://localhost:9000/v1")},
		{"loopback http ::1", PlaceAgents, "a.md", md("base_url: \"http://[::1]:9000/v1\"")},
		{"permission plan", PlaceClaude, "a.md", md("permissionMode: plan")},
		{"permission default", PlaceClaude, "a.md", md("permissionMode: default")},
		{"sandbox read-only", PlaceAgents, "a.md", md("sandbox: read-only")},
		{"isolation none", PlaceAgents, "a.md", md("isolation: none")},
		{"interpolated authorization", PlaceAgents, "a.toml", "[mcp_servers.s]\nurl = \"https://x.test\"\nheaders = { Authorization = \"Bearer ${T}\" }\n"},
		{"literal ordinary header", PlaceAgents, "a.toml", "[mcp_servers.s]\nurl = \"https://x.test\"\nheaders = { X-Team = \"blue\" }\n"},
		{"literal ordinary env", PlaceAgents, "a.toml", "[mcp_servers.s]\ncommand = \"c\"\nenv = { LOG_LEVEL = \"debug\", TOKEN_FILE_DIR = \"x\" }\n"},
		{"claude disallows a built-in", PlaceClaude, "a.md", md("disallowedTools: Bash")},
		{"opencode denies a built-in", PlaceOpenCode, "a.md", md("tools:\n  bash: false")},
		{"opencode all", PlaceOpenCode, "a.md", md("mode: all")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse(tc.place, tc.place+"/"+tc.file, []byte(tc.data)); err != nil {
				t.Errorf("Parse: %v", err)
			}
		})
	}
}

// TestDefaults: each provider's endpoint, key variable and wire API, and
// custom's three required fields; max_turns 32, sandbox default.
func TestDefaults(t *testing.T) {
	type endpoint struct{ Provider, BaseURL, EnvKey, WireAPI string }
	for _, tc := range []struct {
		name, place, file, data string
		want                    endpoint
	}{
		{"zero", PlaceAgents, "a.md", md(""), endpoint{"openai", "https://api.openai.com/v1", "OPENAI_API_KEY", wireResponses}},
		{"openai", PlaceAgents, "a.md", md("model_provider: openai"), endpoint{"openai", "https://api.openai.com/v1", "OPENAI_API_KEY", wireResponses}},
		{"anthropic", PlaceAgents, "a.md", md("model_provider: anthropic"), endpoint{"anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY", wireAnthropic}},
		{"claude", PlaceClaude, "a.md", md("model: sonnet"), endpoint{"anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY", wireAnthropic}},
		{"codex", PlaceCodex, "a.toml", "", endpoint{"openai", "https://api.openai.com/v1", "OPENAI_API_KEY", wireResponses}},
		{"opencode openai", PlaceOpenCode, "a.md", md("model: openai/gpt-5"), endpoint{"openai", "https://api.openai.com/v1", "OPENAI_API_KEY", wireResponses}},
		{"openai overridden", PlaceAgents, "a.md", md("model_provider: openai\nwire_api: chat-completions\nbase_url: HTTPS://API.Example.TEST/v1"),
			endpoint{"openai", "https://api.example.test/v1", "OPENAI_API_KEY", wireChat}},
		{"canonical loopback", PlaceAgents, "a.md", md("base_url: http://0x7f000001:80/v1"), endpoint{"openai", "http://127.0.0.1:80/v1", "OPENAI_API_KEY", wireResponses}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse(tc.place, tc.place+"/"+tc.file, []byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, endpoint{d.Provider, d.BaseURL, d.EnvKey, d.WireAPI}); diff != "" {
				t.Errorf("endpoint (-want +got):\n%s", diff)
			}
			if d.MaxTurns != 32 || d.Sandbox != "default" {
				t.Errorf("MaxTurns, Sandbox = %d, %q; want 32, default", d.MaxTurns, d.Sandbox)
			}
		})
	}
	full := "model_provider = \"custom\"\nbase_url = \"https://x.test/v1\"\nenv_key = \"X_KEY\"\nwire_api = \"responses\"\n"
	if _, err := Parse(PlaceAgents, ".agents/agents/a.toml", []byte(full)); err != nil {
		t.Fatalf("custom with all three: %v", err)
	}
	for _, missing := range []string{"base_url", "env_key", "wire_api"} {
		var kept []string
		for _, l := range strings.Split(full, "\n") {
			if !strings.HasPrefix(l, missing) {
				kept = append(kept, l)
			}
		}
		_, err := Parse(PlaceAgents, ".agents/agents/a.toml", []byte(strings.Join(kept, "\n")))
		if err == nil || !strings.Contains(err.Error(), missing+": required when model_provider is custom") {
			t.Errorf("custom without %s: %v", missing, err)
		}
	}
}

// TestCamelCaseAliases: Zero's format reads every snake_case field under
// its camelCase name too, to the same definition.
func TestCamelCaseAliases(t *testing.T) {
	snake := "---\nname: a\nmodel_provider: custom\nbase_url: https://x.test/v1\nenv_key: X_KEY\nwire_api: chat-completions\n" +
		"reasoning_effort: low\nmax_turns: 7\ndisallowed_tools: [s/b]\nmcp_servers:\n  s: {command: c}\n---\n"
	camel := "---\nname: a\nmodelProvider: custom\nbaseUrl: https://x.test/v1\nenvKey: X_KEY\nwireApi: chat-completions\n" +
		"reasoningEffort: low\nmaxTurns: 7\ndisallowedTools: [s/b]\nmcpServers:\n  s: {command: c}\n---\n"
	want, err := Parse(PlaceAgents, ".agents/agents/a.md", []byte(snake))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(PlaceAgents, ".agents/agents/a.md", []byte(camel))
	if err != nil {
		t.Fatal(err)
	}
	if want.MaxTurns != 7 || want.Provider != "custom" || len(want.Servers) != 1 {
		t.Fatalf("snake_case not read: %+v", want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("camelCase (-snake +camel):\n%s", diff)
	}
}

// TestNames: a name is 1-64 lower-case letters and digits with single - or
// _ between; the file's name stands in when the file sets none.
func TestNames(t *testing.T) {
	for _, tc := range []struct {
		file, name string
		ok         bool
	}{
		{"x.md", "a", true}, {"x.md", "a-b_c9", true}, {"x.md", strings.Repeat("a", 64), true},
		{"x.md", strings.Repeat("a", 65), false}, {"x.md", "A", false}, {"x.md", "a--b", false}, {"x.md", "a-_b", false},
		{"x.md", "-a", false}, {"x.md", "a_", false}, {"x.md", "a b", false}, {"x.md", "é", false}, {"x.md", "a/b", false},
		{"from-file.md", "", true}, {"From File.md", "", false}, {"a..md", "", false},
	} {
		data := "---\ndescription: d\n---\n"
		if tc.name != "" {
			data = "---\nname: \"" + tc.name + "\"\n---\n"
		}
		d, err := Parse(PlaceAgents, ".agents/agents/"+tc.file, []byte(data))
		if (err == nil) != tc.ok {
			t.Errorf("file %q name %q: err %v, want ok %v", tc.file, tc.name, err, tc.ok)
			continue
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "name: ") {
				t.Errorf("file %q name %q: error %q does not start with the field", tc.file, tc.name, err)
			}
			continue
		}
		want := tc.name
		if want == "" {
			want = strings.TrimSuffix(tc.file, ".md")
		}
		if d.Name != want {
			t.Errorf("file %q name %q: Name %q, want %q", tc.file, tc.name, d.Name, want)
		}
	}
}

// TestNotSubagent: OpenCode's primary agents and disabled ones are not
// sub-agents; Parse says so with ErrNotSubagent.
func TestNotSubagent(t *testing.T) {
	for _, data := range []string{md("mode: primary"), md("disable: true")} {
		_, err := Parse(PlaceOpenCode, ".opencode/agents/a.md", []byte(data))
		if !errors.Is(err, ErrNotSubagent) {
			t.Errorf("%q: err %v, want ErrNotSubagent", data, err)
		}
	}
	if _, err := Parse(PlaceOpenCode, ".opencode/agents/a.md", []byte(md("mode: subagent"))); err != nil {
		t.Errorf("mode: subagent: %v", err)
	}
}
