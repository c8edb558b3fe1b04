package definitions

import (
	"fmt"
	"slices"
	"strings"
)

// A format is one place's kind of file: which fields it has and what Zero
// calls them.
type format struct {
	name     string // for errors: "Zero", "Claude Code", "Codex", "OpenCode"
	markdown bool
	// keys maps each field as written to the field Zero reads it as.
	keys map[string]string
	// ignored are the format's fields Zero does not use.
	ignored []string
	// provider is the model_provider when the file names none.
	provider string
	// serverKeys map an MCP server's fields as written to Zero's.
	serverKeys map[string]string
	// serverIgnored are the format's server fields Zero does not use.
	serverIgnored []string
}

// The fields Zero reads. Formats map their own names onto these.
const (
	fName            = "name"
	fDescription     = "description"
	fInstructions    = "instructions"
	fModel           = "model"
	fProvider        = "model_provider"
	fBaseURL         = "base_url"
	fEnvKey          = "env_key"
	fWireAPI         = "wire_api"
	fTemperature     = "temperature"
	fReasoningEffort = "reasoning_effort"
	fMaxTurns        = "max_turns"
	fTools           = "tools"
	fDisallowedTools = "disallowed_tools"
	fSkills          = "skills"
	fServers         = "mcp_servers"
	fPermission      = "permission"
	fSandbox         = "sandbox"
	fIsolation       = "isolation"
	fProviders       = "model_providers" // Codex's provider blocks
	fMode            = "mode"            // OpenCode
	fDisable         = "disable"         // OpenCode, Claude Code
	fPrompt          = "prompt"          // OpenCode's prompt file reference
	fHooks           = "hooks"           // Claude Code
)

// zeroKeys are Zero's own fields, with the camelCase aliases.
func zeroKeys(toml bool) map[string]string {
	k := map[string]string{}
	for _, f := range []string{fName, fDescription, fModel, fProvider, fBaseURL, fEnvKey, fWireAPI, fTemperature,
		fReasoningEffort, fMaxTurns, fTools, fDisallowedTools, fSkills, fServers, fPermission, fSandbox, fIsolation} {
		k[f] = f
		k[camel(f)] = f
	}
	k["disallowedTools"] = fDisallowedTools
	if toml {
		k[fInstructions] = fInstructions
	}
	return k
}

// camel turns snake_case into camelCase: base_url is baseUrl.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

var zeroServerKeys = map[string]string{"type": "type", "command": "command", "args": "args", "env": "env", "url": "url", "headers": "headers"}

var (
	zeroMarkdown = &format{name: "Zero", markdown: true, keys: zeroKeys(false), provider: "openai", serverKeys: zeroServerKeys}
	zeroTOML     = &format{name: "Zero", keys: zeroKeys(true), provider: "openai", serverKeys: zeroServerKeys}
	// https://code.claude.com/docs/en/sub-agents
	claude = &format{name: "Claude Code", markdown: true, provider: "anthropic",
		keys: map[string]string{"name": fName, "description": fDescription, "tools": fTools, "disallowedTools": fDisallowedTools,
			"model": fModel, "permissionMode": fPermission, "maxTurns": fMaxTurns, "skills": fSkills, "mcpServers": fServers,
			"isolation": fIsolation, "effort": fReasoningEffort, "hooks": fHooks, "disabled": fDisable},
		ignored:    []string{"memory", "background", "color", "initialPrompt"},
		serverKeys: zeroServerKeys,
	}
	// https://developers.openai.com/codex/subagents and the config reference.
	codex = &format{name: "Codex", provider: "openai",
		keys: map[string]string{"name": fName, "description": fDescription, "developer_instructions": fInstructions,
			"instructions": fInstructions, "model": fModel, "model_provider": fProvider, "model_reasoning_effort": fReasoningEffort,
			"sandbox_mode": fSandbox, "approval_policy": fPermission, "mcp_servers": fServers, "model_providers": fProviders},
		ignored: []string{"nickname_candidates", "model_verbosity", "model_reasoning_summary", "model_context_window", "skills"},
		serverKeys: map[string]string{"command": "command", "args": "args", "env": "env", "url": "url", "http_headers": "headers",
			"env_http_headers": "env_headers", "bearer_token_env_var": "bearer_env", "env_vars": "env_vars", "enabled": "enabled",
			"enabled_tools": "enabled_tools", "disabled_tools": "disabled_tools", "cwd": "cwd"},
		serverIgnored: []string{"startup_timeout_sec", "startup_timeout_ms", "tool_timeout_sec", "required"},
	}
	// https://opencode.ai/docs/agents
	opencode = &format{name: "OpenCode", markdown: true, provider: "openai",
		keys: map[string]string{"name": fName, "description": fDescription, "mode": fMode, "model": fModel, "temperature": fTemperature,
			"prompt": fPrompt, "tools": fTools, "permission": fPermission, "disable": fDisable, "steps": fMaxTurns,
			"maxSteps": fMaxTurns, "reasoningEffort": fReasoningEffort},
		ignored: []string{"top_p", "hidden", "color", "options"},
	}
)

// formatOf returns the format of a file with extension ext in place.
func formatOf(place, ext string) (*format, error) {
	switch {
	case place == PlaceAgents && ext == ".md":
		return zeroMarkdown, nil
	case place == PlaceAgents && ext == ".toml":
		return zeroTOML, nil
	case place == PlaceClaude && ext == ".md":
		return claude, nil
	case place == PlaceCodex && ext == ".toml":
		return codex, nil
	case place == PlaceOpenCode && ext == ".md":
		return opencode, nil
	case !slices.Contains(Places, place):
		return nil, fmt.Errorf("%s is not a place definitions are read from", quote(place))
	}
	return nil, fmt.Errorf("%s files in %s are not definitions", quote(ext), place)
}

// isDefinitionFile reports whether a file of this name in place is read.
func isDefinitionFile(place, name string) bool {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return false
	}
	_, err := formatOf(place, name[i:])
	return err == nil
}
