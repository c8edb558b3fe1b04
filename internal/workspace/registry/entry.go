// Package registry reads the MCP Registry (the official one at
// registry.modelcontextprotocol.io, or another that speaks its API): a
// [Client] lists and gets entries through the workspace's netguard client, a
// [Store] caches them and their listing pages in the workspace database, so
// that a page renders what is cached without waiting on the registry, and
// searches the cache.
//
// Every entry's server.json is untrusted input. [Parse] reads it strictly,
// on every field Zero uses, and ignores the others, which never reach a
// command, a URL or a page: an entry that fails is left out whole, never
// shown half-parsed. An icon an entry declares is fetched by the server
// ([Icons]), never by the browser, and kept as a data: URL. Turning an
// entry into a server's draft is derive.go's.
package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/pin"
)

// MaxEntry bounds the bytes of one server.json.
const MaxEntry = 1 << 20 // 1 MiB

// Bounds on what an entry declares, so that a page showing one stays small.
const (
	maxItems       = 64   // packages, remotes, icons, inputs of one list, choices
	maxText        = 100  // runes in a description or a title, as the registry's schema says
	maxInputText   = 2000 // runes in an input's description, default, value or placeholder
	maxInstruction = 8000 // runes in postInstallInstructions
	maxVersion     = 255  // bytes in a version
	maxURL         = 2048 // bytes in a URL
	maxProblems    = 10   // problems listed in one error
	maxQuoted      = 64   // bytes of a value quoted in a problem
	maxIdentifier  = 255  // bytes in a package identifier
	maxName        = 200  // bytes in a server's name
	maxInputName   = 128  // bytes in a variable's or header's name
	officialKey    = "io.modelcontextprotocol.registry/official"
	statusActive   = "active" // Meta.Status
	statusDeprec   = "deprecated"
	statusDeleted  = "deleted"
)

// ErrEntry reports a server.json that Zero refuses; the message names each
// field at fault.
var ErrEntry = errors.New("invalid registry entry")

// An Entry is what Zero reads of one server.json. Every string is as the
// entry wrote it: data, to be escaped wherever it is shown.
type Entry struct {
	Name        string // reverse-DNS namespace/name, e.g. io.github.user/weather
	Title       string
	Description string
	Version     string // exact, never a range
	WebsiteURL  string
	Repository  *Repository
	Icons       []Icon
	Packages    []Package
	Remotes     []Remote
	// PostInstallInstructions is text to show, never to run.
	PostInstallInstructions string
}

// A Repository is where an entry says its source is.
type Repository struct {
	URL, Source, ID, Subfolder string
}

// A Package is one way to run the server locally.
type Package struct {
	RegistryType    string // npm, pypi, nuget, oci or mcpb
	RegistryBaseURL string
	// Identifier is the package's name (npm, pypi, nuget), its image
	// reference (oci) or its https download URL (mcpb).
	Identifier string
	Version    string // exact; "" only for oci and mcpb, whose identifier says it
	FileSHA256 string // lower-case hex; required for mcpb
	// RuntimeHint is what the entry suggests running it with; Zero derives
	// the runtime from RegistryType and shows the hint as data only.
	RuntimeHint             string
	Transport               Transport
	RuntimeArguments        []Argument
	PackageArguments        []Argument
	EnvironmentVariables    []Input
	PostInstallInstructions string
}

// A Transport is how a package speaks MCP: stdio, or streamable-http or
// sse at URL.
type Transport struct {
	Type    string
	URL     string
	Headers []Input
}

// A Remote is a server that runs elsewhere, at URL, which may hold
// {variables}.
type Remote struct {
	Type      string // streamable-http or sse
	URL       string
	Headers   []Input
	Variables map[string]Input
}

// An Input is a value a person may be asked for: an environment variable, a
// header, an argument's value or a variable of one.
type Input struct {
	Name        string // the variable's or header's name; "" for an argument's value or a variable
	Description string
	IsRequired  bool
	IsSecret    bool
	Default     string
	Value       string // fixed by the entry; may hold {variables}
	Placeholder string
	Choices     []string
	Format      string // string (""), number, boolean or filepath
	Variables   map[string]Input
}

// An Argument is one command-line argument of a package or its runtime.
type Argument struct {
	Type       string // positional or named
	Name       string // a named argument's flag, dashes included
	ValueHint  string // a positional argument's label, not part of the command line
	IsRepeated bool
	Input
}

// Meta is what the registry says of an entry, outside the entry itself
// (the API answer's _meta).
type Meta struct {
	Status        string // active, deprecated or deleted
	StatusMessage string
	IsLatest      bool
	PublishedAt   time.Time
	UpdatedAt     time.Time
}

// Parse reads one server.json: at most MaxEntry bytes of valid UTF-8 JSON
// without a repeated key, an object whose used fields are each checked
// (see the package doc). Keys are compared exactly, case included; a key
// Zero does not use is ignored. It refuses, with an error wrapping
// [ErrEntry] that names each field at fault: a name that is not reverse-DNS
// namespace/name; a version or package version that is a range, "latest" or
// holds a character outside letters, digits, '.', '+', '-' and '_'; a
// missing description; a URL that is not absolute http(s) (https for icons
// and mcpb); an unknown package or transport type; an identifier that is
// not a name of its package registry; an mcpb package without a
// lower-case hex fileSha256; a variable or header name that is not one; and
// a value of the wrong JSON type, null included.
func Parse(data []byte) (*Entry, error) {
	if len(data) > MaxEntry {
		return nil, fmt.Errorf("%w: %d bytes, over the %d-byte (1 MiB) limit", ErrEntry, len(data), MaxEntry)
	}
	if _, err := pin.CanonicalJSON(data); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrEntry, cut(err.Error(), 300))
	}
	var p parser
	e := p.entry(data)
	if err := p.err(); err != nil {
		return nil, err
	}
	return e, nil
}

// parseMeta reads the registry's _meta of an API answer (raw may be nil).
func parseMeta(raw json.RawMessage) (Meta, error) {
	m := Meta{Status: statusActive}
	var p parser
	top, ok := object(&p, "_meta", raw)
	if !ok {
		return m, p.err()
	}
	off, ok := object(&p, "_meta."+officialKey, top[officialKey])
	if !ok {
		return m, p.err()
	}
	const where = "_meta.official"
	if s, ok := get[string](&p, where+".status", off["status"]); ok {
		if !slices.Contains([]string{statusActive, statusDeprec, statusDeleted}, s) {
			p.bad(where+".status", "is %s, not active, deprecated or deleted", quote(s))
		}
		m.Status = s
	}
	m.StatusMessage = p.text(where+".statusMessage", off["statusMessage"], maxInputText)
	m.IsLatest, _ = get[bool](&p, where+".isLatest", off["isLatest"])
	m.PublishedAt = p.time(where+".publishedAt", off["publishedAt"])
	m.UpdatedAt = p.time(where+".updatedAt", off["updatedAt"])
	return m, p.err()
}

// A parser gathers the problems of one entry.
type parser struct{ problems []string }

func (p *parser) bad(where, format string, args ...any) {
	p.problems = append(p.problems, where+": "+cut(fmt.Sprintf(format, args...), 300))
}

func (p *parser) err() error {
	switch n := len(p.problems); {
	case n == 0:
		return nil
	case n > maxProblems:
		return fmt.Errorf("%w: %s; and %d more", ErrEntry, strings.Join(p.problems[:maxProblems], "; "), n-maxProblems)
	default:
		return fmt.Errorf("%w: %s", ErrEntry, strings.Join(p.problems, "; "))
	}
}

// cut shortens s to at most n bytes, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// quote quotes a value an entry chose, for a problem.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	return strconv.Quote(cut(s, maxQuoted))
}

// jsonKind names the kind of a JSON value, for a problem.
func jsonKind(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "nothing"
	}
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "true or false"
	}
	return "a number"
}

// get decodes raw as a T; a missing value (nil raw) is no problem and not
// ok, and null, or a value of another JSON type, is a problem.
func get[T any](p *parser, where string, raw json.RawMessage) (v T, ok bool) {
	if raw == nil {
		return v, false
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		p.bad(where, "is null")
		return v, false
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		p.bad(where, "must be %s, not %s", wants(v), jsonKind(raw))
		return v, false
	}
	return v, true
}

// wants names what get wanted.
func wants(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "true or false"
	case []string:
		return "an array of strings"
	case []json.RawMessage:
		return "an array"
	}
	return "an object"
}

// checked reads a string and returns it, with check's problem with it
// (or ""); a missing one is a problem when required.
func (p *parser) checked(where string, raw json.RawMessage, required bool, check func(string) string) string {
	s, ok := get[string](p, where, raw)
	switch {
	case ok:
		if msg := check(s); msg != "" {
			p.bad(where, "%s", msg)
		}
	case raw == nil && required:
		p.bad(where, "is missing")
	}
	return s
}

// object reads raw as an object, by exact key.
func object(p *parser, where string, raw json.RawMessage) (map[string]json.RawMessage, bool) {
	return get[map[string]json.RawMessage](p, where, raw)
}

// list reads raw as an array of at most maxItems items.
func (p *parser) list(where string, raw json.RawMessage) []json.RawMessage {
	items, _ := get[[]json.RawMessage](p, where, raw)
	if len(items) > maxItems {
		p.bad(where, "has %d items, over the %d Zero reads", len(items), maxItems)
		return nil
	}
	return items
}

// text reads an optional string of at most max runes.
func (p *parser) text(where string, raw json.RawMessage, max int) string {
	s, ok := get[string](p, where, raw)
	if ok && utf8.RuneCountInString(s) > max {
		p.bad(where, "is %d characters, over %d", utf8.RuneCountInString(s), max)
		return ""
	}
	return s
}

// time reads an optional RFC 3339 time.
func (p *parser) time(where string, raw json.RawMessage) time.Time {
	s, ok := get[string](p, where, raw)
	if !ok {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		p.bad(where, "is %s, not an RFC 3339 time", quote(s))
	}
	return t
}

// url reads an optional absolute http or https URL (https only with
// httpsOnly) of at most maxURL bytes, as netguard reads it.
func (p *parser) url(where string, raw json.RawMessage, httpsOnly bool) string {
	s, ok := get[string](p, where, raw)
	if !ok {
		return ""
	}
	if msg := urlProblem(s, httpsOnly); msg != "" {
		p.bad(where, "%s", msg)
		return ""
	}
	return s
}

// urlProblem says why s is not an absolute http(s) URL Zero takes, or "".
func urlProblem(s string, httpsOnly bool) string {
	if len(s) > maxURL {
		return fmt.Sprintf("is %d bytes, over %d", len(s), maxURL)
	}
	o := netguard.Options{}
	if httpsOnly {
		o.Schemes = netguard.HTTPSOnly
	}
	if _, err := o.CheckURL(s); err != nil {
		return fmt.Sprintf("is %s: %v", quote(s), err)
	}
	return ""
}

// Patterns, compiled on first use.
var (
	namespaceRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)+$`)
	})
	serverNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9._-]+$`) })
	versionRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+_-]*$`) })
	envNameRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	headerNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") })
	flagRE       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^--?[A-Za-z0-9][A-Za-z0-9_.-]*$`) })
	varNameRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`) })
	varRefRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{[^{}]*\}`) })
	sha256RE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-f0-9]{64}$`) })
	// Package names as their registries have them: npm's (scoped or not,
	// lower case), PyPI's, NuGet's; an OCI reference
	// [registry/]namespace/image[:tag][@sha256:digest].
	npmRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(@[a-z0-9~][a-z0-9._~-]*/)?[a-z0-9~][a-z0-9._~-]*$`)
	})
	pypiRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`) })
	nugetRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`) })
	ociRE   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]([a-z0-9._-]*[a-z0-9])?)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$`)
	})
)

// NameProblem says why name is not a registry server's name, or "": it must
// be reverse-DNS namespace/name (io.github.user/weather), at most 200
// bytes, with one slash.
func NameProblem(name string) string {
	ns, n, ok := strings.Cut(name, "/")
	switch {
	case len(name) > maxName:
		return fmt.Sprintf("is %d bytes, over %d", len(name), maxName)
	case !ok || !namespaceRE().MatchString(ns) || !serverNameRE().MatchString(n) || n == "." || n == "..":
		return fmt.Sprintf("is %s, not reverse-DNS namespace/name (like io.github.user/weather)", quote(name))
	}
	return ""
}

// VersionProblem says why v is not an exact version, or "": a range (^, ~,
// *, x, >, <, spaces, ||), "latest", or a character outside letters,
// digits, '.', '+', '-' and '_'.
func VersionProblem(v string) string {
	switch {
	case v == "":
		return "is empty"
	case len(v) > maxVersion:
		return fmt.Sprintf("is %d bytes, over %d", len(v), maxVersion)
	case strings.EqualFold(v, "latest"):
		return `is "latest", not an exact version`
	case strings.ContainsAny(v, "^~*<>= \t|") || slices.ContainsFunc(strings.FieldsFunc(v, func(r rune) bool { return r == '.' || r == '-' || r == '+' }),
		func(part string) bool { return part == "x" || part == "X" }):
		return fmt.Sprintf("is %s, a version range, not an exact version", quote(v))
	case !versionRE().MatchString(v):
		return fmt.Sprintf("is %s: want letters, digits, '.', '+', '-' and '_', starting with a letter or digit", quote(v))
	}
	return ""
}

func (p *parser) entry(data []byte) *Entry {
	top, ok := object(p, "server.json", data)
	if !ok {
		if len(p.problems) == 0 {
			p.bad("server.json", "is empty")
		}
		return nil
	}
	e := &Entry{}
	e.Name = p.checked("name", top["name"], true, NameProblem)
	e.Version = p.checked("version", top["version"], true, VersionProblem)
	before := len(p.problems)
	e.Description = p.text("description", top["description"], maxText)
	if e.Description == "" && len(p.problems) == before {
		p.bad("description", "is missing or empty")
	}
	e.Title = p.text("title", top["title"], maxText)
	e.WebsiteURL = p.url("websiteUrl", top["websiteUrl"], false)
	if obj, ok := object(p, "repository", top["repository"]); ok {
		r := &Repository{
			URL:       p.url("repository.url", obj["url"], false),
			Source:    p.text("repository.source", obj["source"], maxText),
			ID:        p.text("repository.id", obj["id"], maxText),
			Subfolder: p.text("repository.subfolder", obj["subfolder"], maxInputText),
		}
		if r.URL == "" && obj["url"] == nil {
			p.bad("repository.url", "is missing")
		}
		e.Repository = r
	}
	for i, raw := range p.list("icons", top["icons"]) {
		e.Icons = append(e.Icons, p.icon(fmt.Sprintf("icons[%d]", i), raw))
	}
	for i, raw := range p.list("packages", top["packages"]) {
		e.Packages = append(e.Packages, p.pkg(fmt.Sprintf("packages[%d]", i), raw))
	}
	for i, raw := range p.list("remotes", top["remotes"]) {
		e.Remotes = append(e.Remotes, p.remote(fmt.Sprintf("remotes[%d]", i), raw))
	}
	e.PostInstallInstructions = p.text("postInstallInstructions", top["postInstallInstructions"], maxInstruction)
	return e
}

// registryTypes are the package types Zero reads.
var registryTypes = []string{"npm", "pypi", "nuget", "oci", "mcpb"}

func (p *parser) pkg(where string, raw json.RawMessage) Package {
	var k Package
	obj, ok := object(p, where, raw)
	if !ok {
		return k
	}
	k.RegistryType, _ = get[string](p, where+".registryType", obj["registryType"])
	if !slices.Contains(registryTypes, k.RegistryType) {
		p.bad(where+".registryType", "is %s, not one of %s", quote(k.RegistryType), strings.Join(registryTypes, ", "))
	}
	k.RegistryBaseURL = p.url(where+".registryBaseUrl", obj["registryBaseUrl"], false)
	k.Identifier, _ = get[string](p, where+".identifier", obj["identifier"])
	if msg := identifierProblem(k.RegistryType, k.Identifier); msg != "" {
		p.bad(where+".identifier", "%s", msg)
	}
	k.Version = p.checked(where+".version", obj["version"], k.RegistryType != "oci" && k.RegistryType != "mcpb", VersionProblem)
	k.FileSHA256 = p.checked(where+".fileSha256", obj["fileSha256"], k.RegistryType == "mcpb", func(s string) string {
		if !sha256RE().MatchString(s) {
			return fmt.Sprintf("is %s, not 64 lower-case hex digits", quote(s))
		}
		return ""
	})
	k.RuntimeHint = p.text(where+".runtimeHint", obj["runtimeHint"], maxText)
	if t, ok := object(p, where+".transport", obj["transport"]); ok {
		k.Transport = p.transport(where+".transport", t)
	} else if obj["transport"] == nil {
		p.bad(where+".transport", "is missing")
	}
	k.RuntimeArguments = p.arguments(where+".runtimeArguments", obj["runtimeArguments"])
	k.PackageArguments = p.arguments(where+".packageArguments", obj["packageArguments"])
	k.EnvironmentVariables = p.keyValues(where+".environmentVariables", obj["environmentVariables"], envNameRE(), "an environment variable's name")
	k.PostInstallInstructions = p.text(where+".postInstallInstructions", obj["postInstallInstructions"], maxInstruction)
	return k
}

// identifierProblem says why id is not a package of type t, or "".
func identifierProblem(t, id string) string {
	if id == "" {
		return "is missing or empty"
	}
	if len(id) > maxIdentifier && t != "mcpb" {
		return fmt.Sprintf("is %d bytes, over %d", len(id), maxIdentifier)
	}
	var re *regexp.Regexp
	switch t {
	case "npm":
		re = npmRE()
	case "pypi":
		re = pypiRE()
	case "nuget":
		re = nugetRE()
	case "oci":
		re = ociRE()
	case "mcpb":
		return urlProblem(id, true)
	default:
		return ""
	}
	if !re.MatchString(id) {
		return fmt.Sprintf("is %s, not a %s package name", quote(id), t)
	}
	return ""
}

// transportTypes are a package's transports; a remote has the last two.
var transportTypes = []string{"stdio", "streamable-http", "sse"}

func (p *parser) transport(where string, obj map[string]json.RawMessage) Transport {
	var t Transport
	t.Type, _ = get[string](p, where+".type", obj["type"])
	if !slices.Contains(transportTypes, t.Type) {
		p.bad(where+".type", "is %s, not stdio, streamable-http or sse", quote(t.Type))
	}
	if t.Type != "stdio" {
		t.URL = p.templateURL(where+".url", obj["url"])
	}
	t.Headers = p.keyValues(where+".headers", obj["headers"], headerNameRE(), "a header's name")
	return t
}

func (p *parser) remote(where string, raw json.RawMessage) Remote {
	var r Remote
	obj, ok := object(p, where, raw)
	if !ok {
		return r
	}
	r.Type, _ = get[string](p, where+".type", obj["type"])
	if r.Type != "streamable-http" && r.Type != "sse" {
		p.bad(where+".type", "is %s, not streamable-http or sse", quote(r.Type))
	}
	r.URL = p.templateURL(where+".url", obj["url"])
	r.Headers = p.keyValues(where+".headers", obj["headers"], headerNameRE(), "a header's name")
	r.Variables = p.variables(where+".variables", obj["variables"])
	return r
}

// templateURL reads a required URL that may hold {variables}: with each
// replaced by a letter, it must be an absolute http(s) URL.
func (p *parser) templateURL(where string, raw json.RawMessage) string {
	s, ok := get[string](p, where, raw)
	if !ok {
		if raw == nil {
			p.bad(where, "is missing")
		}
		return ""
	}
	if msg := urlProblem(varRefRE().ReplaceAllString(s, "v"), false); msg != "" {
		p.bad(where, "is %s: %s", quote(s), strings.TrimPrefix(msg, "is "))
		return ""
	}
	return s
}

func (p *parser) arguments(where string, raw json.RawMessage) []Argument {
	var out []Argument
	for i, item := range p.list(where, raw) {
		w := fmt.Sprintf("%s[%d]", where, i)
		obj, ok := object(p, w, item)
		if !ok {
			continue
		}
		a := Argument{Input: p.input(w, obj, true)}
		a.Type, _ = get[string](p, w+".type", obj["type"])
		a.ValueHint = p.text(w+".valueHint", obj["valueHint"], maxText)
		a.IsRepeated, _ = get[bool](p, w+".isRepeated", obj["isRepeated"])
		switch a.Type {
		case "named":
			if name, ok := get[string](p, w+".name", obj["name"]); ok && !flagRE().MatchString(name) {
				p.bad(w+".name", "is %s, not a flag like --port or -e", quote(name))
			} else if ok {
				a.Name = name
			} else if obj["name"] == nil {
				p.bad(w+".name", "is missing from a named argument")
			}
		case "positional":
			if obj["valueHint"] == nil && obj["value"] == nil {
				p.bad(w, "a positional argument needs a valueHint or a value")
			}
		default:
			p.bad(w+".type", "is %s, not positional or named", quote(a.Type))
		}
		out = append(out, a)
	}
	return out
}

// keyValues reads environment variables or headers, each named by nameRE.
func (p *parser) keyValues(where string, raw json.RawMessage, nameRE *regexp.Regexp, what string) []Input {
	var out []Input
	for i, item := range p.list(where, raw) {
		w := fmt.Sprintf("%s[%d]", where, i)
		obj, ok := object(p, w, item)
		if !ok {
			continue
		}
		in := p.input(w, obj, true)
		name, ok := get[string](p, w+".name", obj["name"])
		switch {
		case !ok && obj["name"] == nil:
			p.bad(w+".name", "is missing")
		case ok && (len(name) > maxInputName || !nameRE.MatchString(name)):
			p.bad(w+".name", "is %s, not %s", quote(name), what)
		case slices.ContainsFunc(out, func(o Input) bool { return strings.EqualFold(o.Name, name) }):
			p.bad(w+".name", "%s is declared twice", quote(name))
		}
		in.Name = name
		out = append(out, in)
	}
	return out
}

// formats are an input's formats.
var formats = []string{"", "string", "number", "boolean", "filepath"}

// input reads the fields every input has, and its variables when
// withVariables.
func (p *parser) input(where string, obj map[string]json.RawMessage, withVariables bool) Input {
	in := Input{
		Description: p.text(where+".description", obj["description"], maxInputText),
		Default:     p.text(where+".default", obj["default"], maxInputText),
		Value:       p.text(where+".value", obj["value"], maxInputText),
		Placeholder: p.text(where+".placeholder", obj["placeholder"], maxInputText),
		Format:      p.text(where+".format", obj["format"], maxText),
	}
	in.IsRequired, _ = get[bool](p, where+".isRequired", obj["isRequired"])
	in.IsSecret, _ = get[bool](p, where+".isSecret", obj["isSecret"])
	if !slices.Contains(formats, in.Format) {
		p.bad(where+".format", "is %s, not string, number, boolean or filepath", quote(in.Format))
	}
	if choices, ok := get[[]string](p, where+".choices", obj["choices"]); ok {
		if len(choices) > maxItems {
			p.bad(where+".choices", "has %d items, over the %d Zero reads", len(choices), maxItems)
		}
		for i, c := range choices {
			if utf8.RuneCountInString(c) > maxInputText {
				p.bad(fmt.Sprintf("%s.choices[%d]", where, i), "is over %d characters", maxInputText)
			}
		}
		in.Choices = choices
	}
	if withVariables {
		in.Variables = p.variables(where+".variables", obj["variables"])
	}
	return in
}

// variables reads a map of variable names to inputs, which have no
// variables of their own.
func (p *parser) variables(where string, raw json.RawMessage) map[string]Input {
	obj, ok := object(p, where, raw)
	if !ok {
		return nil
	}
	if len(obj) > maxItems {
		p.bad(where, "has %d variables, over the %d Zero reads", len(obj), maxItems)
		return nil
	}
	out := make(map[string]Input, len(obj))
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		item := obj[name]
		w := where + "." + cut(name, maxQuoted)
		if len(name) > maxInputName || !varNameRE().MatchString(name) {
			p.bad(where, "variable %s is not a name (letters, digits, '_', '.', '-')", quote(name))
			continue
		}
		if v, ok := object(p, w, item); ok {
			out[name] = p.input(w, v, false)
		}
	}
	return out
}
