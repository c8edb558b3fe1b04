package runtime

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/hiddentext"
	"github.com/zero-dev/zero/internal/guard/redact"
	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/plugin/host"
)

// Why a run ended, as its history says.
const (
	endIdle     = "idle"     // no call for the idle timeout
	endReplaced = "replaced" // a call came with another fingerprint or other secrets
	endStopped  = "stopped"  // the server was disabled, edited or deleted
	endRenewed  = "renewed"  // a Test or a tool set approval asked for a fresh connection
	endClosed   = "closed"   // zero serve stopped
	endTest     = "test"     // a Test's listing is done
	endLifetime = "lifetime" // it ran for MaxLifetime
	endExited   = "exited"   // it ended on its own: a crash
	endFailed   = "failed to start"
)

// endWait is how long a failed call waits for its connection to say it
// ended, to tell a crash from another failure.
const endWait = time.Second

// A server is the pool's entry for one server: its running connection if
// any, its call slots, its backoff and its logs.
type server struct {
	rt   *Runtime
	logs *logs

	mu    sync.Mutex
	slots chan struct{} // one per call in flight, of the bound it was made for

	cur       *conn
	conns     map[*conn]bool // every pool connection not yet ended: cur and the retiring ones
	starting  *attempt
	inflight  int
	idle      *time.Timer
	crashes   int       // in a row, for the backoff
	notBefore time.Time // no start before this
}

// An attempt is a start under way, which every call that needs the
// server waits for.
type attempt struct {
	done chan struct{}
	err  error
}

// A conn is one run of a server: its session, its process (stdio) and
// what it listed.
type conn struct {
	srv  *server
	spec Spec
	red  *redact.Redactor
	cs   *mcp.ClientSession
	proc *spawn.Process
	// release frees what was started for the process (a plugin's broker),
	// once it ended; nil for nothing.
	release func()
	// sandbox is a plugin's: what a call's result adds of it.
	sandbox *host.Sandbox
	run     *Run
	pooled  bool // a pool connection, not a Test's

	// changes counts the server's notifications that its tools changed,
	// as they are read off the wire (see announcing); list is the last
	// listing, made after the first `at` of them. A listing is current
	// while at == changes.
	changes atomic.Uint64
	list    atomic.Pointer[listed]
	relist  chan struct{} // held while listing again: one at a time

	calls    int           // calls using it (srv.mu)
	retiring bool          // end it once calls is 0 (srv.mu)
	closing  bool          // Zero is closing it (srv.mu)
	gone     bool          // its run has ended (srv.mu)
	reason   string        // why Zero ended it; "" until it does (srv.mu)
	ended    chan struct{} // closed once the session ended and its run is recorded
	res      spawn.Result  // how the process ended; set before ended is closed
}

// acquire takes a call slot of the server, which has limit of them, and
// one of the runtime's, waiting for them within ctx, and returns their
// release. Another limit makes new slots: the calls holding the old ones
// finish on them.
func (s *server) acquire(ctx context.Context, limit int) (func(), error) {
	s.mu.Lock()
	if cap(s.slots) != limit {
		s.slots = make(chan struct{}, limit)
	}
	slots := s.slots
	s.mu.Unlock()
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case s.rt.slots <- struct{}{}:
	case <-ctx.Done():
		<-slots
		return nil, ctx.Err()
	}
	s.mu.Lock()
	s.inflight++
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	s.mu.Unlock()
	return func() {
		<-s.rt.slots
		<-slots
		s.mu.Lock()
		s.inflight--
		s.armIdleLocked()
		s.mu.Unlock()
	}, nil
}

// armIdleLocked starts the idle timer of a running server with no call in
// flight.
func (s *server) armIdleLocked() {
	if s.inflight > 0 || s.cur == nil {
		return
	}
	if s.idle != nil {
		s.idle.Stop()
	}
	c := s.cur
	s.idle = time.AfterFunc(s.rt.o.IdleTimeout, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.cur == c && s.inflight == 0 {
			s.endLocked(c, endIdle)
		}
	})
}

// sameLaunch reports whether a connection started under a may serve b: the
// same approved fingerprint and the same secrets.
func sameLaunch(a, b Spec) bool {
	return a.Fingerprint == b.Fingerprint && maps.Equal(a.Env, b.Env) && maps.Equal(a.Headers, b.Headers)
}

// get returns the server's connection for spec, starting it if need be
// (once, for every call waiting), after the backoff of a crash. A
// connection started under another fingerprint or other secrets is ended
// and replaced. The caller calls done(c) when it no longer uses c.
func (s *server) get(ctx context.Context, spec Spec) (*conn, error) {
	for {
		s.mu.Lock()
		if c := s.cur; c != nil {
			if sameLaunch(c.spec, spec) {
				c.calls++
				s.mu.Unlock()
				return c, nil
			}
			s.endLocked(c, endReplaced)
		}
		a := s.starting
		if a == nil {
			if wait := time.Until(s.notBefore); wait > 0 {
				s.mu.Unlock()
				t := time.NewTimer(wait)
				select {
				case <-t.C:
					continue
				case <-ctx.Done():
					t.Stop()
					return nil, fmt.Errorf("%s is waiting to restart after a crash: %w", spec.label(), ctx.Err())
				}
			}
			a = &attempt{done: make(chan struct{})}
			if !s.rt.goCounted(func() { s.start(a, spec) }) {
				s.mu.Unlock()
				return nil, ErrClosed
			}
			s.starting = a
		}
		s.mu.Unlock()
		select {
		case <-a.done:
			if a.err != nil {
				return nil, a.err
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: starting: %w", spec.label(), ctx.Err())
		}
	}
}

// start starts a pool connection for spec and installs it, or records the
// failure for the backoff. It runs on its own, not on a caller's context,
// so that a caller giving up does not fail the others' start.
func (s *server) start(a *attempt, spec Spec) {
	ctx, cancel := context.WithTimeout(s.rt.life, s.rt.o.StartTimeout)
	defer cancel()
	c, err := s.rt.open(ctx, s.rt.life, spec, s, true)
	if err == nil {
		// Before any call is answered on it: a refusal for drift follows
		// the drift's record and the callers' list_changed.
		s.rt.observe(spec, c.list.Load().Listing)
	}
	s.mu.Lock()
	s.starting = nil
	switch {
	case err != nil:
		s.crashes++
		s.notBefore = time.Now().Add(backoff(s.crashes))
		a.err = err
	case s.rt.isClosed():
		s.endLocked(c, endClosed)
		a.err = ErrClosed
	case c.gone:
		a.err = fmt.Errorf("%s: %w right after it started%s", spec.label(), ErrCrashed, c.run.parenHow())
	default:
		s.cur = c
		s.conns[c] = true
		s.armIdleLocked()
	}
	close(a.done)
	s.mu.Unlock()
}

// backoff is the wait before the next start after n crashes in a row.
func backoff(n int) time.Duration {
	d := MinBackoff
	for i := 1; i < n && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}

// open starts a connection for spec: the process or http client, the MCP
// session, and the first listing. life bounds a stdio server's process;
// ctx bounds the start.
func (r *Runtime) open(ctx, life context.Context, spec Spec, s *server, pooled bool) (*conn, error) {
	red := spec.Redactor()
	purpose := "test"
	if pooled {
		purpose = "call"
	}
	run := s.logs.begin(purpose)
	l, err := r.dial(life, spec, MaxLifetime, max(r.o.CallTimeout, r.o.StartTimeout))
	if err != nil {
		err = red.Error(err, spawn.ErrProgramChanged, spawn.ErrNotFound)
		s.logs.failed(run, err)
		return nil, fmt.Errorf("%s: start: %w", spec.label(), err)
	}
	c := &conn{srv: s, spec: spec, red: red, proc: l.proc, release: l.release, sandbox: l.sandbox, run: run, pooled: pooled,
		ended: make(chan struct{}), relist: make(chan struct{}, 1)}
	if c.proc != nil {
		s.logs.running(run, c.proc.Stderr, red)
	}
	changed := c.announced
	if spec.Kind == KindPlugin {
		changed = func() {} // its listing is its manifest's: nothing it says changes it
	}
	cs, err := connect(ctx, changed, l)
	if err == nil {
		c.cs = cs
		var first Listing
		at := c.changes.Load()
		if first, err = c.listTools(ctx); err == nil {
			c.list.Store(&listed{first, at})
		}
	}
	if err != nil {
		if c.cs != nil {
			c.cs.Close()
		}
		var res spawn.Result
		var ran *spawn.Result
		if c.proc != nil {
			res, _ = c.proc.Stop()
			ran = &res
		}
		if c.release != nil {
			c.release()
		}
		err = red.Error(err, spawn.ErrProgramChanged)
		s.logs.end(run, ran, endFailed, false, red, err)
		return nil, fmt.Errorf("%s: %w%s", spec.label(), err, stderrNote(res, red))
	}
	r.watch(c)
	return c, nil
}

// stderrNote is the end of a failed start's stderr, redacted and with its
// hidden characters removed, for the error.
func stderrNote(res spawn.Result, red *redact.Redactor) string {
	text, _ := hiddentext.Strip(red.String(string(res.Stderr)))
	if text = strings.TrimSpace(text); text == "" {
		return ""
	}
	return "; the server's stderr: " + tail(text, 2000)
}

// watch waits, in the background, for c's session to end, reaps its
// process and records the end of its run. It is called with the runtime's
// wait group above zero (by a start or a Probe counted in it).
func (r *Runtime) watch(c *conn) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		c.cs.Wait()
		var res *spawn.Result
		if c.proc != nil {
			r, _ := c.proc.Stop()
			res = &r
		}
		if c.release != nil {
			c.release()
		}
		c.srv.ended(c, res)
	}()
}

// ended records the end of c's run: a crash, unless Zero ended it.
// res is how its process ended, nil for a connection without one.
func (s *server) ended(c *conn, res *spawn.Result) {
	s.mu.Lock()
	if s.cur == c {
		s.cur = nil
	}
	delete(s.conns, c)
	reason := c.reason
	if reason == "" && res != nil && res.TimedOut {
		reason = endLifetime
	}
	crash := reason == ""
	if crash {
		reason = endExited
		if c.pooled {
			s.crashes++
			s.notBefore = time.Now().Add(backoff(s.crashes))
		}
	}
	s.logs.end(c.run, res, reason, crash, c.red, nil)
	if res != nil {
		c.res = *res
	}
	c.gone = true
	s.mu.Unlock()
	close(c.ended)
}

// done releases a connection get returned; a retiring one ends when its
// last call is done.
func (s *server) done(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.calls--
	if c.retiring && c.calls == 0 {
		s.endLocked(c, c.reason)
	}
}

// retire takes the running connection out of service: the next call starts
// a fresh one, and the calls using it finish first.
func (s *server) retire(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cur
	if c == nil {
		return
	}
	if c.calls > 0 {
		s.cur, c.retiring, c.reason = nil, true, reason
		if s.idle != nil {
			s.idle.Stop()
			s.idle = nil
		}
		return
	}
	s.endLocked(c, reason)
}

// endLocked ends c for reason; its watcher records the end.
func (s *server) endLocked(c *conn, reason string) {
	if c.closing {
		return
	}
	c.closing = true
	if c.reason == "" {
		c.reason = reason
	}
	if s.cur == c {
		s.cur = nil
		if s.idle != nil {
			s.idle.Stop()
			s.idle = nil
		}
	}
	s.rt.wg.Add(1)
	go func() {
		defer s.rt.wg.Done()
		c.cs.Close()
	}()
}

// stop ends the server's pool connections at once, the running one and
// those retiring with calls in flight.
func (s *server) stop(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		s.endLocked(c, reason)
	}
}

// listTools lists c's tools: a server's as its session lists them, a
// plugin's as its Spec's manifest declares them.
func (c *conn) listTools(ctx context.Context) (Listing, error) {
	if c.spec.Kind == KindPlugin {
		return manifestListing(c.spec)
	}
	return list(ctx, c.cs)
}

// A listed is a connection's listing and the count of the server's
// announced changes it was made after.
type listed struct {
	Listing
	at uint64
}

// announced hears the server say its tools changed: the listing made
// before is no longer current.
func (c *conn) announced() { c.changes.Add(1) }

// current reports whether l was made after every change the server
// announced so far.
func (c *conn) current(l *listed) bool { return l.at == c.changes.Load() }

// listing returns c's listing, listing again first if the server announced
// a change since it was made: a listing returned is current when returned.
// A caller that finds another listing again waits for it, and then checks
// again: the one listing at a time may have begun before a later change.
func (s *server) listing(ctx context.Context, c *conn) (*listed, error) {
	for {
		if l := c.list.Load(); c.current(l) {
			return l, nil
		}
		select {
		case c.relist <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: waiting for its tools to be listed again: %w", c.spec.label(), ctx.Err())
		}
		if c.current(c.list.Load()) {
			<-c.relist
			continue
		}
		at := c.changes.Load()
		l, err := c.listTools(ctx)
		if err != nil {
			<-c.relist
			return nil, fmt.Errorf("%s: %w", c.spec.label(), c.red.Error(err))
		}
		c.list.Store(&listed{l, at})
		s.rt.observe(c.spec, l)
		<-c.relist
	}
}

// callFailed says how a call that got no result ended, and why, in an
// error fit for the caller: redacted, with the server's text stripped of
// hidden characters.
func (s *server) callFailed(ctx context.Context, c *conn, tool string, err error) (Outcome, error) {
	of, noun := c.spec.label(), c.spec.noun()
	if ctx.Err() != nil {
		return ctxOutcome(ctx), fmt.Errorf("tool %q of %s: no answer in time; the %s was asked to cancel the call: %w", tool, of, noun, ctx.Err())
	}
	if wireError(err) {
		text, _ := hiddentext.Strip(c.red.String(err.Error()))
		return Failed, fmt.Errorf("tool %q of %s: the %s answered with an error: %s", tool, of, noun, tail(text, 2000))
	}
	t := time.NewTimer(endWait)
	defer t.Stop()
	select {
	case <-c.ended:
	case <-t.C:
		return Failed, fmt.Errorf("tool %q of %s: %w", tool, of, c.red.Error(err))
	}
	s.mu.Lock()
	reason, how := c.reason, c.run.parenHow()
	s.mu.Unlock()
	if reason != "" {
		return Unavailable, fmt.Errorf("tool %q of %s: the %s was stopped during the call (%s)", tool, of, noun, reason)
	}
	if c.sandbox != nil {
		if why := c.sandbox.Ended(c.res); why != nil {
			return Crashed, fmt.Errorf("tool %q of %s: %w: %w; the next call starts it again", tool, of, ErrCrashed, why)
		}
	}
	return Crashed, fmt.Errorf("tool %q of %s: %w%s; the next call starts it again, and its page shows its stderr", tool, of, ErrCrashed, how)
}

// succeeded resets the backoff: the server answers again.
func (s *server) succeeded() {
	s.mu.Lock()
	s.crashes = 0
	s.mu.Unlock()
}

// enter counts its caller in the wait group Close waits for, unless the
// runtime is closed; the caller calls r.wg.Done when it is done.
func (r *Runtime) enter() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.wg.Add(1)
	return true
}

// goCounted runs f in a goroutine Close waits for, unless the runtime is
// closed.
func (r *Runtime) goCounted(f func()) bool {
	if !r.enter() {
		return false
	}
	go func() {
		defer r.wg.Done()
		f()
	}()
	return true
}

func (r *Runtime) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// observeTimeout bounds one Observe.
const observeTimeout = 10 * time.Second

// observe passes a pool connection's listing to Options.Observe; a
// plugin's, its Spec's own manifest tools, tells nothing new and is not
// passed.
func (r *Runtime) observe(s Spec, l Listing) {
	if r.o.Observe == nil || s.Kind == KindPlugin {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), observeTimeout)
	defer cancel()
	if err := r.o.Observe(ctx, s, l); err != nil {
		r.o.Log.Error("record a listing", "server", s.Name, "error", err)
	}
}

// Probe connects to the server s describes once, for the Test action:
// starts it, initializes a session, lists its tools (hashed as the gate
// compares them) and the icons it declares, and stops it. The Listing's
// Stderr is the end of what it wrote there, redacted. The run is in the
// server's history; the pool's connection, if any, is left alone.
func (r *Runtime) Probe(ctx context.Context, s Spec) (Listing, error) {
	srv, err := r.entry(s.key())
	if err != nil {
		return Listing{}, err
	}
	if !r.enter() {
		return Listing{}, ErrClosed
	}
	defer r.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(r.life, cancel)()
	c, err := r.open(ctx, ctx, s, srv, false)
	if err != nil {
		return Listing{}, err
	}
	l := c.list.Load().Listing
	srv.mu.Lock()
	srv.endLocked(c, endTest)
	srv.mu.Unlock()
	<-c.ended
	text, _ := hiddentext.Strip(c.red.String(string(c.res.Stderr)))
	l.Stderr = tail(strings.TrimSpace(text), 2000)
	return l, nil
}
