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
		{"http://[fe80::1%25eth0]/", ""},
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
