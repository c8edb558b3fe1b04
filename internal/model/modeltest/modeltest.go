// Package modeltest is the one stand-in of Zero's tests: a local HTTP
// server that follows one of the model client's wire formats (OpenAI chat
// completions with [New], OpenAI Responses with [NewResponses], Anthropic
// Messages with [NewAnthropic]) and answers from a script. Like a real
// provider it refuses a conversation whose tool calls and results do not
// match ([CheckHistory], and each wire's own rules), with the status and
// error body that provider sends, so a test that re-sends a history
// learns whether a provider would take it. Only tests import it.
package modeltest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/zero-dev/zero/internal/model"
)

// A Reply is one scripted answer.
type Reply struct {
	Text  string           // the answer's text; streamed in two pieces
	Calls []model.ToolCall // the tool calls it asks for; streamed in fragments
	Usage model.Usage
	// Wait, when set, is waited for (or the request's end) before the
	// answer is sent.
	Wait chan struct{}
	// Pause, when set, is waited for (or the request's end) after the
	// first piece of a streamed text, so that a test sees it streaming.
	Pause chan struct{}
	// Error, when set, is the provider's error message in place of the
	// answer: in a stream, a chunk {"error":{"message":Error}} after the
	// text's first piece, as providers send one mid-stream; otherwise a
	// 400 answer with that error.
	Error string
}

// Call is a tool call of name with arguments args (JSON).
func Call(id, name, args string) model.ToolCall {
	return model.ToolCall{ID: id, Type: "function", Function: model.FunctionCall{Name: name, Arguments: args}}
}

// A Server answers from its script, one Reply a request, in order; past
// the script it answers "done".
type Server struct {
	*httptest.Server
	// Respond, if set, answers each request instead of the script: for
	// many conversations at once, each answered by what it holds. It is
	// called one request at a time.
	Respond func(model.Request) Reply

	wire     string
	mu       sync.Mutex
	script   []Reply
	requests []model.Request
	headers  []http.Header
	refused  []string
}

// New starts a chat-completions server, closed when the test ends.
func New(t testing.TB) *Server { return newServer(t, model.WireChat) }

// NewResponses starts a server of OpenAI's Responses API (POST
// /v1/responses), closed when the test ends.
func NewResponses(t testing.TB) *Server { return newServer(t, model.WireResponses) }

// NewAnthropic starts a server of Anthropic's Messages API (POST
// /v1/messages), closed when the test ends.
func NewAnthropic(t testing.TB) *Server { return newServer(t, model.WireAnthropic) }

func newServer(t testing.TB, wire string) *Server {
	s := &Server{wire: wire}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// WireAPI is the wire the server speaks, as a [model.Config] names it.
func (s *Server) WireAPI() string { return s.wire }

// BaseURL is the API's base, as a provider is configured with it: with
// /v1 for OpenAI's formats, without for Anthropic's (whose paths have it).
func (s *Server) BaseURL() string {
	if s.wire == model.WireAnthropic {
		return s.URL
	}
	return s.URL + "/v1"
}

// Push adds replies to the script.
func (s *Server) Push(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, r...)
}

// Requests returns the requests answered so far.
func (s *Server) Requests() []model.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]model.Request(nil), s.requests...)
}

// Headers returns the headers of the requests answered so far.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

// Refused returns why each refused request was refused.
func (s *Server) Refused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.refused...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch s.wire {
	case model.WireResponses:
		s.serveResponses(w, r)
		return
	case model.WireAnthropic:
		s.serveAnthropic(w, r)
		return
	}
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/models":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"scripted-1"},{"id":"scripted-2"}]}`)
		return
	case r.Method != "POST" || r.URL.Path != "/v1/chat/completions":
		http.NotFound(w, r)
		return
	}
	var req struct {
		model.Request
		Stream bool `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		s.refuse(w, "the body is not a chat-completions request: "+err.Error())
		return
	}
	if err := CheckHistory(req.Messages); err != nil {
		s.refuse(w, err.Error())
		return
	}
	rep, ok := s.next(r, req.Request)
	if !ok {
		return
	}
	if req.Stream {
		stream(w, r, rep)
		return
	}
	if rep.Error != "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]string{"message": rep.Error}})
		return
	}
	finish := "stop"
	if len(rep.Calls) > 0 {
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish,
			"message": model.Message{Role: model.RoleAssistant, Content: rep.Text, ToolCalls: rep.Calls}}},
		"usage": rep.Usage,
	})
}

// next records req, takes its reply from Respond or the script, and waits
// for the reply's Wait; false if the request ended first.
func (s *Server) next(r *http.Request, req model.Request) (Reply, bool) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.headers = append(s.headers, r.Header.Clone())
	rep := Reply{Text: "done"}
	switch {
	case s.Respond != nil:
		rep = s.Respond(req)
	case len(s.script) > 0:
		rep, s.script = s.script[0], s.script[1:]
	}
	s.mu.Unlock()
	if rep.Wait != nil {
		select {
		case <-rep.Wait:
		case <-r.Context().Done():
			return rep, false
		}
	}
	return rep, true
}

// pause waits for rep's Pause; false if the request ended first.
func pause(r *http.Request, rep Reply) bool {
	if rep.Pause == nil {
		return true
	}
	select {
	case <-rep.Pause:
		return true
	case <-r.Context().Done():
		return false
	}
}

func (s *Server) refuse(w http.ResponseWriter, why string) {
	s.refuseWith(w, why, map[string]any{"error": map[string]string{"message": why, "type": "invalid_request_error"}})
}

// refuseWith records why and answers 400 with body, the provider's error.
func (s *Server) refuseWith(w http.ResponseWriter, why string, body any) {
	s.mu.Lock()
	s.refused = append(s.refused, why)
	s.mu.Unlock()
	writeJSON(w, http.StatusBadRequest, body)
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// sender writes server-sent events, each flushed: with an event name when
// event is not "".
func sender(w http.ResponseWriter) func(event string, v any) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	return func(event string, v any) {
		b, _ := json.Marshal(v)
		if event != "" {
			fmt.Fprintf(w, "event: %s\n", event)
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// stream writes rep as a provider streams it: the text in two pieces,
// each call's id and name first and its arguments in two fragments, the
// finish reason, the usage, and [DONE].
func stream(w http.ResponseWriter, r *http.Request, rep Reply) {
	sse := sender(w)
	send := func(v any) { sse("", v) }
	delta := func(d map[string]any, finish any) {
		send(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk",
			"choices": []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}})
	}
	delta(map[string]any{"role": "assistant"}, nil)
	half := len(rep.Text) / 2
	if rep.Text != "" {
		delta(map[string]any{"content": rep.Text[:half]}, nil)
	}
	if rep.Error != "" {
		send(map[string]any{"error": map[string]string{"message": rep.Error}})
		return
	}
	if rep.Text != "" {
		if !pause(r, rep) {
			return
		}
		delta(map[string]any{"content": rep.Text[half:]}, nil)
	}
	for i, c := range rep.Calls {
		args := c.Function.Arguments
		half := len(args) / 2
		delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Function.Name, "arguments": args[:half]}}}}, nil)
		delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": args[half:]}}}}, nil)
	}
	finish := "stop"
	if len(rep.Calls) > 0 {
		finish = "tool_calls"
	}
	delta(map[string]any{}, finish)
	send(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": []any{}, "usage": rep.Usage})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// CheckHistory applies the rules a provider applies to a conversation:
// every message has a known role; each assistant tool call has an id used
// once and is answered by a tool message before the next message that is
// not one; a tool message answers a call of the assistant message before
// it, once.
func CheckHistory(msgs []model.Message) error {
	if len(msgs) == 0 {
		return errors.New("messages: at least one is required")
	}
	ids := map[string]bool{}
	var open map[string]bool // the calls of the last assistant message not yet answered
	for i, m := range msgs {
		switch m.Role {
		case model.RoleSystem, model.RoleUser, model.RoleAssistant:
			if len(open) > 0 {
				return fmt.Errorf("messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; missing %s", i, keys(open))
			}
			open = nil
			if m.Role != model.RoleAssistant && len(m.ToolCalls) > 0 {
				return fmt.Errorf("messages[%d]: only an assistant message has tool calls", i)
			}
			for _, c := range m.ToolCalls {
				if c.ID == "" || ids[c.ID] {
					return fmt.Errorf("messages[%d]: tool call id %q is empty or used twice", i, c.ID)
				}
				if c.Function.Name == "" {
					return fmt.Errorf("messages[%d]: a tool call without a function name", i)
				}
				ids[c.ID] = true
				if open == nil {
					open = map[string]bool{}
				}
				open[c.ID] = true
			}
		case model.RoleTool:
			if !open[m.ToolCallID] {
				return fmt.Errorf("messages[%d]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id %q)", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		default:
			return fmt.Errorf("messages[%d]: role %q", i, m.Role)
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("the conversation ends with tool calls not answered: %s", keys(open))
	}
	return nil
}

func keys(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return strings.Join(out, ", ")
}
