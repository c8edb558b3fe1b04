package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/zero-dev/zero/internal/pin"
)

// ErrManifest reports a plugin.json that Zero refuses.
var ErrManifest = errors.New("invalid plugin.json")

// An error lists at most maxProblems problems, each cut to maxProblem
// bytes: a manifest chooses the keys and values that problems quote.
const (
	maxProblems = 20
	maxProblem  = 400
)

// topKeys are the top-level keys of an Agent Plugins 1.0 manifest.
var topKeys = []string{"$schema", "name", "version", "description", "author", "homepage", "repository", "license", "keywords", "extensions"}

// Keys of Zero's part, of a tool, of capabilities and of limits.
var (
	extensionKeys  = []string{"entry", "capabilities", "tools"}
	toolKeys       = []string{"name", "description", "parameters", "required", "capabilities"}
	capabilityKeys = []string{"fs.read", "fs.write", "network.hosts", "process", "secrets", "limits"}
	limitKeys      = []string{"timeout_ms", "memory_mib", "processes"}
)

// zeroPart is how errors name Zero's part of a manifest.
var zeroPart = "extensions[" + strconv.Quote(ExtensionKey) + "]"

// Parse reads a plugin.json. It refuses, with an error wrapping
// [ErrManifest] that lists every problem it found (up to a bound), a
// manifest that is over [MaxManifest] bytes, is not valid UTF-8 or JSON,
// repeats a key anywhere, or has a top-level key that Agent Plugins 1.0 does
// not define. Keys are compared exactly, case included.
//
// The manifest must have a name ([NameProblem]). Zero's part, under
// extensions[ExtensionKey], is read as strictly: an unknown key at any level
// of it is refused, as is a missing or unsafe entry (a relative path to a .js
// file inside the plugin's folder), an empty tool list, a tool name that is
// not a valid MCP tool name or that another tool has (case aside),
// parameters that are not a usable JSON Schema of "type": "object" (remote
// $refs are refused, never fetched), a "required" inside parameters (the
// tool's own required list says it, once), a required name that is not
// among parameters.properties or is listed twice, invalid capabilities
// ([Capabilities.Check]), limits on a tool (they are the plugin's), and a
// tool capability beyond the plugin's. Other keys of "extensions" are kept
// in [Manifest].Extensions and not read. A manifest without Zero's part has
// a nil Zero.
//
// Parameters are kept in canonical JSON, the form the tool hash covers.
func Parse(data []byte) (*Manifest, error) {
	if len(data) > MaxManifest {
		return nil, fmt.Errorf("%w: it is %d bytes, over the %d bytes (256 KiB) a manifest may be", ErrManifest, len(data), MaxManifest)
	}
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return nil, fmt.Errorf("%w: it starts with a byte order mark; save it as UTF-8 without one", ErrManifest)
	}
	if _, err := pin.CanonicalJSON(data); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrManifest, shorten(err.Error()))
	}
	var p parser
	m := p.manifest(data)
	if err := p.err(); err != nil {
		return nil, err
	}
	return m, nil
}

// A parser gathers the problems of one manifest.
type parser struct{ problems []string }

// bad records a problem at where (empty for the manifest as a whole).
func (p *parser) bad(where, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if where != "" {
		msg = where + ": " + msg
	}
	p.problems = append(p.problems, shorten(msg))
}

// quote quotes a value a manifest chose for a message, cut to 64 bytes.
func quote(s string) string {
	const max = 64
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}

// shorten cuts msg to maxProblem bytes.
func shorten(msg string) string {
	if len(msg) <= maxProblem {
		return msg
	}
	cut := maxProblem
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}

// err returns the problems as one error, or nil.
func (p *parser) err() error {
	switch n := len(p.problems); {
	case n == 0:
		return nil
	case n > maxProblems:
		return fmt.Errorf("%w: %s; and %d more problems", ErrManifest, strings.Join(p.problems[:maxProblems], "; "), n-maxProblems)
	default:
		return fmt.Errorf("%w: %s", ErrManifest, strings.Join(p.problems, "; "))
	}
}

func (p *parser) manifest(data []byte) *Manifest {
	top, ok := p.object("top level", "a JSON object", data, topKeys,
		"Agent Plugins 1.0 defines only "+strings.Join(topKeys, ", ")+"; Zero's settings go under "+zeroPart)
	if !ok {
		return nil
	}
	m := &Manifest{}
	m.Schema, _ = p.str(`"$schema"`, top["$schema"])
	if raw, ok := top["name"]; !ok {
		p.bad("", `"name" is missing: every plugin has one`)
	} else if name, ok := p.str(`"name"`, raw); ok {
		if why := NameProblem(name); why != "" {
			p.bad("", "name %s %s", quote(name), why)
		}
		m.Name = name
	}
	m.Version, _ = p.str(`"version"`, top["version"])
	m.Description, _ = p.str(`"description"`, top["description"])
	m.Homepage, _ = p.str(`"homepage"`, top["homepage"])
	m.License, _ = p.str(`"license"`, top["license"])
	m.Keywords, _ = p.strs(`"keywords"`, top["keywords"])
	m.Author = p.stringOrObject(`"author"`, top["author"])
	m.Repository = p.stringOrObject(`"repository"`, top["repository"])
	raw, ok := top["extensions"]
	if !ok {
		return m
	}
	ext, ok := p.object(`"extensions"`, "an object", raw, nil, "")
	if !ok {
		return m
	}
	for key, value := range ext {
		if key == ExtensionKey {
			m.Zero = p.extension(value)
			continue
		}
		if m.Extensions == nil {
			m.Extensions = map[string]json.RawMessage{}
		}
		m.Extensions[key] = value
	}
	return m
}

// extension reads Zero's part.
func (p *parser) extension(raw json.RawMessage) *Extension {
	obj, ok := p.object(zeroPart, "an object", raw, extensionKeys, "")
	if !ok {
		return nil
	}
	e := &Extension{}
	if raw, ok := obj["entry"]; !ok {
		p.bad(zeroPart, `"entry" is missing: name the plugin's .js file, for example "plugin.js"`)
	} else if entry, ok := p.str(zeroPart+".entry", raw); ok {
		if why := entryProblem(entry); why != "" {
			p.bad(zeroPart, "entry %s %s", quote(entry), why)
		}
		e.Entry = entry
	}
	if raw, ok := obj["capabilities"]; ok {
		e.Capabilities = p.capabilities(zeroPart+".capabilities", raw, true)
	}
	raw, ok = obj["tools"]
	if !ok {
		p.bad(zeroPart, `"tools" is missing: a plugin offers at least one tool`)
		return e
	}
	items, ok := p.array(zeroPart+".tools", raw)
	if !ok {
		return e
	}
	if len(items) == 0 {
		p.bad(zeroPart, `"tools" is empty: a plugin offers at least one tool`)
	}
	seen := map[string]string{} // lower-case name to the name
	for i, item := range items {
		t := p.tool(i, item, e.Capabilities)
		if t.Name != "" {
			folded := strings.ToLower(t.Name)
			if other, dup := seen[folded]; dup && other == t.Name {
				p.bad(zeroPart, "two tools are named %s: each tool's name must be its own", quote(t.Name))
			} else if dup {
				p.bad(zeroPart, "tools %s and %s differ only in case: a model would mistake one for the other", quote(other), quote(t.Name))
			} else {
				seen[folded] = t.Name
			}
		}
		e.Tools = append(e.Tools, t)
	}
	return e
}

// tool reads the i-th tool; plugin is the plugin's capabilities.
func (p *parser) tool(i int, raw json.RawMessage, plugin Capabilities) Tool {
	where := fmt.Sprintf("%s.tools[%d]", zeroPart, i)
	obj, ok := p.object(where, "an object", raw, toolKeys, "")
	if !ok {
		return Tool{}
	}
	var t Tool
	if raw, ok := obj["name"]; !ok {
		p.bad(where, `"name" is missing`)
	} else if name, ok := p.str(where+".name", raw); ok {
		if why := ToolNameProblem(name); why != "" {
			p.bad(where, "tool name %s %s", quote(name), why)
		} else {
			t.Name = name
			where = "tool " + quote(name)
		}
	}
	t.Description, _ = p.str(where+".description", obj["description"])
	var properties map[string]json.RawMessage
	if raw, ok := obj["parameters"]; !ok {
		p.bad(where, `"parameters" is missing: write {"type": "object"} for a tool that takes none`)
	} else {
		t.Parameters, properties = p.parameters(where+".parameters", raw)
	}
	if raw, ok := obj["required"]; ok {
		t.Required, _ = p.strs(where+".required", raw)
		seen := map[string]bool{}
		for _, name := range t.Required {
			switch {
			case seen[name]:
				p.bad(where, "required names %s twice", quote(name))
			case t.Parameters != nil && properties[name] == nil:
				p.bad(where, "required names %s, which is not among parameters.properties", quote(name))
			}
			seen[name] = true
		}
	}
	if raw, ok := obj["capabilities"]; ok {
		problems := len(p.problems)
		t.Capabilities = p.capabilities(where+".capabilities", raw, false)
		if len(p.problems) > problems {
			return t
		}
		within := t.Capabilities
		within.Limits = plugin.Limits // a tool has none: it runs under the plugin's
		for _, what := range within.Beyond(plugin) {
			p.bad(where+".capabilities", "%s is not among the plugin's capabilities: a tool may use only what the plugin requests, so add it there too", what)
		}
	}
	return t
}

// parameters checks a tool's parameters and returns them in canonical JSON
// with their properties, or nil.
func (p *parser) parameters(where string, raw json.RawMessage) (json.RawMessage, map[string]json.RawMessage) {
	obj, ok := p.object(where, "a JSON Schema object", raw, nil, "")
	if !ok {
		return nil, nil
	}
	problems := len(p.problems)
	if typ, ok := obj["type"]; !ok {
		p.bad(where, `"type" is missing: a tool's parameters are a JSON Schema of "type": "object"`)
	} else if s, ok := p.str(where+".type", typ); ok && s != "object" {
		p.bad(where, `"type" is %s: a tool's parameters are a JSON Schema of "type": "object"`, quote(s))
	}
	if _, ok := obj["required"]; ok {
		p.bad(where, `"required" belongs in the tool's own "required" list, beside "parameters", so that it is said once`)
	}
	var properties map[string]json.RawMessage
	if raw, ok := obj["properties"]; ok {
		properties, _ = p.object(where+".properties", "an object of property schemas", raw, nil, "")
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		p.bad(where, "not a JSON Schema: %v", err)
	} else if _, err := s.Resolve(&jsonschema.ResolveOptions{Loader: refuseRemote}); errors.Is(err, errRemoteRef) {
		p.bad(where, "%v: Zero never fetches a schema; put the definition under $defs and refer to it with #/$defs/NAME", err)
	} else if err != nil {
		p.bad(where, "not a JSON Schema Zero can use: %v", err)
	}
	if len(p.problems) > problems {
		return nil, nil
	}
	canon, err := pin.CanonicalJSON(raw)
	if err != nil { // Parse checked the whole manifest
		p.bad(where, "%v", err)
		return nil, nil
	}
	return canon, properties
}

// errRemoteRef reports a $ref to a schema outside the parameters.
var errRemoteRef = errors.New("refers to a remote schema")

// refuseRemote is the schema loader: it loads nothing.
func refuseRemote(u *url.URL) (*jsonschema.Schema, error) {
	return nil, errRemoteRef
}

// capabilities reads a capabilities object: the plugin's if plugin is
// true, else a tool's, which has no limits.
func (p *parser) capabilities(where string, raw json.RawMessage, plugin bool) Capabilities {
	var c Capabilities
	obj, ok := p.object(where, "an object", raw, capabilityKeys, "")
	if !ok {
		return c
	}
	c.FSRead, _ = p.strs(where+`["fs.read"]`, obj["fs.read"])
	c.FSWrite, _ = p.strs(where+`["fs.write"]`, obj["fs.write"])
	c.NetworkHosts, _ = p.strs(where+`["network.hosts"]`, obj["network.hosts"])
	c.Secrets, _ = p.strs(where+".secrets", obj["secrets"])
	if raw, ok := obj["process"]; ok {
		c.Process, _ = p.boolean(where+".process", raw)
	}
	if raw, ok := obj["limits"]; ok && !plugin {
		p.bad(where, `"limits" are the plugin's, not a tool's: one process runs every tool, so set them in %s.capabilities`, zeroPart)
	} else if ok {
		c.Limits = p.limits(where+".limits", raw)
	}
	for _, problem := range c.problems() {
		p.bad(where, "%s", problem)
	}
	return c
}

// limits reads a limits object.
func (p *parser) limits(where string, raw json.RawMessage) *Limits {
	obj, ok := p.object(where, "an object", raw, limitKeys, "")
	if !ok {
		return nil
	}
	var l Limits
	l.TimeoutMS, _ = p.integer(where+".timeout_ms", obj["timeout_ms"])
	l.MemoryMiB, _ = p.integer(where+".memory_mib", obj["memory_mib"])
	l.Processes, _ = p.integer(where+".processes", obj["processes"])
	return &l
}

// kind names the kind of a JSON value for an error.
func kind(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "true or false"
	case 'n':
		return "null"
	}
	return "a number"
}

// object reads raw as a JSON object. When allowed is not nil, a key not in
// it is a problem, with hint (or the allowed keys) said after it.
func (p *parser) object(where, what string, raw json.RawMessage, allowed []string, hint string) (map[string]json.RawMessage, bool) {
	if k := kind(raw); k != "an object" {
		p.bad(where, "must be %s, not %s", what, k)
		return nil, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil { // Parse checked the whole manifest
		p.bad(where, "%v", err)
		return nil, false
	}
	if allowed == nil {
		return obj, true
	}
	if hint == "" {
		hint = "allowed: " + strings.Join(allowed, ", ")
	}
	var unknown []string
	for key := range obj {
		if !slices.Contains(allowed, key) {
			unknown = append(unknown, key)
		}
	}
	slices.Sort(unknown)
	for _, key := range unknown {
		p.bad(where, "unknown key %s (%s)", quote(key), hint)
	}
	return obj, true
}

// array reads raw as a JSON array.
func (p *parser) array(where string, raw json.RawMessage) ([]json.RawMessage, bool) {
	if k := kind(raw); k != "an array" {
		p.bad(where, "must be an array, not %s", k)
		return nil, false
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		p.bad(where, "%v", err)
		return nil, false
	}
	return items, true
}

// str reads raw as a string; a missing value (nil raw) is "" and no
// problem.
func (p *parser) str(where string, raw json.RawMessage) (string, bool) {
	if raw == nil {
		return "", false
	}
	var s string
	if k := kind(raw); k != "a string" {
		p.bad(where, "must be a string, not %s", k)
		return "", false
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		p.bad(where, "%v", err)
		return "", false
	}
	return s, true
}

// strs reads raw as an array of strings; a missing value is nil and no
// problem.
func (p *parser) strs(where string, raw json.RawMessage) ([]string, bool) {
	if raw == nil {
		return nil, false
	}
	items, ok := p.array(where, raw)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(items))
	all := true
	for i, item := range items {
		s, ok := p.str(fmt.Sprintf("%s[%d]", where, i), item)
		out = append(out, s)
		all = all && ok
	}
	if !all {
		return nil, false
	}
	return out, true
}

// boolean reads raw as true or false.
func (p *parser) boolean(where string, raw json.RawMessage) (bool, bool) {
	var b bool
	if k := kind(raw); k != "true or false" {
		p.bad(where, "must be true or false, not %s", k)
		return false, false
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		p.bad(where, "%v", err)
		return false, false
	}
	return b, true
}

// integer reads raw as a whole number written without a fraction or an
// exponent; a missing value is 0 and no problem.
func (p *parser) integer(where string, raw json.RawMessage) (int, bool) {
	if raw == nil {
		return 0, false
	}
	if k := kind(raw); k != "a number" {
		p.bad(where, "must be a whole number, not %s", k)
		return 0, false
	}
	s := string(bytes.TrimSpace(raw))
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		p.bad(where, "%s is not a whole number in range", s)
		return 0, false
	}
	return int(n), true
}

// stringOrObject reads raw as a string or an object, kept as written; a
// missing value is nil.
func (p *parser) stringOrObject(where string, raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	if k := kind(raw); k != "a string" && k != "an object" {
		p.bad(where, "must be a string or an object, not %s", k)
		return nil
	}
	return raw
}

// namePattern is a plugin's name: the servers' rule, in lower case only.
var namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`) })

// NameProblem returns why name cannot name a plugin, or "". A plugin's name
// is 1 to 64 lower-case ASCII letters, digits, '.', '_' and '-', starting
// with a letter or a digit: the rule for servers' names, in lower case
// only, as the name becomes a folder's name and the prefix of the names its
// tools are offered under, and "Notes" and "notes" would be one folder on a
// file system that folds case.
func NameProblem(name string) string {
	if namePattern().MatchString(name) {
		return ""
	}
	return "is not a valid plugin name: want 1-64 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit"
}

// MaxToolName is the longest name MCP allows a tool.
const MaxToolName = 128

// ToolNameProblem returns why name is not a valid MCP tool name, or "":
// 1 to 128 ASCII letters, digits, '_', '-' and '.'.
func ToolNameProblem(name string) string {
	if name == "" {
		return "is empty"
	}
	if len(name) > MaxToolName {
		return fmt.Sprintf("is %d bytes long: MCP allows at most %d", len(name), MaxToolName)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Sprintf("holds %q: an MCP tool name is made of ASCII letters, digits, '_', '-' and '.'", r)
		}
	}
	return ""
}

// entrySegment is one segment of an entry's path.
var entrySegment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`) })

// entryProblem returns why entry cannot be a plugin's entry file, or "".
func entryProblem(entry string) string {
	const want = "must be a relative path to a .js file inside the plugin's folder, made of letters, digits, '.', '_', '-' and '/' (for example plugin.js or dist/plugin.js)"
	if len(entry) > 255 || !strings.HasSuffix(entry, ".js") {
		return want
	}
	for seg := range strings.SplitSeq(entry, "/") {
		if !entrySegment().MatchString(seg) {
			return want
		}
	}
	return ""
}
