package model

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sseBody writes each chunk as a data event, then the lines in tail.
func sseBody(chunks []string, tail ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	for _, l := range tail {
		b.WriteString(l)
	}
	return b.String()
}

// streamReply is a scripted streamed answer.
func streamReply(chunks []string, tail ...string) reply {
	return reply{header: map[string]string{"Content-Type": "text/event-stream"}, body: sseBody(chunks, tail...)}
}

const done = "data: [DONE]\n\n"

// stream runs Stream against one scripted reply and returns the answer,
// the text pieces onText got, and the error.
func stream(t *testing.T, rep reply) (Response, []string, error) {
	t.Helper()
	f := newFakeServer(t, rep)
	c, _ := newTestClient(f, "sk-stream-secret")
	var pieces []string
	resp, err := c.Stream(context.Background(), Request{Messages: userSays("hi")}, func(s string) { pieces = append(pieces, s) })
	if len(f.requests()) == 1 {
		var body map[string]any
		json.Unmarshal(f.requests()[0].Body, &body)
		if body["stream"] != true || body["stream_options"] == nil {
			t.Errorf("the request does not ask for a stream: %s", f.requests()[0].Body)
		}
	}
	return resp, pieces, err
}

func calls(resp Response) []ToolCall { return resp.Message.ToolCalls }

func call(id, name, args string) ToolCall {
	return ToolCall{ID: id, Type: "function", Function: FunctionCall{Name: name, Arguments: args}}
}

// TestStreamText assembles streamed text, hands each piece on as it comes,
// and keeps the usage of the last chunk.
func TestStreamText(t *testing.T) {
	resp, pieces, err := stream(t, streamReply([]string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"lo"}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}`,
	}, done))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Hello" || resp.Message.Role != RoleAssistant || resp.FinishReason != "stop" || resp.Usage.TotalTokens != 6 {
		t.Errorf("answer: %+v", resp)
	}
	if !cmp.Equal(pieces, []string{"Hel", "lo"}) {
		t.Errorf("pieces: %q", pieces)
	}
}

// TestStreamToolCallQuirks: a tool call streamed in fragments with each
// quirk providers are seen to send is assembled as the same calls.
func TestStreamToolCallQuirks(t *testing.T) {
	weather := call("call_a", "get_weather", `{"city":"Paris"}`)
	tests := []struct {
		name   string
		chunks []string
		want   []ToolCall
	}{
		{"the usual fragments", []string{
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		}, []ToolCall{weather}},
		{"a missing index", []string{
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_a","function":{"name":"get_weather","arguments":"{\"city\":"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"\"Paris\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_b","function":{"name":"get_time","arguments":"{}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		}, []ToolCall{weather, call("call_b", "get_time", "{}")}},
		{"index 0 reused for parallel calls", []string{
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_b","function":{"name":"get_time","arguments":"{"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		}, []ToolCall{weather, call("call_b", "get_time", "{}")}},
		{"names resent in every chunk", []string{
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"get_weather","arguments":"{\"city\":"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"get_weather","arguments":"\"Paris\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		}, []ToolCall{weather}},
		{"empty names", []string{
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"get_weather","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"","function":{"name":"","arguments":"{\"city\":\"Paris\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		}, []ToolCall{weather}},
		{"a name in fragments", []string{
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"get_","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		}, []ToolCall{weather}},
		{"no id", []string{
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"get_time","arguments":"{}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		}, []ToolCall{call("call_1", "get_time", "{}")}},
		{"finish_reason stop with tool calls", []string{
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		}, []ToolCall{weather}},
	}
	for _, tc := range tests {
		resp, _, err := stream(t, streamReply(tc.chunks, done))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, calls(resp)); diff != "" {
			t.Errorf("%s: calls (-want +got):\n%s", tc.name, diff)
		}
		if resp.FinishReason != "tool_calls" {
			t.Errorf("%s: finish reason %q, want tool_calls", tc.name, resp.FinishReason)
		}
	}
}

// TestStreamKeepAlives: comments between events (keep-alives), CRLF line
// ends and a stream without [DONE] after its finish reason are read.
func TestStreamKeepAlives(t *testing.T) {
	body := ": keep-alive\r\n\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\r\n\r\n" +
		": OPENROUTER PROCESSING\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n"
	resp, _, err := stream(t, reply{header: map[string]string{"Content-Type": "text/event-stream"}, body: body})
	if err != nil || resp.Message.Content != "ab" || resp.FinishReason != "stop" {
		t.Errorf("answer %+v, error %v", resp, err)
	}
}

// TestStreamErrors: a stream that carries an error, ends without a finish
// reason, holds a chunk that is not JSON or a nameless call, or is over the
// bound, is an error wrapping ErrResponse, never a partial answer; the
// provider's text is quoted with the key redacted; each error begins
// "model response: " once.
func TestStreamErrors(t *testing.T) {
	text := `{"choices":[{"index":0,"delta":{"content":"partial"}}]}`
	tests := []struct {
		name string
		rep  reply
		want string
	}{
		{"an error mid-stream", streamReply([]string{text, `{"error":{"message":"overloaded, key sk-stream-secret"}}`}, done), "the stream carried an error: overloaded, key [redacted API key]"},
		{"an error event", streamReply([]string{text}, "event: error\ndata: {\"message\":\"upstream failed\"}\n\n"), "the stream carried an error: upstream failed"},
		{"no finish reason, [DONE]", streamReply([]string{text}, done), "ended without a finish reason"},
		{"no finish reason, cut off", streamReply([]string{text}), "ended without a finish reason"},
		{"not JSON", streamReply([]string{text, `{"choices":`}, done), "a chunk that is not JSON"},
		{"a call without a name", streamReply([]string{`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`}, done), "tool call 1 has no name"},
		{"another choice", streamReply([]string{`{"choices":[{"index":1,"delta":{"content":"x"}}]}`}, done), "choice 1"},
		{"an event over the bound", streamReply([]string{`{"choices":[{"index":0,"delta":{"content":"` + strings.Repeat("x", MaxStreamEvent) + `"}}]}`}, done), "over the size bound"},
	}
	for _, tc := range tests {
		resp, _, err := stream(t, tc.rep)
		if !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "sk-stream-secret") {
			t.Errorf("%s: error %v, want ErrResponse saying %q", tc.name, err, tc.want)
		}
		if err != nil && (!strings.HasPrefix(err.Error(), "model response: ") || strings.Count(err.Error(), "model response") != 1) {
			t.Errorf("%s: error %q, want it to begin \"model response: \" once", tc.name, err)
		}
		if resp.Message.Content != "" || resp.FinishReason != "" {
			t.Errorf("%s: a partial answer %+v", tc.name, resp)
		}
	}
}

// TestStreamRetriesAndJSON: a 429 before the stream is retried as Chat
// retries it; a provider that answers a stream request with one JSON
// answer is read as Chat reads it.
func TestStreamRetriesAndJSON(t *testing.T) {
	f := newFakeServer(t, reply{status: 429, body: `{"error":{"message":"slow down"}}`},
		streamReply([]string{`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`}, done))
	c, waits := newTestClient(f, "k")
	resp, err := c.Stream(context.Background(), Request{Messages: userSays("hi")}, nil)
	if err != nil || resp.Message.Content != "ok" || len(*waits) != 1 {
		t.Errorf("after a 429: %+v, %v, waits %v", resp, err, *waits)
	}
	var pieces []string
	resp, _, err = stream(t, reply{body: answerBody("whole")})
	if err != nil || resp.Message.Content != "whole" {
		t.Errorf("a JSON answer: %+v, %v", resp, err)
	}
	f = newFakeServer(t, reply{body: toolCallBody([3]string{"call_x", "get_time", "{}"})})
	c, _ = newTestClient(f, "k")
	resp, err = c.Stream(context.Background(), Request{Messages: userSays("hi")}, func(s string) { pieces = append(pieces, s) })
	if err != nil || len(resp.Message.ToolCalls) != 1 || pieces != nil {
		t.Errorf("a JSON tool call: %+v, %v, pieces %q", resp, err, pieces)
	}
}
