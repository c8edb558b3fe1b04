package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// largeTexts returns texts over largeText bytes full of characters that
// need escaping, invalid UTF-8 included.
func largeTexts() []string {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "\"", "\\", "\n", "\t", "\x00", "\x1f", "<", ">", "&", "é", "\u2028", "\u2029", "😀", "\xff", "\xe2\x82"}
	texts := []string{strings.Repeat("plain ", 4000), strings.Repeat(`{"name": "x"}`+"\n", 2000)}
	for range 10 {
		var sb strings.Builder
		for sb.Len() < largeText+100 {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		texts = append(texts, sb.String())
	}
	return texts
}

// textServer answers tool "text" with texts[i] for {"i": i}, in the
// shapes a tool may answer with.
func textServer(texts []string) *mcp.Server {
	s := NewServer("text", io.Discard, nil)
	type args struct {
		I     int    `json:"i"`
		Shape string `json:"shape"`
	}
	AddTool(s, &mcp.Tool{Name: "text", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest, in *args) (*mcp.CallToolResult, error) {
			text := texts[in.I]
			switch in.Shape {
			case "quoted":
				return QuotedTextResult(ctx, appendQuoted(nil, strings.ToValidUTF8(text, "\uFFFD"))), nil
			case "error":
				r := TextResult(text)
				r.IsError = true
				return r, nil
			case "meta":
				r := TextResult(text)
				r.Meta = mcp.Meta{"k": "v"}
				return r, nil
			case "two blocks":
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: text}}}, nil
			}
			return TextResult(text), nil
		})
	return s
}

// wireLines sends each call to srv over transport t and returns the lines
// it answers with.
func wireLines(t *testing.T, run func(ctx context.Context, in io.ReadCloser, out io.WriteCloser), calls []string) []string {
	t.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { run(ctx, serverIn, serverOut); serverOut.Close() }()
	r := bufio.NewReaderSize(clientIn, 1<<20)
	send := func(s string) { io.WriteString(clientOut, s+"\n") }
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	r.ReadString('\n')
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var out []string
	for _, c := range calls {
		send(c)
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, line)
	}
	clientOut.Close()
	return out
}

// TestSplicedResultMatchesSDK serves the same large results through Serve's
// stdio (with the splicing shortcut) and through the SDK's own transport,
// and requires the same bytes, but for `<`, `>` and `&`, which ours writes
// as themselves.
func TestSplicedResultMatchesSDK(t *testing.T) {
	texts := largeTexts()
	var calls []string
	for i := range texts {
		for _, shape := range []string{"", "error", "meta", "two blocks", "quoted"} {
			calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"text","arguments":{"i":%d,"shape":%q}}}`, len(calls)+1, i, shape))
		}
	}
	calls = append(calls, `{"jsonrpc":"2.0","id":"string id","method":"tools/call","params":{"name":"text","arguments":{"i":1}}}`)
	sdk := wireLines(t, func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) {
		textServer(texts).Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
	}, calls)
	ours := wireLines(t, func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) {
		Serve(ctx, textServer(texts), Options{Stdin: in, Stdout: out, Stderr: io.Discard})
	}, calls)
	sdk = withoutHTMLEscapes(sdk)
	for i := range calls {
		if sdk[i] != ours[i] || hasHTMLEscape(ours[i]) {
			t.Fatalf("call %d: bytes differ, beyond HTML escapes:\nsdk:  %.300q\nours: %.300q", i, sdk[i], ours[i])
		}
		if strings.Contains(ours[i], "zero-text-") {
			t.Fatalf("call %d: a placeholder reached the wire", i)
		}
	}
}

// TestQuotedTextResultBudget checks that a text handed over quoted counts
// against the reply budget as any other.
func TestQuotedTextResultBudget(t *testing.T) {
	texts := []string{strings.Repeat(`"quoted" `, 1000)}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"text","arguments":{"i":0,"shape":"quoted"}}}`
	for _, budget := range []int{4000, 40000} {
		lines := wireLines(t, func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) {
			Serve(ctx, textServer(texts), Options{Stdin: in, Stdout: out, Stderr: io.Discard, MaxReply: budget})
		}, []string{call})
		var reply struct {
			Result mcp.CallToolResult `json:"result"`
		}
		if err := json.Unmarshal([]byte(lines[0]), &reply); err != nil {
			t.Fatal(err)
		}
		overBudget := len(lines[0]) > budget
		if reply.Result.IsError != (budget < 40000) || overBudget {
			t.Errorf("budget %d: isError %v, reply of %d bytes", budget, reply.Result.IsError, len(lines[0]))
		}
	}
}

func TestPlainText(t *testing.T) {
	big := strings.Repeat("x", largeText)
	if _, ok := plainText(TextResult(big)); !ok {
		t.Error("a large TextResult is not taken")
	}
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

// htmlEscape matches an HTML escape that is one, not text after an escaped
// backslash.
var htmlEscape = regexp.MustCompile(`(^|[^\\])(\\\\)*\\u00(3c|3e|26)`)

// withoutHTMLEscapes returns lines with every HTML escape written as its
// character: the SDK's wire bytes as ours should be.
func withoutHTMLEscapes(lines []string) []string {
	chars := map[string]string{"3c": "<", "3e": ">", "26": "&"}
	out := make([]string, len(lines))
	for i, l := range lines {
		for {
			next := htmlEscape.ReplaceAllStringFunc(l, func(m string) string { return m[:len(m)-6] + chars[m[len(m)-2:]] })
			if next == l {
				break
			}
			l = next
		}
		out[i] = l
	}
	return out
}

func hasHTMLEscape(s string) bool { return htmlEscape.MatchString(s) }

func TestAppendUnescapedHTML(t *testing.T) {
	for in, want := range map[string]string{
		`"a\u003cb\u003e\u0026"`:        `"a<b>&"`,
		`"\\u003c"`:                     `"\\u003c"`, // an escaped backslash, then text
		`"\\\u003c"`:                    `"\\<"`,     // an escaped backslash, then an escape
		`"\u003C \u0027 \u00e9 \u2028"`: `"\u003C \u0027 \u00e9 \u2028"`,
		`{"a":"\"\u0026\""}`:            `{"a":"\"&\""}`,
		`"\u003`:                        `"\u003`, // cut short: left as it is
		``:                              ``,
	} {
		if got := string(appendUnescapedHTML(nil, []byte(in))); got != want {
			t.Errorf("appendUnescapedHTML(%s) = %s, want %s", in, got, want)
		}
	}
}

// FuzzUnescapedHTML checks, for any text, that undoing HTML escapes in
// encoding/json's output gives encoding/json's output without HTML
// escaping, whole or split into two parts anywhere; and that QuotedSize and
// CutQuoted agree with it.
func FuzzUnescapedHTML(f *testing.F) {
	for _, s := range largeTexts()[2:5] {
		f.Add(s[:200], 50)
	}
	f.Add(`\u003c<\\u003e`, 3)
	f.Add("a\u2028b\u2029\x00\x1f\b\f\n\r\t\"\\\xff\xe2\x80é\x7f", 4)
	f.Fuzz(func(t *testing.T, s string, cut int) {
		escaped, _ := json.Marshal(s)
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		want := strings.TrimSuffix(b.String(), "\n")
		if got := string(appendUnescapedHTML(nil, escaped)); got != want {
			t.Fatalf("unescaped %s, want %s", got, want)
		}
		if got := string(appendQuoted(nil, s)); got != want {
			t.Fatalf("appendQuoted = %s, want %s", got, want)
		}
		if n := QuotedSize(s); n != len(want) {
			t.Fatalf("QuotedSize = %d, want %d", n, len(want))
		}
		k := min(max(cut, 0), len(escaped))
		out, tail := appendUnescapedHTMLPart(nil, escaped[:k])
		out = appendUnescapedHTML(out, append(tail, escaped[k:]...))
		if string(out) != want {
			t.Fatalf("split at %d: %s, want %s", k, out, want)
		}
		max := min(max(cut, 0), len(want))
		p := CutQuoted(s, max)
		if !strings.HasPrefix(s, p) || QuotedSize(p) > max && p != "" {
			t.Fatalf("CutQuoted(%q, %d) = %q", s, max, p)
		}
		if p != s {
			_, size := utf8.DecodeRuneInString(s[len(p):])
			if QuotedSize(s[:len(p)+size]) <= max {
				t.Fatalf("CutQuoted(%q, %d) = %q stops short", s, max, p)
			}
		}
	})
}

// BenchmarkAppendQuoted quotes a text shaped like a directory_tree answer:
// indented JSON lines, each with quotes and a newline to escape.
func BenchmarkAppendQuoted(b *testing.B) {
	var sb strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&sb, "\n      {\n        \"name\": \"file%04d.txt\",\n        \"type\": \"file\"\n      },", i)
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	var buf []byte
	for b.Loop() {
		buf = appendQuoted(buf[:0], text)
	}
}
