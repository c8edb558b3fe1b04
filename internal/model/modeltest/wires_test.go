package modeltest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// post sends body to srv's path with headers, and returns the status and
// the decoded answer.
func post(t *testing.T, srv *Server, path, body string, headers map[string]string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("answer %q is not JSON: %v", data, err)
	}
	return res.StatusCode, v
}

var anthropicHeaders = map[string]string{"anthropic-version": "2023-06-01", "x-api-key": "k"}

// TestAnthropicRefusals: each history or request the Messages API refuses
// is answered 400 with its error body, {"type":"error","error":{"type":
// "invalid_request_error","message":...}}; the good ones are answered.
func TestAnthropicRefusals(t *testing.T) {
	const use = `{"role":"assistant","content":[{"type":"tool_use","id":"tu_1","name":"read","input":{}}]}`
	tests := []struct {
		name    string
		body    string
		headers map[string]string
		want    string // in the message; "" for an answer
	}{
		{"good", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, anthropicHeaders, ""},
		{"tool result answering its use", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"},` + use +
			`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1","content":"x"}]}]}`, anthropicHeaders, ""},
		{"no anthropic-version", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
			map[string]string{"x-api-key": "k"}, "anthropic-version: header is required"},
		{"no max_tokens", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, anthropicHeaders, "max_tokens: Field required"},
		{"no model", `{"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, anthropicHeaders, "model: Field required"},
		{"two user messages in a row", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`,
			anthropicHeaders, `multiple "user" roles in a row`},
		{"a system message", `{"model":"m","max_tokens":10,"messages":[{"role":"system","content":"a"}]}`, anthropicHeaders, "Input should be 'user' or 'assistant'"},
		{"tool result without its use", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1","content":"x"}]}]}`, anthropicHeaders, "unexpected `tool_use_id` found in `tool_result` blocks: tu_1"},
		{"tool result of an older use", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"},` + use +
			`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1","content":"x"}]},{"role":"assistant","content":"ok"},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1","content":"x"}]}]}`, anthropicHeaders, "unexpected `tool_use_id`"},
		{"tool use not answered", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"},` + use +
			`,{"role":"user","content":"go on"}]}`, anthropicHeaders, "`tool_use` ids were found without `tool_result` blocks immediately after: tu_1"},
		{"empty text", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, anthropicHeaders, "text content blocks must be non-empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewAnthropic(t)
			status, v := post(t, srv, "/v1/messages", tt.body, tt.headers)
			if tt.want == "" {
				if status != http.StatusOK || v["type"] != "message" {
					t.Errorf("answer %d %v, want a message", status, v)
				}
				return
			}
			e, _ := v["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if status != http.StatusBadRequest || v["type"] != "error" || e["type"] != "invalid_request_error" || !strings.Contains(msg, tt.want) {
				t.Errorf("answer %d %v, want 400 invalid_request_error saying %q", status, v, tt.want)
			}
			if len(srv.Requests()) != 0 || len(srv.Refused()) != 1 {
				t.Errorf("requests %d, refused %q: want it refused, not answered", len(srv.Requests()), srv.Refused())
			}
		})
	}
}

// TestResponsesRefusals: each request the Responses API refuses is
// answered 400 with its error body, {"error":{"message","type","param",
// "code"}}.
func TestResponsesRefusals(t *testing.T) {
	const call = `{"type":"function_call","call_id":"call_1","name":"read","arguments":"{}"}`
	tests := []struct {
		name, body, want, param string
	}{
		{"good", `{"model":"m","input":[{"role":"user","content":"hi"}]}`, "", ""},
		{"output answering its call", `{"model":"m","input":[{"role":"user","content":"hi"},` + call +
			`,{"type":"function_call_output","call_id":"call_1","output":"x"}]}`, "", ""},
		{"no model", `{"input":[{"role":"user","content":"hi"}]}`, "Missing required parameter: 'model'.", "model"},
		{"output of a call never made", `{"model":"m","input":[{"role":"user","content":"hi"},` +
			`{"type":"function_call_output","call_id":"call_9","output":"x"}]}`, "No tool call found for function call output with call_id call_9.", "input"},
		{"call never answered", `{"model":"m","input":[{"role":"user","content":"hi"},` + call + `]}`, "No tool output found for function call call_1.", "input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewResponses(t)
			status, v := post(t, srv, "/v1/responses", tt.body, map[string]string{"Authorization": "Bearer k"})
			if tt.want == "" {
				if status != http.StatusOK || v["status"] != "completed" {
					t.Errorf("answer %d %v, want a completed response", status, v)
				}
				return
			}
			e, _ := v["error"].(map[string]any)
			if status != http.StatusBadRequest || e["message"] != tt.want || e["type"] != "invalid_request_error" || e["param"] != tt.param {
				t.Errorf("answer %d %v, want 400 invalid_request_error %q on %q", status, v, tt.want, tt.param)
			}
			if len(srv.Requests()) != 0 {
				t.Errorf("answered a request it should refuse")
			}
		})
	}
}
