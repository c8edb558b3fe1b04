package children

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/guard/redact"
	"github.com/zero-dev/zero/internal/guard/spawn"
)

// plan is a Config checked, its ${VAR}s replaced: what starts one child.
type plan struct {
	name    string
	cmd     *spawn.Cmd // a stdio child's
	url     *url.URL   // an HTTP child's, canonical
	allow   []netip.Prefix
	headers map[string]string
	red     *redact.Redactor // the values that came from the environment
}

// loopback is what an HTTP child on a loopback host may reach despite the
// private-network block; a child elsewhere gets nothing of it.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// reserved are headers the MCP transport writes itself: a child's
// configuration may not set them.
var reserved = []string{"Accept", "Connection", "Content-Length", "Content-Type", "Host", "Last-Event-Id",
	"Mcp-Protocol-Version", "Mcp-Session-Id", "Transfer-Encoding"}

// errRedirect is what a child's redirect meets.
var errRedirect = errors.New("the child answered with a redirect, and redirects are not followed")

// prepare checks c and replaces the ${VAR}s of its env and header values.
// Nothing runs and nothing is sent.
func prepare(c Config, o Options) (plan, error) {
	p := plan{name: c.Name}
	fail := func(format string, args ...any) (plan, error) {
		return plan{}, fmt.Errorf("child %q: %w", c.Name, fmt.Errorf(format, args...))
	}
	if !validName(c.Name, 64) {
		return fail("a child's name is 1 to 64 letters, digits, '_', '-' or '.'")
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	secrets := map[string]string{}
	switch {
	case c.Command != "" && c.URL != "":
		return fail("it has both a command and a url; a child is one or the other")
	case c.Command != "":
		if len(c.Headers) > 0 {
			return fail("headers are for a child with a url, not a command")
		}
		if err := literal("command", c.Command); err != nil {
			return fail("%w", err)
		}
		for i, a := range c.Args {
			if err := literal(fmt.Sprintf("args[%d]", i), a); err != nil {
				return fail("%w", err)
			}
		}
		if o.Roots == nil {
			return fail("no workspace to run it in")
		}
		env := envscrub.Spec{Set: map[string]string{}, Secret: map[string]string{}}
		for _, name := range slices.Sorted(maps.Keys(c.Env)) {
			v, fromEnv, err := interpolate(c.Env[name], getenv)
			if err == nil && fromEnv {
				env.Secret[name], secrets["env "+name] = v, v
				err = envscrub.CheckSecret(name, v)
			} else if err == nil {
				env.Set[name] = v
				err = envscrub.Check(name, v)
			}
			if err != nil {
				return fail("env %s: %w", name, err)
			}
		}
		if _, ok := c.Env[AgentChildEnv]; ok {
			return fail("env %s: Zero sets it, to tell an agents server started as a child to refuse to run", AgentChildEnv)
		}
		env.Set[AgentChildEnv] = "1"
		p.cmd = &spawn.Cmd{Program: c.Command, Args: c.Args, Dir: ".", Roots: o.Roots, Env: env, Timeout: lifetime,
			OutputLimit: stderrKept}
	case c.URL != "":
		if len(c.Args) > 0 || len(c.Env) > 0 {
			return fail("args and env are for a child with a command, not a url")
		}
		if err := literal("url", c.URL); err != nil {
			return fail("%w", err)
		}
		var err error
		if p.url, p.allow, err = checkURL(c.URL); err != nil {
			return fail("url: %w", err)
		}
		p.headers = map[string]string{}
		for _, name := range slices.Sorted(maps.Keys(c.Headers)) {
			v, fromEnv, err := interpolate(c.Headers[name], getenv)
			switch {
			case err != nil:
				return fail("header %s: %w", name, err)
			case !httpguts.ValidHeaderFieldName(name):
				return fail("header %q is not a valid header name", name)
			case slices.Contains(reserved, http.CanonicalHeaderKey(name)):
				return fail("header %s is the MCP transport's own", name)
			case !httpguts.ValidHeaderFieldValue(v):
				return fail("header %s: its value holds a control character", name)
			}
			if fromEnv {
				secrets["header "+name] = v
			}
			p.headers[http.CanonicalHeaderKey(name)] = v
		}
	default:
		return fail("it has neither a command nor a url")
	}
	p.red = redact.New(secrets)
	return p, nil
}

// literal refuses a ${ in a field taken as written.
func literal(field, v string) error {
	if strings.Contains(v, "${") {
		return fmt.Errorf("%s holds ${...}: variables are replaced only in env and header values", field)
	}
	return nil
}

// interpolate replaces each ${NAME} in v with getenv(NAME), and reports
// whether there was one. A variable that is not set, or set empty, is an
// error naming it; so is a "${" that does not begin one.
func interpolate(v string, getenv func(string) string) (string, bool, error) {
	if !strings.Contains(v, "${") {
		return v, false, nil
	}
	var b strings.Builder
	for {
		before, rest, found := strings.Cut(v, "${")
		b.WriteString(before)
		if !found {
			return b.String(), true, nil
		}
		name, after, ok := strings.Cut(rest, "}")
		if !ok || !isIdentifier(name) {
			return "", false, errors.New(`a "${" that is not "${NAME}"`)
		}
		value := getenv(name)
		if value == "" {
			return "", false, fmt.Errorf("the environment variable %s is not set", name)
		}
		b.WriteString(value)
		v = after
	}
}

// isIdentifier reports whether s is [A-Za-z_][A-Za-z0-9_]*.
func isIdentifier(s string) bool {
	for i, r := range s {
		if !(r == '_' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return s != ""
}

// validName reports whether s is 1 to max of MCP's tool name characters:
// letters, digits, '_', '-' and '.'.
func validName(s string, max int) bool {
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9') {
			return false
		}
	}
	return s != "" && len(s) <= max
}

// checkURL accepts https, or plain http to a loopback host, judged on
// netguard's canonical host; it returns the canonical URL and the
// addresses the child may reach despite the private-network block: the
// loopback ranges for a loopback host, none for any other. A private
// address in the URL is refused here, before any I/O; one a name resolves
// to, when the client dials.
func checkURL(raw string) (*url.URL, []netip.Prefix, error) {
	policy := netguard.Options{Schemes: netguard.HTTPSOrLoopbackHTTP}
	u, err := policy.CheckURL(raw)
	if err != nil {
		return nil, nil, err
	}
	host := u.Host
	if port := u.Port(); port != "" {
		host = strings.TrimSuffix(host, ":"+port)
	}
	if h, err := netguard.ParseHost(host); err == nil && h.IsLoopback() {
		policy.Allow = loopback
	}
	policy.BlockPrivate = true
	if u, err = policy.CheckURL(raw); err != nil {
		return nil, nil, err
	}
	return u, policy.Allow, nil
}

// client is an HTTP child's client: netguard's, with the private-network
// block (but the loopback ranges for a loopback child), no redirect, and
// the child's headers on the requests to its own origin.
func (p plan) client(o Options) *http.Client {
	hc := netguard.NewClient(netguard.Options{BlockPrivate: true, Schemes: netguard.HTTPSOrLoopbackHTTP, Allow: p.allow,
		Timeout: max(o.StartTimeout, o.CallTimeout), MaxBody: maxBody, Resolver: o.Resolver})
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return errRedirect }
	hc.Transport = &withHeaders{base: hc.Transport, origin: p.url, headers: p.headers}
	return hc
}

// withHeaders adds a child's headers to the requests to its origin.
type withHeaders struct {
	base    http.RoundTripper
	origin  *url.URL
	headers map[string]string
}

func (t *withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 && r.URL.Scheme == t.origin.Scheme && r.URL.Host == t.origin.Host {
		r = r.Clone(r.Context())
		for name, v := range t.headers {
			r.Header.Set(name, v)
		}
	}
	return t.base.RoundTrip(r)
}

// CloseIdleConnections reaches the base transport's.
func (t *withHeaders) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
