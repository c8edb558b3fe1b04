package definitions

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/zero-dev/zero/internal/guard/envscrub"
)

// servers reads mcp_servers: a table of name to server, or, in Claude Code's
// files, a list of such tables. d's EnvKey must be set: no server may be
// given the provider's key.
func (r *reader) servers(d *Definition) ([]Server, error) {
	fl, ok := r.fields[fServers]
	if !ok || fl.value == nil {
		return nil, nil
	}
	entries := map[string]any{}
	switch v := fl.value.(type) {
	case map[string]any:
		entries = v
	case []any:
		if r.f != claude {
			return nil, fmt.Errorf("%s: must be a table of server name to server", fl.key)
		}
		for i, item := range v {
			at := fmt.Sprintf("%s[%d]", fl.key, i)
			m, isMap := item.(map[string]any)
			if !isMap {
				return nil, fmt.Errorf("%s: a server configured outside this file is not read; define it here as name: {command, args, env} or name: {url, headers}", at)
			}
			for _, name := range sortedKeys(m) {
				if _, dup := entries[name]; dup {
					return nil, fmt.Errorf("%s: server %s is defined twice", at, quote(name))
				}
				entries[name] = m[name]
			}
		}
	default:
		return nil, fmt.Errorf("%s: must be a table of server name to server", fl.key)
	}
	var out []Server
	for _, name := range sortedKeys(entries) {
		at := join(fl.key, name)
		if err := checkName(fieldName(at), name); err != nil {
			return nil, fmt.Errorf("%w (a server's name)", err)
		}
		m, isMap := entries[name].(map[string]any)
		if !isMap {
			return nil, fmt.Errorf("%s: must be a table: {command, args, env} or {url, headers}", fieldName(at))
		}
		s, skip, err := r.server(at, name, m, d)
		if err != nil {
			return nil, err
		}
		if !skip {
			out = append(out, s)
		}
	}
	return out, nil
}

// server reads one server; skip reports one Codex marks enabled = false.
func (r *reader) server(at, name string, m map[string]any, d *Definition) (s Server, skip bool, err error) {
	fields := map[string]field{}
	for _, k := range sortedKeys(m) {
		canon, ok := r.f.serverKeys[k]
		if !ok {
			if slices.Contains(r.f.serverIgnored, k) {
				continue
			}
			return Server{}, false, fmt.Errorf("%s: not a server field of %s's definitions", fieldName(join(at, k)), r.f.name)
		}
		fields[canon] = field{join(at, k), m[k]}
	}
	s.Name = name
	str := func(f string) (string, error) { return text(fields[f]) }
	if fl, ok := fields["enabled"]; ok {
		on, isBool := fl.value.(bool)
		if !isBool {
			return Server{}, false, fmt.Errorf("%s: must be true or false", fieldName(fl.key))
		}
		if !on {
			return Server{}, true, nil
		}
	}
	if s.Command, err = str("command"); err != nil {
		return Server{}, false, err
	}
	rawURL, err := str("url")
	if err != nil {
		return Server{}, false, err
	}
	kind, err := str("type")
	if err != nil {
		return Server{}, false, err
	}
	switch {
	case s.Command != "" && rawURL != "":
		return Server{}, false, fmt.Errorf("%s: %w", fieldName(at), errBothTransports)
	case s.Command == "" && rawURL == "":
		return Server{}, false, fmt.Errorf("%s: neither command nor url; a server is stdio (command, args, env) or streamable HTTP (url, headers)", fieldName(at))
	}
	stdio := s.Command != ""
	switch kind {
	case "", "stdio", "http", "streamable-http":
		if kind != "" && (kind == "stdio") != stdio {
			return Server{}, false, fmt.Errorf("%s: %s does not match the server's %s", fieldName(join(at, "type")), quote(kind),
				map[bool]string{true: "command", false: "url"}[stdio])
		}
	default:
		return Server{}, false, fmt.Errorf("%s: %s is not a transport Zero's client speaks (stdio, http)", fieldName(join(at, "type")), quote(kind))
	}
	for _, f := range []string{"cwd"} {
		if fl, ok := fields[f]; ok && !empty(fl.value) {
			return Server{}, false, fmt.Errorf("%s: refused: a stdio server runs in the workspace's root", fieldName(fl.key))
		}
	}
	if stdio {
		err = r.stdio(&s, fields, d.EnvKey)
	} else {
		err = r.http(&s, rawURL, fields, d.EnvKey)
	}
	if err != nil {
		return Server{}, false, err
	}
	// Codex names a server's tools on the server.
	for f, into := range map[string]*[]string{"enabled_tools": &d.Tools, "disabled_tools": &d.DisallowedTools} {
		fl, ok := fields[f]
		if !ok {
			continue
		}
		tools, err := list(fl)
		if err != nil {
			return Server{}, false, err
		}
		for _, t := range tools {
			if !isToolName(t) {
				return Server{}, false, fmt.Errorf("%s: %s is not a tool name", fieldName(fl.key), quote(t))
			}
			*into = append(*into, name+"/"+t)
		}
	}
	return s, false, nil
}

func (r *reader) stdio(s *Server, fields map[string]field, envKey string) error {
	for _, f := range []string{"url", "headers", "env_headers", "bearer_env"} {
		if fl, ok := fields[f]; ok && !empty(fl.value) {
			return fmt.Errorf("%s: a stdio server (command) has no %s", fieldName(fl.key), f)
		}
	}
	if strings.Contains(s.Command, "${") {
		return fmt.Errorf("%s: ${VAR} is not interpolated in a command; only in env values and header values", fieldName(fields["command"].key))
	}
	if fl, ok := fields["args"]; ok {
		if _, isText := fl.value.(string); isText {
			return fmt.Errorf("%s: must be a list of arguments", fieldName(fl.key))
		}
		args, err := list(fl)
		if err != nil {
			return err
		}
		for _, a := range args {
			if strings.Contains(a, "${") {
				return fmt.Errorf("%s: ${VAR} is not interpolated in args; only in env values and header values", fieldName(fl.key))
			}
		}
		s.Args = args
	}
	env, err := textMap(fields["env"])
	if err != nil {
		return err
	}
	if fl, ok := fields["env_vars"]; ok {
		names, err := list(fl)
		if err != nil {
			return err
		}
		for _, n := range names {
			if _, set := env[n]; !set {
				env[n] = "${" + n + "}"
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(env)) {
		at := fieldName(join(fields["env"].key, name))
		if err := envscrub.Check(name, env[name]); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		if err := interpolated(at, name, env[name], envKey); err != nil {
			return err
		}
	}
	if len(env) > 0 {
		s.Env = env
	}
	return nil
}

func (r *reader) http(s *Server, raw string, fields map[string]field, envKey string) error {
	for _, f := range []string{"args", "env", "env_vars"} {
		if fl, ok := fields[f]; ok && !empty(fl.value) {
			return fmt.Errorf("%s: an HTTP server (url) has no %s", fieldName(fl.key), f)
		}
	}
	u, err := checkURL(fieldName(fields["url"].key), raw)
	if err != nil {
		return err
	}
	s.URL = u
	headers, err := textMap(fields["headers"])
	if err != nil {
		return err
	}
	// Codex's headers whose values are environment variables.
	envHeaders, err := textMap(fields["env_headers"])
	if err != nil {
		return err
	}
	for _, h := range slices.Sorted(maps.Keys(envHeaders)) {
		if err := checkEnvKey(fieldName(join(fields["env_headers"].key, h)), envHeaders[h]); err != nil {
			return err
		}
		headers[h] = "${" + envHeaders[h] + "}"
	}
	if fl, ok := fields["bearer_env"]; ok {
		v, err := text(fl)
		if err != nil {
			return err
		}
		if err := checkEnvKey(fieldName(fl.key), v); err != nil {
			return err
		}
		headers["Authorization"] = "Bearer ${" + v + "}"
	}
	for _, h := range slices.Sorted(maps.Keys(headers)) {
		at := fieldName(join(fields["headers"].key, h))
		if !httpguts.ValidHeaderFieldName(h) {
			return fmt.Errorf("%s: not a valid header name", at)
		}
		if !httpguts.ValidHeaderFieldValue(headers[h]) {
			return fmt.Errorf("%s: the value holds a character a header may not", at)
		}
		if err := interpolated(at, h, headers[h], envKey); err != nil {
			return err
		}
	}
	if len(headers) > 0 {
		s.Headers = headers
	}
	return nil
}

// textMap reads a table of name to text; an absent field is an empty table.
func textMap(fl field) (map[string]string, error) {
	out := map[string]string{}
	switch v := fl.value.(type) {
	case nil:
	case map[string]any:
		for k, item := range v {
			s, err := text(field{join(fl.key, k), item})
			if err != nil {
				return nil, err
			}
			out[k] = s
		}
	default:
		return nil, fmt.Errorf("%s: must be a table of name to text", fieldName(fl.key))
	}
	return out, nil
}

// interpolated checks the ${VAR} references of an env or header value named
// name: each well formed, none the provider's key; and a value that holds a
// credential (by its name) must come from a variable, never be written here.
func interpolated(at, name, value, envKey string) error {
	refs := 0
	for rest := value; ; refs++ {
		_, after, found := strings.Cut(rest, "${")
		if !found {
			break
		}
		ref, tail, closed := strings.Cut(after, "}")
		switch {
		case !closed:
			return fmt.Errorf("%s: a ${ not closed by }", at)
		case !isVariable(ref, false):
			return fmt.Errorf("%s: ${%s} does not name a variable", at, strings.ToValidUTF8(cut(ref, 64), ""))
		case ref == envKey:
			return fmt.Errorf("%s: ${%s} is the provider's key, which no child server is given", at, ref)
		}
		rest = tail
	}
	if refs == 0 && holdsCredential(name) {
		return fmt.Errorf("%s: a literal credential is refused; write ${VAR} and keep the value in the environment", at)
	}
	return nil
}

// credentialHeaders are headers that carry a credential (lower case).
var credentialHeaders = []string{"authorization", "proxy-authorization", "cookie"}

// credentialSuffixes end the names of variables and headers that hold a
// credential (in lower case, without "_" and "-").
var credentialSuffixes = []string{"apikey", "token", "secret", "password", "key", "credentials", "auth"}

// holdsCredential reports a header or variable name whose value is a
// credential: Authorization, Cookie, X-Api-Key, GITHUB_TOKEN, ...
func holdsCredential(name string) bool {
	if slices.Contains(credentialHeaders, strings.ToLower(name)) {
		return true
	}
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(name))
	for _, s := range credentialSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
