package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzStdioFraming feeds the same bytes, in reads of chunk bytes (0: as many
// as asked for), to Zero's stdio transport and to the SDK's mcp.IOTransport,
// and requires the same messages from Read, then a clean end of input from
// both or an error from both. Two differences that stdio.go documents are
// allowed for: chunkReader lets the SDK see the byte after every message, and
// sdkNotificationBatchError names the SDK's refusal of notifications in
// batches. MaxFrame is beyond what the fuzzer writes; TestReadFrameLimit
// covers it.
func FuzzStdioFraming(f *testing.F) {
	for _, name := range slices.Sorted(maps.Keys(conversations)) { // in a fixed order, for stable seed numbers
		var in strings.Builder
		for _, s := range conversations[name] {
			in.WriteString(s.send)
		}
		f.Add([]byte(in.String()), uint16(0))
		f.Add([]byte(in.String()), uint16(1))
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	note := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	for _, in := range []string{
		"",
		"\n \t\r\n",
		ping + "\r\n" + ping + "\n",
		ping,                       // no final newline
		ping + "\n" + ping,         // the last without one
		ping + " \n",               // a space after a message
		ping + "\t\r\n",            // a tab after a message
		ping + "\r" + ping + "\r",  // carriage returns alone
		ping + "\r " + ping + "\n", // a message after a carriage return and a space
		"{\n\"jsonrpc\":\n\"2.0\",\n\"method\":\"x\"\n}\n", // over several lines
		`[` + ping + `,{"jsonrpc":"2.0","id":2,"method":"ping"}]` + "\n",
		`[` + note + `,` + ping + `]` + "\n",
		`[` + note + `,` + note + `]` + "\n",
		`[` + note + "]\n[" + note + "]\n",
		`[` + ping + "]\n[" + ping + "]\n", // an ID seen in an unanswered batch
		`[` + ping + `,` + ping + "]\n",    // a duplicate ID in one batch
		"[]\n[[]]\n",
		"{not json}\n",
		`{"jsonrpc":"2.0","id":1,"method":"ping"`, // cut off
		ping + "}\n",
		`1` + "\n", `"s"` + "\n", "null\n", "true false\n",
		`{"jsonrpc":"2.0","id":1.5,"method":"x"}` + "\n",
		`{"jsonrpc":"2.0","id":null,"method":null}` + "\n",
		`{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"m","data":[1]}}` + "\n",
		`{"jsonrpc":"2.0","id":[1],"method":"x"}` + "\n",
		`{"jsonrpc":"2.0","id":1e400,"method":"x"}` + "\n",
		`{"jsonrpc":"2.0","method":"x","params":[01,1.,"\x","a` + "\x01\xff" + `",]}` + "\n", // what a lax parser takes
		`{"jsonrpc":"2.0","method":"x","params":"\u00e9\ud800\\u0000"}` + "\n",
		`{"jsonrpc":"2.0","method":"x","params":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + "}\n",
		longLine(66 << 10), // past the read buffers (Zero's is 64 KiB)
	} {
		f.Add([]byte(in), uint16(0))
	}
	f.Add([]byte(ping+"\n"+ping+"\n"), uint16(7)) // a message split across reads
	f.Fuzz(sameFraming)
}

// TestLongLinesFraming holds lines too long to fuzz well, within MaxFrame, to
// the same check.
func TestLongLinesFraming(t *testing.T) {
	for _, n := range []int{64<<10 - 60, 64<<10 - 59, 1 << 20, 4 << 20} {
		for _, chunk := range []uint16{0, 4093} {
			sameFraming(t, []byte(longLine(n)+longLine(n/2)), chunk)
		}
	}
}

// longLine is a notification of about n bytes, with its newline.
func longLine(n int) string {
	const head, tail = `{"jsonrpc":"2.0","method":"x","params":"`, `"}` + "\n"
	return head + strings.Repeat("x", max(n-len(head)-len(tail), 0)) + tail
}

// sameFraming is FuzzStdioFraming's check.
func sameFraming(t *testing.T, data []byte, chunk uint16) {
	sdk := readMessages(t, &mcp.IOTransport{Reader: newChunkReader(data, int(chunk)), Writer: nopWriteCloser{}})
	ours := readMessages(t, &StdioTransport{In: newChunkReader(data, int(chunk)), Out: io.Discard})
	if sdk.err != nil && sdkNotificationBatchError(sdk.err) {
		// The documented difference: the SDK refuses a batch whose
		// notifications it took for requests with the same ID; Zero
		// reads the batch. Up to it, both read the same.
		if len(ours.msgs) <= len(sdk.msgs) || !slices.Equal(sdk.msgs, ours.msgs[:len(sdk.msgs)]) {
			t.Errorf("before the batch (%v), the messages differ:\nsdk  %q\nours %q (%v)", sdk.err, sdk.msgs, ours.msgs, ours.err)
		}
		return
	}
	if diff := cmp.Diff(sdk.msgs, ours.msgs); diff != "" {
		t.Errorf("messages differ (-sdk +ours):\n%s", diff)
	}
	if (sdk.err == nil) != (ours.err == nil) {
		t.Errorf("after %d messages, the SDK ends with %v, ours with %v", len(sdk.msgs), sdk.err, ours.err)
	}
}

// sdkNotificationBatchError reports whether err is the SDK refusing a batch
// because it holds a notification: the SDK keys a batch's requests by ID,
// notifications included, whose ID is the zero ID, so it finds two
// notifications in a batch a duplicate, and one in a later batch a request
// seen before (no response ever resolves it, which is also why it never
// answers a batch that holds one).
func sdkNotificationBatchError(err error) bool {
	msg := err.Error()
	return msg == fmt.Sprintf("duplicate message ID %q", jsonrpc.ID{}) ||
		strings.HasSuffix(msg, "batch contains previously seen request <nil>")
}

type readResult struct {
	msgs []string
	err  error // nil for a clean end of input
}

// readMessages reads from a connection of tr until the end of input or an
// error, describing each message.
func readMessages(t *testing.T, tr mcp.Transport) readResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := tr.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var res readResult
	for {
		msg, err := conn.Read(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%T: Read hangs after %d messages", tr, len(res.msgs))
		}
		if err == io.EOF {
			return res
		}
		if err != nil {
			res.err = err
			return res
		}
		res.msgs = append(res.msgs, describe(msg))
		// Answer each request, as a server does: Zero's transport reports
		// the end of input only once every request read is answered.
		if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
			conn.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage("null")})
		}
	}
}

// describe writes out every field of a message that came off the wire.
func describe(msg jsonrpc.Message) string {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		return fmt.Sprintf("request id=%#v method=%q params=%q", m.ID.Raw(), m.Method, m.Params)
	case *jsonrpc.Response:
		s := fmt.Sprintf("response id=%#v result=%q", m.ID.Raw(), m.Result)
		if e, ok := m.Error.(*jsonrpc.Error); ok {
			s += fmt.Sprintf(" error=%d %q %q", e.Code, e.Message, e.Data)
		} else if m.Error != nil {
			s += fmt.Sprintf(" error %T %v", m.Error, m.Error)
		}
		return s
	}
	return fmt.Sprintf("%T", msg)
}

// A chunkReader returns its data in reads of at most size bytes (0: as many
// as asked for). A read never ends on a closing bracket unless the data ends
// there or the read holds nothing else: the SDK checks the byte after a message only when its decoder has
// read it already, so a message that ended a read would escape the check,
// which Zero always makes (see stdio.go).
type chunkReader struct {
	data []byte
	size int
}

func newChunkReader(data []byte, size int) *chunkReader { return &chunkReader{data, size} }

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.data))
	if r.size > 0 {
		n = min(n, r.size)
	}
	isClose := func(b byte) bool { return b == '}' || b == ']' }
	for n < len(r.data) && n < len(p) && isClose(r.data[n-1]) {
		n++ // the byte after a bracket comes with it
	}
	for n > 1 && n < len(r.data) && isClose(r.data[n-1]) {
		n-- // p is full: the brackets come in the next read
	}
	n = copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func (r *chunkReader) Close() error { return nil }

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }

// TestBatchWithNotification: a legacy batch of a notification and a call is
// answered with the call's response alone (the SDK never answers it; see
// stdio.go).
func TestBatchWithNotification(t *testing.T) {
	ours := func(in io.ReadCloser, out io.WriteCloser) mcp.Transport { return &StdioTransport{In: in, Out: out} }
	got := transcript(t, ours, []step{{initLegacy, 1}, {initDone, 0},
		{`[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"jsonrpc":"2.0","id":10,"method":"ping"}]` + "\n", 1}})
	want := `[{"jsonrpc":"2.0","id":10,"result":{}}]`
	if len(got) != 2 || got[1] != want {
		t.Errorf("the batch's answer: %q, want %q", got, want)
	}
}
