package netguard

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCheckURL checks CheckURL's promises on any input: it never panics; a
// refusal wraps ErrURL; an accepted URL is http or https, names a host, has
// no credentials and no opaque part, and its canonical form is accepted
// again with the same scheme and host (so what is checked is what is sent).
func FuzzCheckURL(f *testing.F) {
	for _, seed := range []string{
		"http://example.com/", "https://[::1]:443/x", "file:///etc/passwd", "gopher://h/_x",
		"http://user@host/", "http:opaque", "//host/", "http://h:0/", "HTTP://H", "http://[fe80::1%25en0]/",
		"http://a@b@c/", "http://h\\@evil/", "javascript:alert(1)", " http://x ", "http://%31%32%37.0.0.1/",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := CheckURL(raw)
		if err != nil {
			if !errors.Is(err, ErrURL) {
				t.Fatalf("CheckURL(%q) = %v, does not wrap ErrURL", raw, err)
			}
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("CheckURL(%q) accepted scheme %q", raw, u.Scheme)
		}
		if u.Hostname() == "" || u.User != nil || u.Opaque != "" {
			t.Fatalf("CheckURL(%q) accepted host %q, user %v, opaque %q", raw, u.Hostname(), u.User, u.Opaque)
		}
		again, err := CheckURL(u.String())
		if err != nil {
			t.Fatalf("CheckURL(%q) accepted, but its form %q is refused: %v", raw, u.String(), err)
		}
		if again.Scheme != u.Scheme || again.Host != u.Host {
			t.Fatalf("CheckURL(%q): %s://%s, then %s://%s", raw, u.Scheme, u.Host, again.Scheme, again.Host)
		}
		// The host is canonical: parsing it again changes nothing.
		host := strings.TrimSuffix(u.Host, ":"+u.Port())
		if h, err := ParseHost(host); err != nil || h.String() != host {
			t.Fatalf("CheckURL(%q) host %q is not canonical: %q, %v", raw, host, h, err)
		}
		// A literal address is judged the same way whichever form it takes.
		if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
			_, a := NonPublic(ip)
			_, b := NonPublic(ip.Unmap())
			if a != b {
				t.Fatalf("%s and its unmapped form judged differently", ip)
			}
		}
	})
}

// FuzzParseHost seeds from the WHATWG table and checks, on any input, what
// could go wrong: a panic; an error not wrapping ErrHost; a result that is
// not canonical (parsing it again changes it); an IP address whose string
// netip does not read back as the same address; a domain that is empty, not
// lower-case ASCII, holds a forbidden code point or ends in a number; and an
// ASCII input that ends in a number coming out as a domain. It also checks
// that ASCII case does not change the result.
func FuzzParseHost(f *testing.F) {
	for _, row := range hostTable(f) {
		f.Add(row.Input)
	}
	f.Fuzz(func(t *testing.T, in string) {
		h, err := ParseHost(in)
		if err != nil {
			if !errors.Is(err, ErrHost) {
				t.Fatalf("ParseHost(%q) = %v, does not wrap ErrHost", in, err)
			}
			if h != (Host{}) {
				t.Fatalf("ParseHost(%q) = %q with an error", in, h)
			}
		} else {
			checkHost(t, in, h)
		}
		if isASCII(in) && !strings.HasPrefix(in, "[") {
			if endsInNumber(strings.ToLower(in)) {
				if _, ip := h.Addr(); err == nil && !ip {
					t.Fatalf("ParseHost(%q) = domain %q, but it ends in a number", in, h)
				}
			}
		}
		if isASCII(in) {
			up, upErr := ParseHost(strings.ToUpper(in))
			if (upErr == nil) != (err == nil) || up != h {
				t.Fatalf("ParseHost(%q) = %q, %v; in upper case %q, %v", in, h, err, up, upErr)
			}
		}
	})
}

// checkHost checks the invariants of a Host that ParseHost returned.
func checkHost(t *testing.T, in string, h Host) {
	t.Helper()
	s := h.String()
	again, err := ParseHost(s)
	if err != nil || again != h {
		t.Fatalf("ParseHost(%q) = %q, which parses as %q, %v", in, s, again, err)
	}
	if a, ok := h.Addr(); ok {
		back, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
		if err != nil || back != a || a.Zone() != "" {
			t.Fatalf("ParseHost(%q) = %q, address %v; netip reads %v, %v", in, s, a, back, err)
		}
		if a.Is4() != !strings.HasPrefix(s, "[") || a.Is4() && s != a.String() {
			t.Fatalf("ParseHost(%q) = %q for address %v", in, s, a)
		}
		return
	}
	switch {
	case s == "":
		t.Fatalf("ParseHost(%q) = an empty domain", in)
	case !utf8.ValidString(s) || !isASCII(s) || strings.ToLower(s) != s:
		t.Fatalf("ParseHost(%q) = %q, not lower-case ASCII", in, s)
	case strings.ContainsFunc(s, forbiddenDomain):
		t.Fatalf("ParseHost(%q) = %q, which holds a forbidden code point", in, s)
	case endsInNumber(s):
		t.Fatalf("ParseHost(%q) = domain %q, which ends in a number", in, s)
	}
	if _, err := url.Parse("http://" + s + "/"); err != nil && !strings.ContainsAny(s, "`{}") {
		t.Fatalf("ParseHost(%q) = %q, which Go's url.Parse refuses: %v", in, s, err)
	}
}
