package netguard

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults and bounds of a [Broker].
const (
	DefaultBrokerConns    = 16               // tunnels open at once
	DefaultTunnelBytes    = 64 << 20         // bytes one tunnel carries, both ways together
	DefaultTunnelLifetime = 5 * time.Minute  // how long one tunnel stays open
	brokerDialTimeout     = 10 * time.Second // connecting to a granted host
	brokerHeaderTimeout   = 10 * time.Second // reading a CONNECT request
	brokerMaxHeader       = 8 << 10          // bytes of a CONNECT request
	maxRefusals           = 32               // refusals kept until Refusals takes them
	maxSocketPath         = 107              // bytes of a Unix socket's path (sun_path, less its NUL)
)

// BrokerOptions configure a [Broker].
type BrokerOptions struct {
	// Hosts are the granted "host:port" pairs, each read by [ParseHostPort];
	// a CONNECT request must name one of them exactly, after both are put in
	// canonical form.
	Hosts []string
	// Allow lists the address prefixes that stay reachable: a broker always
	// refuses every other address [NonPublic] reports (loopback, private,
	// link-local...), whatever name leads to it.
	Allow []netip.Prefix
	// Resolver looks up host names; nil means net.DefaultResolver.
	Resolver Resolver
	// Dir is where the broker makes its own directory (mode 0700) for its
	// socket; "" means os.TempDir(). A socket's path is at most 107 bytes.
	Dir string
	// MaxConns bounds the tunnels open at once (DefaultBrokerConns if 0);
	// one more is refused with 503.
	MaxConns int
	// MaxBytes bounds what one tunnel carries, both ways together
	// (DefaultTunnelBytes if 0); past it the tunnel is closed.
	MaxBytes int64
	// Lifetime bounds how long one tunnel stays open (DefaultTunnelLifetime
	// if 0).
	Lifetime time.Duration
}

// A Refusal is a CONNECT request a [Broker] refused, or could not serve.
type Refusal struct {
	Target string // what the request asked for, quoted and cut to 200 bytes
	Status int    // the HTTP status it got
	Reason string
}

func (r Refusal) String() string {
	return fmt.Sprintf("%s: %d %s", r.Target, r.Status, r.Reason)
}

// A Broker is a sandbox's one way to the network: an HTTP CONNECT proxy
// served on a Unix socket that the sandbox is given. It opens a tunnel only
// to the granted hosts, through the same dialer as [NewClient] with
// [Options.BlockPrivate]: a name is resolved and every address checked when
// it is dialled, and loopback, private and link-local addresses are refused
// unless [BrokerOptions.Allow] holds them. Anything else gets an HTTP error
// status, with the reason in its body, and is kept for [Broker.Refusals]:
// a request that is not CONNECT (405), a malformed or oversized one (400,
// 431), a host not granted or an address refused (403), one tunnel too many
// (503), a host that cannot be reached (502). Tunnels are bounded in number,
// bytes and time, and all of them end when the broker is closed or its
// context ends.
type Broker struct {
	o      BrokerOptions
	hosts  map[string]bool // canonical host:port
	guard  *guard
	dir    string
	socket string
	ln     *net.UnixListener
	slots  chan struct{}
	// lingering holds a place per connection refused before its request
	// was read, while linger drains it.
	lingering chan struct{}
	stop      func() bool // of context.AfterFunc
	wg        sync.WaitGroup
	once      sync.Once

	mu       sync.Mutex
	closed   bool
	conns    map[net.Conn]struct{}
	refusals []Refusal
	dropped  int
}

// NewBroker starts a broker for o, serving on a new socket in a fresh
// directory, until Close is called or ctx ends.
func NewBroker(ctx context.Context, o BrokerOptions) (*Broker, error) {
	hosts := map[string]bool{}
	for _, h := range o.Hosts {
		c, err := ParseHostPort(h)
		if err != nil {
			return nil, fmt.Errorf("broker: granted host: %w", err)
		}
		hosts[c] = true
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultBrokerConns
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultTunnelBytes
	}
	if o.Lifetime <= 0 {
		o.Lifetime = DefaultTunnelLifetime
	}
	parent := o.Dir
	if parent == "" {
		parent = os.TempDir()
	}
	parent, err := filepath.EvalSymlinks(parent)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	dir, err := os.MkdirTemp(parent, "zero-broker-")
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	socket := filepath.Join(dir, "broker.sock")
	if len(socket) > maxSocketPath {
		os.Remove(dir)
		return nil, fmt.Errorf("broker: socket path %s is longer than %d bytes", socket, maxSocketPath)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("broker: %w", err)
	}
	b := &Broker{o: o, hosts: hosts, dir: dir, socket: socket, ln: ln, slots: make(chan struct{}, o.MaxConns),
		lingering: make(chan struct{}, maxLingering),
		conns:     map[net.Conn]struct{}{},
		guard:     newGuard(Options{BlockPrivate: true, Allow: o.Allow, Resolver: o.Resolver}, brokerDialTimeout)}
	b.stop = context.AfterFunc(ctx, func() { b.Close() })
	b.wg.Add(1)
	go b.serve()
	return b, nil
}

// Socket is the path of the broker's Unix socket: canonical, in a
// directory of its own that only this user may enter.
func (b *Broker) Socket() string { return b.socket }

// Refusals returns the requests refused since the last call, oldest first
// (at most 32, then a last one saying how many more there were), and
// forgets them.
func (b *Broker) Refusals() []Refusal {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.refusals
	if b.dropped > 0 {
		out = append(out, Refusal{Target: "…", Reason: fmt.Sprintf("%d more refusals not kept", b.dropped)})
	}
	b.refusals, b.dropped = nil, 0
	return out
}

// Close stops the broker: it closes its socket and every tunnel, waits for
// them, and removes its directory. It may be called more than once.
func (b *Broker) Close() error {
	var err error
	b.once.Do(func() {
		b.stop()
		b.mu.Lock()
		b.closed = true
		for c := range b.conns {
			c.Close()
		}
		b.mu.Unlock()
		err = b.ln.Close()
		b.wg.Wait()
		if rerr := os.RemoveAll(b.dir); err == nil {
			err = rerr
		}
	})
	return err
}

// track adds c to the connections Close closes; false if the broker is
// closed (then c is closed).
func (b *Broker) track(c net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		c.Close()
		return false
	}
	b.conns[c] = struct{}{}
	return true
}

func (b *Broker) untrack(c net.Conn) {
	b.mu.Lock()
	delete(b.conns, c)
	b.mu.Unlock()
	c.Close()
}

func (b *Broker) serve() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // a transient error (EMFILE...)
		}
		select {
		case b.slots <- struct{}{}:
		default:
			// Writing a short answer to a fresh Unix socket does not block.
			c.SetWriteDeadline(time.Now().Add(time.Second))
			b.refuse(c, "", http.StatusServiceUnavailable, fmt.Sprintf("%d tunnels are open already, the most a plugin may have", b.o.MaxConns))
			b.linger(c)
			continue
		}
		if !b.track(c) {
			<-b.slots
			continue
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			defer func() { <-b.slots }()
			defer b.untrack(c)
			b.handle(c)
		}()
	}
}

// handle reads one CONNECT request from c and, if it may, opens the tunnel
// and carries it until either side ends, or its bounds.
func (b *Broker) handle(c net.Conn) {
	c.SetDeadline(time.Now().Add(brokerHeaderTimeout))
	limit := &headerLimit{r: c, left: brokerMaxHeader}
	br := bufio.NewReaderSize(limit, 1024)
	req, err := http.ReadRequest(br)
	if err != nil {
		switch {
		case limit.left <= 0:
			b.refuse(c, "", http.StatusRequestHeaderFieldsTooLarge, fmt.Sprintf("the request is over %d bytes", brokerMaxHeader))
		case !errors.Is(err, io.EOF):
			b.refuse(c, "", http.StatusBadRequest, "not an HTTP request")
		}
		return
	}
	target := req.RequestURI
	if req.Method != http.MethodConnect {
		b.refuse(c, target, http.StatusMethodNotAllowed, "only CONNECT host:port is served: a plugin reaches its granted hosts through tunnels")
		return
	}
	canonical, err := ParseHostPort(target)
	if err != nil {
		b.refuse(c, target, http.StatusBadRequest, err.Error())
		return
	}
	if !b.hosts[canonical] {
		b.refuse(c, target, http.StatusForbidden, canonical+" is not among the hosts granted (network.hosts)")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), brokerDialTimeout)
	up, err := b.guard.dialContext(ctx, "tcp", canonical)
	cancel()
	if err != nil {
		status := http.StatusBadGateway
		if errors.Is(err, ErrBlocked) {
			status = http.StatusForbidden
		}
		b.refuse(c, target, status, err.Error())
		return
	}
	if !b.track(up) {
		return
	}
	defer b.untrack(up)
	c.SetDeadline(time.Now().Add(b.o.Lifetime))
	up.SetDeadline(time.Now().Add(b.o.Lifetime))
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	limit.left = math.MaxInt64 // the tunnel is bounded by its own count
	left := &atomic.Int64{}
	left.Store(b.o.MaxBytes)
	done := make(chan struct{})
	go func() {
		carry(up, br, left, c, up) // what br holds beyond the request, then the rest
		close(done)
	}()
	carry(c, up, left, c, up)
	<-done
}

// carry copies from src to dst until src ends, then closes dst for
// writing. Past the bytes left (shared by both ways) it closes both ends.
func carry(dst io.Writer, src io.Reader, left *atomic.Int64, ends ...net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if left.Add(-int64(n)) < 0 {
				for _, c := range ends {
					c.Close()
				}
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				for _, c := range ends {
					c.Close()
				}
				return
			}
		}
		if err != nil {
			if cw, ok := dst.(interface{ CloseWrite() error }); ok && errors.Is(err, io.EOF) {
				cw.CloseWrite()
			} else {
				for _, c := range ends {
					c.Close()
				}
			}
			return
		}
	}
}

// refuse answers c with status and reason, and keeps the refusal.
func (b *Broker) refuse(c net.Conn, target string, status int, reason string) {
	if len(target) > 200 {
		target = target[:200]
	}
	r := Refusal{Target: strconv.Quote(target), Status: status, Reason: reason}
	b.mu.Lock()
	if len(b.refusals) < maxRefusals {
		b.refusals = append(b.refusals, r)
	} else {
		b.dropped++
	}
	b.mu.Unlock()
	body := "zero: " + reason + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
}

// linger closes a connection refused before its request was read: it stops
// writing, drops what the client sends for up to a second, then closes, so
// that a client still writing its request reads the answer instead of a
// broken pipe. At most maxLingering linger at once; past that a connection
// is closed at once.
func (b *Broker) linger(c net.Conn) {
	select {
	case b.lingering <- struct{}{}:
	default:
		c.Close()
		return
	}
	if !b.track(c) { // closed
		<-b.lingering
		return
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer func() { <-b.lingering }()
		defer b.untrack(c) // Close ends it sooner
		if uc, ok := c.(*net.UnixConn); ok {
			uc.CloseWrite()
		}
		c.SetReadDeadline(time.Now().Add(time.Second))
		io.Copy(io.Discard, io.LimitReader(c, brokerMaxHeader))
	}()
}

// maxLingering bounds the refused connections a broker drains at once.
const maxLingering = 16

// headerLimit fails reads once left bytes were read.
type headerLimit struct {
	r    io.Reader
	left int64
}

func (l *headerLimit) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, errors.New("request too large")
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// ParseHostPort reads "host:port", the authority of a URL with its port
// written, and returns it in canonical form: the host as [ParseHost] reads
// it (an IPv6 address in brackets), and the port, a decimal number from 1
// to 65535, without leading zeros. So "LOCALHOST:080" is "localhost:80" and
// "127.1:443" is "127.0.0.1:443". A refusal wraps [ErrHost].
func ParseHostPort(s string) (string, error) {
	var host, port string
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 || !strings.HasPrefix(s[end+1:], ":") {
			return "", fmt.Errorf("%w: %s is not [IPv6 address]:port", ErrHost, quoteHost(s))
		}
		host, port = s[:end+1], s[end+2:]
	} else {
		i := strings.LastIndexByte(s, ':')
		if i < 0 {
			return "", fmt.Errorf("%w: %s has no port (want host:port)", ErrHost, quoteHost(s))
		}
		host, port = s[:i], s[i+1:]
		if strings.Contains(host, ":") {
			return "", fmt.Errorf("%w: %s: an IPv6 address goes in brackets, [::1]:443", ErrHost, quoteHost(s))
		}
	}
	digits := strings.TrimLeft(port, "0")
	n, err := strconv.Atoi(digits)
	if port == "" || strings.Trim(port, "0123456789") != "" || len(digits) > 5 || err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("%w: %s: the port must be a number from 1 to 65535", ErrHost, quoteHost(s))
	}
	h, err := ParseHost(host)
	if err != nil {
		return "", err
	}
	return h.String() + ":" + strconv.Itoa(n), nil
}
