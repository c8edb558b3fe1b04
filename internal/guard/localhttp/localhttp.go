// Package localhttp guards HTTP servers that are meant for this machine only.
// It refuses to listen on an address that is not loopback unless remote access
// was asked for, and it refuses requests whose Host header is not local (DNS
// rebinding) or whose Origin header names another site (a web page in the
// user's browser calling the server).
package localhttp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrRemote reports a listen address that is not loopback, given without
// permission to serve remote clients.
var ErrRemote = errors.New("address is not a loopback address")

// A Listen is a checked listen address.
type Listen struct {
	Addr     string // host:port as given
	Host     string // the host part, without brackets
	Loopback bool
}

// CheckAddr parses a host:port listen address. A host that is not loopback
// (127.0.0.0/8, ::1 or localhost), including an empty host or a name, is
// refused with [ErrRemote] unless allowRemote is true.
func CheckAddr(addr string, allowRemote bool) (Listen, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return Listen{}, fmt.Errorf("listen address %q: want host:port, such as 127.0.0.1:8080", addr)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		return Listen{}, fmt.Errorf("listen address %q: port %q is not a number from 0 to 65535", addr, port)
	}
	l := Listen{Addr: addr, Host: host, Loopback: IsLoopbackHost(host)}
	if !l.Loopback && !allowRemote {
		return Listen{}, fmt.Errorf("listen address %q: %w", addr, ErrRemote)
	}
	return l, nil
}

// IsLoopbackHost reports whether host (no port, no brackets) names this
// machine over loopback: localhost, or an address in 127.0.0.0/8 or ::1.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// Guard wraps next and refuses, with 403 Forbidden, any request whose Host
// is not local and any request carrying an Origin that is neither local nor
// the server's own. For a server listening on a non-loopback address, the
// listen host is accepted as a Host too; one listening on every interface
// (an empty or unspecified host) accepts any Host.
func Guard(l Listen, next http.Handler) http.Handler {
	return GuardRecording(l, next, nil)
}

// GuardRecording is [Guard] that also tells refused, when not nil, of each
// request it refuses and why ("host" or "origin"), before answering it.
func GuardRecording(l Listen, next http.Handler, refused func(r *http.Request, reason string)) http.Handler {
	anyHost := false
	if l.Host == "" {
		anyHost = true
	} else if ip, err := netip.ParseAddr(l.Host); err == nil && ip.IsUnspecified() {
		anyHost = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := hostOnly(r.Host)
		hostOK := IsLoopbackHost(host) || anyHost || (!l.Loopback && strings.EqualFold(host, l.Host))
		if !hostOK {
			if refused != nil {
				refused(r, "host")
			}
			http.Error(w, "forbidden: the Host header does not name this machine", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, r.Host) {
			if refused != nil {
				refused(r, "origin")
			}
			http.Error(w, "forbidden: cross-origin request", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// originAllowed accepts an http or https origin on a loopback host or on the
// very host and port the request was sent to.
func originAllowed(origin, requestHost string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
		return false
	}
	return IsLoopbackHost(u.Hostname()) || strings.EqualFold(u.Host, requestHost)
}

// hostOnly strips the port and brackets from a Host header value.
func hostOnly(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// Serve serves hs on ln until ctx is done, then shuts it down, giving
// requests in flight up to 5 seconds to finish.
func Serve(ctx context.Context, hs *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return hs.Shutdown(shutdown)
	}
}
