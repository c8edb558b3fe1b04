// Package mcpserver runs Zero's MCP servers on the official Go SDK, over a
// lean stdio transport (stdout carries JSON-RPC only) or over streamable HTTP
// behind the loopback guard of internal/guard/localhttp. It also holds what
// the servers' tools share: strict argument decoding, result building, and
// the reply budget that keeps every answer within what clients read.
// Each server lives in a subpackage.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/buildinfo"
	"github.com/zero-dev/zero/internal/guard/localhttp"
)

// Options say how a server is reached.
type Options struct {
	// HTTP, when set, serves streamable HTTP on this checked address instead
	// of stdio.
	HTTP *localhttp.Listen
	// Stdin and Stdout carry JSON-RPC over stdio.
	Stdin  io.ReadCloser
	Stdout io.Writer
	// Stderr receives logs and, for HTTP, the line naming the address.
	Stderr io.Writer
	// MaxReply is the reply budget in bytes (see [DefaultReplyBudget]); zero
	// means the default, and a larger value is taken as the default.
	MaxReply int
	// GOGC is the GOGC environment variable, as the caller read it. When it
	// is empty, Serve makes the collector run less often (400): a call
	// that answers with a large listing allocates a few times the live
	// heap of a server, which is small, and the default collector would
	// run several times per call.
	GOGC string
}

// NewServer returns an SDK server with Zero's defaults: logs go to stderr,
// at warning level and above, so that successful calls log nothing.
func NewServer(name string, stderr io.Writer, opts *mcp.ServerOptions) *mcp.Server {
	if opts == nil {
		opts = &mcp.ServerOptions{}
	}
	if opts.Logger == nil {
		opts.Logger = Logger(stderr)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: name, Title: "Zero " + name, Version: buildinfo.Version()}, opts)
	s.AddReceivingMiddleware(encodeResult)
	return s
}

// Logger returns the logger servers write to stderr with.
func Logger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// Serve runs srv until ctx is done or, over stdio, the client closes stdin.
func Serve(ctx context.Context, srv *mcp.Server, o Options) error {
	if o.GOGC == "" {
		debug.SetGCPercent(400)
	}
	ctx = WithReplyBudget(ctx, o.MaxReply)
	if o.HTTP == nil {
		growPipe(o.Stdout)
		sp := newSplicer()
		ctx = context.WithValue(ctx, splicerKey{}, sp)
		ss, err := srv.Connect(ctx, &StdioTransport{In: o.Stdin, Out: o.Stdout, splicer: sp}, nil)
		if err != nil {
			return err
		}
		// A signal ends the session quietly; so does the client closing stdin.
		stop := context.AfterFunc(ctx, func() { ss.Close() })
		defer stop()
		err = ss.Wait()
		if ctx.Err() != nil || errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	return serveHTTP(ctx, srv, *o.HTTP, o.Stderr)
}

func serveHTTP(ctx context.Context, srv *mcp.Server, l localhttp.Listen, stderr io.Writer) error {
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return err
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Logger:              Logger(stderr),
		MaxRequestBodyBytes: MaxFrame,
	})
	hs := &http.Server{
		Handler:           localhttp.Guard(l, replyHandler(handler, ReplyBudget(ctx))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	// Name the address as given, with the port the system chose for :0.
	addr := l.Addr
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
		addr = net.JoinHostPort(l.Host, strconv.Itoa(tcp.Port))
	}
	if !l.Loopback {
		fmt.Fprintf(stderr, "WARNING: serving MCP on %s, which is not a loopback address.\n"+
			"WARNING: anyone who can reach it gets the access this server grants, with your user's permissions.\n"+
			"WARNING: these servers have no authentication; never expose them on a network you do not control.\n", addr)
	}
	fmt.Fprintf(stderr, "serving MCP over streamable HTTP at http://%s/\n", addr)
	return localhttp.Serve(ctx, hs, ln)
}
