package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/guard/netguard"
)

const testKey = "sk-proj-Zq9xT3stK3y0123456789"

func TestChatRequestShape(t *testing.T) {
	temp := 0.2
	params := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	tools := []Tool{{Type: "function", Function: FunctionDef{Name: "read_file", Description: "Read a file.", Parameters: params}}}
	tests := []struct {
		name string
		req  Request
		want string // the JSON body, compared as a value
	}{
		{
			name: "minimal",
			req:  Request{Messages: userSays("hi")},
			want: `{"model":"test-model","messages":[{"role":"user","content":"hi"}]}`,
		},
		{
			name: "tools, no tool_choice",
			req: Request{
				Messages:    []Message{{Role: RoleSystem, Content: "be brief"}, {Role: RoleUser, Content: "hi"}},
				Tools:       tools,
				Temperature: &temp,
				MaxTokens:   100,
			},
			want: `{"model":"test-model",
"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],
"tools":[{"type":"function","function":{"name":"read_file","description":"Read a file.",
  "parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}],
"temperature":0.2,"max_tokens":100}`,
		},
		{
			name: "model, tool_choice and response_format set",
			req: Request{
				Model:          "other-model",
				Messages:       userSays("hi"),
				Tools:          tools,
				ToolChoice:     json.RawMessage(`"required"`),
				ResponseFormat: json.RawMessage(`{"type":"json_object"}`),
			},
			want: `{"model":"other-model","messages":[{"role":"user","content":"hi"}],
"tools":[{"type":"function","function":{"name":"read_file","description":"Read a file.",
  "parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}],
"tool_choice":"required","response_format":{"type":"json_object"}}`,
		},
		{
			name: "conversation with tool calls and answers",
			req: Request{Messages: []Message{
				{Role: RoleUser, Content: "read it"},
				{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Type: "function", Function: FunctionCall{Name: "read_file", Arguments: `{"path":"a"}`}}}},
				{Role: RoleTool, ToolCallID: "c1", Content: "text of a"},
			}},
			want: `{"model":"test-model","messages":[
{"role":"user","content":"read it"},
{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]},
{"role":"tool","content":"text of a","tool_call_id":"c1"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, reply{body: answerBody("ok")})
			c, _ := newTestClient(srv, testKey)
			if _, err := c.Chat(t.Context(), tt.req); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			got := srv.requests()
			if len(got) != 1 {
				t.Fatalf("server got %d requests, want 1", len(got))
			}
			if got[0].Method != http.MethodPost || got[0].Path != "/v1/chat/completions" {
				t.Errorf("request is %s %s, want POST /v1/chat/completions", got[0].Method, got[0].Path)
			}
			if ct := got[0].Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			var gotBody, wantBody any
			if err := json.Unmarshal(got[0].Body, &gotBody); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &wantBody); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantBody, gotBody); diff != "" {
				t.Errorf("request body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChatTrimsTrailingSlash(t *testing.T) {
	srv := newFakeServer(t, reply{body: answerBody("ok")})
	c := New(Config{BaseURL: srv.URL + "/v1/", Model: "m"}, srv.Client())
	if _, err := c.Chat(t.Context(), Request{Messages: userSays("hi")}); err != nil {
		t.Fatal(err)
	}
	if p := srv.requests()[0].Path; p != "/v1/chat/completions" {
		t.Errorf("path = %q, want /v1/chat/completions", p)
	}
}

func TestChatAuthorization(t *testing.T) {
	for _, key := range []string{testKey, ""} {
		srv := newFakeServer(t, reply{body: answerBody("ok")})
		c, _ := newTestClient(srv, key)
		if _, err := c.Chat(t.Context(), Request{Messages: userSays("hi")}); err != nil {
			t.Fatal(err)
		}
		h := srv.requests()[0].Header
		if key == "" {
			if v, ok := h["Authorization"]; ok {
				t.Errorf("without a key, Authorization = %q, want none", v)
			}
			continue
		}
		if got, want := h.Get("Authorization"), "Bearer "+key; got != want {
			t.Errorf("Authorization = %q, want %q", got, want)
		}
	}
}

func TestChatParsesAnswer(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Response
	}{
		{
			name: "content",
			body: answerBody("Hello there."),
			want: Response{
				Message:      Message{Role: RoleAssistant, Content: "Hello there."},
				FinishReason: "stop",
				Usage:        Usage{PromptTokens: 10, CompletionTokens: 3, TotalTokens: 13},
			},
		},
		{
			name: "tool calls with null content",
			body: toolCallBody([3]string{"call_1", "read_file", `{"path":"README.md"}`}, [3]string{"call_2", "list", `not json`}),
			want: Response{
				Message: Message{Role: RoleAssistant, ToolCalls: []ToolCall{
					{ID: "call_1", Type: "function", Function: FunctionCall{Name: "read_file", Arguments: `{"path":"README.md"}`}},
					{ID: "call_2", Type: "function", Function: FunctionCall{Name: "list", Arguments: `not json`}},
				}},
				FinishReason: "tool_calls",
				Usage:        Usage{PromptTokens: 20, CompletionTokens: 5, TotalTokens: 25},
			},
		},
		{
			name: "content and tool call, missing type and role, no usage",
			body: `{"choices":[{"message":{"content":"Let me look.","tool_calls":[{"id":"x","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			want: Response{
				Message: Message{Role: RoleAssistant, Content: "Let me look.", ToolCalls: []ToolCall{
					{ID: "x", Type: "function", Function: FunctionCall{Name: "f", Arguments: "{}"}},
				}},
				FinishReason: "tool_calls",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, reply{body: tt.body})
			c, _ := newTestClient(srv, testKey)
			got, err := c.Chat(t.Context(), Request{Messages: userSays("hi")})
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Chat (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMessageNullContentRoundTrip checks that an assistant message that only
// calls tools decodes null content as "" and encodes it as null again, and
// that other empty content stays a string.
func TestMessageNullContentRoundTrip(t *testing.T) {
	in := `{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}`
	var m Message
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	if m.Content != "" || len(m.ToolCalls) != 1 {
		t.Fatalf("decoded %+v", m)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip:\n got %s\nwant %s", out, in)
	}
	out, _ = json.Marshal(&Message{Role: RoleUser})
	if want := `{"role":"user","content":""}`; string(out) != want {
		t.Errorf("empty user message = %s, want %s", out, want)
	}
}

// TestMessageRoundTrip checks that every field of a Message survives
// encoding and decoding.
func TestMessageRoundTrip(t *testing.T) {
	for _, m := range []Message{
		{Role: RoleAssistant, Content: "c", ToolCalls: []ToolCall{{ID: "i", Type: "function", Function: FunctionCall{Name: "n", Arguments: "{}"}}}, ToolCallID: "t", Name: "x"},
		{Role: RoleTool, ToolCallID: "t"},
	} {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var got Message
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(m, got); diff != "" {
			t.Errorf("round trip of %s (-want +got):\n%s", b, diff)
		}
	}
}

// TestMessageEscapesAsItsEncoder: a Message's <, > and & are escaped by
// json.Marshal, and kept as they are by an Encoder that escapes no HTML.
func TestMessageEscapesAsItsEncoder(t *testing.T) {
	m := Message{Role: RoleAssistant, Content: "<b>&", ToolCalls: []ToolCall{{ID: "i", Type: "function", Function: FunctionCall{Name: "n", Arguments: `{"a":"<>&"}`}}}}
	escaped, _ := json.Marshal(m)
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(m)
	want := `{"role":"assistant","content":"<b>&","tool_calls":[{"id":"i","type":"function","function":{"name":"n","arguments":"{\"a\":\"<>&\"}"}}]}` + "\n"
	if b.String() != want || strings.ContainsAny(string(escaped), "<>&") {
		t.Errorf("without HTML escaping:\n%s\nwant\n%s\njson.Marshal: %s", b.String(), want, escaped)
	}
}

// TestChatStatusErrorHidesKey plants the key in the provider's error message
// (as written and JSON-escaped) and in the URL path, and checks that the
// error quotes the provider's message without the key.
func TestChatStatusErrorHidesKey(t *testing.T) {
	body := `{"error":{"message":"Incorrect API key provided: ` + testKey + `. You can find your API key at https://example.com/keys?k=` + strings.ReplaceAll(testKey, "-", "\\u002d") + `","type":"invalid_request_error","code":"invalid_api_key"}}`
	srv := newFakeServer(t, reply{status: http.StatusUnauthorized, body: body})
	c := New(Config{BaseURL: srv.URL + "/" + testKey + "/v1", APIKey: testKey, Model: "m"}, srv.Client())
	_, err := c.Chat(t.Context(), Request{Messages: userSays("hi")})
	if err == nil {
		t.Fatal("Chat succeeded on a 401")
	}
	msg := err.Error()
	if strings.Contains(msg, testKey) || strings.Contains(msg, "Zq9xT3stK3y") {
		t.Errorf("error holds the key: %q", msg)
	}
	for _, want := range []string{"401", "Incorrect API key provided: [redacted API key]", "You can find your API key"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	se, ok := errors.AsType[*StatusError](err)
	if !ok || se.StatusCode != http.StatusUnauthorized || strings.Contains(se.Message, testKey) {
		t.Errorf("StatusError = %+v, %v", se, ok)
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("a 401 was sent %d times, want 1", n)
	}
}

func TestChatStatusErrorMessage(t *testing.T) {
	long := strings.Repeat("é", 600)
	tests := []struct {
		name string
		body string
		want string // the StatusError's Message
	}{
		{"nested", `{"error":{"message":"model not found","type":"x"}}`, "model not found"},
		{"flat", `{"error":"rate limited"}`, "rate limited"},
		{"top-level message", `{"message":"bad request"}`, "bad request"},
		{"not JSON", "upstream\x1b[31m broke\r\n", "upstream [31m broke"},
		{"empty", "", ""},
		{"long", `{"error":{"message":"` + long + `"}}`, long[:508] + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, reply{status: http.StatusBadRequest, body: tt.body})
			c, _ := newTestClient(srv, testKey)
			_, err := c.Chat(t.Context(), Request{Messages: userSays("hi")})
			se, ok := errors.AsType[*StatusError](err)
			if !ok {
				t.Fatalf("error %v is not a StatusError", err)
			}
			if se.StatusCode != http.StatusBadRequest || se.Message != tt.want {
				t.Errorf("StatusError = %d %q, want 400 %q", se.StatusCode, se.Message, tt.want)
			}
			if len(se.Message) > MaxErrorMessage {
				t.Errorf("message is %d bytes, over %d", len(se.Message), MaxErrorMessage)
			}
		})
	}
}

func TestChatRetries(t *testing.T) {
	tests := []struct {
		name      string
		script    []reply
		wantCalls int
		wantWaits []time.Duration
		wantErr   int // the status of the StatusError; 0: success
	}{
		{
			name:      "429 then 200",
			script:    []reply{{status: 429, body: `{"error":{"message":"slow down"}}`}, {body: answerBody("ok")}},
			wantCalls: 2,
			wantWaits: []time.Duration{defaultBackoff},
		},
		{
			name:      "429 with Retry-After then 200",
			script:    []reply{{status: 429, header: map[string]string{"Retry-After": "3"}}, {body: answerBody("ok")}},
			wantCalls: 2,
			wantWaits: []time.Duration{3 * time.Second},
		},
		{
			name:      "503 twice then 200",
			script:    []reply{{status: 503}, {status: 503}, {body: answerBody("ok")}},
			wantCalls: 3,
			wantWaits: []time.Duration{defaultBackoff, 2 * defaultBackoff},
		},
		{
			name:      "500 three times gives up",
			script:    []reply{{status: 500, body: `{"error":{"message":"internal"}}`}},
			wantCalls: 3,
			wantWaits: []time.Duration{defaultBackoff, 2 * defaultBackoff},
			wantErr:   500,
		},
		{
			name:      "Retry-After over the limit gives up at once",
			script:    []reply{{status: 429, header: map[string]string{"Retry-After": "60"}}, {body: answerBody("ok")}},
			wantCalls: 1,
			wantErr:   429,
		},
		{
			name:      "Retry-After as a date uses the backoff",
			script:    []reply{{status: 429, header: map[string]string{"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}}, {body: answerBody("ok")}},
			wantCalls: 2,
			wantWaits: []time.Duration{defaultBackoff},
		},
		{
			name:      "400 is not retried",
			script:    []reply{{status: 400}, {body: answerBody("ok")}},
			wantCalls: 1,
			wantErr:   400,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.script...)
			c, waits := newTestClient(srv, testKey)
			res, err := c.Chat(t.Context(), Request{Messages: userSays("hi")})
			if tt.wantErr == 0 {
				if err != nil || res.Message.Content != "ok" {
					t.Errorf("Chat = %+v, %v; want ok", res, err)
				}
			} else if se, ok := errors.AsType[*StatusError](err); !ok || se.StatusCode != tt.wantErr {
				t.Errorf("Chat error = %v, want status %d", err, tt.wantErr)
			}
			if n := len(srv.requests()); n != tt.wantCalls {
				t.Errorf("server got %d requests, want %d", n, tt.wantCalls)
			}
			if diff := cmp.Diff(tt.wantWaits, *waits); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChatBadResponses(t *testing.T) {
	huge := `{"choices":[{"message":{"role":"assistant","content":"` + strings.Repeat("a", MaxResponseBody) + `"}}]}`
	tests := []struct {
		name    string
		body    string
		wantErr string
	}{
		{"zero choices", `{"choices":[],"usage":{"total_tokens":1}}`, "0 choices"},
		{"no choices field", `{"id":"x"}`, "0 choices"},
		{"two choices", `{"choices":[{"message":{"content":"a"}},{"message":{"content":"b"}}]}`, "2 choices"},
		{"error with a 200", `{"error":{"message":"quota exceeded"}}`, "quota exceeded"},
		{"malformed JSON", `{"choices":[{"message":`, "malformed JSON"},
		{"trailing garbage", answerBody("ok") + `}`, "malformed JSON"},
		{"wrong type", `{"choices":[{"message":{"content":42}}]}`, "malformed JSON"},
		{"not JSON", `<html>gateway</html>`, "malformed JSON"},
		{"body over the cap", huge, "over 8 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, reply{body: tt.body})
			c, _ := newTestClient(srv, testKey)
			_, err := c.Chat(t.Context(), Request{Messages: userSays("hi")})
			if !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Chat error = %v, want ErrResponse holding %q", err, tt.wantErr)
			}
		})
	}
}

func TestChatContextCanceled(t *testing.T) {
	t.Run("while waiting for the answer", func(t *testing.T) {
		srv := newFakeServer(t)
		release := make(chan struct{})
		defer close(release)
		srv.handler = func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}
		c, _ := newTestClient(srv, testKey)
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			for len(srv.requests()) == 0 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		_, err := c.Chat(ctx, Request{Messages: userSays("hi")})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Chat error = %v, want context.Canceled", err)
		}
	})
	t.Run("while waiting to retry", func(t *testing.T) {
		srv := newFakeServer(t, reply{status: 503})
		c := New(Config{BaseURL: srv.URL + "/v1", Model: "m"}, srv.Client())
		c.backoff = time.Hour
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		_, err := c.Chat(ctx, Request{Messages: userSays("hi")})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Chat error = %v, want context.DeadlineExceeded", err)
		}
		if se, ok := errors.AsType[*StatusError](err); !ok || se.StatusCode != 503 {
			t.Errorf("Chat error = %v, want it to carry the 503", err)
		}
	})
	t.Run("before sending", func(t *testing.T) {
		srv := newFakeServer(t, reply{body: answerBody("ok")})
		c, _ := newTestClient(srv, testKey)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := c.Chat(ctx, Request{Messages: userSays("hi")})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Chat error = %v, want context.Canceled", err)
		}
	})
}

// TestChatTransportErrorHidesKey checks that a transport error, whose text
// quotes the URL, does not quote the key planted in the URL's path, and does
// not let errors.As reach the unredacted *url.Error.
func TestChatTransportErrorHidesKey(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := New(Config{BaseURL: "http://" + addr + "/" + testKey + "/v1", APIKey: testKey, Model: "m"}, nil)
	_, err = c.Chat(t.Context(), Request{Messages: userSays("hi")})
	if err == nil {
		t.Fatal("Chat succeeded with nothing listening")
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("error holds the key: %q", err)
	}
	if !strings.Contains(err.Error(), "[redacted API key]") {
		t.Errorf("error %q does not show where the key was", err)
	}
	for e := error(err); e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), testKey) {
			t.Errorf("the error chain holds the key: %q", e)
		}
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		t.Error("errors.As reaches a net.Error of the unredacted chain")
	}
}

// TestChatDoesNotFollowRedirects checks that a redirect is an error and the
// key never reaches the redirect's target.
func TestChatDoesNotFollowRedirects(t *testing.T) {
	target := newFakeServer(t, reply{body: answerBody("ok")})
	srv := newFakeServer(t, reply{status: http.StatusTemporaryRedirect, header: map[string]string{"Location": target.URL + "/v1/chat/completions"}})
	c, _ := newTestClient(srv, testKey)
	_, err := c.Chat(t.Context(), Request{Messages: userSays("hi")})
	if se, ok := errors.AsType[*StatusError](err); !ok || se.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("Chat error = %v, want a 307 StatusError", err)
	}
	if n := len(target.requests()); n != 0 {
		t.Errorf("the redirect target got %d requests", n)
	}
}

// TestNewDefaultClient checks the client New builds when given none: it
// reaches a loopback server, and its timeout is DefaultTimeout.
func TestNewDefaultClient(t *testing.T) {
	srv := newFakeServer(t, reply{body: answerBody("ok")})
	c := New(Config{BaseURL: srv.URL + "/v1", APIKey: testKey, Model: "m"}, nil)
	if c.http.Timeout != DefaultTimeout {
		t.Errorf("timeout = %v, want %v", c.http.Timeout, DefaultTimeout)
	}
	res, err := c.Chat(t.Context(), Request{Messages: userSays("hi")})
	if err != nil || res.Message.Content != "ok" {
		t.Errorf("Chat = %+v, %v", res, err)
	}
}

// TestNewLeavesCallerClient checks that New does not change the caller's
// *http.Client when it turns redirects off.
func TestNewLeavesCallerClient(t *testing.T) {
	hc := &http.Client{}
	New(Config{BaseURL: "https://api.example.com/v1", Model: "m"}, hc)
	if hc.CheckRedirect != nil {
		t.Error("New changed the caller's CheckRedirect")
	}
}

func TestChatNoMessages(t *testing.T) {
	srv := newFakeServer(t, reply{body: answerBody("ok")})
	c, _ := newTestClient(srv, testKey)
	if _, err := c.Chat(t.Context(), Request{}); err == nil {
		t.Error("Chat with no messages succeeded")
	}
	if n := len(srv.requests()); n != 0 {
		t.Errorf("server got %d requests, want 0", n)
	}
}

// TestScrubKeeps checks what an error the package returns still tells its
// caller: the sentinels in kept that it matches, and its *StatusError with
// the message redacted; nothing else of the chain, and never the key.
func TestScrubKeeps(t *testing.T) {
	r := newRedactor(testKey)
	ue := &url.Error{Op: "Post", URL: "https://api.example.com/" + testKey, Err: context.DeadlineExceeded}
	se := &StatusError{StatusCode: http.StatusTooManyRequests, Message: "slow down, " + testKey}
	err := r.scrub(fmt.Errorf("model request: %w; %w: %w", se, ErrResponse, ue))
	if strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "slow down, [redacted API key]") {
		t.Errorf("text %q", err)
	}
	for target, want := range map[error]bool{
		ErrResponse: true, context.DeadlineExceeded: true,
		ErrConfig: false, context.Canceled: false, netguard.ErrBlocked: false,
	} {
		if errors.Is(err, target) != want {
			t.Errorf("errors.Is(err, %v) = %v, want %v", target, !want, want)
		}
	}
	got, ok := errors.AsType[*StatusError](err)
	if !ok || got.StatusCode != http.StatusTooManyRequests || got.Message != "slow down, [redacted API key]" {
		t.Errorf("StatusError = %+v, %v", got, ok)
	}
	if _, ok := errors.AsType[*url.Error](err); ok {
		t.Error("errors.As reaches the *url.Error, which holds the key")
	}
	if again := r.scrub(err); again != err {
		t.Errorf("scrubbing twice wrapped again: %v", again)
	}
	if r.scrub(nil) != nil {
		t.Error("scrub(nil) != nil")
	}
}
