package netguard

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Schemes says which URL schemes [Options.CheckURL] and a client accept.
type Schemes uint8

const (
	// HTTPOrHTTPS accepts http and https. It is the zero value.
	HTTPOrHTTPS Schemes = iota
	// HTTPSOnly accepts https alone.
	HTTPSOnly
	// HTTPSOrLoopbackHTTP accepts https, and plain http only to a host
	// that [Host.IsLoopback] reports: 127.0.0.0/8, ::1 or localhost,
	// judged on the canonical host.
	HTTPSOrLoopbackHTTP
)

// CheckURL is Options{}.CheckURL: it accepts an absolute http or https URL
// with a host, and returns it with its host in canonical form.
func CheckURL(raw string) (*url.URL, error) {
	return Options{}.CheckURL(raw)
}

// CheckURL parses raw (surrounding white space trimmed) and accepts it only
// if it is an absolute URL whose scheme o.Schemes allows, with a host, an
// optional port from 1 to 65535, and no credentials (user@host), which
// could otherwise pass a different host for a glance at the start of the
// URL. The host must parse with [ParseHost]; the URL returned has the
// canonical host in its place (port kept), so 0x7f000001 comes back as
// 127.0.0.1 and is never looked up by name. With o.BlockPrivate, a host that
// is an address [Options.CheckAddr] refuses is refused too, wrapping
// [ErrBlocked]. These are the checks a client from [NewClient] applies to
// every request and redirect. Any other refusal wraps [ErrURL]. All happen
// before any network I/O, and none quotes credentials.
func (o Options) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: not a valid URL: %v", ErrURL, err)
	}
	return o.checkURL(u)
}

// checkURL applies CheckURL's rules to a parsed URL and returns a copy with
// the canonical host.
func (o Options) checkURL(u *url.URL) (*url.URL, error) {
	switch {
	case u.Scheme == "":
		return nil, fmt.Errorf("%w: no scheme; want an absolute http:// or https:// URL", ErrURL)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%w: the %s: scheme is not allowed; %s", ErrURL, quoteScheme(u.Scheme), o.Schemes.allowed())
	case u.Opaque != "":
		return nil, fmt.Errorf("%w: want %s://host/..., with a host after the two slashes", ErrURL, u.Scheme)
	case u.User != nil:
		return nil, fmt.Errorf("%w: credentials in the URL (user@host) are not allowed", ErrURL)
	case u.Hostname() == "":
		return nil, fmt.Errorf("%w: no host", ErrURL)
	}
	port := u.Port()
	if port != "" {
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return nil, fmt.Errorf("%w: port %q is not a number from 1 to 65535", ErrURL, port)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return nil, fmt.Errorf("%w: empty port after the host", ErrURL)
	}
	h, err := ParseHost(strings.TrimSuffix(u.Host, ":"+port))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrURL, err)
	}
	hostport := h.String()
	if port != "" {
		hostport += ":" + port
	}
	if again, err := url.Parse("http://" + hostport + "/"); err != nil || again.Host != hostport {
		// UTS #46 maps some code points (U+FF5B) to ASCII that Go's
		// URL parser does not allow in a host ("{").
		return nil, fmt.Errorf("%w: the host %s holds a character Go's URL parser refuses", ErrURL, quoteHost(h.String()))
	}
	if u.Scheme == "http" && o.Schemes != HTTPOrHTTPS && !(o.Schemes == HTTPSOrLoopbackHTTP && h.IsLoopback()) {
		if o.Schemes == HTTPSOnly {
			return nil, fmt.Errorf("%w: the http: scheme is not allowed; %s", ErrURL, o.Schemes.allowed())
		}
		return nil, fmt.Errorf("%w: plain http is allowed only to a loopback host (127.0.0.0/8, ::1, localhost), not %s; use https", ErrURL, quoteHost(h.String()))
	}
	if a, ok := h.Addr(); ok {
		if err := o.CheckAddr(a); err != nil {
			return nil, err
		}
	}
	c := *u
	c.Host = hostport
	return &c, nil
}

// allowed says which schemes s allows, for an error.
func (s Schemes) allowed() string {
	switch s {
	case HTTPSOnly:
		return "only https is"
	case HTTPSOrLoopbackHTTP:
		return "only https is, and plain http to a loopback host"
	}
	return "only http and https are"
}

// quoteScheme shortens a long scheme for an error. url.Parse accepts only
// letters, digits, "+", "-" and "." in a scheme, so it needs no quoting.
func quoteScheme(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}
