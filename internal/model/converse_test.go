package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// toolLog records the calls a test's tool functions get.
type toolLog struct {
	mu    sync.Mutex
	calls []string // name + " " + arguments
}

func (l *toolLog) tool(name string, answer func(args json.RawMessage) (string, error)) ToolFunc {
	return func(ctx context.Context, args json.RawMessage) (string, error) {
		l.mu.Lock()
		l.calls = append(l.calls, name+" "+string(args))
		l.mu.Unlock()
		return answer(args)
	}
}

// TestConverse scripts a model that reads a file, then calls an unknown
// tool, a tool with malformed arguments and a failing tool, then answers.
func TestConverse(t *testing.T) {
	srv := newFakeServer(t,
		reply{body: toolCallBody([3]string{"call_1", "read_file", `{"path":"README.md"}`})},
		reply{body: toolCallBody(
			[3]string{"call_2", "delete_everything", `{}`},
			[3]string{"call_3", "read_file", `{"path": "a`},
			[3]string{"call_4", "read_file", `["README.md"]`},
			[3]string{"call_5", "fail", ``},
		)},
		reply{body: answerBody("The README says hello.")},
	)
	c, _ := newTestClient(srv, testKey)
	var log toolLog
	funcs := map[string]ToolFunc{
		"read_file": log.tool("read_file", func(args json.RawMessage) (string, error) {
			var a struct{ Path string }
			if err := json.Unmarshal(args, &a); err != nil {
				return "", err
			}
			return "contents of " + a.Path, nil
		}),
		"fail": log.tool("fail", func(json.RawMessage) (string, error) { return "", errors.New("disk on fire") }),
	}
	start := []Message{{Role: RoleSystem, Content: "You are Agent Zero."}, {Role: RoleUser, Content: "What does the README say?"}}
	conv, final, err := c.Converse(t.Context(), Request{Messages: start, Tools: []Tool{{Type: "function", Function: FunctionDef{Name: "read_file"}}}}, funcs, 5)
	if err != nil {
		t.Fatalf("Converse: %v", err)
	}

	if diff := cmp.Diff([]string{`read_file {"path":"README.md"}`, "fail {}"}, log.calls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	wantFinal := Message{Role: RoleAssistant, Content: "The README says hello."}
	if diff := cmp.Diff(wantFinal, final); diff != "" {
		t.Errorf("final message (-want +got):\n%s", diff)
	}
	call := func(id, name, args string) ToolCall {
		return ToolCall{ID: id, Type: "function", Function: FunctionCall{Name: name, Arguments: args}}
	}
	want := append(start,
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{call("call_1", "read_file", `{"path":"README.md"}`)}},
		Message{Role: RoleTool, ToolCallID: "call_1", Content: "contents of README.md"},
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{
			call("call_2", "delete_everything", `{}`),
			call("call_3", "read_file", `{"path": "a`),
			call("call_4", "read_file", `["README.md"]`),
			call("call_5", "fail", ``),
		}},
		Message{Role: RoleTool, ToolCallID: "call_2", Content: `error: unknown tool "delete_everything"; the tools are: fail, read_file`},
		Message{Role: RoleTool, ToolCallID: "call_3", Content: "error: the arguments are not a JSON object"},
		Message{Role: RoleTool, ToolCallID: "call_4", Content: "error: the arguments are not a JSON object"},
		Message{Role: RoleTool, ToolCallID: "call_5", Content: "error: disk on fire"},
		wantFinal,
	)
	if diff := cmp.Diff(want, conv); diff != "" {
		t.Errorf("conversation (-want +got):\n%s", diff)
	}

	// Each request carries the conversation so far, and the tools.
	if n := len(srv.requests()); n != 3 {
		t.Fatalf("server got %d requests, want 3", n)
	}
	for i, upTo := range []int{2, 4, 9} {
		r := srv.request(t, i)
		if diff := cmp.Diff(want[:upTo], r.Messages); diff != "" {
			t.Errorf("request %d messages (-want +got):\n%s", i, diff)
		}
		if len(r.Tools) != 1 || r.Model != "test-model" {
			t.Errorf("request %d: model %q, %d tools", i, r.Model, len(r.Tools))
		}
	}
	if body := string(srv.requests()[1].Body); !strings.Contains(body, `{"role":"assistant","content":null,"tool_calls":`) {
		t.Errorf("request 1 does not send the tool-calling message with null content:\n%s", body)
	}
}

func TestConverseTooManyTurns(t *testing.T) {
	srv := newFakeServer(t, reply{body: toolCallBody([3]string{"call_1", "read_file", `{"path":"a"}`})})
	c, _ := newTestClient(srv, testKey)
	var log toolLog
	funcs := map[string]ToolFunc{"read_file": log.tool("read_file", func(json.RawMessage) (string, error) { return "a", nil })}
	conv, last, err := c.Converse(t.Context(), Request{Messages: userSays("loop")}, funcs, 2)
	if !errors.Is(err, ErrTooManyTurns) {
		t.Fatalf("Converse error = %v, want ErrTooManyTurns", err)
	}
	if n := len(srv.requests()); n != 2 {
		t.Errorf("server got %d requests, want 2", n)
	}
	if len(log.calls) != 1 {
		t.Errorf("tool ran %d times, want 1 (not on the last turn)", len(log.calls))
	}
	// user, assistant, tool, assistant (unanswered)
	if len(conv) != 4 || conv[3].Role != RoleAssistant || len(last.ToolCalls) != 1 {
		t.Errorf("conversation = %+v, last = %+v", conv, last)
	}
	if _, _, err := c.Converse(t.Context(), Request{Messages: userSays("x")}, funcs, 0); err == nil {
		t.Error("Converse with maxTurns 0 succeeded")
	}
}

// TestConverseCapsAnswers checks that a long tool answer is cut to
// MaxToolAnswer bytes on a rune boundary, with a marker, and that the key is
// redacted from tool answers.
func TestConverseCapsAnswers(t *testing.T) {
	srv := newFakeServer(t,
		reply{body: toolCallBody([3]string{"c1", "big", `{}`}, [3]string{"c2", "leak", `{}`})},
		reply{body: answerBody("done")},
	)
	c, _ := newTestClient(srv, testKey)
	big := strings.Repeat("€", MaxToolAnswer) // 3 bytes each
	funcs := map[string]ToolFunc{
		"big":  func(context.Context, json.RawMessage) (string, error) { return big, nil },
		"leak": func(context.Context, json.RawMessage) (string, error) { return "", fmt.Errorf("bad key %s", testKey) },
	}
	conv, _, err := c.Converse(t.Context(), Request{Messages: userSays("go")}, funcs, 3)
	if err != nil {
		t.Fatal(err)
	}
	got := conv[2].Content
	if len(got) > MaxToolAnswer || !utf8.ValidString(got) || !strings.HasSuffix(got, truncatedMarker) || !strings.HasPrefix(big, strings.TrimSuffix(got, truncatedMarker)) {
		t.Errorf("capped answer: %d bytes, valid UTF-8 %v, ends %q", len(got), utf8.ValidString(got), got[max(0, len(got)-60):])
	}
	if want := "error: bad key [redacted API key]"; conv[3].Content != want {
		t.Errorf("leaking tool's answer = %q, want %q", conv[3].Content, want)
	}
}

func TestConverseChatError(t *testing.T) {
	srv := newFakeServer(t, reply{status: 401, body: `{"error":{"message":"bad key ` + testKey + `"}}`})
	c, _ := newTestClient(srv, testKey)
	conv, _, err := c.Converse(t.Context(), Request{Messages: userSays("hi")}, nil, 3)
	if se, ok := errors.AsType[*StatusError](err); !ok || se.StatusCode != 401 {
		t.Errorf("Converse error = %v, want a 401 StatusError", err)
	}
	if err != nil && strings.Contains(err.Error(), testKey) {
		t.Errorf("error holds the key: %q", err)
	}
	if len(conv) != 1 {
		t.Errorf("conversation = %+v, want the one user message", conv)
	}
}

// TestConverseCanceledByTool checks that the loop stops, with the context's
// error, once a tool's context is canceled.
func TestConverseCanceledByTool(t *testing.T) {
	srv := newFakeServer(t,
		reply{body: toolCallBody([3]string{"c1", "stop", `{}`}, [3]string{"c2", "never", `{}`})},
		reply{body: answerBody("done")},
	)
	c, _ := newTestClient(srv, testKey)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ranNever := false
	funcs := map[string]ToolFunc{
		"stop":  func(context.Context, json.RawMessage) (string, error) { cancel(); return "stopped", nil },
		"never": func(context.Context, json.RawMessage) (string, error) { ranNever = true; return "", nil },
	}
	_, _, err := c.Converse(ctx, Request{Messages: userSays("go")}, funcs, 3)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Converse error = %v, want context.Canceled", err)
	}
	if ranNever {
		t.Error("a tool ran after the context was canceled")
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}
