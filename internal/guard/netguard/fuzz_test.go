package netguard

import (
	"errors"
	"net/netip"
	"testing"
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
