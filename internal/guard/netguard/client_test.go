package netguard

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeResolver answers from a fixed table and counts lookups.
type fakeResolver struct {
	names   map[string][]netip.Addr
	lookups atomic.Int32
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.lookups.Add(1)
	if a, ok := r.names[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func itoa(n int) string { return strconv.Itoa(n) }

// serveOn starts an HTTP server on addr (such as 127.0.0.2:0) and counts the
// requests it gets.
func serveOn(t *testing.T, addr string, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &hits
}

func ok(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello") }

func get(t *testing.T, c *http.Client, url string) (string, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func portOf(s *httptest.Server) string {
	return itoa(s.Listener.Addr().(*net.TCPAddr).Port)
}

func TestDefaultsHaveNoSSRFProtection(t *testing.T) {
	srv, hits := serveOn(t, "127.0.0.1:0", ok)
	c := NewClient(Options{})
	if c.Timeout != DefaultTimeout || DefaultTimeout != 30*time.Second {
		t.Errorf("timeout %v, want 30s", c.Timeout)
	}
	if body, err := get(t, c, srv.URL); err != nil || body != "hello" || hits.Load() != 1 {
		t.Errorf("loopback without BlockPrivate: %q, %v, %d hits", body, err, hits.Load())
	}
}

func TestDialRefusesPrivateAddresses(t *testing.T) {
	srv, hits := serveOn(t, "127.0.0.1:0", ok)
	port := portOf(srv)
	res := &fakeResolver{names: map[string][]netip.Addr{
		"public.test":   {netip.MustParseAddr("127.0.0.1")},
		"mixed.test":    {netip.MustParseAddr("10.255.255.1"), netip.MustParseAddr("127.0.0.1")},
		"mapped.test":   {netip.MustParseAddr("::ffff:127.0.0.1")},
		"localhost":     {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")},
		"metadata.test": {netip.MustParseAddr("169.254.169.254")},
	}}
	c := NewClient(Options{BlockPrivate: true, Resolver: res})
	for _, u := range []string{
		"http://public.test:" + port + "/",
		"http://mixed.test:" + port + "/",
		"http://mapped.test:" + port + "/",
		"http://localhost:" + port + "/",
		"http://metadata.test/latest/meta-data/",
		srv.URL,
		"http://[::ffff:127.0.0.1]:" + port + "/",
		"http://0.0.0.0:" + port + "/",
	} {
		_, err := get(t, c, u)
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("GET %s = %v, want ErrBlocked", u, err)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the private server got %d requests", hits.Load())
	}
	// The allow-list re-opens exactly what it names.
	allowed := NewClient(Options{BlockPrivate: true, Resolver: res, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if body, err := get(t, allowed, "http://public.test:"+port+"/"); err != nil || body != "hello" {
		t.Errorf("allowed address: %q, %v", body, err)
	}
	if _, err := get(t, allowed, "http://metadata.test/"); !errors.Is(err, ErrBlocked) {
		t.Errorf("an address outside the allow-list: %v, want ErrBlocked", err)
	}
}

// TestControlChecksConnectedAddress checks the last line of defence: the
// dialer's Control, which sees the address a socket is about to connect to,
// whatever resolved it.
func TestControlChecksConnectedAddress(t *testing.T) {
	g := &guard{opts: Options{BlockPrivate: true, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}.withDefaults()}
	for addr, blocked := range map[string]bool{
		"127.0.0.1:80":         true,
		"[::1]:80":             true,
		"[::ffff:10.0.0.1]:80": true,
		"169.254.169.254:80":   true,
		"[fd00:ec2::254]:80":   true,
		"127.0.0.2:80":         false,
		"8.8.8.8:443":          false,
		"not-an-address":       true,
	} {
		if err := g.control("tcp", addr, nil); (err != nil) != blocked || (blocked && !errors.Is(err, ErrBlocked)) {
			t.Errorf("control(%s) = %v, want blocked %v", addr, err, blocked)
		}
	}
	open := &guard{opts: Options{}.withDefaults()}
	if err := open.control("tcp", "127.0.0.1:80", nil); err != nil {
		t.Errorf("control without BlockPrivate = %v", err)
	}
	// A dial through the guard's dialer to a literal private address fails
	// in Control, even when the caller skips dialContext's own check.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	g.dialer = &net.Dialer{Control: g.control}
	if conn, err := g.dialer.Dial("tcp", ln.Addr().String()); !errors.Is(err, ErrBlocked) {
		if conn != nil {
			conn.Close()
		}
		t.Errorf("raw dial to %s = %v, want ErrBlocked", ln.Addr(), err)
	}
}

// TestNoProxyFromEnvironment points every proxy variable at a counting proxy
// and fetches a name (Go never proxies loopback addresses, so the test uses
// a name): the request goes straight to the target.
func TestNoProxyFromEnvironment(t *testing.T) {
	proxy, proxyHits := serveOn(t, "127.0.0.1:0", ok)
	target, targetHits := serveOn(t, "127.0.0.2:0", ok)
	for _, name := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"} {
		t.Setenv(name, proxy.URL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	res := &fakeResolver{names: map[string][]netip.Addr{"target.test": {netip.MustParseAddr("127.0.0.2")}}}
	c := NewClient(Options{Resolver: res})
	if body, err := get(t, c, "http://target.test:"+portOf(target)+"/"); err != nil || body != "hello" {
		t.Errorf("GET through the environment's proxy settings: %q, %v", body, err)
	}
	if proxyHits.Load() != 0 || targetHits.Load() != 1 {
		t.Errorf("proxy got %d requests, target %d; want 0 and 1", proxyHits.Load(), targetHits.Load())
	}
	if tr := c.Transport.(*transport); tr.base.Proxy != nil {
		t.Error("the transport has a proxy function")
	}
}

// TestRedirectsRevalidated puts a "public-looking" server (127.0.0.1, on the
// allow-list) in front of a private one (127.0.0.2): every redirect from the
// first to the second, by address or by a name that resolves to it, is
// refused, and so is a redirect to another scheme and a chain over the limit.
func TestRedirectsRevalidated(t *testing.T) {
	private, privateHits := serveOn(t, "127.0.0.2:0", ok)
	pport := portOf(private)
	var loops atomic.Int32
	public, _ := serveOn(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-private-ip":
			http.Redirect(w, r, private.URL+"/secret", http.StatusFound)
		case "/to-private-name":
			http.Redirect(w, r, "http://internal.test:"+pport+"/secret", http.StatusMovedPermanently)
		case "/to-mapped":
			http.Redirect(w, r, "http://[::ffff:127.0.0.2]:"+pport+"/secret", http.StatusTemporaryRedirect)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/to-gopher":
			http.Redirect(w, r, "gopher://127.0.0.2:"+pport+"/_x", http.StatusFound)
		case "/to-userinfo":
			http.Redirect(w, r, "http://user:pw@public.test/", http.StatusFound)
		case "/loop":
			loops.Add(1)
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/to-self":
			http.Redirect(w, r, "/final", http.StatusFound)
		default:
			io.WriteString(w, "public "+r.URL.Path)
		}
	})
	res := &fakeResolver{names: map[string][]netip.Addr{
		"public.test":   {netip.MustParseAddr("127.0.0.1")},
		"internal.test": {netip.MustParseAddr("127.0.0.2")},
	}}
	c := NewClient(Options{BlockPrivate: true, Resolver: res, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	base := "http://public.test:" + portOf(public)
	cases := []struct {
		path string
		want error
	}{
		{"/to-private-ip", ErrBlocked},
		{"/to-private-name", ErrBlocked},
		{"/to-mapped", ErrBlocked},
		{"/to-file", ErrURL},
		{"/to-gopher", ErrURL},
		{"/to-userinfo", ErrURL},
		{"/loop", ErrRedirects},
	}
	for _, tc := range cases {
		if _, err := get(t, c, base+tc.path); !errors.Is(err, tc.want) {
			t.Errorf("GET %s = %v, want %v", tc.path, err, tc.want)
		}
	}
	if privateHits.Load() != 0 {
		t.Errorf("the private server got %d requests", privateHits.Load())
	}
	if n := loops.Load(); n != DefaultMaxRedirects {
		t.Errorf("the loop was followed %d times, want %d", n, DefaultMaxRedirects)
	}
	if body, err := get(t, c, base+"/to-self"); err != nil || body != "public /final" {
		t.Errorf("an allowed redirect: %q, %v", body, err)
	}
	// Without the block, the same redirect reaches the private server.
	open := NewClient(Options{Resolver: res})
	if body, err := get(t, open, base+"/to-private-name"); err != nil || body != "hello" {
		t.Errorf("redirect without BlockPrivate: %q, %v", body, err)
	}
}

func TestBodyCap(t *testing.T) {
	const max = 1000
	srv, _ := serveOn(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		body := bytes.Repeat([]byte("x"), n)
		switch r.URL.Path {
		case "/chunked":
			w.Write(body[:n/2])
			w.(http.Flusher).Flush()
			w.Write(body[n/2:])
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			zw.Write(body)
			zw.Close()
		default:
			w.Header().Set("Content-Length", itoa(n))
			w.Write(body)
		}
	})
	c := NewClient(Options{MaxBody: max})
	for _, tc := range []struct {
		path    string
		n       int
		tooBig  bool
		message string
	}{
		{"/", max, false, ""},
		{"/", max + 1, true, "declared 1001 bytes, over the 1000-byte limit"},
		{"/chunked", max, false, ""},
		{"/chunked", 5 * max, true, "over the 1000-byte limit"},
		{"/gzip", max, false, ""},
		{"/gzip", 100 * max, true, "over the 1000-byte limit"},
	} {
		body, err := get(t, c, srv.URL+tc.path+"?n="+itoa(tc.n))
		if tc.tooBig {
			if !errors.Is(err, ErrBodyTooLarge) || !strings.Contains(err.Error(), tc.message) {
				t.Errorf("%s n=%d: %v, want ErrBodyTooLarge saying %q", tc.path, tc.n, err, tc.message)
			}
			if len(body) > max {
				t.Errorf("%s n=%d: read %d bytes past the cap", tc.path, tc.n, len(body))
			}
			continue
		}
		if err != nil || len(body) != tc.n {
			t.Errorf("%s n=%d: %d bytes, %v", tc.path, tc.n, len(body), err)
		}
	}
	if got := sizeString(DefaultMaxBody); got != "10 MiB" {
		t.Errorf("default cap reads %q", got)
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv, _ := serveOn(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	c := NewClient(Options{Timeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := get(t, c, srv.URL)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("a stalled body: %v, want a timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the timeout took %v", d)
	}
}
