package netguard

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// ErrHost reports a host that the WHATWG URL host parser refuses.
var ErrHost = errors.New("invalid host")

// A Host is a URL host in the canonical form the WHATWG URL standard gives
// it: an IPv4 address as a dotted quad, an IPv6 address in brackets, or a
// domain in lower-case ASCII. The zero Host is not valid.
type Host struct {
	s    string
	addr netip.Addr // valid for an IP address
}

// String returns the canonical serialization: "127.0.0.1", "[::1]" or
// "xn--bcher-kva.example". It is "" for the zero Host.
func (h Host) String() string { return h.s }

// Addr returns the address of a host that is an IP address, and false for
// a domain.
func (h Host) Addr() (netip.Addr, bool) { return h.addr, h.addr.IsValid() }

// IsLoopback reports whether h names this machine over loopback: an address
// in 127.0.0.0/8, ::1 or their IPv4-mapped forms, or the domain "localhost".
// Other names under .localhost do not count: whether they resolve to
// loopback depends on the resolver, and some send them on to DNS.
func (h Host) IsLoopback() bool {
	if a, ok := h.Addr(); ok {
		return a.Unmap().IsLoopback()
	}
	return h.s == "localhost"
}

// whatwgIDNA is UTS #46 with the flags of the WHATWG "domain to ASCII"
// algorithm when not strict.
var whatwgIDNA = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.CheckHyphens(false),
	idna.CheckJoiners(true),
	idna.StrictDomainName(false),
	idna.Transitional(false),
	idna.VerifyDNSLength(false),
)

// ParseHost parses host as the WHATWG URL standard's host parser does for
// the http and https schemes, and returns its canonical form. host is the
// host as Go's url.Parse decoded it (u.Hostname(), with the brackets of an
// IPv6 address put back): it is not percent-decoded again, so a "%" left in
// it is refused.
//
// "[...]" is an IPv6 address in any form the standard accepts (compressed,
// with an embedded IPv4 address), serialized with the longest run of zeros
// compressed and no embedded IPv4 (::ffff:127.0.0.1 is [::ffff:7f00:1]); a
// zone is refused. Anything else is mapped by UTS #46 (full-width letters,
// digits and dots become ASCII, upper case lower case, and so on) and
// converted to Punycode; if the result ends in a number, it must be an IPv4
// address in one to four parts of decimal, octal (leading 0) or hex (0x),
// so 127.1, 2130706433, 0x7f000001 and 0177.0.0.1 all are 127.0.0.1, and
// 1.2.3.09 is refused. A domain holding a code point the standard forbids
// (space, "#", "%", "/", ":", "?", "@", "[", "\", "]", "^", "|", "<", ">",
// controls) is refused. A refusal wraps [ErrHost].
func ParseHost(host string) (Host, error) {
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return Host{}, fmt.Errorf("%w: unclosed IPv6 bracket", ErrHost)
		}
		a, err := parseIPv6(host[1 : len(host)-1])
		if err != nil {
			return Host{}, fmt.Errorf("%w: %w", ErrHost, err)
		}
		return Host{s: "[" + serializeIPv6(a) + "]", addr: a}, nil
	}
	if host == "" {
		return Host{}, fmt.Errorf("%w: empty host", ErrHost)
	}
	if !utf8.ValidString(host) {
		// The standard decodes invalid UTF-8 to U+FFFD, which UTS #46
		// disallows.
		return Host{}, fmt.Errorf("%w: not valid UTF-8", ErrHost)
	}
	ascii, err := domainToASCII(host)
	if err != nil {
		return Host{}, err
	}
	if endsInNumber(ascii) {
		a, err := parseIPv4(ascii)
		if err != nil {
			return Host{}, fmt.Errorf("%w: %s ends in a number but is not an IPv4 address: %w", ErrHost, quoteHost(ascii), err)
		}
		return Host{s: a.String(), addr: a}, nil
	}
	return Host{s: ascii}, nil
}

// domainToASCII is the standard's "domain to ASCII" with beStrict false.
func domainToASCII(domain string) (string, error) {
	var ascii string
	switch {
	case isASCII(domain) && !hasACELabel(domain):
		ascii = strings.ToLower(domain) // the standard's fast path
	case hasEmptyACELabel(domain):
		// UTS #46 refuses it; x/net/idna makes it an empty label.
		return "", fmt.Errorf("%w: an empty Punycode label (xn--)", ErrHost)
	default:
		var err error
		ascii, err = whatwgIDNA.ToASCII(domain)
		if err != nil {
			return "", fmt.Errorf("%w: %s is not a valid domain name (UTS #46)", ErrHost, quoteHost(domain))
		}
		ascii = strings.ToLower(ascii)
		if emptiedLabel(domain, ascii) {
			// x/net/idna turns a label that maps to "xn--" (ｘｎ－－)
			// into an empty one; UTS #46 refuses it.
			return "", fmt.Errorf("%w: an empty Punycode label (xn--)", ErrHost)
		}
		// x/net/idna encodes labels its own decoder refuses (over 1024
		// code points); a canonical form must parse as itself.
		if again, err := whatwgIDNA.ToASCII(ascii); err != nil || again != ascii {
			return "", fmt.Errorf("%w: %s does not convert to ASCII and back (UTS #46)", ErrHost, quoteHost(domain))
		}
	}
	if ascii == "" {
		return "", fmt.Errorf("%w: empty domain", ErrHost)
	}
	if i := strings.IndexFunc(ascii, forbiddenDomain); i >= 0 {
		r, _ := utf8.DecodeRuneInString(ascii[i:])
		return "", fmt.Errorf("%w: the domain holds the forbidden character %q", ErrHost, r)
	}
	return ascii, nil
}

// quoteHost quotes a host for an error, shortened.
func quoteHost(s string) string {
	const max = 64
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "..."
	}
	return strconv.Quote(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// hasACELabel reports whether a label of s starts with "xn--", in any case.
func hasACELabel(s string) bool {
	for label := range strings.SplitSeq(s, ".") {
		if len(label) >= 4 && strings.EqualFold(label[:4], "xn--") {
			return true
		}
	}
	return false
}

// hasEmptyACELabel reports whether a label of s is "xn--", in any case.
func hasEmptyACELabel(s string) bool {
	for label := range strings.SplitSeq(s, ".") {
		if strings.EqualFold(label, "xn--") {
			return true
		}
	}
	return false
}

// emptiedLabel reports whether ascii, the UTS #46 conversion of domain,
// has an empty label where domain has a non-empty one. UTS #46 maps the
// full stops U+3002, U+FF0E and U+FF61 to ".".
func emptiedLabel(domain, ascii string) bool {
	dots := strings.NewReplacer("\u3002", ".", "\uff0e", ".", "\uff61", ".")
	in, out := strings.Split(dots.Replace(domain), "."), strings.Split(ascii, ".")
	if len(in) != len(out) {
		return false
	}
	for i := range in {
		if out[i] == "" && in[i] != "" {
			return true
		}
	}
	return false
}

// forbiddenDomain reports the standard's forbidden domain code points: the
// forbidden host code points, C0 controls, "%" and DEL.
func forbiddenDomain(r rune) bool {
	if r <= 0x1f || r == 0x7f {
		return true
	}
	switch r {
	case ' ', '#', '%', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|':
		return true
	}
	return false
}

// endsInNumber is the standard's "ends in a number" checker.
func endsInNumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, _, err := parseIPv4Number(last)
	return err == nil
}

// parseIPv4 is the standard's IPv4 parser.
func parseIPv4(s string) (netip.Addr, error) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, errors.New("more than four parts")
	}
	numbers := make([]uint64, len(parts))
	for i, p := range parts {
		n, _, err := parseIPv4Number(p)
		if err != nil {
			return netip.Addr{}, err
		}
		numbers[i] = n
	}
	last := len(numbers) - 1
	for _, n := range numbers[:last] {
		if n > 255 {
			return netip.Addr{}, errors.New("a part is over 255")
		}
	}
	if numbers[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, errors.New("the last part is out of range")
	}
	v := uint32(numbers[last])
	for i, n := range numbers[:last] {
		v += uint32(n) << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), nil
}

// parseIPv4Number is the standard's IPv4 number parser. It saturates at
// math.MaxUint64, which is out of range for every part.
func parseIPv4Number(s string) (n uint64, nonDecimal bool, err error) {
	if s == "" {
		return 0, false, errors.New("an empty part")
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base, nonDecimal = s[2:], 16, true
	case len(s) >= 2 && s[0] == '0':
		s, base, nonDecimal = s[1:], 8, true
	}
	for i := 0; i < len(s); i++ {
		d, ok := digit(s[i])
		if !ok || d >= base {
			return 0, false, fmt.Errorf("%s is not a number", quoteHost(s))
		}
		if n > (math.MaxUint64-d)/base {
			n = math.MaxUint64
			continue
		}
		n = n*base + d
	}
	return n, nonDecimal, nil
}

// digit returns the value of a hex digit.
func digit(c byte) (uint64, bool) {
	switch {
	case '0' <= c && c <= '9':
		return uint64(c - '0'), true
	case 'a' <= c && c <= 'f':
		return uint64(c - 'a' + 10), true
	case 'A' <= c && c <= 'F':
		return uint64(c - 'A' + 10), true
	}
	return 0, false
}

// parseIPv6 is the standard's IPv6 parser, which takes no zone.
func parseIPv6(s string) (netip.Addr, error) {
	var pieces [8]uint16
	bad := func(why string) (netip.Addr, error) {
		return netip.Addr{}, fmt.Errorf("not an IPv6 address: %s", why)
	}
	at := func(i int) byte { // the byte at i, or 0 past the end
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	piece, compress, p := 0, -1, 0
	if at(p) == ':' {
		if at(p+1) != ':' {
			return bad("a lone leading colon")
		}
		p += 2
		piece++
		compress = piece
	}
pieces:
	for p < len(s) {
		if piece == 8 {
			return bad("more than eight pieces")
		}
		if at(p) == ':' {
			if compress != -1 {
				return bad("two runs of ::")
			}
			p++
			piece++
			compress = piece
			continue
		}
		value, length := uint16(0), 0
		for length < 4 {
			d, ok := digit(at(p))
			if !ok {
				break
			}
			value = value<<4 | uint16(d)
			p++
			length++
		}
		switch at(p) {
		case '.':
			if length == 0 {
				return bad("an IPv4 part without a number")
			}
			p -= length
			if piece > 6 {
				return bad("no room for an IPv4 part")
			}
			seen := 0
			for p < len(s) {
				v4 := -1
				if seen > 0 {
					if at(p) != '.' || seen >= 4 {
						return bad("a malformed IPv4 part")
					}
					p++
				}
				if c := at(p); c < '0' || c > '9' {
					return bad("a malformed IPv4 part")
				}
				for c := at(p); '0' <= c && c <= '9'; c = at(p) {
					switch {
					case v4 == -1:
						v4 = int(c - '0')
					case v4 == 0:
						return bad("a leading zero in the IPv4 part")
					default:
						v4 = v4*10 + int(c-'0')
					}
					if v4 > 255 {
						return bad("an IPv4 number over 255")
					}
					p++
				}
				pieces[piece] = pieces[piece]<<8 | uint16(v4)
				seen++
				if seen == 2 || seen == 4 {
					piece++
				}
			}
			if seen != 4 {
				return bad("an IPv4 part of fewer than four numbers")
			}
			break pieces
		case ':':
			p++
			if p >= len(s) {
				return bad("a trailing colon")
			}
		case 0:
			if p < len(s) {
				return bad("an unexpected character")
			}
		default:
			return bad("an unexpected character")
		}
		pieces[piece] = value
		piece++
	}
	if compress != -1 {
		swaps := piece - compress
		for i := 7; i != 0 && swaps > 0; i, swaps = i-1, swaps-1 {
			pieces[i], pieces[compress+swaps-1] = pieces[compress+swaps-1], pieces[i]
		}
	} else if piece != 8 {
		return bad("fewer than eight pieces")
	}
	var b [16]byte
	for i, v := range pieces {
		b[2*i], b[2*i+1] = byte(v>>8), byte(v)
	}
	return netip.AddrFrom16(b), nil
}

// serializeIPv6 writes a the standard's way, without brackets: the first
// longest run of two or more zero pieces compressed, lower-case hex, and
// never an embedded IPv4 address.
func serializeIPv6(a netip.Addr) string {
	b := a.As16()
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	compress, best := -1, 1
	for i := 0; i < 8; {
		if pieces[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > best {
			compress, best = i, j-i
		}
		i = j
	}
	var out strings.Builder
	for i := 0; i < 8; i++ {
		if i == compress {
			if i == 0 {
				out.WriteString("::")
			} else {
				out.WriteString(":")
			}
			i += best - 1
			continue
		}
		out.WriteString(strconv.FormatUint(uint64(pieces[i]), 16))
		if i != 7 {
			out.WriteString(":")
		}
	}
	return out.String()
}
