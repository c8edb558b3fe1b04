package mcpwire

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestDecodeFrame: a frame holds one message or, from a server of a
// protocol version before 2025-06-18, a batch of them, each decoded as the
// SDK decodes it; an empty batch or a message that is not JSON-RPC 2.0 is
// an error.
func TestDecodeFrame(t *testing.T) {
	msgs, err := DecodeFrame([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	if err != nil || len(msgs) != 1 {
		t.Fatalf("one message: %v %v", msgs, err)
	}
	if r, ok := msgs[0].(*jsonrpc.Response); !ok || r.ID.Raw() != int64(1) {
		t.Errorf("one message: %#v", msgs[0])
	}
	msgs, err = DecodeFrame([]byte(`[{"jsonrpc":"2.0","method":"notifications/tools/list_changed"},{"jsonrpc":"2.0","id":"a","method":"ping"}]`))
	if err != nil || len(msgs) != 2 {
		t.Fatalf("a batch: %v %v", msgs, err)
	}
	if r, ok := msgs[1].(*jsonrpc.Request); !ok || r.Method != "ping" || !r.IsCall() {
		t.Errorf("a batch's second message: %#v", msgs[1])
	}
	for _, bad := range []string{`[]`, `{"jsonrpc":"1.0","id":1,"result":{}}`, `[{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","result":{}}`} {
		if _, err := DecodeFrame([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
