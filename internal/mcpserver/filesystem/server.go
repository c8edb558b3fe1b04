// Package filesystem is the filesystem MCP server. It offers the tools of the
// reference server (@modelcontextprotocol/server-filesystem) under the same
// names and arguments, and confines every path they take to the allowed
// directories through internal/guard/fsroot.
//
// Unlike the reference, roots sent by the client can only narrow the
// directories given on the command line, never replace or widen them, and
// they are kept per session.
package filesystem

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/mcpserver"
)

// Name is the server's implementation name.
const Name = "zero-filesystem"

// rootsTimeout bounds how long the server waits for a client's roots.
const rootsTimeout = 10 * time.Second

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
	s.addTools(srv)
	return srv
}

type server struct {
	cli *fsroot.Set // the directories from the command line
	log *slog.Logger

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*sessionRoots
}

// sessionRoots is what a client's roots made of the command-line directories
// for one session.
type sessionRoots struct {
	set   *fsroot.Set   // the narrowed directories
	note  string        // why, when set allows nothing
	owned []*fsroot.Set // every set made for the session, closed when it ends
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

// initialized asks a client that offers roots for them. It runs before the
// session handles any other request, so no tool call sees the wider set.
func (s *server) initialized(ctx context.Context, req *mcp.InitializedRequest) {
	ss := req.Session
	go func() {
		ss.Wait()
		s.forget(ss)
	}()
	if p := ss.InitializeParams(); p == nil || p.Capabilities == nil || p.Capabilities.RootsV2 == nil {
		return
	}
	s.fetchRoots(ctx, ss)
}

func (s *server) rootsChanged(ctx context.Context, req *mcp.RootsListChangedRequest) {
	s.fetchRoots(ctx, req.Session)
}

// fetchRoots narrows the session's directories to the client's roots. An
// empty list leaves the command-line directories; a failure to read the list
// allows nothing, since the client meant to narrow and we cannot tell how.
func (s *server) fetchRoots(ctx context.Context, ss *mcp.ServerSession) {
	ctx, cancel := context.WithTimeout(ctx, rootsTimeout)
	defer cancel()
	res, err := ss.ListRoots(ctx, nil)
	if err != nil {
		s.log.Warn("client roots could not be read; allowing no directory", "error", err)
		empty, _ := s.cli.Narrow(nil)
		s.setRoots(ss, empty, fmt.Sprintf("the client's roots could not be read (%v)", err))
		return
	}
	if len(res.Roots) == 0 {
		s.setRoots(ss, nil, "")
		return
	}
	var dirs []string
	for _, r := range res.Roots {
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
	s.setRoots(ss, narrowed, "none of the client's roots lies inside the directories allowed on the command line")
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

// setRoots records set (nil: the command-line directories) for session ss.
func (s *server) setRoots(ss *mcp.ServerSession, set *fsroot.Set, note string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.sessions[ss]
	if r == nil {
		r = &sessionRoots{}
		s.sessions[ss] = r
	}
	r.set, r.note = set, note
	if set != nil {
		r.owned = append(r.owned, set)
	}
}

// forget closes what a finished session opened.
func (s *server) forget(ss *mcp.ServerSession) {
	s.mu.Lock()
	r := s.sessions[ss]
	delete(s.sessions, ss)
	s.mu.Unlock()
	if r != nil {
		for _, set := range r.owned {
			set.Close()
		}
	}
}
