// Package servers owns the workspace's MCP servers: their configurations,
// validated and fingerprinted; the approval that stands in front of running
// any of them (nothing runs on create; create, edit and enable echo the
// fingerprint of the exact configuration a person reviewed); their secrets,
// sealed for the approved fingerprint and released to nothing else; the
// Test action, which lists an approved server's tools through the tool
// runtime; the drift gate's records (each server's approved tool set, its
// last listing, the tools its owner switched off), and their approval; and
// the runtime.Spec of an enabled, approved server (Runnable), which is all
// the runtime runs.
package servers

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/pin"
	"github.com/zero-dev/zero/internal/shellwords"
	"github.com/zero-dev/zero/internal/workspace/runtime"
)

// Kinds of server.
const (
	KindStdio = "stdio"
	KindHTTP  = "http"
	KindSSE   = "sse"
)

// A Config is an MCP server's configuration: what its fingerprint covers,
// and its name. It holds names of environment variables and headers, never
// their values.
type Config struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Command string `json:"command,omitempty"`
	// Program is set by the workspace, never taken from a request: the
	// absolute path, links resolved, that Command runs as (found in the PATH
	// zero serve passes on, or from the working directory), or "" when it
	// resolves to nothing.
	Program string   `json:"program,omitempty"`
	Args    []string `json:"args,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Env     []string `json:"env,omitempty"`
	URL     string   `json:"url,omitempty"`
	Headers []string `json:"headers,omitempty"`
	// Registry is set on a configuration Zero derived from an MCP Registry
	// entry (registry.Derive), never taken from a typed configuration: the
	// fingerprint then covers the exact entry.
	Registry *RegistryRef `json:"registry,omitempty"`
}

// A RegistryRef names the MCP Registry entry a configuration was derived
// from: the registry's URL, the entry's name and exact version, and the
// lowercase hex SHA-256 of the entry's bytes as the registry served them.
type RegistryRef struct {
	URL         string `json:"url"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	EntrySHA256 string `json:"entry_sha256"`
}

// Fingerprint returns the fingerprint of c's code-relevant fields (all but
// the name), the resolved program included, and its registry reference when
// it has one (pin's v3 encoding; without one, v2 as before).
func (c Config) Fingerprint() string {
	return pin.Fingerprint(c.pinned())
}

// fingerprintV1 is the fingerprint under the first encoding, which secrets
// stored before the program was pinned are sealed for.
func (c Config) fingerprintV1() string {
	return pin.FingerprintV1(c.pinned())
}

func (c Config) pinned() pin.ServerConfig {
	p := pin.ServerConfig{
		Kind: c.Kind, Command: c.Command, Program: c.Program, Args: c.Args, Cwd: c.Cwd, EnvNames: c.Env,
		URL: c.URL, HeaderNames: c.Headers,
	}
	if r := c.Registry; r != nil {
		p.Registry = &pin.Registry{URL: r.URL, Name: r.Name, Version: r.Version, EntrySHA256: r.EntrySHA256}
	}
	return p
}

// differs reports whether two references (either nil) name other entries.
func (r *RegistryRef) differs(o *RegistryRef) bool {
	if r == nil || o == nil {
		return r != o
	}
	return *r != *o
}

// Secrets are values given with a configuration: write-only, never returned.
type Secrets struct {
	Env     map[string]string `json:"env,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// of returns the values of a kind, "env" or "header".
func (s Secrets) of(kind string) map[string]string {
	if kind == "env" {
		return s.Env
	}
	return s.Headers
}

// An InvalidError lists what is wrong with a configuration.
type InvalidError struct{ Problems []string }

func (e *InvalidError) Error() string {
	return "invalid configuration: " + strings.Join(e.Problems, "; ")
}

var (
	nameRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })
	headerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[!#$%&'*+.^_` + "`" + `|~0-9A-Za-z-]{1,128}$`) })
)

// hopHeaders are headers a server configuration may not set: the HTTP
// client owns them.
var hopHeaders = []string{"Host", "Content-Length", "Connection", "Transfer-Encoding", "Upgrade", "Te", "Trailer", "Keep-Alive", "Proxy-Authorization", "Proxy-Connection"}

// Policy is what validation checks a configuration against.
type Policy struct {
	// LocalOrigins are the origins (scheme://host:port) of HTTP servers on
	// loopback, private or link-local hosts that may be added anyway
	// (ZERO_ALLOWED_LOCAL_ORIGINS). The host must be an address or
	// localhost: the allowance is for that origin only, not for names that
	// resolve to it.
	LocalOrigins []string
}

// ParseOrigins parses a comma-separated list of origins such as
// "https://127.0.0.1:8443,https://mcp.internal:443".
func ParseOrigins(list string) ([]string, error) {
	var out []string
	for _, o := range strings.Split(list, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		u, err := checkURL(o)
		if err != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("origin %q: want https://host:port", o)
		}
		if h, _ := netguard.ParseHost(urlHost(u)); !h.IsLoopback() {
			if _, isAddr := h.Addr(); !isAddr {
				return nil, fmt.Errorf("origin %q: name the host by its address (or localhost), so that only this origin is allowed", o)
			}
		}
		out = append(out, origin(u))
	}
	return out, nil
}

// checkURL is the one reading of a server's URL: https only, its host
// canonical as the WHATWG URL rules read it (so 0x7f000001 is 127.0.0.1),
// before anything compares it.
func checkURL(raw string) (*url.URL, error) {
	return netguard.Options{Schemes: netguard.HTTPSOnly}.CheckURL(raw)
}

// urlHost is u's host without its port, an IPv6 address in brackets, as
// netguard.ParseHost takes it.
func urlHost(u *url.URL) string {
	if h := u.Hostname(); strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return u.Hostname()
}

// origin returns u's scheme://host:port, with the default port written,
// as the runtime scopes a server's headers to it.
func origin(u *url.URL) string { return runtime.Origin(u) }

// allowFor returns the addresses netguard may reach for a server at rawURL
// despite its private-network block: those of the URL's host, when the
// URL's origin is one of the allowed local origins and names its host by
// address (or as localhost). Any other server, a name resolving into the
// same address included, gets none.
func (p Policy) allowFor(rawURL string) []netip.Prefix {
	u, err := checkURL(rawURL)
	if err != nil || !slices.Contains(p.LocalOrigins, origin(u)) {
		return nil
	}
	if u.Hostname() == "localhost" {
		return []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}
	}
	if a, err := netip.ParseAddr(u.Hostname()); err == nil {
		return []netip.Prefix{netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())}
	}
	return nil
}

// Validate checks c and the secrets given with it, and normalizes c
// (header names canonicalized, the URL's host canonical).
func (p Policy) Validate(c *Config, s Secrets) error {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if !nameRE().MatchString(c.Name) {
		bad("name %q: want 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", c.Name)
	}
	for i, h := range c.Headers {
		c.Headers[i] = http.CanonicalHeaderKey(h)
	}
	switch c.Kind {
	case KindStdio:
		if c.URL != "" || len(c.Headers) > 0 {
			bad("a stdio server has no url or headers")
		}
		validateStdio(c, bad)
	case KindHTTP, KindSSE:
		if c.Command != "" || len(c.Args) > 0 || c.Cwd != "" || len(c.Env) > 0 {
			bad("an %s server has no command, args, cwd or env", c.Kind)
		}
		p.validateHTTP(c, bad)
	default:
		bad("kind %q: want stdio, http or sse", c.Kind)
	}
	if c.Registry != nil {
		validateRegistry(*c.Registry, bad)
	}
	for name, value := range s.Env {
		if !slices.Contains(c.Env, name) {
			bad("a value is given for env %s, which the configuration does not declare", name)
		}
		if strings.IndexByte(value, 0) >= 0 {
			bad("the value of env %s holds a NUL byte", name)
		}
	}
	for name, value := range s.Headers {
		if !slices.Contains(c.Headers, http.CanonicalHeaderKey(name)) {
			bad("a value is given for header %s, which the configuration does not declare", name)
		}
		if strings.ContainsAny(value, "\x00\r\n") {
			bad("the value of header %s holds a NUL or line break", name)
		}
	}
	if len(problems) > 0 {
		return &InvalidError{Problems: problems}
	}
	return nil
}

var sha256RE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })

// validateRegistry checks the shape of a registry reference; what it names
// was checked when the entry was parsed.
func validateRegistry(r RegistryRef, bad func(string, ...any)) {
	if _, err := netguard.CheckURL(r.URL); err != nil {
		bad("registry url: %v", err)
	}
	for field, v := range map[string]string{"name": r.Name, "version": r.Version} {
		if v == "" || len(v) > 255 || strings.ContainsFunc(v, unicode.IsControl) {
			bad("registry %s %q: want 1-255 characters, no control characters", field, v)
		}
	}
	if !sha256RE().MatchString(r.EntrySHA256) {
		bad("registry entry_sha256 %q: want 64 lowercase hex digits", r.EntrySHA256)
	}
}

func validateStdio(c *Config, bad func(string, ...any)) {
	if c.Command == "" || strings.IndexByte(c.Command, 0) >= 0 {
		bad("command is required and may not hold a NUL byte")
	}
	for i, a := range c.Args {
		if strings.IndexByte(a, 0) >= 0 {
			bad("args[%d] holds a NUL byte", i)
		}
	}
	if c.Cwd != "" {
		clean := path.Clean(c.Cwd)
		switch {
		case path.IsAbs(c.Cwd) || strings.HasPrefix(c.Cwd, "~"):
			bad("cwd %q: want a relative path inside the thread workspace", c.Cwd)
		case clean == ".." || strings.HasPrefix(clean, "../") || strings.IndexByte(c.Cwd, 0) >= 0:
			bad("cwd %q leaves the thread workspace", c.Cwd)
		default:
			c.Cwd = clean
		}
	}
	seen := map[string]bool{}
	for _, name := range c.Env {
		// Values are secrets nobody sees again: a name whose value steers
		// which code runs is refused, not just a loader variable.
		if err := envscrub.CheckSecret(name, ""); err != nil {
			bad("%v", err)
		}
		if seen[name] {
			bad("env %s is declared twice", name)
		}
		seen[name] = true
	}
}

func (p Policy) validateHTTP(c *Config, bad func(string, ...any)) {
	u, err := checkURL(c.URL)
	switch {
	case err != nil:
		bad("url: %v", err)
	default:
		typed := fmt.Sprintf("%q", c.URL)
		if c.URL = u.String(); typed != fmt.Sprintf("%q", c.URL) {
			typed += " (read as " + c.URL + ")"
		}
		if why, private := privateHost(urlHost(u)); private && !slices.Contains(p.LocalOrigins, origin(u)) {
			bad("url %s: %s; to allow it, add its origin %s to ZERO_ALLOWED_LOCAL_ORIGINS, an environment variable of zero serve that it reads when it starts, and restart zero serve", typed, why, origin(u))
		}
	}
	seen := map[string]bool{}
	for _, h := range c.Headers {
		if !headerRE().MatchString(h) || slices.Contains(hopHeaders, h) {
			bad("header %q: not a header a server configuration may set", h)
		}
		if seen[h] {
			bad("header %s is declared twice", h)
		}
		seen[h] = true
	}
}

// privateHost reports a host (as in a URL: an IPv6 address in brackets)
// that names a loopback, private, link-local or otherwise non-public address
// in any spelling the WHATWG URL rules read as one (0x7f000001 and 127.1
// are 127.0.0.1), localhost and *.localhost included. Names are checked at
// connection time instead, through netguard.
func privateHost(host string) (string, bool) {
	h, err := netguard.ParseHost(host)
	if err != nil {
		return "", false
	}
	name := strings.TrimSuffix(h.String(), ".")
	if h.IsLoopback() || name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return "the host is loopback", true
	}
	if a, ok := h.Addr(); ok {
		if why, ok := netguard.NonPublic(a); ok {
			return "the host is " + why, true
		}
	}
	return "", false
}

// Runnable reports whether c, as it would run now (its program resolved),
// runs anything: an HTTP or SSE server does; a stdio server when its
// command resolves to a program.
func (c Config) Runnable() bool { return c.Kind != KindStdio || c.Program != "" }

// SplitCommand reads c's command as a whole command line typed into the
// command field, as a POSIX shell splits words (shellwords.Split; nothing
// is expanded, and a line a shell would do more with is refused with why):
// it returns c with the first word as its command and the others before
// its arguments, and true, when the line is more than the one word it is.
// A plain program name gives false and no error. The workspace offers the
// split for a command that resolves to no program; it never makes it on
// its own.
func SplitCommand(c Config) (Config, bool, error) {
	if c.Kind != KindStdio {
		return c, false, nil
	}
	words, err := shellwords.Split(c.Command)
	if err != nil {
		return c, false, err
	}
	if len(words) == 1 && words[0] == c.Command {
		return c, false, nil
	}
	c.Command, c.Args = words[0], append(words[1:], c.Args...)
	return c, true, nil
}
