package netguard

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// echoServer listens on 127.0.0.1, echoes every line it is sent, and
// counts the connections it accepts.
func echoServer(t *testing.T) (addr string, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = &atomic.Int32{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String(), accepted
}

// newBroker starts a broker for o, closed when the test ends.
func newBroker(t *testing.T, o BrokerOptions) *Broker {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	b, err := NewBroker(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// connect sends one CONNECT request for target to b and reads the answer.
// On 200 it returns the tunnel; otherwise the body is the reason.
func connect(t *testing.T, b *Broker, target string) (status int, body string, tunnel *bufio.ReadWriter) {
	t.Helper()
	return request(t, b, fmt.Sprintf("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target))
}

func request(t *testing.T, b *Broker, raw string) (status int, body string, tunnel *bufio.ReadWriter) {
	t.Helper()
	c, err := net.Dial("unix", b.Socket())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	return resp.StatusCode, "", bufio.NewReadWriter(br, bufio.NewWriter(c))
}

// echo sends a line through a tunnel and returns what came back.
func echo(t *testing.T, rw *bufio.ReadWriter, line string) string {
	t.Helper()
	rw.WriteString(line + "\n")
	rw.Flush()
	got, err := rw.ReadString('\n')
	if err != nil {
		t.Fatalf("echo %q: %v", line, err)
	}
	return strings.TrimSuffix(got, "\n")
}

// TestBrokerTunnelsGrantedHost: a CONNECT to a granted host opens a tunnel
// to it, whichever way the request spells the host, as long as it is the
// same host and port once both are canonical; the broker's socket is in a
// fresh directory only its user may enter.
func TestBrokerTunnelsGrantedHost(t *testing.T) {
	addr, accepted := echoServer(t)
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	b := newBroker(t, BrokerOptions{Hosts: []string{"127.0.0.1:" + port}, Allow: loopback})
	for _, target := range []string{"127.0.0.1:" + port, "127.1:" + port, "0x7f000001:0" + port} {
		status, body, tunnel := connect(t, b, target)
		if status != http.StatusOK {
			t.Fatalf("CONNECT %s: %d %s", target, status, body)
		}
		if got := echo(t, tunnel, "hello "+target); got != "hello "+target {
			t.Errorf("through the tunnel to %s: %q", target, got)
		}
	}
	if n := accepted.Load(); n != 3 {
		t.Errorf("the server accepted %d connections, want 3", n)
	}
	fi, err := os.Stat(b.dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the socket's directory: %v, %v; want mode 0700", fi.Mode(), err)
	}
	if got := b.Refusals(); len(got) != 0 {
		t.Errorf("refusals: %v", got)
	}
}

// TestBrokerRefusesHostNotGranted: a CONNECT to a host or port not granted
// gets 403 naming it, reaches nothing, and is kept as a refusal; so does a
// request that is not CONNECT (405) and a malformed target (400).
func TestBrokerRefusesHostNotGranted(t *testing.T) {
	granted, _ := echoServer(t)
	other, accepted := echoServer(t)
	b := newBroker(t, BrokerOptions{Hosts: []string{granted}, Allow: loopback})
	status, body, _ := connect(t, b, other)
	if status != http.StatusForbidden || !strings.Contains(body, other+" is not among the hosts granted") {
		t.Errorf("CONNECT %s: %d %q", other, status, body)
	}
	status, body, _ = request(t, b, "GET http://"+granted+"/ HTTP/1.1\r\nHost: "+granted+"\r\n\r\n")
	if status != http.StatusMethodNotAllowed || !strings.Contains(body, "only CONNECT") {
		t.Errorf("GET: %d %q", status, body)
	}
	for _, bad := range []string{"::1:80", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:+80", "exa%6dple.com:80"} {
		if status, body, _ := connect(t, b, bad); status != http.StatusBadRequest {
			t.Errorf("CONNECT %s: %d %q, want 400", bad, status, body)
		}
	}
	status, _, _ = request(t, b, "CONNECT "+granted+" HTTP/1.1\r\nX-Pad: "+strings.Repeat("a", brokerMaxHeader)+"\r\n\r\n")
	if status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("an oversized request: %d, want 431", status)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the host not granted accepted %d connections", n)
	}
	got := b.Refusals()
	if len(got) != 9 || got[0].Target != `"`+other+`"` || got[0].Status != http.StatusForbidden {
		t.Errorf("refusals: %v", got)
	}
	if again := b.Refusals(); len(again) != 0 {
		t.Errorf("refusals were not forgotten: %v", again)
	}
}

// TestBrokerRefusesPrivateAddresses: a granted host whose address is
// loopback is refused (403, naming the range) unless Allow holds it, also
// when it is a name that resolves there at dial time; nothing is reached.
func TestBrokerRefusesPrivateAddresses(t *testing.T) {
	addr, accepted := echoServer(t)
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	res := &fakeResolver{names: map[string][]netip.Addr{"rebind.test": {netip.MustParseAddr("127.0.0.1")}}}
	b := newBroker(t, BrokerOptions{Hosts: []string{addr, "rebind.test:" + port}, Resolver: res})
	for _, target := range []string{addr, "rebind.test:" + port} {
		status, body, _ := connect(t, b, target)
		if status != http.StatusForbidden || !strings.Contains(body, "127.0.0.1 is loopback") {
			t.Errorf("CONNECT %s: %d %q, want 403 naming loopback", target, status, body)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the loopback server accepted %d connections", n)
	}
	if res.lookups.Load() != 1 {
		t.Errorf("lookups: %d, want 1 (the name, never the address)", res.lookups.Load())
	}
	allowed := newBroker(t, BrokerOptions{Hosts: []string{"rebind.test:" + port}, Resolver: res, Allow: loopback})
	if status, body, tunnel := connect(t, allowed, "REBIND.test:"+port); status != http.StatusOK || echo(t, tunnel, "x") != "x" {
		t.Errorf("with loopback allowed: %d %q", status, body)
	}
}

// TestBrokerBounds: one tunnel more than MaxConns is refused with 503; a
// tunnel is closed once it carried MaxBytes, and once it is Lifetime old;
// a refused host that cannot be reached gets 502.
func TestBrokerBounds(t *testing.T) {
	addr, _ := echoServer(t)
	b := newBroker(t, BrokerOptions{Hosts: []string{addr}, Allow: loopback, MaxConns: 1, MaxBytes: 100})
	status, _, tunnel := connect(t, b, addr)
	if status != http.StatusOK {
		t.Fatalf("first tunnel: %d", status)
	}
	if status, body, _ := connect(t, b, addr); status != http.StatusServiceUnavailable || !strings.Contains(body, "1 tunnels are open") {
		t.Errorf("second tunnel: %d %q, want 503", status, body)
	}
	// Refused before its request is read, a client that writes its request
	// only once the answer came still writes it: no broken pipe.
	late, err := net.Dial("unix", b.Socket())
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	late.SetDeadline(time.Now().Add(20 * time.Second))
	lr := bufio.NewReader(late)
	if resp, err := http.ReadResponse(lr, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("third tunnel: %v", err)
	}
	if _, err := fmt.Fprintf(late, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr); err != nil {
		t.Errorf("writing the request after a 503: %v", err)
	}
	echo(t, tunnel, strings.Repeat("a", 40)) // 41 bytes each way
	tunnel.WriteString(strings.Repeat("b", 40) + "\n")
	tunnel.Flush()
	if got, err := io.ReadAll(tunnel); len(got) != 0 || err != nil {
		t.Errorf("past MaxBytes the tunnel still carried %d bytes (%v)", len(got), err)
	}

	short := newBroker(t, BrokerOptions{Hosts: []string{addr}, Allow: loopback, Lifetime: 200 * time.Millisecond})
	_, _, tunnel = connect(t, short, addr)
	start := time.Now()
	if _, err := io.ReadAll(tunnel); err != nil || time.Since(start) > 10*time.Second {
		t.Errorf("a tunnel past its lifetime: %v after %v", err, time.Since(start))
	}

	closed := testListenClosed(t)
	unreachable := newBroker(t, BrokerOptions{Hosts: []string{closed}, Allow: loopback})
	if status, body, _ := connect(t, unreachable, closed); status != http.StatusBadGateway || !strings.Contains(body, "refused") {
		t.Errorf("an unreachable host: %d %q, want 502", status, body)
	}
}

// testListenClosed returns the address of a port on 127.0.0.1 where
// nothing listens any more.
func testListenClosed(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestBrokerClosesWithContext: when the broker's context ends, its open
// tunnels end, its socket refuses connections and its directory is gone.
func TestBrokerClosesWithContext(t *testing.T) {
	addr, _ := echoServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	b, err := NewBroker(ctx, BrokerOptions{Hosts: []string{addr}, Allow: loopback, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, _, tunnel := connect(t, b, addr)
	echo(t, tunnel, "before")
	cancel()
	if got, err := io.ReadAll(tunnel); len(got) != 0 || err != nil {
		t.Errorf("the tunnel after the context ended: %q, %v", got, err)
	}
	b.Close() // waits for the close the context started
	if _, err := net.Dial("unix", b.Socket()); err == nil {
		t.Error("the socket still accepts connections")
	}
	if _, err := os.Stat(b.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket's directory is left: %v", err)
	}
}

// TestNewBrokerRefusesBadHosts: a granted host that does not parse is an
// error, and nothing is served.
func TestNewBrokerRefusesBadHosts(t *testing.T) {
	dir := t.TempDir()
	for _, h := range []string{"example.com", "example.com:0", "::1:443", "[::1]", "a b:80", ""} {
		if b, err := NewBroker(context.Background(), BrokerOptions{Hosts: []string{h}, Dir: dir}); err == nil {
			b.Close()
			t.Errorf("granted host %q was accepted", h)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// TestParseHostPort: hosts are put in the form ParseHost gives them, ports
// in decimal without leading zeros.
func TestParseHostPort(t *testing.T) {
	for in, want := range map[string]string{
		"example.com:443":         "example.com:443",
		"EXAMPLE.com:0443":        "example.com:443",
		"127.1:80":                "127.0.0.1:80",
		"[::FFFF:127.0.0.1]:8080": "[::ffff:7f00:1]:8080",
		"[0:0::1]:1":              "[::1]:1",
		"bücher.example:65535":    "xn--bcher-kva.example:65535",
		"localhost:3000":          "localhost:3000",
		"0177.0.0.1:80":           "127.0.0.1:80",
	} {
		got, err := ParseHostPort(in)
		if err != nil || got != want {
			t.Errorf("ParseHostPort(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", ":80", "example.com", "example.com:", "example.com:0", "example.com:65536",
		"example.com:-1", "example.com:1e3", "example.com:123456", "::1:80", "[::1]", "[::1]x:80", "[127.0.0.1]:80",
		"a b:80", "user@example.com:80", "1.2.3.09:80"} {
		if got, err := ParseHostPort(in); !errors.Is(err, ErrHost) {
			t.Errorf("ParseHostPort(%q) = %q, %v; want ErrHost", in, got, err)
		}
	}
}

// FuzzParseHostPort: ParseHostPort never panics, and its canonical form is
// a fixed point that splits into a host ParseHost keeps as it is and a port
// from 1 to 65535.
func FuzzParseHostPort(f *testing.F) {
	for _, s := range []string{"example.com:443", "[::1]:80", "127.1:0080", "::1:80", "[::1]", "bücher.example:1", "a:99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseHostPort(s)
		if err != nil {
			return
		}
		again, err := ParseHostPort(c)
		if err != nil || again != c {
			t.Fatalf("%q gives %q, which gives %q, %v", s, c, again, err)
		}
		i := strings.LastIndexByte(c, ':')
		if h, err := ParseHost(c[:i]); err != nil || h.String() != c[:i] {
			t.Fatalf("%q: host %q is not canonical: %v", s, c[:i], err)
		}
	})
}
