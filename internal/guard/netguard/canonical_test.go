package netguard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// noLookups is a Resolver that fails the test on every lookup.
type noLookups struct{ t *testing.T }

func (r noLookups) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.t.Errorf("the resolver was asked for %q", host)
	return nil, &net.DNSError{Err: "no lookups in this test", Name: host, IsNotFound: true}
}

// spellingsOf127 are ways to write 127.0.0.1 in a URL that Go's url.Parse
// accepts and the system resolver would be asked about.
var spellingsOf127 = []string{
	"127.1", "127.0.1", "2130706433", "0x7f000001", "0X7F000001", "0177.0.0.1", "017700000001",
	"0x7f.1", "0x7f.0.0.1", "127.0.0.1.", "１２７.０.０.１", "%EF%BC%91%EF%BC%92%EF%BC%97.1",
	"[::ffff:127.0.0.1]", "[::ffff:7f00:1]",
}

// TestNumericHostsNeverResolved sends requests to every spelling of
// 127.0.0.1 through a client whose resolver fails the test if asked: each
// reaches the server at 127.0.0.1 as 127.0.0.1 without a lookup, and each
// is refused, before any I/O, under BlockPrivate.
func TestNumericHostsNeverResolved(t *testing.T) {
	var (
		mu    sync.Mutex
		hosts []string
	)
	srv, hits := serveOn(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
		io.WriteString(w, "hello")
	})
	port := portOf(srv)
	open := NewClient(Options{Resolver: noLookups{t}})
	blocked := NewClient(Options{BlockPrivate: true, Resolver: noLookups{t}})
	for _, h := range spellingsOf127 {
		u := "http://" + h + ":" + port + "/"
		if body, err := get(t, open, u); err != nil || body != "hello" {
			t.Errorf("GET %s: %q, %v", u, body, err)
		}
		before := hits.Load()
		if _, err := get(t, blocked, u); !errors.Is(err, ErrBlocked) {
			t.Errorf("GET %s under BlockPrivate = %v, want ErrBlocked", u, err)
		}
		if hits.Load() != before {
			t.Errorf("GET %s under BlockPrivate reached the server", u)
		}
	}
	for _, h := range []string{"0", "0x0", "0.0", "[::]", "0xa9fea9fe", "0251.0376.0251.0376"} {
		if _, err := get(t, blocked, "http://"+h+":"+port+"/"); !errors.Is(err, ErrBlocked) {
			t.Errorf("GET %s under BlockPrivate = %v, want ErrBlocked", h, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hosts) != len(spellingsOf127) {
		t.Errorf("the server got %d requests, want %d", len(hosts), len(spellingsOf127))
	}
	for _, h := range hosts {
		if h != "127.0.0.1:"+port && h != "[::ffff:7f00:1]:"+port {
			t.Errorf("the server got Host %q, not the canonical host", h)
		}
	}
}

// TestDialNeverResolvesAddresses calls the dialer directly, as a transport
// that skipped the URL check would: an address in any spelling is dialled
// as that address, and never handed to the resolver.
func TestDialNeverResolvesAddresses(t *testing.T) {
	srv, hits := serveOn(t, "127.0.0.1:0", ok)
	port := portOf(srv)
	g := NewClient(Options{Resolver: noLookups{t}}).Transport.(*transport).guard
	b := NewClient(Options{BlockPrivate: true, Resolver: noLookups{t}}).Transport.(*transport).guard
	for _, h := range []string{"0x7f000001", "127.1", "2130706433", "0177.0.0.1", "[::ffff:7f00:1]"} {
		conn, err := g.dialContext(t.Context(), "tcp", h+":"+port)
		if err != nil {
			t.Errorf("dial %s: %v", h, err)
		} else {
			conn.Close()
		}
		if conn, err := b.dialContext(t.Context(), "tcp", h+":"+port); !errors.Is(err, ErrBlocked) {
			if conn != nil {
				conn.Close()
			}
			t.Errorf("dial %s under BlockPrivate = %v, want ErrBlocked", h, err)
		}
	}
	if _, err := g.dialContext(t.Context(), "tcp", "a%b:"+port); !errors.Is(err, ErrHost) {
		t.Errorf("dial a%%b = %v, want ErrHost", err)
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests on bare connections", hits.Load())
	}
}

// TestRedirectToNumericHost redirects to http://0x7f000001/: it is judged
// and dialled as 127.0.0.1, without a lookup.
func TestRedirectToNumericHost(t *testing.T) {
	private, privateHits := serveOn(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "private "+r.Host)
	})
	pport := portOf(private)
	public, _ := serveOn(t, "127.0.0.2:0", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://0x7f000001:"+pport+"/secret")
		w.WriteHeader(http.StatusFound)
	})
	c := NewClient(Options{BlockPrivate: true, Resolver: noLookups{t}, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}})
	_, err := get(t, c, public.URL+"/")
	if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), "redirect refused") || !strings.Contains(err.Error(), "127.0.0.1 is loopback") {
		t.Errorf("redirect to 0x7f000001 = %v, want ErrBlocked naming 127.0.0.1", err)
	}
	if privateHits.Load() != 0 {
		t.Errorf("the private server got %d requests", privateHits.Load())
	}
	open := NewClient(Options{Resolver: noLookups{t}})
	if body, err := get(t, open, public.URL+"/"); err != nil || body != "private 127.0.0.1:"+pport {
		t.Errorf("redirect to 0x7f000001 without BlockPrivate: %q, %v", body, err)
	}
}

// TestClientAppliesSchemes checks that the client enforces Options.Schemes
// on requests and on redirects, judging loopback on the canonical host, and
// that https is verified against the canonical host.
func TestClientAppliesSchemes(t *testing.T) {
	var secureHits atomic.Int32
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secureHits.Add(1)
		if r.URL.Path == "/to-http" {
			http.Redirect(w, r, "http://127.0.0.1:1/", http.StatusFound)
			return
		}
		io.WriteString(w, "secure")
	}))
	defer secure.Close()
	roots := x509.NewCertPool()
	roots.AddCert(secure.Certificate())
	sport := secure.URL[strings.LastIndex(secure.URL, ":")+1:]
	plain, plainHits := serveOn(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/to-name" {
			http.Redirect(w, r, "http://example.test/", http.StatusFound)
			return
		}
		io.WriteString(w, "plain")
	})
	pport := portOf(plain)

	httpsOnly := NewClient(Options{Schemes: HTTPSOnly, Resolver: noLookups{t}, TLS: &tls.Config{RootCAs: roots}})
	if body, err := get(t, httpsOnly, "https://0x7f000001:"+sport+"/"); err != nil || body != "secure" {
		t.Errorf("https to 0x7f000001: %q, %v", body, err)
	}
	if _, err := get(t, httpsOnly, "http://127.0.0.1:"+pport+"/"); !errors.Is(err, ErrURL) || !strings.Contains(err.Error(), "only https is") {
		t.Errorf("http under HTTPSOnly = %v, want ErrURL", err)
	}
	if _, err := get(t, httpsOnly, "https://127.0.0.1:"+sport+"/to-http"); !errors.Is(err, ErrURL) || !strings.Contains(err.Error(), "redirect refused") {
		t.Errorf("a redirect to http under HTTPSOnly = %v, want ErrURL", err)
	}

	loopback := NewClient(Options{Schemes: HTTPSOrLoopbackHTTP, Resolver: noLookups{t}})
	if body, err := get(t, loopback, "http://0x7f000001:"+pport+"/"); err != nil || body != "plain" {
		t.Errorf("http to 0x7f000001 under HTTPSOrLoopbackHTTP: %q, %v", body, err)
	}
	if _, err := get(t, loopback, "http://127.0.0.1:"+pport+"/to-name"); !errors.Is(err, ErrURL) || !strings.Contains(err.Error(), "plain http is allowed only to a loopback host") {
		t.Errorf("a redirect to http://example.test/ under HTTPSOrLoopbackHTTP = %v, want ErrURL", err)
	}
	if n := secureHits.Load(); n != 2 {
		t.Errorf("the https server got %d requests, want 2", n)
	}
	if n := plainHits.Load(); n != 2 {
		t.Errorf("the http server got %d requests, want 2", n)
	}
}
