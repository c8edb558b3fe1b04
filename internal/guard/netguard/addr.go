package netguard

import (
	"fmt"
	"net/netip"
	"strings"
)

// A special range of addresses that are not public unicast.
type special struct {
	prefix netip.Prefix
	name   string
}

func ranges(pairs ...string) []special {
	var out []special
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, special{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return out
}

// The IPv4 ranges NonPublic reports. The documentation and benchmarking
// ranges are never legitimate destinations on the Internet, and 198.18.0.0/15
// is what fake-IP DNS modes of local proxies hand out, so an address there
// leads to something on this machine or network.
var specialIPv4 = ranges(
	"0.0.0.0/8", `the "this network" range (0.0.0.0 reaches this machine)`,
	"10.0.0.0/8", "private (RFC 1918)",
	"100.64.0.0/10", "carrier-grade NAT space (RFC 6598)",
	"127.0.0.0/8", "loopback",
	"169.254.0.0/16", "link-local (where cloud metadata services live)",
	"172.16.0.0/12", "private (RFC 1918)",
	"192.0.0.0/24", "reserved for IETF protocol assignments",
	"192.0.2.0/24", "documentation (TEST-NET-1)",
	"192.88.99.0/24", "the deprecated 6to4 relay anycast range",
	"192.168.0.0/16", "private (RFC 1918)",
	"198.18.0.0/15", "benchmarking (RFC 2544)",
	"198.51.100.0/24", "documentation (TEST-NET-2)",
	"203.0.113.0/24", "documentation (TEST-NET-3)",
	"224.0.0.0/4", "multicast",
	"255.255.255.255/32", "broadcast",
	"240.0.0.0/4", "reserved",
)

// The IPv6 ranges NonPublic reports, besides the ones embedding IPv4
// addresses (IPv4-mapped, NAT64 64:ff9b::/96, 6to4), which it judges by the
// address they embed.
//
// Local-use NAT64 (64:ff9b:1::/48, RFC 8215) is refused whole: where the
// IPv4 address sits in it depends on the translator's prefix length, which
// we cannot see, so we cannot check it. Teredo (2001::/32) is refused whole
// too: it tunnels to an IPv4 address that it carries obfuscated and that a
// local relay would reach, and it is obsolete.
var specialIPv6 = ranges(
	"::/128", "unspecified",
	"::1/128", "loopback",
	"::/96", "IPv4-compatible (deprecated)",
	"64:ff9b:1::/48", "local-use NAT64 (RFC 8215)",
	"100::/64", "discard-only",
	"2001::/32", "Teredo",
	"2001:2::/48", "benchmarking",
	"2001:10::/28", "ORCHID (not routable)",
	"2001:20::/28", "ORCHIDv2 (not routable)",
	"2001:db8::/32", "documentation",
	"3fff::/20", "documentation",
	"fc00::/7", "unique-local (fd00:ec2::254 is a cloud metadata service)",
	"fe80::/10", "link-local",
	"fec0::/10", "site-local (deprecated)",
	"ff00::/8", "multicast",
)

var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	globalIPv6 = netip.MustParsePrefix("2000::/3")
)

// NonPublic reports whether a is anything but a public unicast address, and
// names its range: loopback, private (RFC 1918), carrier-grade NAT,
// link-local (169.254.169.254 and fe80::/10), unique-local (fc00::/7, with
// fd00:ec2::254), unspecified, multicast, broadcast, documentation,
// benchmarking and other reserved ranges. IPv4-mapped IPv6 addresses
// (::ffff:127.0.0.1), NAT64 addresses (64:ff9b::/96) and 6to4 addresses
// (2002::/16) are judged by the IPv4 address they embed; IPv6 addresses
// outside 2000::/3, the global unicast space, are all reported.
func NonPublic(a netip.Addr) (rangeName string, nonPublic bool) {
	if !a.IsValid() {
		return "not a valid address", true
	}
	a = a.WithZone("")
	if a.Is4() {
		return lookup(specialIPv4, a)
	}
	if a.Is4In6() {
		return embedded("IPv4-mapped", a.Unmap())
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return embedded("NAT64", netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(a):
		return embedded("6to4", netip.AddrFrom4([4]byte(b[2:6])))
	}
	if name, ok := lookup(specialIPv6, a); ok {
		return name, true
	}
	if !globalIPv6.Contains(a) {
		return "reserved (outside the global unicast range 2000::/3)", true
	}
	return "", false
}

func lookup(table []special, a netip.Addr) (string, bool) {
	for _, s := range table {
		if s.prefix.Contains(a) {
			return s.name, true
		}
	}
	return "", false
}

// embedded judges an IPv6 address by the IPv4 address v4 it embeds.
func embedded(kind string, v4 netip.Addr) (string, bool) {
	if name, ok := lookup(specialIPv4, v4); ok {
		return fmt.Sprintf("%s, embedding %s, which is %s", kind, v4, name), true
	}
	return "", false
}

// ParseAllow parses an allow-list: comma-separated IP addresses and CIDR
// prefixes, such as "10.1.2.0/24,192.168.1.5,fd00::/8". An address stands
// for itself alone. Empty entries are skipped; an empty list is nil.
func ParseAllow(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if strings.Contains(e, "/") {
			p, err := netip.ParsePrefix(e)
			if err != nil {
				return nil, fmt.Errorf("allow-list entry %q: want an IP address or a CIDR prefix such as 10.0.0.0/8", e)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(e)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("allow-list entry %q: want an IP address or a CIDR prefix such as 10.0.0.0/8", e)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
