// Package netguard guards outbound HTTP: it is the one place that turns a URL
// into a request. [CheckURL] refuses, before any network I/O, every URL that
// is not an absolute http or https URL naming a host, and every URL carrying
// credentials. [Options.CheckURL] applies a scheme policy too ([Schemes]:
// http or https, https only, or https and plain http to loopback). [NewClient]
// builds an *http.Client that applies the same check to every request and
// every redirect (with a hop limit), bounds the whole exchange by a timeout
// and the response body by a size cap, and never uses a proxy from the
// environment.
//
// Hosts are read as browsers read them: [ParseHost] follows the WHATWG URL
// standard's host parser, so 127.1, 2130706433, 0x7f000001, 0177.0.0.1 and
// １２７.０.０.１ are all the address 127.0.0.1, IPv6 addresses are
// serialized one way, and domains go through UTS #46 to lower-case ASCII.
// The URL that CheckURL returns, and every request and redirect the client
// sends, carry the canonical host, and the dialer parses the host the same
// way, so an address in any spelling is judged and dialled as that address
// and never handed to a resolver.
//
// With [Options.BlockPrivate], the client refuses to connect to any address
// that is not public unicast ([NonPublic]: loopback, private, carrier-grade
// NAT, link-local including cloud metadata, unique-local, multicast,
// documentation and other reserved ranges, and IPv6 forms that embed such an
// IPv4 address). An address written in the URL is refused before any I/O. A
// name is checked at dial time on the addresses it resolved to, and again on
// the exact address each socket connects to, so a name that resolves
// differently between a check and the connection (DNS rebinding) cannot slip
// through, and neither can a redirect. The only way around it is
// [Options.Allow], a list of address prefixes that stay reachable; there is
// no other switch.
//
// Without BlockPrivate there is no SSRF protection at all: loopback, private
// and link-local addresses are reachable.
package netguard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// Defaults for [Options].
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxBody      = 10 << 20 // 10 MiB
	DefaultMaxRedirects = 10
)

var (
	// ErrURL reports a URL refused before any network I/O.
	ErrURL = errors.New("URL refused")
	// ErrBlocked reports an address refused by the private-network block.
	ErrBlocked = errors.New("address blocked")
	// ErrBodyTooLarge reports a response body over the size cap.
	ErrBodyTooLarge = errors.New("response body too large")
	// ErrRedirects reports a chain of redirects over the hop limit.
	ErrRedirects = errors.New("too many redirects")
)

// A Resolver looks up the addresses of a host name. *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a client. The zero value is usable: no private-network
// block, and the default timeout, body cap, hop limit and resolver.
type Options struct {
	// Schemes says which schemes are allowed; the zero value allows http
	// and https.
	Schemes Schemes
	// BlockPrivate refuses connections to every address [NonPublic]
	// reports, unless Allow holds it.
	BlockPrivate bool
	// Allow lists the prefixes that stay reachable despite BlockPrivate.
	// It re-opens exactly what it names, and nothing else.
	Allow []netip.Prefix
	// Timeout bounds a whole exchange: connecting, every redirect, and
	// reading the body. Zero or less means DefaultTimeout.
	Timeout time.Duration
	// ConnectTimeout bounds each connection's dial; zero or less leaves it
	// to Timeout and the request's context.
	ConnectTimeout time.Duration
	// MaxBody caps the bytes a response body yields (after decompression);
	// reading past it fails with ErrBodyTooLarge. Zero or less means
	// DefaultMaxBody.
	MaxBody int64
	// MaxRedirects is the most redirects a request follows. Zero or less
	// means DefaultMaxRedirects.
	MaxRedirects int
	// Resolver looks up host names; nil means net.DefaultResolver. Tests
	// use it to make a name resolve to a loopback address.
	Resolver Resolver
	// TLS configures TLS (nil: the system's roots). Tests use it to trust a
	// test server's certificate; it has no say over which addresses are
	// reachable.
	TLS *tls.Config
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	return o
}

// NewClient returns an HTTP client that enforces o: see the package doc.
// Its response bodies fail with [ErrBodyTooLarge] past o.MaxBody.
func NewClient(o Options) *http.Client {
	g := newGuard(o, max(o.ConnectTimeout, 0))
	base := &http.Transport{
		Proxy:                 nil, // a proxy would connect for us, past the dial-time check
		DialContext:           g.dialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       o.TLS,
	}
	return &http.Client{
		Transport:     &transport{guard: g, base: base},
		CheckRedirect: g.checkRedirect,
		Timeout:       g.opts.Timeout,
	}
}

// A guard holds a client's policy.
type guard struct {
	opts   Options
	dialer *net.Dialer
}

// newGuard returns the guard of o, whose dialer gives up connecting after
// timeout (0: the caller's context decides).
func newGuard(o Options, timeout time.Duration) *guard {
	g := &guard{opts: o.withDefaults()}
	g.dialer = &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: g.control}
	return g
}

// CheckAddr reports whether o lets a client connect to a: always, without
// BlockPrivate; otherwise when a is public or inside o.Allow. A refusal wraps
// [ErrBlocked] and names the range.
func (o Options) CheckAddr(a netip.Addr) error {
	if !o.BlockPrivate {
		return nil
	}
	a = a.WithZone("")
	for _, p := range o.Allow {
		if p.Contains(a) || p.Contains(a.Unmap()) {
			return nil
		}
	}
	if why, ok := NonPublic(a); ok {
		return fmt.Errorf("%w: %s is %s, and private networks are blocked", ErrBlocked, a, why)
	}
	return nil
}

// checkRedirect re-validates every hop: the hop limit, and the URL, which
// it puts in canonical form. Names are checked when they are dialed.
func (g *guard) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= g.opts.MaxRedirects {
		return fmt.Errorf("%w: stopped after %d", ErrRedirects, len(via))
	}
	u, err := g.opts.checkURL(req.URL)
	if err != nil {
		return fmt.Errorf("redirect refused: %w", err)
	}
	if req.Host == req.URL.Host {
		req.Host = u.Host
	}
	req.URL = u
	return nil
}

// transport checks each request before the base transport sends it, puts
// its host in canonical form, and caps each response body.
type transport struct {
	guard *guard
	base  *http.Transport
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	u, err := t.guard.opts.checkURL(req.URL)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if u.Host != req.URL.Host {
		// Send a copy with the canonical host: a RoundTripper must not
		// change the request it is given.
		c := *req
		if c.Host == "" || c.Host == req.URL.Host {
			c.Host = u.Host
		}
		c.URL = u
		req = &c
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: t.guard.opts.MaxBody, max: t.guard.opts.MaxBody, length: resp.ContentLength}
	return resp, nil
}

// CloseIdleConnections closes the base transport's idle connections, so
// that http.Client.CloseIdleConnections reaches them.
func (t *transport) CloseIdleConnections() { t.base.CloseIdleConnections() }
