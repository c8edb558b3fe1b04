package netguard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
)

// dialContext parses the host with [ParseHost], so that an address in any
// spelling is used as an address and never handed to the resolver. It
// resolves a name itself, checks every address it resolved to, and connects
// only to addresses that passed, by address: the name is never resolved
// again between the check and the connection. The dialer's Control checks
// the address of each socket once more, just before it connects.
func (g *guard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("dial %s: bad port %q", addr, portStr)
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // SplitHostPort took the brackets off
	}
	h, err := ParseHost(host)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	var addrs []netip.Addr
	ip, isIP := h.Addr()
	if isIP {
		addrs = []netip.Addr{ip}
	} else {
		addrs, err = g.opts.Resolver.LookupNetIP(ctx, "ip", h.String())
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: h.String(), IsNotFound: true}
		}
	}
	var blocked, dialErr error
	for _, ip := range addrs {
		if err := g.opts.CheckAddr(ip); err != nil {
			if blocked == nil {
				blocked = err
			}
			continue
		}
		conn, err := g.dialer.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if dialErr == nil {
			dialErr = err
		}
	}
	if dialErr != nil {
		return nil, dialErr
	}
	if !isIP {
		return nil, fmt.Errorf("%s resolves to no allowed address: %w", h, blocked)
	}
	return nil, blocked
}

// control checks the address a socket is about to connect to.
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		if g.opts.BlockPrivate {
			return fmt.Errorf("%w: cannot check the address %q", ErrBlocked, address)
		}
		return nil
	}
	return g.opts.CheckAddr(ap.Addr())
}
