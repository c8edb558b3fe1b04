package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/localhttp"
	"github.com/zero-dev/zero/internal/guard/netguard"
)

// Errors of a [Workspace] connection, each wrapping what happened.
var (
	// ErrUnreachable reports a workspace that does not answer: nothing
	// listens at its address, or it stopped (its sessions went with it).
	ErrUnreachable = errors.New("the workspace does not answer")
	// ErrTokenRefused reports a 401 from the workspace: the token was
	// revoked, or is another workspace's.
	ErrTokenRefused = errors.New("the workspace refused the token")
	// ErrSessionEnded reports a session the workspace no longer knows
	// (404): the token's sessions were closed, or the session was idle.
	ErrSessionEnded = errors.New("the workspace ended the session")
	// ErrNotWorkspace reports an answer that is not a zero workspace's
	// MCP endpoint's.
	ErrNotWorkspace = errors.New("not a zero workspace's MCP endpoint")
)

// Bounds of a [Workspace] connection.
const (
	// DefaultKeepAlive is how often a connection pings the workspace, which
	// closes a session that sends nothing for 30 minutes (an open event
	// stream does not count).
	DefaultKeepAlive = 5 * time.Minute
	// MaxExchange bounds one request and its answer: a tool call.
	MaxExchange = 30 * time.Minute
	// MaxReply bounds one answer's body.
	MaxReply = 32 << 20
	// MaxEvent bounds one event on the event stream.
	MaxEvent = 16 << 20
	// ProbeTimeout bounds [Workspace.Probe].
	ProbeTimeout = 10 * time.Second

	streamLifetime = 24 * time.Hour // one GET of the event stream, opened again after
	streamBody     = 1 << 30        // its whole body, opened again after
	streamRetries  = 5              // event streams in a row that end with nothing on them
)

// A Workspace is the remote side of a bridge: a zero workspace's MCP
// endpoint, on loopback, called with a bearer token. It is an
// [mcp.Transport] whose Connect returns the connection [Relay] takes.
type Workspace struct {
	// URL is the endpoint, such as http://127.0.0.1:7077/mcp. Its host
	// must be loopback: the token goes nowhere else.
	URL string
	// Token is the bearer token, zt_...
	Token string
	// KeepAlive is how often the connection pings the workspace once the
	// session is initialized: 0 means DefaultKeepAlive, less than 0 never.
	KeepAlive time.Duration
	// Log receives what goes wrong in the background (the event stream
	// cannot be opened); nil discards it.
	Log *slog.Logger

	retryDelay time.Duration // before the event stream is opened again; 0: a second
}

// Probe asks the workspace whether it answers at URL and takes the
// token, before any client message is relayed: a GET of the endpoint
// without a session, which a workspace refuses (400) once it has checked
// the token. It returns nil, or an error wrapping [ErrUnreachable],
// [ErrTokenRefused] or [ErrNotWorkspace], or the workspace's own refusal.
func (w *Workspace) Probe(ctx context.Context) error {
	if err := w.check(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	hc := w.client(&shared{}, ProbeTimeout, 1<<20)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.URL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return ErrTokenRefused
	case resp.StatusCode == http.StatusBadRequest, resp.StatusCode == http.StatusMethodNotAllowed:
		return nil
	}
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Code != "" {
		return fmt.Errorf("the workspace answers %d %s: %s", resp.StatusCode, e.Error.Code, e.Error.Message)
	}
	return fmt.Errorf("%w: GET %s answers %s", ErrNotWorkspace, w.URL, resp.Status)
}

// check refuses a URL that is not http(s) on a loopback host.
func (w *Workspace) check() error {
	u, err := url.Parse(w.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !localhttp.IsLoopbackHost(u.Hostname()) {
		return fmt.Errorf("workspace URL %q: want http://ADDR/mcp with ADDR on loopback", w.URL)
	}
	return nil
}

// Connect returns a connection to the workspace. Nothing is sent until
// the first Write.
func (w *Workspace) Connect(ctx context.Context) (mcp.Connection, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	sh := &shared{}
	inner, err := (&mcp.StreamableClientTransport{
		Endpoint: w.URL, HTTPClient: w.client(sh, MaxExchange, MaxReply),
		// The SDK opens its event stream only for its own ClientSession;
		// the conn opens it (listen). Answers come as JSON: nothing to
		// resume.
		DisableStandaloneSSE: true, MaxRetries: -1, MaxEventSize: MaxEvent,
	}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	c := &conn{w: w, inner: inner, sh: sh, stream: w.client(sh, streamLifetime, streamBody),
		msgs: make(chan jsonrpc.Message), failed: make(chan struct{}), pings: map[string]bool{}}
	c.life, c.end = context.WithCancel(context.WithoutCancel(ctx))
	if c.log = w.Log; c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.wg.Go(c.pump)
	return c, nil
}

// client returns the HTTP client of a connection: netguard's (http only
// to loopback, no proxy), with the token on every request, the protocol
// version once known, and no redirect followed (the token stays where it
// was sent; a 3xx is an error answer).
func (w *Workspace) client(sh *shared, timeout time.Duration, maxBody int64) *http.Client {
	hc := netguard.NewClient(netguard.Options{Schemes: netguard.HTTPSOrLoopbackHTTP, Timeout: timeout, MaxBody: maxBody})
	hc.Transport = &bearer{base: hc.Transport, token: w.Token, sh: sh}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return hc
}

// shared is what a connection's HTTP clients learn.
type shared struct {
	version atomic.Pointer[string] // the protocol version initialize negotiated
	refused atomic.Bool            // a 401 was seen
}

// bearer adds the token, and the protocol version, to every request.
type bearer struct {
	base  http.RoundTripper
	token string
	sh    *shared
}

// protocolHeader is the header the client sends the negotiated protocol
// version in, after initialize (MCP 2025-06-18 and later).
const protocolHeader = "Mcp-Protocol-Version"

func (b *bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	if v := b.sh.version.Load(); v != nil && r.Header.Get(protocolHeader) == "" {
		r.Header.Set(protocolHeader, *v)
	}
	resp, err := b.base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		b.sh.refused.Store(true)
	}
	return resp, err
}

// A conn is a connection to the workspace: the SDK's streamable client
// connection, which carries every message the client sends and the
// answers to them, and the event stream the conn opens itself once the
// session is initialized, which carries what the workspace sends
// unasked (notifications/tools/list_changed).
type conn struct {
	w      *Workspace
	inner  mcp.Connection
	sh     *shared
	stream *http.Client
	log    *slog.Logger
	life   context.Context
	end    context.CancelFunc
	wg     sync.WaitGroup
	msgs   chan jsonrpc.Message

	failOnce sync.Once
	failErr  error
	failed   chan struct{}

	closeOnce sync.Once
	closeErr  error

	mu      sync.Mutex
	initID  jsonrpc.ID      // the client's initialize call, until answered
	pings   map[string]bool // the conn's own pings, until answered
	pingSeq int
	started bool // the event stream and the keepalive started
}

func (c *conn) SessionID() string { return c.inner.SessionID() }

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.msgs:
		return msg, nil
	case <-c.failed:
		return nil, c.failErr
	case <-c.life.Done():
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.failed:
		return c.failErr
	default:
	}
	if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() && r.Method == "initialize" {
		c.mu.Lock()
		c.initID = r.ID
		c.mu.Unlock()
	}
	err := c.inner.Write(ctx, msg)
	if err == nil || ctx.Err() != nil {
		return err
	}
	err = c.explain(err)
	if fatal(err) {
		c.fail(err)
	}
	return err
}

// Close ends the session (the SDK's DELETE), then the event stream and
// the keepalive.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.inner.Close()
		c.end()
		c.wg.Wait()
	})
	return c.closeErr
}

func (c *conn) fail(err error) {
	c.failOnce.Do(func() {
		c.failErr = err
		close(c.failed)
	})
}

// explain says what err, from the SDK or the event stream, means for the
// person: one of the package's errors wrapping it, when it is one.
func (c *conn) explain(err error) error {
	var op *net.OpError
	switch {
	case c.sh.refused.Load():
		return fmt.Errorf("%w: %w", ErrTokenRefused, err)
	case errors.Is(err, mcp.ErrSessionMissing):
		return fmt.Errorf("%w: %w", ErrSessionEnded, err)
	case errors.As(err, &op) && op.Op == "dial":
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return err
}

// fatal reports the errors after which no message can get through.
func fatal(err error) bool {
	return errors.Is(err, ErrTokenRefused) || errors.Is(err, ErrSessionEnded) || errors.Is(err, ErrUnreachable)
}

// pump hands on what the SDK's connection reads, save the answers to the
// conn's own pings, and starts the event stream when initialize is
// answered.
func (c *conn) pump() {
	for {
		msg, err := c.inner.Read(c.life)
		if c.life.Err() != nil {
			return
		}
		if err != nil {
			c.fail(c.explain(err))
			return
		}
		if resp, ok := msg.(*jsonrpc.Response); ok && c.answered(resp) {
			continue
		}
		select {
		case c.msgs <- msg:
		case <-c.life.Done():
			return
		}
	}
}

// answered looks at a response: one to the conn's own ping is consumed
// (true); the one to initialize sets the protocol version and starts the
// event stream and the keepalive.
func (c *conn) answered(resp *jsonrpc.Response) bool {
	key := idKey(resp.ID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pings[key] {
		delete(c.pings, key)
		return true
	}
	if !c.initID.IsValid() || idKey(c.initID) != key {
		return false
	}
	c.initID = jsonrpc.ID{}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if resp.Error != nil || json.Unmarshal(resp.Result, &res) != nil || res.ProtocolVersion == "" || c.started {
		return false
	}
	c.sh.version.Store(&res.ProtocolVersion)
	c.started = true
	if session := c.inner.SessionID(); session != "" {
		c.wg.Go(func() { c.listen(session) })
	}
	if every := c.keepAlive(); every > 0 {
		c.wg.Go(func() { c.ping(every) })
	}
	return false
}

func idKey(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

func (c *conn) keepAlive() time.Duration {
	if c.w.KeepAlive == 0 {
		return DefaultKeepAlive
	}
	return c.w.KeepAlive
}

// ping pings the workspace every interval, so that it keeps the session.
// Its ids are strings no client of this bridge sends ("zero-bridge-ping-N").
func (c *conn) ping(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.life.Done():
			return
		case <-t.C:
		}
		c.mu.Lock()
		c.pingSeq++
		id, _ := jsonrpc.MakeID("zero-bridge-ping-" + strconv.Itoa(c.pingSeq))
		c.pings[idKey(id)] = true
		c.mu.Unlock()
		// The connection's context, not a shorter one: the SDK reads the
		// answer after Write returns, with the request's context.
		c.Write(c.life, &jsonrpc.Request{ID: id, Method: "ping", Params: json.RawMessage(`{}`)})
	}
}

// errNoStream reports a workspace that offers no event stream.
var errNoStream = errors.New("no event stream")

// listen keeps the event stream of session open: opened again when it
// ends with the session still there, the conn failed when the workspace
// stops answering, ends the session or refuses the token.
func (c *conn) listen(session string) {
	empty := 0
	for {
		progress, err := c.listenOnce(session)
		if c.life.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, errNoStream):
			return
		case fatal(err), errors.Is(err, errMalformedEvent):
			c.fail(err)
			return
		}
		if progress {
			empty = 0
		} else if empty++; empty > streamRetries {
			c.fail(fmt.Errorf("the workspace's event stream keeps failing: %w", err))
			return
		}
		delay := c.w.retryDelay
		if delay == 0 {
			delay = time.Second
		}
		select {
		case <-c.life.Done():
			return
		case <-time.After(delay):
		}
	}
}

// listenOnce reads one GET of the event stream, and reports whether any
// message came on it.
func (c *conn) listenOnce(session string) (progress bool, err error) {
	req, err := http.NewRequestWithContext(c.life, http.MethodGet, c.w.URL, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	resp, err := c.stream.Do(req)
	if err != nil {
		return false, c.explain(err)
	}
	defer resp.Body.Close()
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusOK && mediaType == "text/event-stream":
	case resp.StatusCode == http.StatusUnauthorized:
		return false, c.explain(errors.New("the event stream: 401 Unauthorized"))
	case resp.StatusCode == http.StatusNotFound:
		return false, fmt.Errorf("%w: the event stream: 404 Not Found", ErrSessionEnded)
	case resp.StatusCode == http.StatusMethodNotAllowed:
		return false, errNoStream
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return false, fmt.Errorf("the event stream: %s", resp.Status)
	default:
		c.log.Warn("the workspace offers no event stream: tools/list_changed will not arrive", "status", resp.Status, "content_type", resp.Header.Get("Content-Type"))
		return false, errNoStream
	}
	err = readEvents(resp.Body, MaxEvent, func(data []byte) error {
		msg, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			return fmt.Errorf("%w: %v", errMalformedEvent, err)
		}
		progress = true
		select {
		case c.msgs <- msg:
			return nil
		case <-c.life.Done():
			return c.life.Err()
		}
	})
	return progress, err
}
