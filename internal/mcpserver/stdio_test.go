package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Text string `json:"text"`
}

func echoServer() *mcp.Server {
	s := NewServer("echo", io.Discard, nil)
	AddTool(s, &mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":false}`)},
		func(_ context.Context, _ *mcp.CallToolRequest, in *echoArgs) (*mcp.CallToolResult, error) {
			return TextResult(in.Text), nil
		})
	return s
}

// step is one message sent to the server; replies is how many lines it
// should answer with (0 for a notification).
type step struct {
	send    string
	replies int
}

// transcript runs steps against a fresh echo server on transport t and
// returns every line the server wrote, then "<closed>" if it ended the
// connection before stdin was closed.
func transcript(t *testing.T, newTransport func(in io.ReadCloser, out io.WriteCloser) mcp.Transport, steps []step) []string {
	t.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		echoServer().Run(ctx, newTransport(serverIn, serverOut))
		serverOut.Close()
		close(done)
	}()
	lines := make(chan string)
	go func() {
		r := bufio.NewReader(clientIn)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- strings.TrimSuffix(line, "\n")
		}
	}()
	var out []string
	for _, s := range steps {
		if _, err := io.WriteString(clientOut, s.send); err != nil {
			return append(out, "<closed>")
		}
		for range s.replies {
			select {
			case line, ok := <-lines:
				if !ok {
					return append(out, "<closed>")
				}
				out = append(out, line)
			case <-time.After(5 * time.Second):
				t.Fatalf("no reply to %q", s.send)
			}
		}
	}
	// A server that ended the connection closes its output soon.
	select {
	case line, ok := <-lines:
		if !ok {
			return append(out, "<closed>")
		}
		out = append(out, "<unexpected> "+line)
	case <-time.After(100 * time.Millisecond):
	}
	clientOut.Close()
	<-done
	return out
}

const (
	initLegacy = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n"
	initNew    = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n"
	initDone   = `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	call2      = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi <&>"}}}` + "\n"
)

// conversations are the exchanges TestStdioMatchesSDK runs through both
// transports; FuzzStdioFraming starts from their bytes.
var conversations = map[string][]step{
	"call":             {{initNew, 1}, {initDone, 0}, {call2, 1}},
	"string id":        {{initNew, 1}, {initDone, 0}, {`{"jsonrpc":"2.0","id":"a\"<b>","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}` + "\n", 1}},
	"escapes as text":  {{initNew, 1}, {initDone, 0}, {`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\\u003c \\\u003c \\\\u0026 <\u003e"}}}` + "\n", 1}},
	"blank lines":      {{"\n\n" + initNew, 1}, {"  \n" + initDone, 0}, {"\r\n" + call2, 1}},
	"crlf":             {{strings.TrimSuffix(initNew, "\n") + "\r\n", 1}},
	"multi-line":       {{"{\n\"jsonrpc\": \"2.0\",\n \"id\": 1, \"method\": \"ping\"\n}\n", 1}},
	"ping first":       {{`{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n", 1}},
	"call before init": {{call2, 1}},
	"unknown tool":     {{initNew, 1}, {initDone, 0}, {`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}}` + "\n", 1}},
	"bad arguments":    {{initNew, 1}, {initDone, 0}, {`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":1}}}` + "\n", 1}},
	"unknown method":   {{initNew, 1}, {`{"jsonrpc":"2.0","id":4,"method":"nope/nope"}` + "\n", 1}},
	"malformed":        {{initNew, 1}, {"{not json}\n", 1}},
	"truncated":        {{initNew, 1}, {`{"jsonrpc":"2.0","id":5,"method":"ping"` + "}}\n", 1}},
	"trailing data":    {{initNew, 1}, {`{"jsonrpc":"2.0","id":5,"method":"ping"} {"x":1}` + "\n", 1}},
	"wrong version":    {{`{"jsonrpc":"1.0","id":1,"method":"ping"}` + "\n", 1}},
	"case keys":        {{`{"JSONRPC":"2.0","ID":1,"METHOD":"ping"}` + "\n", 1}},
	"too deep":         {{`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + "}\n", 1}},
	"batch legacy": {{initLegacy, 1}, {initDone, 0},
		{`[{"jsonrpc":"2.0","id":10,"method":"ping"},{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}]` + "\n", 1}},
	"batch after 2025-06-18": {{initNew, 1}, {initDone, 0}, {`[{"jsonrpc":"2.0","id":10,"method":"ping"}]` + "\n", 1}},
	"empty batch":            {{"[]\n", 1}},
	"response id":            {{`{"jsonrpc":"2.0","id":99,"result":{}}` + "\n", 0}, {`{"jsonrpc":"2.0","id":8,"method":"ping"}` + "\n", 1}},
	"no id result":           {{`{"jsonrpc":"2.0","result":{}}` + "\n", 1}},
}

// TestStdioMatchesSDK runs the same conversations through the SDK's own
// stdio transport and through ours, and requires the same bytes back, but
// for the one deliberate difference: ours writes `<`, `>` and `&` as
// themselves, where the SDK writes \u003c, \u003e and \u0026.
func TestStdioMatchesSDK(t *testing.T) {
	sdk := func(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
		return &mcp.IOTransport{Reader: in, Writer: out}
	}
	ours := func(in io.ReadCloser, out io.WriteCloser) mcp.Transport { return &StdioTransport{In: in, Out: out} }
	for name, steps := range conversations {
		t.Run(name, func(t *testing.T) {
			want := transcript(t, sdk, steps)
			got := transcript(t, ours, steps)
			if diff := cmp.Diff(withoutHTMLEscapes(want), got); diff != "" {
				t.Errorf("transcripts differ (-sdk without HTML escapes +ours):\n%s", diff)
			}
			for _, line := range got {
				if hasHTMLEscape(line) {
					t.Errorf("an HTML escape reached the wire: %s", line)
				}
			}
		})
	}
}
