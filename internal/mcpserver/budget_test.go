package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// results are tool results of every shape ResultSize knows, and one it
// does not (a resource link), with text that needs escaping.
func results() map[string]*mcp.CallToolResult {
	text := strings.Repeat("a<b>&\"\\\n\x01é\u2028\xff", 3000)
	ann := &mcp.Annotations{Priority: 0.5}
	return map[string]*mcp.CallToolResult{
		"text":        TextResult(text),
		"small text":  TextResult("hi <&>"),
		"error":       ErrorResult(fmt.Errorf("%s", text)),
		"meta":        {Meta: mcp.Meta{"k": "<v>"}, Content: []mcp.Content{&mcp.TextContent{Text: text, Annotations: ann}}, StructuredContent: TextOutput{Content: "other"}},
		"two blocks":  {Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: "second"}}},
		"image":       {Content: []mcp.Content{&mcp.ImageContent{Data: []byte(text), MIMEType: "image/png"}}},
		"audio":       {Content: []mcp.Content{&mcp.AudioContent{Data: []byte("abcd"), MIMEType: "audio/wav"}}},
		"resource":    {Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a<b>", MIMEType: "text/plain", Text: text}}}},
		"blob":        {Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b", Blob: []byte(text)}}}},
		"link":        {Content: []mcp.Content{&mcp.ResourceLink{URI: "file:///c", Name: "c<"}}},
		"raw":         {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: json.RawMessage(`{"a": "` + "\u2028<" + `", "b": [1, 2]}`)},
		"struct":      {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: map[string]any{"s": text, "n": 1}},
		"empty":       {Content: []mcp.Content{}},
		"error split": {Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: TextOutput{Content: text}, IsError: true},
	}
}

// resultServer answers tool "r" with results()[name] for {"name": name},
// tools "text" and "read" (read-only) with n bytes of "<" for {"n": n}, and
// tool "plain" with n control characters.
func resultServer() *mcp.Server {
	s := NewServer("results", io.Discard, nil)
	rs := results()
	AddTool(s, &mcp.Tool{Name: "r", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, _ *mcp.CallToolRequest, in *struct {
			Name string `json:"name"`
		}) (*mcp.CallToolResult, error) {
			return rs[in.Name], nil
		})
	AddTool(s, &mcp.Tool{Name: "text", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, _ *mcp.CallToolRequest, in *sizeArgs) (*mcp.CallToolResult, error) {
			return TextResult(strings.Repeat("<", in.N)), nil
		})
	AddTool(s, &mcp.Tool{Name: "read", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in *sizeArgs) (*mcp.CallToolResult, error) {
			return TextResult(strings.Repeat("<", in.N)), nil
		})
	AddTool(s, &mcp.Tool{Name: "plain", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, _ *mcp.CallToolRequest, in *struct {
			N int `json:"n"`
		}) (*mcp.CallToolResult, error) {
			return TextResult(strings.Repeat("\x01", in.N)), nil
		})
	return s
}

type sizeArgs struct {
	N int `json:"n"`
}

func (*sizeArgs) ReplyHint() string { return "give a smaller n" }

func callLine(id int, tool string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	return string(b)
}

// TestResultSize requires ResultSize to be at least the size of the reply
// line that carries each result, over stdio with and without the splicer,
// and over by little more than the envelope it keeps room for.
func TestResultSize(t *testing.T) {
	var names []string
	var calls []string
	for name := range results() {
		names = append(names, name)
		calls = append(calls, callLine(len(calls)+1, "r", map[string]any{"name": name}))
	}
	for _, run := range map[string]func(ctx context.Context, in io.ReadCloser, out io.WriteCloser){
		"Serve": func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) {
			Serve(ctx, resultServer(), Options{Stdin: in, Stdout: out, Stderr: io.Discard})
		},
		"transport": func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) {
			resultServer().Run(ctx, &StdioTransport{In: in, Out: out})
		},
	} {
		lines := wireLines(t, run, calls)
		for i, name := range names {
			got, want := len(lines[i]), ResultSize(results()[name])
			if strings.Contains(lines[i], `"isError":true`) && !strings.Contains(name, "error") {
				t.Errorf("%s: a tool error: %.200s", name, lines[i])
			}
			if want < got || want > got+envelope+64 {
				t.Errorf("%s: ResultSize = %d, the reply line is %d bytes", name, want, got)
			}
		}
	}
}

// TestReplyBudget serves results over and under a lowered budget, over
// stdio: one over it becomes a tool error that names the tool, the budget
// and the tool's hint (and, for a tool not marked read-only, that the call
// was carried out); no reply passes the budget, and the session answers the
// next call.
func TestReplyBudget(t *testing.T) {
	const budget = 64 << 10
	limit := (budget - textResultSize(0)) / 2 // the most "<" that fit
	calls := []string{
		callLine(1, "text", map[string]any{"n": limit - 2}),
		callLine(2, "text", map[string]any{"n": limit - 1}),
		callLine(3, "plain", map[string]any{"n": budget / 8}),
		callLine(4, "text", map[string]any{"n": 10}),
		callLine(5, "read", map[string]any{"n": limit - 1}),
		`{"jsonrpc":"2.0","id":"long string id","method":"tools/call","params":{"name":"text","arguments":{"n":` + strconv.Itoa(limit-2) + `}}}`,
	}
	for name, splice := range map[string]bool{"Serve": true, "transport": false} {
		lines := wireLines(t, func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) {
			if splice {
				Serve(ctx, resultServer(), Options{Stdin: in, Stdout: out, Stderr: io.Discard, MaxReply: budget})
				return
			}
			resultServer().Run(WithReplyBudget(ctx, budget), &StdioTransport{In: in, Out: out})
		}, calls)
		for i, l := range lines {
			if len(l) > budget {
				t.Errorf("%s: call %d: a reply of %d bytes, over the budget of %d", name, i+1, len(l), budget)
			}
		}
		if strings.Contains(lines[0], "isError") || len(lines[0]) < budget-envelope {
			t.Errorf("%s: the largest text that fits: %d bytes, %.100s", name, len(lines[0]), lines[0])
		}
		for _, i := range []int{1, 2, 4} {
			if !strings.Contains(lines[i], `"isError":true`) || !strings.Contains(lines[i], "reply budget of 65536 bytes (--max-reply)") {
				t.Errorf("%s: call %d over the budget: %.300s", name, i+1, lines[i])
			}
		}
		if !strings.Contains(lines[1], "text: the answer would make a ") || !strings.Contains(lines[1], "give a smaller n") {
			t.Errorf("%s: no tool name or hint: %.300s", name, lines[1])
		}
		if !strings.Contains(lines[2], "ask for less in one call") {
			t.Errorf("%s: no generic hint: %.300s", name, lines[2])
		}
		if !strings.Contains(lines[3], `"text":"<<<<<<<<<<"`) || !strings.Contains(lines[5], `"id":"long string id"`) {
			t.Errorf("%s: later calls: %.100s %.100s", name, lines[3], lines[5])
		}
		carried := "; the call itself was carried out, only its answer is left out"
		if !strings.Contains(lines[1], carried) || strings.Contains(lines[4], carried) || !strings.Contains(lines[4], "read: the answer would make a ") {
			t.Errorf("%s: a tool that changes things, then a read-only one, over the budget:\n%.400s\n%.400s", name, lines[1], lines[4])
		}
	}
}

// TestHTTPReplies serves a result with `<>&` over streamable HTTP, as SSE
// and as JSON responses: the bytes hold the characters, not their escapes,
// and a result over the budget is a tool error.
func TestHTTPReplies(t *testing.T) {
	for _, jsonResponse := range []bool{false, true} {
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return resultServer() },
			&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: jsonResponse})
		ts := httptest.NewServer(replyHandler(h, 64<<10))
		post := func(body string) string {
			req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return string(b)
		}
		small := post(callLine(1, "r", map[string]any{"name": "small text"}))
		if !strings.Contains(small, `"text":"hi <&>"`) || hasHTMLEscape(small) {
			t.Errorf("JSON response %v: %s", jsonResponse, small)
		}
		big := post(callLine(2, "text", map[string]any{"n": 40000}))
		if len(big) > 64<<10 || !strings.Contains(big, `"isError":true`) || !strings.Contains(big, "give a smaller n") {
			t.Errorf("JSON response %v: over the budget: %d bytes, %.300s", jsonResponse, len(big), big)
		}
		ts.Close()
	}
}

// TestUnescapingWriterSplits writes an SSE event with escapes one byte at a
// time: the body is the event without HTML escapes, as if written whole.
func TestUnescapingWriterSplits(t *testing.T) {
	event := "event: message\ndata: " + `{"a":"\u003c\\u003c\\\u0026\u003e"}` + "\n\n"
	want := "event: message\ndata: " + `{"a":"<\\u003c\\&>"}` + "\n\n"
	for _, step := range []int{1, 2, 5, 7, len(event)} {
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", "text/event-stream")
		rec.Header().Set("Content-Length", strconv.Itoa(len(event)))
		u := &unescapingWriter{w: rec}
		for i := 0; i < len(event); i += step {
			u.Write([]byte(event[i:min(i+step, len(event))]))
		}
		u.finish()
		if got := rec.Body.String(); got != want || rec.Header().Get("Content-Length") != "" {
			t.Errorf("in writes of %d bytes: %q, Content-Length %q", step, got, rec.Header().Get("Content-Length"))
		}
	}
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "text/plain")
	u := &unescapingWriter{w: rec}
	io.WriteString(u, `\u003c`)
	if rec.Body.String() != `\u003c` {
		t.Errorf("a text/plain body was rewritten: %q", rec.Body.String())
	}
}

// TestReplyBudgetOption checks the bounds WithReplyBudget keeps.
func TestReplyBudgetOption(t *testing.T) {
	ctx := context.Background()
	for in, want := range map[int]int{0: DefaultReplyBudget, -1: DefaultReplyBudget, 100000: 100000, DefaultReplyBudget + 1: DefaultReplyBudget} {
		if got := ReplyBudget(WithReplyBudget(ctx, in)); got != want {
			t.Errorf("WithReplyBudget(%d): %d, want %d", in, got, want)
		}
	}
	if ReplyBudget(ctx) != DefaultReplyBudget {
		t.Error("no budget in the context is not the default")
	}
	if n := TextLimit(WithReplyBudget(ctx, 100000)); textResultSize(n) > 100000 || textResultSize(n+1) <= 100000 {
		t.Errorf("TextLimit = %d", n)
	}
}
