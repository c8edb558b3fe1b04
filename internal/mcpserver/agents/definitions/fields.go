package definitions

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/netguard"
)

// A field is one field of a file, with the name it was written under.
type field struct {
	key   string
	value any
}

// reader turns a file's tree into a Definition.
type reader struct {
	f      *format
	fields map[string]field // by Zero's name
}

// collect checks every key of the tree: no literal secret anywhere, no
// field the format does not have, no field given twice under two names.
func (r *reader) collect(top map[string]any) error {
	if err := noSecrets(top, ""); err != nil {
		return err
	}
	for _, k := range sortedKeys(top) {
		canon, ok := r.f.keys[k]
		if !ok {
			if slices.Contains(r.f.ignored, k) {
				continue
			}
			return fmt.Errorf("%s: not a field of %s's definitions", fieldName(k), r.f.name)
		}
		if prev, dup := r.fields[canon]; dup {
			return fmt.Errorf("%s: the same field as %s; give one", fieldName(k), fieldName(prev.key))
		}
		r.fields[canon] = field{k, top[k]}
	}
	return nil
}

// secretSuffixes end the names of fields that would hold a credential
// (compared in lower case without "_" and "-").
var secretSuffixes = []string{"apikey", "token", "secret", "password"}

// isSecretKey reports a field name that holds a literal credential:
// api_key, apiKey, token, access_token, accessToken, bearer_token, ...
func isSecretKey(k string) bool {
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(k))
	for _, s := range secretSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// namedMaps hold names of variables or headers as keys, not fields; their
// values have rules of their own.
var namedMaps = []string{"env", "headers", "http_headers", "env_http_headers", "tools", "permission"}

// noSecrets refuses a field holding a literal key or token anywhere in the
// tree: at the top, in a provider block, in an MCP server.
func noSecrets(v any, at string) error {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			if isSecretKey(k) {
				return fmt.Errorf("%s: a literal key or token is refused; the provider's key comes from the environment "+
					"variable env_key names, and a child server's from ${VAR} in its env or headers", fieldName(join(at, k)))
			}
			if slices.Contains(namedMaps, k) {
				continue
			}
			if err := noSecrets(v[k], join(at, k)); err != nil {
				return err
			}
		}
	case []any:
		for i, c := range v {
			if err := noSecrets(c, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// build fills d from the fields; stem is the file's name without its
// extension.
func (r *reader) build(d *Definition, stem string) error {
	if err := r.subagent(); err != nil {
		return err
	}
	if err := r.identity(d, stem); err != nil {
		return err
	}
	if err := r.provider(d); err != nil {
		return err
	}
	if err := r.tuning(d); err != nil {
		return err
	}
	if err := r.selection(d); err != nil {
		return err
	}
	servers, err := r.servers(d)
	if err != nil {
		return err
	}
	d.Servers = servers
	return r.confinement(d)
}

// subagent returns ErrNotSubagent for a definition that is not one to run:
// OpenCode's primary agents and disabled ones.
func (r *reader) subagent() error {
	if fl, ok := r.fields[fMode]; ok {
		mode, err := text(fl)
		if err != nil {
			return err
		}
		switch mode {
		case "primary":
			return fmt.Errorf("mode: primary: %w", ErrNotSubagent)
		case "subagent", "all", "":
		default:
			return fmt.Errorf("%s: %s is not an OpenCode mode (primary, subagent, all)", fl.key, quote(mode))
		}
	}
	if fl, ok := r.fields[fDisable]; ok {
		off, isBool := fl.value.(bool)
		if !isBool && fl.value != nil {
			return fmt.Errorf("%s: must be true or false", fl.key)
		}
		if off {
			return fmt.Errorf("%s: true: %w", fl.key, ErrNotSubagent)
		}
	}
	return nil
}

// words reports whether s is lower-case letters and digits, with single
// separators (one of seps) between them.
func words(s, seps string) bool {
	prev := byte(0) // 0 at the start, 1 after a letter or digit, else the separator
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			prev = 1
		case strings.IndexByte(seps, c) >= 0 && prev == 1:
			prev = c
		default:
			return false
		}
	}
	return prev == 1
}

// isVariable reports a plain environment variable name: A-Z, 0-9 and _, not
// starting with a digit (upper says whether a-z is refused).
func isVariable(s string, upper bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'A' && c <= 'Z', !upper && c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}

// isToolName reports an MCP tool name: 1-128 of A-Z, a-z, 0-9, _, . and -.
func isToolName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// checkName checks an agent's or a server's name.
func checkName(key, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s: empty", key)
	case len(name) > MaxNameLength:
		return fmt.Errorf("%s: %d characters, more than %d", key, len(name), MaxNameLength)
	case !words(name, "-_"):
		return fmt.Errorf("%s: %s may hold only lower-case letters and digits, with single - or _ between them", key, quote(name))
	}
	return nil
}

func (r *reader) identity(d *Definition, stem string) error {
	if fl, ok := r.fields[fName]; ok && fl.value != nil {
		name, err := text(fl)
		if err != nil {
			return err
		}
		if err := checkName(fl.key, name); err != nil {
			return err
		}
		d.Name = name
	} else {
		if err := checkName("name", stem); err != nil {
			return fmt.Errorf("name: not set, and the file's name %s is not a valid one: %w", quote(stem), err)
		}
		d.Name = stem
	}
	var err error
	if d.Description, err = r.text(fDescription); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(d.Description); n > MaxDescriptionLength {
		return fmt.Errorf("%s: %d characters, more than %d", r.fields[fDescription].key, n, MaxDescriptionLength)
	}
	if fl, ok := r.fields[fInstructions]; ok {
		if d.Instructions, err = text(fl); err != nil {
			return err
		}
	}
	if fl, ok := r.fields[fPrompt]; ok && fl.value != nil {
		return fmt.Errorf("%s: a prompt read from elsewhere is not supported; write the prompt as the file's body", fl.key)
	}
	return nil
}

// provider reads the model, the provider and its endpoint, filling in the
// provider's defaults.
func (r *reader) provider(d *Definition) error {
	var err error
	if d.Model, err = r.text(fModel); err != nil {
		return err
	}
	if r.f == claude && d.Model == "inherit" {
		d.Model = "" // there is no parent model to inherit: the runner decides
	}
	if d.Provider, err = r.text(fProvider); err != nil {
		return err
	}
	block := map[string]any{}
	if r.f == opencode && d.Model != "" {
		// OpenCode writes provider/model.
		p, m, ok := strings.Cut(d.Model, "/")
		if !ok || m == "" || (p != "openai" && p != "anthropic") {
			return fmt.Errorf("model: %s: Zero runs OpenCode agents whose model is openai/... or anthropic/...; "+
				"other providers are configured outside the agent's file", quote(d.Model))
		}
		d.Provider, d.Model = p, m
	}
	if fl, ok := r.fields[fProviders]; ok && d.Provider != "" {
		if block, err = providerBlock(fl, d.Provider); err != nil {
			return err
		}
		if len(block) > 0 {
			d.Provider = "custom"
		}
	}
	if d.Provider == "" {
		d.Provider = r.f.provider
	}
	get := func(f string) (string, string, error) {
		if v, ok := block[f]; ok {
			s, err := text(field{join(fProviders, f), v})
			return s, join(fProviders, f), err
		}
		s, err := r.text(f)
		return s, r.key(f), err
	}
	base, baseKey, err := get(fBaseURL)
	if err != nil {
		return err
	}
	env, envKey, err := get(fEnvKey)
	if err != nil {
		return err
	}
	wire, wireKey, err := get(fWireAPI)
	if err != nil {
		return err
	}
	if r.f == codex && wire == "chat" {
		wire = wireChat // Codex's name for it
	}
	switch d.Provider {
	case "openai":
		base, env, wire = or(base, "https://api.openai.com/v1"), or(env, "OPENAI_API_KEY"), or(wire, wireResponses)
	case "anthropic":
		base, env, wire = or(base, "https://api.anthropic.com"), or(env, "ANTHROPIC_API_KEY"), or(wire, wireAnthropic)
	case "custom":
		for _, f := range []struct{ key, v string }{{baseKey, base}, {envKey, env}, {wireKey, wire}} {
			if f.v == "" {
				return fmt.Errorf("%s: required when model_provider is custom", f.key)
			}
		}
	default:
		return fmt.Errorf("%s: %s is not a provider Zero knows (openai, anthropic, custom)", r.key(fProvider), quote(d.Provider))
	}
	if d.BaseURL, err = checkURL(baseKey, base); err != nil {
		return err
	}
	if err := checkEnvKey(envKey, env); err != nil {
		return err
	}
	d.EnvKey = env
	switch wire {
	case wireChat, wireResponses, wireAnthropic:
		d.WireAPI = wire
	default:
		return fmt.Errorf("%s: %s is not a wire API Zero speaks (%s, %s, %s)", wireKey, quote(wire), wireChat, wireResponses, wireAnthropic)
	}
	return nil
}

// providerBlock returns Codex's block for the provider id, or none when the
// file has none for it.
func providerBlock(fl field, id string) (map[string]any, error) {
	all, ok := fl.value.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: must be a table of providers", fl.key)
	}
	v, ok := all[id]
	if !ok {
		return nil, nil
	}
	block, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: must be a table", fieldName(join(fl.key, id)))
	}
	for _, k := range sortedKeys(block) {
		switch k {
		case fBaseURL, fEnvKey, fWireAPI, "name":
		default:
			return nil, fmt.Errorf("%s: not a provider field Zero reads (name, base_url, env_key, wire_api)", fieldName(join(join(fl.key, id), k)))
		}
	}
	return block, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func checkEnvKey(key, name string) error {
	if !isVariable(name, true) || len(name) > 128 {
		return fmt.Errorf("%s: %s is not a plain environment variable name (A-Z, 0-9 and _, not starting with a digit)", key, quote(name))
	}
	if err := envscrub.Check(name, ""); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// checkURL accepts an https URL, or a plain http one to loopback judged on
// netguard's canonical host, and returns it with that host.
func checkURL(key, raw string) (string, error) {
	if strings.Contains(raw, "${") {
		return "", fmt.Errorf("%s: ${VAR} is not interpolated in a URL; only in a stdio server's env values and an HTTP server's header values", key)
	}
	u, err := netguard.Options{Schemes: netguard.HTTPSOrLoopbackHTTP}.CheckURL(raw)
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	if u.Fragment != "" || u.RawFragment != "" {
		return "", fmt.Errorf("%s: a URL with a #fragment is refused", key)
	}
	return u.String(), nil
}

// efforts are the reasoning efforts the providers take.
var efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

func (r *reader) tuning(d *Definition) error {
	if fl, ok := r.fields[fTemperature]; ok && fl.value != nil {
		var t float64
		switch v := fl.value.(type) {
		case int64:
			t = float64(v)
		case float64:
			t = v
		default:
			return fmt.Errorf("%s: must be a number", fl.key)
		}
		if math.IsNaN(t) || t < 0 || t > 2 {
			return fmt.Errorf("%s: must be from 0 to 2", fl.key)
		}
		d.Temperature = &t
	}
	var err error
	if d.ReasoningEffort, err = r.text(fReasoningEffort); err != nil {
		return err
	}
	if d.ReasoningEffort != "" && !slices.Contains(efforts, d.ReasoningEffort) {
		return fmt.Errorf("%s: %s is not one of %s", r.key(fReasoningEffort), quote(d.ReasoningEffort), strings.Join(efforts, ", "))
	}
	d.MaxTurns = DefaultMaxTurns
	if fl, ok := r.fields[fMaxTurns]; ok && fl.value != nil {
		n, isInt := fl.value.(int64)
		if !isInt || n < 1 || n > MaxMaxTurns {
			return fmt.Errorf("%s: must be a whole number from 1 to %d", fl.key, MaxMaxTurns)
		}
		d.MaxTurns = int(n)
	}
	return nil
}

// selection reads tools, disallowedTools and skills.
func (r *reader) selection(d *Definition) error {
	if fl, ok := r.fields[fTools]; ok {
		if m, isMap := fl.value.(map[string]any); isMap && r.f == opencode {
			if err := openCodeTools(fl.key, m, d); err != nil {
				return err
			}
		} else {
			sel, err := r.selectors(fl, true)
			if err != nil {
				return err
			}
			d.Tools = sel
		}
	}
	if fl, ok := r.fields[fDisallowedTools]; ok {
		sel, err := r.selectors(fl, false)
		if err != nil {
			return err
		}
		d.DisallowedTools = append(d.DisallowedTools, sel...)
	}
	if fl, ok := r.fields[fSkills]; ok {
		skills, err := list(fl)
		if err != nil {
			return err
		}
		for _, s := range skills {
			if len(s) > MaxNameLength || !words(s, "-") {
				return fmt.Errorf("%s: %s is not a skill name (lower-case letters, digits and single hyphens)", fl.key, quote(s))
			}
		}
		d.Skills = skills
	}
	return nil
}

// selector checks a tool selector, "server/tool" or "server/*". Claude
// Code's forms mcp__server__tool, mcp__server__* and mcp__server are
// rewritten so. ok is false for anything else: a tool of the host the format
// is written for (Read, Bash, ...).
func (r *reader) selector(s string) (sel string, ok bool) {
	if rest, mcp := strings.CutPrefix(s, "mcp__"); mcp && r.f == claude {
		server, tool, found := strings.Cut(rest, "__")
		if !found {
			tool = "*"
		}
		s = server + "/" + tool
	}
	server, tool, found := strings.Cut(s, "/")
	if !found || checkName("", server) != nil || (tool != "*" && !isToolName(tool)) {
		return "", false
	}
	return s, true
}

// selectors reads a list of selectors. What the format's host has and Zero's
// agents do not is refused where it would grant (grant), and dropped where
// it would deny: denying a tool no agent has holds anyway.
func (r *reader) selectors(fl field, grant bool) ([]string, error) {
	items, err := list(fl)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range items {
		sel, ok := r.selector(s)
		switch {
		case ok:
			out = append(out, sel)
		case grant && r.f != zeroMarkdown && r.f != zeroTOML:
			return nil, fmt.Errorf("%s: %s is a tool of %s, which Zero's agents do not have; select child MCP tools as server/tool or server/*",
				fl.key, quote(s), r.f.name)
		case grant || r.f == zeroMarkdown || r.f == zeroTOML:
			return nil, fmt.Errorf("%s: %s is not a selector (server/tool or server/*)", fl.key, quote(s))
		}
	}
	return out, nil
}

// openCodeTools reads OpenCode's tools map, tool name to true or false.
func openCodeTools(key string, m map[string]any, d *Definition) error {
	r := &reader{f: opencode}
	for _, name := range sortedKeys(m) {
		on, isBool := m[name].(bool)
		if !isBool {
			return fmt.Errorf("%s: must be true or false", fieldName(join(key, name)))
		}
		sel, ok := r.selector(name)
		switch {
		case ok && on:
			d.Tools = append(d.Tools, sel)
		case ok:
			d.DisallowedTools = append(d.DisallowedTools, sel)
		case on:
			return fmt.Errorf("%s: %s is a tool of OpenCode, which Zero's agents do not have; select child MCP tools as server/tool or server/*",
				key, quote(name))
		}
	}
	return nil
}

// confinement reads permission, sandbox and isolation, refusing every value
// Zero cannot honour.
func (r *reader) confinement(d *Definition) error {
	if fl, ok := r.fields[fPermission]; ok && fl.value != nil {
		if m, isMap := fl.value.(map[string]any); isMap && r.f == opencode {
			if err := openCodePermission(fl.key, m); err != nil {
				return err
			}
		} else {
			p, err := text(fl)
			if err != nil {
				return err
			}
			if !slices.Contains(AcceptedPermissions, p) {
				return fmt.Errorf("%s: %s is refused: agents run with no approval prompt, so only a mode that does not bypass approval "+
					"describes them (%s)", fl.key, quote(p), strings.Join(AcceptedPermissions, ", "))
			}
			d.Permission = p
		}
	}
	var err error
	if d.Sandbox, err = r.text(fSandbox); err != nil {
		return err
	}
	switch d.Sandbox {
	case "":
		d.Sandbox = "default"
	case "default", "read-only":
	default:
		return fmt.Errorf("%s: %s is refused: Zero cannot enforce it (default and read-only are accepted, and describe the agent)",
			r.key(fSandbox), quote(d.Sandbox))
	}
	if iso, err := r.text(fIsolation); err != nil {
		return err
	} else if iso != "" && iso != "none" {
		return fmt.Errorf("%s: %s is refused: agents run in the workspace itself, with no isolation (only none is accepted)",
			r.key(fIsolation), quote(iso))
	}
	if fl, ok := r.fields[fHooks]; ok && !empty(fl.value) {
		return fmt.Errorf("%s: refused: Zero does not run hooks, and a hook may be a check its author relies on", fl.key)
	}
	return nil
}

// openCodePermission refuses an OpenCode permission map that allows
// anything without asking.
func openCodePermission(key string, m map[string]any) error {
	for _, k := range sortedKeys(m) {
		at := join(key, k)
		switch v := m[k].(type) {
		case string:
			if v == "allow" {
				return fmt.Errorf("%s: allow is refused: it lets the agent act without approval (ask and deny are accepted)", fieldName(at))
			}
			if v != "ask" && v != "deny" {
				return fmt.Errorf("%s: %s is not ask, allow or deny", fieldName(at), quote(v))
			}
		case map[string]any:
			if err := openCodePermission(at, v); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: must be ask or deny", fieldName(at))
		}
	}
	return nil
}

func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	case string:
		return v == ""
	}
	return false
}

// key returns the name Zero's field f was written under.
func (r *reader) key(f string) string {
	if fl, ok := r.fields[f]; ok {
		return fieldName(fl.key)
	}
	return f
}

// text returns the text of Zero's field f, "" when absent.
func (r *reader) text(f string) (string, error) {
	fl, ok := r.fields[f]
	if !ok {
		return "", nil
	}
	return text(fl)
}

// text returns a field's text; null is "".
func text(fl field) (string, error) {
	switch v := fl.value.(type) {
	case nil:
		return "", nil
	case string:
		if strings.IndexByte(v, 0) >= 0 {
			return "", fmt.Errorf("%s: holds a NUL byte", fieldName(fl.key))
		}
		return v, nil
	}
	return "", fmt.Errorf("%s: must be text", fieldName(fl.key))
}

// list returns a list of text: a list, or one text of items separated by
// commas.
func list(fl field) ([]string, error) {
	var out []string
	switch v := fl.value.(type) {
	case nil:
	case string:
		for item := range strings.SplitSeq(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	case []any:
		for i, item := range v {
			s, err := text(field{fmt.Sprintf("%s[%d]", fl.key, i), item})
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	default:
		return nil, fmt.Errorf("%s: must be a list of text", fieldName(fl.key))
	}
	return out, nil
}

var errBothTransports = errors.New("a server is either stdio (command, args, env) or streamable HTTP (url, headers), not both")
