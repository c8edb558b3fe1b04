package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkEncode encodes a result as the SDK's JSON-RPC layer does.
func sdkEncode(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func largeTexts() []string {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "\"", "\\", "\n", "\t", "\x00", "\x1f", "<", ">", "&", "é", "\u2028", "\u2029", "😀", "\xff", "\xe2\x82"}
	texts := []string{strings.Repeat("plain ", 4000), strings.Repeat(`{"name": "x"}`+"\n", 2000)}
	for range 20 {
		var sb strings.Builder
		for sb.Len() < largeText+100 {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		texts = append(texts, sb.String())
	}
	return texts
}

// TestEncodedTextMatchesSDK requires the bytes of a wrapped result to be
// exactly the SDK's own, for texts full of characters that need escaping,
// with and without metadata and error flags.
func TestEncodedTextMatchesSDK(t *testing.T) {
	for i, text := range largeTexts() {
		for _, r := range []*mcp.CallToolResult{
			TextResult(text),
			{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: TextOutput{Content: text}, IsError: true},
			{Meta: mcp.Meta{"k": "v"}, Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: TextOutput{Content: text}},
		} {
			if _, ok := plainText(r); !ok {
				t.Fatalf("case %d: not taken as plain text", i)
			}
			want, got := sdkEncode(t, r), sdkEncode(t, encodedText{r})
			if !bytes.Equal(want, got) {
				t.Fatalf("case %d: encodings differ:\nsdk:  %.200q\nours: %.200q", i, want, got)
			}
		}
	}
}

func TestPlainTextLeavesOthersAlone(t *testing.T) {
	big := strings.Repeat("x", largeText)
	for name, r := range map[string]*mcp.CallToolResult{
		"small":            TextResult("small"),
		"two blocks":       {Content: []mcp.Content{&mcp.TextContent{Text: big}, &mcp.TextContent{Text: big}}, StructuredContent: TextOutput{Content: big}},
		"no structured":    {Content: []mcp.Content{&mcp.TextContent{Text: big}}},
		"other structured": {Content: []mcp.Content{&mcp.TextContent{Text: big}}, StructuredContent: TextOutput{Content: "other"}},
		"image":            {Content: []mcp.Content{&mcp.ImageContent{Data: []byte(big)}}},
	} {
		if _, ok := plainText(r); ok {
			t.Errorf("%s: taken as plain text", name)
		}
	}
}

// TestLargeResultThroughServer checks a large result end to end, through
// the middleware and the stdio transport, against the SDK client.
func TestLargeResultThroughServer(t *testing.T) {
	text := largeTexts()[2]
	s := NewServer("big", io.Discard, nil)
	AddTool(s, &mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest, *struct{}) (*mcp.CallToolResult, error) {
			return TextResult(text), nil
		})
	cs := connectPipes(t, s)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "big"})
	if err != nil {
		t.Fatal(err)
	}
	var want string // the text as JSON carries it: invalid UTF-8 replaced
	b, _ := json.Marshal(text)
	json.Unmarshal(b, &want)
	if got := res.Content[0].(*mcp.TextContent).Text; got != want {
		t.Errorf("text differs after the round trip")
	}
	if got := res.StructuredContent.(map[string]any)["content"]; got != want {
		t.Errorf("structured content differs after the round trip")
	}
}

// connectPipes serves s over StdioTransport and connects an SDK client.
func connectPipes(t *testing.T, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		s.Run(ctx, &StdioTransport{In: serverIn, Out: serverOut})
		serverOut.Close()
		close(done)
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	return cs
}
