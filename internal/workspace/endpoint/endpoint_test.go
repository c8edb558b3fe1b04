package endpoint

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/workspace/auth"
)

// TestRetiredServesNothing: once a token's scope changed, the token server
// made for the old scope answers nothing more, even in a session that was
// not closed (one that began while the old sessions were being closed).
func TestRetiredServesNothing(t *testing.T) {
	e := New(Options{})
	defer e.Close()
	old := &auth.Caller{Kind: auth.Bearer, TokenID: 1, User: "owner", Scoped: true, Servers: []int64{5}}
	ts, _ := e.token(old)
	serverSide, clientSide := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := ts.srv.Connect(ctx, serverSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("before the change: %v", err)
	}
	now := &auth.Caller{Kind: auth.Bearer, TokenID: 1, User: "owner", Scoped: true, Servers: []int64{}}
	if next, replaced := e.token(now); replaced != ts || next == ts {
		t.Fatalf("the scope changed, and the token server was not replaced")
	}
	if err := cs.Ping(ctx, nil); err == nil || !strings.Contains(err.Error(), "connect again") {
		t.Errorf("a session of the replaced token server: %v", err)
	}
}
