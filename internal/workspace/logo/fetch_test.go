package logo

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/guard/netguard"
)

// iconServer is an https test server on 127.0.0.1 that counts requests by
// path.
type iconServer struct {
	*httptest.Server
	hits map[string]*atomic.Int32 // by path; "" counts every request
}

// newIconServer serves each path's body with Content-Type image/png and
// status 200, whatever the body is; other paths get h.
func newIconServer(t *testing.T, bodies map[string][]byte, h http.HandlerFunc) *iconServer {
	t.Helper()
	s := &iconServer{hits: map[string]*atomic.Int32{}}
	var all atomic.Int32
	s.hits[""] = &all
	for p := range bodies {
		s.hits[p] = new(atomic.Int32)
	}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		all.Add(1)
		if b, ok := bodies[r.URL.Path]; ok {
			s.hits[r.URL.Path].Add(1)
			w.Header().Set("Content-Type", "image/png")
			w.Write(b)
			return
		}
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// requests returns how many requests the server got, in all.
func (s *iconServer) requests() int32 { return s.hits[""].Load() }

// client returns the netguard client the workspace would use, trusting the
// server's certificate and, with allow, reopening the server's address.
func (s *iconServer) client(t *testing.T, allow bool) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	o := netguard.Options{BlockPrivate: true, Timeout: 5 * time.Second, TLS: &tls.Config{RootCAs: pool}}
	if allow {
		a := s.Listener.Addr().(*net.TCPAddr).AddrPort().Addr().Unmap()
		o.Allow = []netip.Prefix{netip.PrefixFrom(a, a.BitLen())}
	}
	return netguard.NewClient(o)
}

func TestFetchPNG(t *testing.T) {
	icon := pngOf(t, 16, 16, red)
	srv := newIconServer(t, map[string][]byte{"/logo.png": icon}, nil)
	f := NewFetcher(srv.client(t, true))
	got, err := f.Fetch(context.Background(), srv.URL+"/logo.png")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := DataURL(icon)
	if got != want || !strings.HasPrefix(got, "data:image/png;base64,") {
		t.Errorf("Fetch = %.60s...", got)
	}
}

// TestFetchBlocksLoopback proves the public-host rule holds with the client
// the workspace passes: without Allow, the loopback server is not reached.
func TestFetchBlocksLoopback(t *testing.T) {
	srv := newIconServer(t, map[string][]byte{"/logo.png": pngOf(t, 16, 16, red)}, nil)
	f := NewFetcher(srv.client(t, false))
	got, err := f.Fetch(context.Background(), srv.URL+"/logo.png")
	if !errors.Is(err, netguard.ErrBlocked) || got != "" {
		t.Errorf("Fetch = %q, %v; want ErrBlocked", got, err)
	}
	if n := srv.requests(); n != 0 {
		t.Errorf("the server got %d requests", n)
	}
}

// TestFetchChecksContent serves other types under a .png name and a PNG
// Content-Type: the bytes decide.
func TestFetchChecksContent(t *testing.T) {
	var g, j bytes.Buffer
	if err := gif.Encode(&g, image.NewPaletted(image.Rect(0, 0, 16, 16), []color.Color{color.Black}), nil); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&j, image.NewGray(image.Rect(0, 0, 16, 16)), nil); err != nil {
		t.Fatal(err)
	}
	icon := pngOf(t, 16, 16, red)
	srv := newIconServer(t, map[string][]byte{
		"/gif/logo.png":       g.Bytes(),
		"/jpeg/logo.png":      j.Bytes(),
		"/html/logo.png":      []byte(`<!doctype html><html><body><script>alert(1)</script></body></html>`),
		"/truncated/logo.png": icon[:len(icon)/2],
		"/svg/logo.png":       []byte(doc(`<script>alert(1)</script>`)),
	}, nil)
	f := NewFetcher(srv.client(t, true))
	for _, p := range []string{"/gif/logo.png", "/jpeg/logo.png", "/html/logo.png", "/truncated/logo.png"} {
		got, err := f.Fetch(context.Background(), srv.URL+p)
		if err == nil || got != "" {
			t.Errorf("Fetch %s = %.40q, %v; want an error", p, got, err)
		}
		if n := srv.hits[p].Load(); n != 1 {
			t.Errorf("%s: %d requests, want 1", p, n)
		}
	}
	got, err := f.Fetch(context.Background(), srv.URL+"/svg/logo.png")
	if err != nil {
		t.Fatal(err)
	}
	if svg := decodeSVGURL(t, got); strings.Contains(svg, "script") {
		t.Errorf("SVG served as PNG came back as %s", svg)
	}
}

func TestFetchRefusesRedirect(t *testing.T) {
	srv := newIconServer(t, map[string][]byte{"/logo.png": pngOf(t, 16, 16, red)}, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/logo.png", http.StatusFound)
	})
	client := srv.client(t, true)
	f := NewFetcher(client)
	got, err := f.Fetch(context.Background(), srv.URL+"/moved")
	if err == nil || got != "" {
		t.Errorf("Fetch = %.40q, %v; want an error", got, err)
	}
	if n := srv.hits["/logo.png"].Load(); n != 0 {
		t.Errorf("the redirect was followed: %d requests for /logo.png", n)
	}
	// The caller's client is unchanged, and would have followed it.
	resp, err := client.Get(srv.URL + "/moved")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/logo.png" {
		t.Errorf("the caller's client got %d from %s", resp.StatusCode, resp.Request.URL.Path)
	}
}

func TestFetchStatusAndSize(t *testing.T) {
	icon := pngOf(t, 16, 16, red)
	srv := newIconServer(t, map[string][]byte{"/big": make([]byte, 40<<10)}, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/404":
			w.WriteHeader(http.StatusNotFound)
			w.Write(icon)
		case "/500":
			w.WriteHeader(http.StatusInternalServerError)
			w.Write(icon)
		case "/203":
			w.WriteHeader(http.StatusNonAuthoritativeInfo)
			w.Write(icon)
		case "/304":
			w.WriteHeader(http.StatusNotModified)
		case "/big-declared":
			w.Header().Set("Content-Length", "40960")
			w.Write(make([]byte, 40960))
		case "/big-chunked":
			for range 40 {
				w.Write(make([]byte, 1<<10))
				w.(http.Flusher).Flush()
			}
		}
	})
	f := NewFetcher(srv.client(t, true))
	for _, p := range []string{"/404", "/500", "/203", "/304"} {
		if got, err := f.Fetch(context.Background(), srv.URL+p); err == nil || got != "" {
			t.Errorf("Fetch %s = %.40q, %v; want an error", p, got, err)
		}
	}
	for _, p := range []string{"/big", "/big-declared", "/big-chunked"} {
		if got, err := f.Fetch(context.Background(), srv.URL+p); !errors.Is(err, ErrTooLarge) || got != "" {
			t.Errorf("Fetch %s = %.40q, %v; want ErrTooLarge", p, got, err)
		}
	}
	if n := srv.requests(); n != 7 {
		t.Errorf("%d requests, want 7", n)
	}
}

// countingTransport fails every request and counts them.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	c.n.Add(1)
	return nil, errors.New("no network in this test")
}

func TestFetchRefusesBeforeNetwork(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("plain HTTP server got %s", r.URL)
	}))
	defer plain.Close()
	tr := &countingTransport{}
	f := NewFetcher(&http.Client{Transport: tr})
	for _, src := range []string{
		plain.URL + "/logo.png",
		"HTTP://example.com/logo.png",
		"file:///etc/passwd",
		"javascript:alert(1)",
		"ftp://example.com/logo.png",
		"gopher://example.com/",
		"//example.com/logo.png",
		"logo.png",
		"",
		"https:///logo.png",
		"https:example.com/logo.png",
		"https://user:secret@example.com/logo.png",
		"https://user@example.com/logo.png",
		"https://@example.com/logo.png",
		"https://example.com/" + strings.Repeat("a", 2048),
		"https://exa mple.com/",
	} {
		got, err := f.Fetch(context.Background(), src)
		if !errors.Is(err, ErrURL) || got != "" {
			t.Errorf("Fetch(%.50q) = %q, %v; want ErrURL", src, got, err)
		}
		if strings.Contains(src, "secret") && err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the error quotes the password: %v", err)
		}
	}
	if n := tr.n.Load(); n != 0 {
		t.Errorf("%d requests reached the transport", n)
	}
	// The length limit is 2048 bytes, not less.
	if _, err := f.Fetch(context.Background(), "https://example.com/"+strings.Repeat("a", 2048-20)); errors.Is(err, ErrURL) || tr.n.Load() != 1 {
		t.Errorf("a 2048-byte URL: %v, %d requests", err, tr.n.Load())
	}
}

func TestFetchDataURL(t *testing.T) {
	icon := pngOf(t, 16, 16, red)
	pngURL, _ := DataURL(icon)
	evil := doc(`<script>alert(1)</script><g onload="alert(2)"/>`)
	f := NewFetcher(nil) // no client: no network at all
	for _, tt := range []struct {
		name, src string
		png       bool
	}{
		{"percent-encoded SVG", "data:image/svg+xml," + url.PathEscape(evil), false},
		{"plain SVG", "data:image/svg+xml;utf8," + strings.ReplaceAll(evil, "#", "%23"), false},
		{"base64 SVG declared as PNG", "data:image/png;base64," + b64(evil), false},
		{"base64 with spaces, no padding", "DATA:image/svg+xml;BASE64," + strings.TrimRight(b64(evil), "=")[:20] + " \n" + strings.TrimRight(b64(evil), "=")[20:], false},
		{"PNG", pngURL, true},
		{"PNG declared as SVG", "data:image/svg+xml;base64," + strings.TrimPrefix(pngURL, "data:image/png;base64,"), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.Fetch(context.Background(), tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if tt.png {
				if got != pngURL {
					t.Errorf("Fetch = %.60s...", got)
				}
				return
			}
			svg := decodeSVGURL(t, got)
			if strings.Contains(svg, "script") || strings.Contains(svg, "onload") || !strings.Contains(svg, keptHarmless[0]) {
				t.Errorf("Fetch gave %s", svg)
			}
		})
	}
	for _, src := range []string{
		"data:image/png;base64",
		"data:image/png;base64,!!!!",
		"data:image/svg+xml,%zz",
		"data:text/html,<script>alert(1)</script>",
		"data:image/png;base64," + b64(string(make([]byte, MaxBytes+1))),
	} {
		if got, err := f.Fetch(context.Background(), src); err == nil || got != "" {
			t.Errorf("Fetch(%.40q) = %.40q, %v; want an error", src, got, err)
		}
	}
	if _, err := f.Fetch(context.Background(), "https://example.com/logo.png"); !errors.Is(err, ErrURL) {
		t.Errorf("a Fetcher without a client fetched https: %v", err)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestFetchCache(t *testing.T) {
	srv := newIconServer(t, map[string][]byte{"/logo.png": pngOf(t, 16, 16, red)}, nil)
	f := NewFetcher(srv.client(t, true))
	ctx := context.Background()

	first, err := f.Fetch(ctx, srv.URL+"/logo.png")
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.Fetch(ctx, srv.URL+"/logo.png")
	if err != nil || second != first {
		t.Errorf("second Fetch = %.40q, %v", second, err)
	}
	if n := srv.hits["/logo.png"].Load(); n != 1 {
		t.Errorf("%d requests for two fetches, want 1", n)
	}

	// A failure is remembered for failureTTL, then tried again.
	now := time.Now()
	f.now = func() time.Time { return now }
	for range 2 {
		if _, err := f.Fetch(ctx, srv.URL+"/missing.png"); err == nil {
			t.Error("Fetch of a 404 succeeded")
		}
	}
	if n := srv.requests(); n != 2 {
		t.Errorf("%d requests after two failed fetches, want 2 in all", n)
	}
	now = now.Add(failureTTL)
	f.Fetch(ctx, srv.URL+"/missing.png")
	if n := srv.requests(); n != 3 {
		t.Errorf("%d requests after the failure expired, want 3 in all", n)
	}

	// A failure because the caller gave up is not remembered.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := f.Fetch(cancelled, srv.URL+"/other.png"); err == nil {
		t.Error("Fetch with a cancelled context succeeded")
	}
	if _, ok := f.lookup(srv.URL + "/other.png"); ok {
		t.Error("a cancelled fetch was cached")
	}
}

func TestFetcherCacheBound(t *testing.T) {
	f := NewFetcher(nil)
	for i := range cacheSize + 10 {
		f.store("https://example.com/"+string(rune('a'+i%26))+strings.Repeat("x", i), "v", nil)
	}
	if len(f.cache) != cacheSize || len(f.order) != cacheSize {
		t.Errorf("cache holds %d entries, order %d; want %d", len(f.cache), len(f.order), cacheSize)
	}
	if _, ok := f.lookup("https://example.com/a"); ok {
		t.Error("the oldest entry was kept")
	}
	last := cacheSize + 9
	if _, ok := f.lookup("https://example.com/" + string(rune('a'+last%26)) + strings.Repeat("x", last)); !ok {
		t.Error("the newest entry was dropped")
	}
}

// failResolver fails the test if it is asked to look anything up.
type failResolver struct{ t *testing.T }

func (r failResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.t.Errorf("the resolver was asked for %q", host)
	return nil, &net.DNSError{Err: "no lookups in this test", Name: host, IsNotFound: true}
}

// TestFetchCanonicalHost fetches an icon by numeric spellings of
// 127.0.0.1: each is fetched from 127.0.0.1 by address (the certificate is
// checked against it), all share one cache entry, none is looked up, and
// under the public-host rule each is refused before any request; plain http
// to loopback is refused too, whatever its spelling.
func TestFetchCanonicalHost(t *testing.T) {
	srv := newIconServer(t, map[string][]byte{"/logo.png": pngOf(t, 16, 16, red)}, nil)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	o := netguard.Options{BlockPrivate: true, Resolver: failResolver{t}, TLS: &tls.Config{RootCAs: pool}}
	blocked := NewFetcher(netguard.NewClient(o))
	o.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	allowed := NewFetcher(netguard.NewClient(o))
	spellings := []string{"0x7f000001", "2130706433", "127.1", "0177.0.0.1", "127.0.0.1"}
	for _, h := range spellings {
		src := "https://" + h + ":" + port + "/logo.png"
		if got, err := allowed.Fetch(t.Context(), src); err != nil || !strings.HasPrefix(got, "data:image/png;base64,") {
			t.Errorf("Fetch(%s) = %.40q, %v", src, got, err)
		}
		if _, err := blocked.Fetch(t.Context(), src); !errors.Is(err, netguard.ErrBlocked) {
			t.Errorf("Fetch(%s) under the public-host rule = %v, want ErrBlocked", src, err)
		}
		if _, err := allowed.Fetch(t.Context(), "http://"+h+":"+port+"/logo.png"); !errors.Is(err, ErrURL) || !strings.Contains(err.Error(), "only https is") {
			t.Errorf("Fetch(http://%s) = %v, want ErrURL", h, err)
		}
	}
	if n := srv.requests(); n != 1 {
		t.Errorf("the server got %d requests for %d spellings of one URL, want 1", n, len(spellings))
	}
}
