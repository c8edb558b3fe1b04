// Package filesystem is the filesystem MCP server. It offers the tools of the
// reference server (@modelcontextprotocol/server-filesystem) under the same
// names and arguments, and confines every path they take to the allowed
// directories through internal/guard/fsroot.
//
// Unlike the reference, roots sent by the client can only narrow the
// directories given on the command line, never replace or widen them, and
// they are kept per session. The server asks for them without waiting for
// the answer: only a tool call waits, for at most rootsWait, and a client
// that fails to answer keeps the command-line directories.
package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/mcpserver"
)

// Name is the server's implementation name.
const Name = "zero-filesystem"

// rootsWait bounds how long a tool call waits for the answer to the session's
// latest roots/list. Past it, calls use the directories the session had (the
// command-line ones before any answer); a later answer narrows from then on.
const rootsWait = 2 * time.Second

// New returns the filesystem server for the directories in roots. The caller
// keeps ownership of roots.
func New(roots *fsroot.Set, stderr io.Writer) *mcp.Server {
	s := &server{cli: roots, log: mcpserver.Logger(stderr), sessions: map[*mcp.ServerSession]*sessionRoots{}}
	srv := mcpserver.NewServer(Name, stderr, &mcp.ServerOptions{
		Instructions:            "Tools to read, write, edit, list and search files inside the allowed directories. Call list_allowed_directories to see them.",
		Logger:                  s.log,
		InitializedHandler:      s.initialized,
		RootsListChangedHandler: s.rootsChanged,
	})
	srv.AddReceivingMiddleware(s.waitForRoots)
	s.addTools(srv)
	return srv
}

type server struct {
	cli *fsroot.Set // the directories from the command line
	log *slog.Logger

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*sessionRoots

	lastTree atomic.Int64 // the size of the last directory_tree text
}

// sessionRoots is what a client's roots made of the command-line directories
// for one session.
type sessionRoots struct {
	set   *fsroot.Set   // the narrowed directories; nil: the command-line ones
	note  string        // why, when set allows nothing
	owned []*fsroot.Set // every set made for the session, closed when it ends

	ask     int           // the number of the latest roots/list sent
	pending chan struct{} // closed when the latest ask is answered or rootsWait passes; nil after
	stop    func()        // cancels the latest ask and its timer
	warned  bool          // a failure has been logged, which happens once per session
}

// roots returns the directories a call in session ss may use, and, when they
// are none, why.
func (s *server) roots(ss *mcp.ServerSession) (*fsroot.Set, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.sessions[ss]; ok && r.set != nil {
		return r.set, r.note
	}
	return s.cli, ""
}

// resolve checks a path against the session's directories.
func (s *server) resolve(req *mcp.CallToolRequest, path string) (*fsroot.Path, error) {
	set, note := s.roots(req.Session)
	p, err := set.Resolve(path)
	if err != nil && set.Len() == 0 {
		return nil, fmt.Errorf("%w; no directory is allowed in this session: %s", err, note)
	}
	return p, err
}

// initialized asks a client that offers roots for them, and returns at once:
// the SDK handles notifications one at a time, in order, so waiting here
// would hold up every later message of the session, ping included.
func (s *server) initialized(_ context.Context, req *mcp.InitializedRequest) {
	if offersRoots(req.Session) {
		s.askRoots(req.Session)
	}
}

// rootsChanged asks again, the same way.
func (s *server) rootsChanged(_ context.Context, req *mcp.RootsListChangedRequest) {
	if offersRoots(req.Session) {
		s.askRoots(req.Session)
	}
}

// offersRoots reports whether the client declared the roots capability.
func offersRoots(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.RootsV2 != nil
}

// askRoots sends roots/list and returns without waiting for the answer. It
// replaces an ask still in flight, which is cancelled.
func (s *server) askRoots(ss *mcp.ServerSession) {
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	r := s.sessions[ss]
	if r == nil {
		r = &sessionRoots{}
		s.sessions[ss] = r
		go func() {
			ss.Wait()
			s.forget(ss)
		}()
	}
	if r.stop != nil {
		r.stop()
	}
	if r.pending != nil {
		close(r.pending) // its waiters move on to this ask
	}
	r.ask++
	ask := r.ask
	r.pending = make(chan struct{})
	timer := time.AfterFunc(rootsWait, func() { s.unanswered(ss, ask) })
	r.stop = func() {
		cancel()
		timer.Stop()
	}
	s.mu.Unlock()
	go func() {
		res, err := ss.ListRoots(ctx, nil)
		s.answer(ss, ask, res, err)
	}()
}

// waitForRoots is receiving middleware: a tool call waits until the session's
// latest roots/list is answered or rootsWait has passed since it was sent.
// Nothing else waits.
func (s *server) waitForRoots(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && method == "tools/call" {
			for pending := s.pending(ss); pending != nil; pending = s.pending(ss) {
				select {
				case <-pending:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		}
		return next(ctx, method, req)
	}
}

// pending returns what a tool call in ss waits on, or nil.
func (s *server) pending(ss *mcp.ServerSession) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.sessions[ss]; r != nil {
		return r.pending
	}
	return nil
}

// unanswered ends the wait for ask once rootsWait has passed; the ask stays
// in flight, and its answer still counts.
func (s *server) unanswered(ss *mcp.ServerSession, ask int) {
	s.mu.Lock()
	r := s.sessions[ss]
	if r == nil || r.ask != ask || r.pending == nil {
		s.mu.Unlock()
		return
	}
	warn, kept := !r.warned, r.set != nil
	r.warned = true
	pending := r.pending
	r.pending = nil
	s.mu.Unlock()
	defer close(pending) // after the line, so that a call that waited finds it written
	if !warn {
		return
	}
	if kept {
		s.log.Warn(fmt.Sprintf("client roots not answered within %v; keeping the client's previous roots until they are", rootsWait))
	} else {
		s.log.Warn(fmt.Sprintf("client roots not answered within %v; allowing the command-line directories until they are", rootsWait))
	}
}

// answer applies the client's answer to ask, unless a newer ask replaced it
// or the session ended. A failure keeps what the session had: the
// command-line directories, or the client's previous roots.
func (s *server) answer(ss *mcp.ServerSession, ask int, res *mcp.ListRootsResult, err error) {
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed)) {
		return // replaced, or the session is ending
	}
	var set *fsroot.Set
	note := "none of the client's roots lies inside the directories allowed on the command line"
	if err == nil && len(res.Roots) > 0 && s.current(ss, ask) {
		set = s.narrow(res.Roots)
	}
	s.mu.Lock()
	r := s.sessions[ss]
	if r == nil || r.ask != ask {
		s.mu.Unlock()
		if set != nil {
			set.Close()
		}
		return
	}
	r.stop()
	pending := r.pending
	r.pending = nil
	warn, kept := false, r.set != nil
	if err != nil {
		warn = !r.warned
		r.warned = true
	} else {
		// An empty list leaves the command-line directories.
		r.set, r.note = set, note
		if set != nil {
			r.owned = append(r.owned, set)
		}
	}
	s.mu.Unlock()
	if pending != nil {
		defer close(pending)
	}
	if !warn {
		return
	}
	if kept {
		s.log.Warn("client roots could not be read; keeping the client's previous roots", "error", err)
	} else {
		s.log.Warn("client roots could not be read; allowing the command-line directories", "error", err)
	}
}

// current reports whether ask is still the latest of session ss.
func (s *server) current(ss *mcp.ServerSession, ask int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.sessions[ss]
	return r != nil && r.ask == ask
}

// narrow returns the command-line directories narrowed to roots.
func (s *server) narrow(roots []*mcp.Root) *fsroot.Set {
	var dirs []string
	for _, r := range roots {
		dir, err := rootPath(r.URI)
		if err != nil {
			s.log.Warn("client root ignored", "uri", r.URI, "error", err)
			continue
		}
		dirs = append(dirs, dir)
	}
	narrowed, skipped := s.cli.Narrow(dirs)
	for _, err := range skipped {
		s.log.Warn("client root ignored", "error", err)
	}
	return narrowed
}

// rootPath turns a root's file:// URI into a path.
func rootPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("not a file:// URI")
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("file URI names another host %q", u.Host)
	}
	if u.Path == "" {
		return "", fmt.Errorf("file URI has no path")
	}
	return u.Path, nil
}

// forget cancels what a finished session still asks, and closes what it
// opened.
func (s *server) forget(ss *mcp.ServerSession) {
	s.mu.Lock()
	r := s.sessions[ss]
	delete(s.sessions, ss)
	if r != nil {
		r.stop()
		if r.pending != nil {
			close(r.pending)
			r.pending = nil
		}
	}
	s.mu.Unlock()
	if r != nil {
		for _, set := range r.owned {
			set.Close()
		}
	}
}
