// Package mcpbridge bridges a local MCP client to a remote MCP server, as
// `zero mcp workspace` does between Claude Desktop, VS Code, Cursor or
// Claude Code on stdio and a running zero workspace's /mcp endpoint.
//
// [Relay] copies JSON-RPC messages between two SDK connections, each one
// as it is: requests, responses and notifications in both directions
// (the client's notifications/cancelled and the server's
// notifications/tools/list_changed included), never decoding a method's
// parameters or a result. The two sides negotiate with each other, so the
// client sees the server's own protocol version, capabilities and tools.
//
// [Workspace] is the remote side for a zero workspace: the SDK's
// streamable HTTP client connection with a bearer token on every request,
// no redirects followed, plus what the SDK's ClientSession would add to
// that connection and a raw relay does not get: the Mcp-Protocol-Version
// header after initialize, the standalone event stream (GET) on which the
// workspace sends notifications/tools/list_changed, and keepalive pings,
// since the workspace ends a session that sends nothing for a while. Its
// errors say what the person can do: [ErrUnreachable] (is zero serve
// running?), [ErrTokenRefused] (create a new token), [ErrSessionEnded].
package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxInFlight bounds the calls the client may have in flight through a
// relay; past it, the relay reads the client's next message only once one
// of them is answered.
const MaxInFlight = 64

// Relay copies messages between local, the MCP client's connection, and
// remote, the server's, until one side ends. It returns nil when the local
// client ends (end of input, or its output closed) or ctx is done; the remote side's error when
// it fails; and an error when the local side sends what is not JSON-RPC.
// Either way it closes both connections (remote first, so that a
// streamable HTTP session is ended with its DELETE) and returns only once
// every message it started to copy is done.
//
// A call the remote side refuses to take (remote.Write fails: the server
// could not be reached, it answered with an HTTP error, the token was
// refused) is answered to the client with a JSON-RPC error carrying
// remote's error, so that no call waits for an answer that cannot come.
// Calls go to remote concurrently, since a streamable HTTP Write of a call
// may last until its answer; notifications and responses go in the order
// the client sent them.
func Relay(ctx context.Context, local, remote mcp.Connection) error {
	life, stop := context.WithCancel(ctx)
	defer stop()
	// Answers to the client are written even as the relay stops: the
	// error answer to the call that broke the remote side is the last.
	toLocal := context.WithoutCancel(ctx)
	var calls sync.WaitGroup
	slots := make(chan struct{}, MaxInFlight)

	ended := make(chan error, 2)
	go func() { ended <- fromLocal(life, toLocal, local, remote, &calls, slots) }()
	go func() { ended <- fromRemote(life, toLocal, remote, local) }()

	first := <-ended
	stop()
	<-ended // both loops are done: no call starts after this
	remote.Close()
	calls.Wait()
	local.Close()
	if ctx.Err() != nil {
		return nil
	}
	return first
}

// fromLocal copies the client's messages to remote until the client ends.
func fromLocal(life, toLocal context.Context, local, remote mcp.Connection, calls *sync.WaitGroup, slots chan struct{}) error {
	for {
		msg, err := local.Read(life)
		switch {
		case life.Err() != nil:
			return nil
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("read from the MCP client: %w", err)
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			// A notification or an answer to the server's own request:
			// quick to send, and sent in order. A failure is the remote
			// side's to report, through its Read.
			remote.Write(life, msg)
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-life.Done():
			return nil
		}
		calls.Go(func() {
			defer func() { <-slots }()
			if err := remote.Write(life, req); err != nil {
				local.Write(toLocal, &jsonrpc.Response{ID: req.ID, Error: answerError(err)})
			}
		})
	}
}

// fromRemote copies the server's messages to the client until remote
// fails.
func fromRemote(life, toLocal context.Context, remote, local mcp.Connection) error {
	for {
		msg, err := remote.Read(life)
		if life.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if err := local.Write(toLocal, msg); err != nil {
			// The client is gone: its output closed before its input's end
			// was read.
			return nil
		}
	}
}

// answerError is the JSON-RPC error the client gets for a call remote did
// not take: the server's own JSON-RPC error, when it answered with one,
// under remote's whole message; else an internal error.
func answerError(err error) error {
	e := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		e.Code, e.Data = wire.Code, wire.Data
	}
	return e
}
