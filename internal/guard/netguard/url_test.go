package netguard

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/testnet"
)

func TestCheckURL(t *testing.T) {
	cases := []struct {
		raw  string
		want string // a part of the refusal; "" when accepted
	}{
		{"http://example.com/", ""},
		{"https://example.com/a?b=c#d", ""},
		{"HTTPS://EXAMPLE.COM", ""},
		{"  http://example.com/  ", ""},
		{"http://127.0.0.1:8080/x", ""},
		{"http://[::1]:8080/", ""},
		{"http://xn--nxasmq6b.example/", ""},
		{"file:///etc/passwd", "file: scheme is not allowed"},
		{"FILE:///etc/passwd", "file: scheme is not allowed"},
		{"gopher://127.0.0.1:6379/_FLUSHALL", "gopher: scheme is not allowed"},
		{"ftp://example.com/", "ftp: scheme is not allowed"},
		{"data:text/html,<script>alert(1)</script>", "data: scheme is not allowed"},
		{"javascript:alert(1)", "javascript: scheme is not allowed"},
		{"dict://127.0.0.1:11211/", "dict: scheme is not allowed"},
		{"ws://example.com/", "ws: scheme is not allowed"},
		{"example.com/path", "no scheme"},
		{"//example.com/path", "no scheme"},
		{"/etc/passwd", "no scheme"},
		{"", "no scheme"},
		{"http:example.com", "with a host"},
		{"http:/example.com", "no host"},
		{"http:///etc/passwd", "no host"},
		{"http://", "no host"},
		{"http://:80/", "no host"},
		{"http://user:secret@example.com/", "credentials"},
		{"http://example.com@127.0.0.1/", "credentials"},
		{"http://@example.com/", "credentials"},
		{"http://example.com:0/", "port"},
		{"http://example.com:65536/", "port"},
		{"http://example.com:/", "empty port"},
		{"http://example.com:8x/", "not a valid URL"},
		{"http://exa mple.com/", "not a valid URL"},
		{"http://example.com/\x00", "not a valid URL"},
		{"http://[::1/", "not a valid URL"},
		{"http://[fe80::1%25eth0]/", "not an IPv6 address"},
		{"http://1.2.3.09/", "not an IPv4 address"},
		{"http://0x100000000/", "not an IPv4 address"},
		{"http://example.0x7f/", "not an IPv4 address"},
		{"http://a%25b/", "forbidden character"},
		{"http://a%EF%BC%8Fb/", "forbidden character"},     // U+FF0F maps to "/"
		{"http://a%EF%BD%9Bb/", "Go's URL parser refuses"}, // U+FF5B maps to "{"
		{"http://%FF/", "not valid UTF-8"},
		{"http://xn--.com/", "empty Punycode label"},
		{"http://xn--abc-/", "not a valid domain name"},
	}
	for _, c := range cases {
		u, err := CheckURL(c.raw)
		if c.want == "" {
			if err != nil {
				t.Errorf("CheckURL(%q) = %v, want accepted", c.raw, err)
			} else if u.Scheme != "http" && u.Scheme != "https" {
				t.Errorf("CheckURL(%q) scheme %q", c.raw, u.Scheme)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrURL) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckURL(%q) = %v, want a refusal containing %q", c.raw, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("CheckURL(%q) quotes the password: %v", c.raw, err)
		}
	}
}

// TestCheckURLCanonicalHost checks that CheckURL returns the host as the
// WHATWG URL standard reads it, port and the rest of the URL kept.
func TestCheckURLCanonicalHost(t *testing.T) {
	for raw, want := range map[string]string{
		"https://127.1/":               "https://127.0.0.1/",
		"http://2130706433:8080/a?b#c": "http://127.0.0.1:8080/a?b#c",
		"http://0x7f000001/":           "http://127.0.0.1/",
		"http://0X7F.1/":               "http://127.0.0.1/",
		"http://0177.0.0.1/":           "http://127.0.0.1/",
		"http://017700000001/":         "http://127.0.0.1/",
		"http://127.0.1/":              "http://127.0.0.1/",
		"http://0/":                    "http://0.0.0.0/",
		"http://127.0.0.1./":           "http://127.0.0.1/",
		"http://%EF%BC%91%EF%BC%92%EF%BC%97.%EF%BC%90.%EF%BC%90.%EF%BC%91/": "http://127.0.0.1/",
		"http://１２７.０.０.１:81/":                                              "http://127.0.0.1:81/",
		"http://[::FFFF:127.0.0.1]:443/":                                    "http://[::ffff:7f00:1]:443/",
		"http://[::127.0.0.1]/":                                             "http://[::7f00:1]/",
		"http://[0:0:0:0:0:0:0:1]/":                                         "http://[::1]/",
		"http://EXAMPLE.com./x":                                             "http://example.com./x",
		"http://B%C3%BCcher.example/":                                       "http://xn--bcher-kva.example/",
		"http://bücher.example/":                                            "http://xn--bcher-kva.example/",
		"http://a%C2%ADb.example/":                                          "http://ab.example/",
		"http://LOCALHOST:11434/v1":                                         "http://localhost:11434/v1",
	} {
		u, err := CheckURL(raw)
		if err != nil {
			t.Errorf("CheckURL(%q): %v", raw, err)
			continue
		}
		if u.String() != want {
			t.Errorf("CheckURL(%q) = %q, want %q", raw, u, want)
		}
	}
}

// TestCheckURLSchemes checks each scheme policy, the loopback exception
// judged on the canonical host.
func TestCheckURLSchemes(t *testing.T) {
	cases := []struct {
		schemes Schemes
		raw     string
		want    string // a part of the refusal; "" when accepted
	}{
		{HTTPOrHTTPS, "http://example.com/", ""},
		{HTTPOrHTTPS, "https://example.com/", ""},
		{HTTPOrHTTPS, "ftp://example.com/", "only http and https are"},
		{HTTPSOnly, "https://example.com/", ""},
		{HTTPSOnly, "https://127.1/", ""},
		{HTTPSOnly, "http://example.com/", "the http: scheme is not allowed; only https is"},
		{HTTPSOnly, "http://127.0.0.1/", "only https is"},
		{HTTPSOnly, "ftp://example.com/", "only https is"},
		{HTTPSOrLoopbackHTTP, "https://example.com/", ""},
		{HTTPSOrLoopbackHTTP, "http://127.0.0.1:8080/v1", ""},
		{HTTPSOrLoopbackHTTP, "http://127.3.2.1/", ""},
		{HTTPSOrLoopbackHTTP, "http://127.1/", ""},
		{HTTPSOrLoopbackHTTP, "http://0x7f000001/", ""},
		{HTTPSOrLoopbackHTTP, "http://2130706433/", ""},
		{HTTPSOrLoopbackHTTP, "http://[::1]/", ""},
		{HTTPSOrLoopbackHTTP, "http://[::ffff:127.0.0.1]/", ""},
		{HTTPSOrLoopbackHTTP, "http://localhost/", ""},
		{HTTPSOrLoopbackHTTP, "http://LocalHost/", ""},
		{HTTPSOrLoopbackHTTP, "http://api.example.com/", "plain http is allowed only to a loopback host"},
		{HTTPSOrLoopbackHTTP, "http://192.168.1.5/", "plain http is allowed only to a loopback host"},
		{HTTPSOrLoopbackHTTP, "http://0/", "plain http is allowed only to a loopback host"},
		{HTTPSOrLoopbackHTTP, "http://[::]/", "plain http is allowed only to a loopback host"},
		{HTTPSOrLoopbackHTTP, "http://[::127.0.0.1]/", "plain http is allowed only to a loopback host"},
		{HTTPSOrLoopbackHTTP, "http://localhost./", "plain http is allowed only to a loopback host"},
		{HTTPSOrLoopbackHTTP, "http://app.localhost/", "plain http is allowed only to a loopback host"},
		{HTTPSOrLoopbackHTTP, "http://localhost.example.com/", "plain http is allowed only to a loopback host"},
		{HTTPSOrLoopbackHTTP, "http://127.0.0.1.example.com/", "plain http is allowed only to a loopback host"},
		{HTTPSOrLoopbackHTTP, "ftp://127.0.0.1/", "only https is, and plain http to a loopback host"},
	}
	for _, c := range cases {
		u, err := Options{Schemes: c.schemes}.CheckURL(c.raw)
		if c.want == "" {
			if err != nil {
				t.Errorf("%d: CheckURL(%q) = %v, want accepted", c.schemes, c.raw, err)
			}
			continue
		}
		if !errors.Is(err, ErrURL) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d: CheckURL(%q) = %v, %v; want ErrURL saying %q", c.schemes, c.raw, u, err, c.want)
		}
	}
}

// TestCheckURLBlocksLiteralAddresses checks that with BlockPrivate a host
// that is a non-public address, in any spelling, is refused by CheckURL.
func TestCheckURLBlocksLiteralAddresses(t *testing.T) {
	o := Options{BlockPrivate: true, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}
	for _, raw := range []string{"http://127.1/", "http://0x7f000001/", "http://0/", "http://[::ffff:169.254.169.254]/", "http://0xa9.0xfe.0xa9.0xfe/"} {
		if _, err := o.CheckURL(raw); !errors.Is(err, ErrBlocked) {
			t.Errorf("CheckURL(%q) = %v, want ErrBlocked", raw, err)
		}
	}
	for _, raw := range []string{"http://127.0.0.2/", "http://0x7f000002/", "http://8.8.8.8/", "http://example.com/"} {
		if _, err := o.CheckURL(raw); err != nil {
			t.Errorf("CheckURL(%q) = %v, want accepted", raw, err)
		}
	}
}

// TestRefusedSchemesDoNoNetworkIO sends file: and gopher: URLs through the
// client itself, aimed at a listener that counts connections, with a
// resolver that counts lookups: neither may see anything.
func TestRefusedSchemesDoNoNetworkIO(t *testing.T) {
	ln := testnet.Listen(t)
	res := &fakeResolver{names: map[string][]netip.Addr{"gopher.test": {netip.MustParseAddr("127.0.0.1")}}}
	client := NewClient(Options{Resolver: res})
	for _, raw := range []string{
		"file:///etc/passwd",
		"file://localhost/etc/passwd",
		"gopher://" + ln.Addr + "/_INFO",
		"gopher://gopher.test:" + ln.Port + "/_INFO",
		"ftp://" + ln.Addr + "/",
	} {
		if _, err := CheckURL(raw); !errors.Is(err, ErrURL) {
			t.Errorf("CheckURL(%q) = %v, want ErrURL", raw, err)
		}
		req, err := http.NewRequestWithContext(context.Background(), "GET", raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, ErrURL) {
			t.Errorf("GET %s = %v, want ErrURL", raw, err)
		}
	}
	// Prove the listener counts: a plain http request reaches it.
	if resp, err := client.Get("http://" + ln.Addr + "/"); err == nil {
		resp.Body.Close()
	}
	ln.Close()
	if n := ln.Accepted(); n != 1 {
		t.Errorf("%d connections accepted, want only the control request's", n)
	}
	if n := res.lookups.Load(); n != 0 {
		t.Errorf("%d lookups for refused URLs", n)
	}
}
