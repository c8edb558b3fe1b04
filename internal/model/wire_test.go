package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
)

const canaryKey = "sk-ant-canary-7Qm2Xv9Lp4Rt8Wz1"

// wireServers are the scripted servers of the three wires.
var wireServers = []struct {
	wire  string
	start func(testing.TB) *modeltest.Server
}{
	{model.WireChat, modeltest.New},
	{model.WireResponses, modeltest.NewResponses},
	{model.WireAnthropic, modeltest.NewAnthropic},
}

func wireClient(srv *modeltest.Server, key string) *model.Client {
	return model.New(model.Config{BaseURL: srv.BaseURL(), APIKey: key, Model: "scripted-1", WireAPI: srv.WireAPI()}, srv.Client())
}

var readTool = model.Tool{Type: "function", Function: model.FunctionDef{Name: "read", Description: "Read a file.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}

// TestWireStreamedExchange streams, on each wire, a text answer, an
// answer with one tool call, then, with its result sent back, one with
// text and two calls, then, with both results, the last answer; the
// scripted servers refuse a history the provider would refuse.
func TestWireStreamedExchange(t *testing.T) {
	for _, w := range wireServers {
		t.Run(w.wire, func(t *testing.T) {
			srv := w.start(t)
			c := wireClient(srv, canaryKey)
			one := modeltest.Call("call_1", "read", `{"path":"a.txt"}`)
			two := []model.ToolCall{modeltest.Call("call_2", "read", `{"path":"b.txt"}`), modeltest.Call("call_3", "read", `{}`)}
			srv.Push(
				modeltest.Reply{Text: "hello there", Usage: model.Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5}},
				modeltest.Reply{Calls: []model.ToolCall{one}},
				modeltest.Reply{Text: "two more", Calls: two},
				modeltest.Reply{Text: "all read"},
			)
			ctx := t.Context()
			msgs := []model.Message{{Role: model.RoleSystem, Content: "be brief"}, {Role: model.RoleUser, Content: "hi"}}
			temp := 0.3
			var pieces []string
			res, err := c.Stream(ctx, model.Request{Messages: msgs, Temperature: &temp}, func(s string) { pieces = append(pieces, s) })
			if err != nil {
				t.Fatalf("text: %v", err)
			}
			want := model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "hello there"}, FinishReason: "stop",
				Usage: model.Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5}}
			if diff := cmp.Diff(want, res); diff != "" {
				t.Errorf("text answer (-want +got):\n%s", diff)
			}
			if got := strings.Join(pieces, ""); got != "hello there" || len(pieces) < 2 {
				t.Errorf("streamed pieces %q, want the text in pieces", pieces)
			}

			msgs = append(msgs, res.Message, model.Message{Role: model.RoleUser, Content: "read a.txt"})
			r := model.Request{Messages: msgs, Tools: []model.Tool{readTool}}
			res, err = c.Stream(ctx, r, nil)
			if err != nil {
				t.Fatalf("one call: %v", err)
			}
			if diff := cmp.Diff([]model.ToolCall{one}, res.Message.ToolCalls); diff != "" || res.FinishReason != "tool_calls" {
				t.Errorf("one call: finish %q, calls (-want +got):\n%s", res.FinishReason, diff)
			}

			msgs = append(msgs, res.Message, model.Message{Role: model.RoleTool, ToolCallID: "call_1", Content: "text of a"})
			r.Messages = msgs
			res, err = c.Stream(ctx, r, nil)
			if err != nil {
				t.Fatalf("two calls: %v", err)
			}
			if diff := cmp.Diff(two, res.Message.ToolCalls); diff != "" || res.Message.Content != "two more" || res.FinishReason != "tool_calls" {
				t.Errorf("two calls: text %q, finish %q, calls (-want +got):\n%s", res.Message.Content, res.FinishReason, diff)
			}

			msgs = append(msgs, res.Message,
				model.Message{Role: model.RoleTool, ToolCallID: "call_2", Content: "text of b"},
				model.Message{Role: model.RoleTool, ToolCallID: "call_3", Content: "error: no path"})
			r.Messages = msgs
			res, err = c.Stream(ctx, r, nil)
			if err != nil {
				t.Fatalf("results sent back: %v", err)
			}
			if res.Message.Content != "all read" || res.FinishReason != "stop" {
				t.Errorf("last answer %+v", res)
			}
			if refused := srv.Refused(); len(refused) > 0 {
				t.Errorf("the server refused: %q", refused)
			}
			reqs := srv.Requests()
			if len(reqs) != 4 {
				t.Fatalf("server answered %d requests, want 4", len(reqs))
			}
			// The server reads the wire back into messages: the history
			// arrives whole, tool results tied to their calls.
			if diff := cmp.Diff(msgs, reqs[3].Messages); diff != "" {
				t.Errorf("history the server read (-sent +read):\n%s", diff)
			}
			if reqs[0].Temperature == nil || *reqs[0].Temperature != temp {
				t.Errorf("temperature not passed: %v", reqs[0].Temperature)
			}
			if diff := cmp.Diff([]model.Tool{readTool}, reqs[1].Tools); diff != "" {
				t.Errorf("tools the server read (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWireConverse runs tool calls through Chat (whole answers) on each
// wire.
func TestWireConverse(t *testing.T) {
	for _, w := range wireServers {
		t.Run(w.wire, func(t *testing.T) {
			srv := w.start(t)
			c := wireClient(srv, canaryKey)
			srv.Push(
				modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("c1", "read", `{"path":"a"}`), modeltest.Call("c2", "read", `{"path":"b"}`)}},
				modeltest.Reply{Text: "a and b read"},
			)
			var paths []string
			read := func(_ context.Context, args json.RawMessage) (string, error) {
				var a struct{ Path string }
				json.Unmarshal(args, &a)
				paths = append(paths, a.Path)
				return "text of " + a.Path, nil
			}
			msgs, last, err := c.Converse(t.Context(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "read a and b"}}, Tools: []model.Tool{readTool}},
				map[string]model.ToolFunc{"read": read}, 4)
			if err != nil {
				t.Fatal(err)
			}
			if last.Content != "a and b read" || len(msgs) != 5 || !cmp.Equal(paths, []string{"a", "b"}) {
				t.Errorf("last %q, %d messages, paths %q", last.Content, len(msgs), paths)
			}
			if refused := srv.Refused(); len(refused) > 0 {
				t.Errorf("the server refused: %q", refused)
			}
		})
	}
}

// TestWireKeyHeaders: the key goes in the wire's header and nowhere else.
func TestWireKeyHeaders(t *testing.T) {
	for _, w := range wireServers {
		t.Run(w.wire, func(t *testing.T) {
			srv := w.start(t)
			if _, err := wireClient(srv, canaryKey).Chat(t.Context(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}); err != nil {
				t.Fatal(err)
			}
			h := srv.Headers()[0]
			want := map[string]string{"Authorization": "Bearer " + canaryKey, "X-Api-Key": "", "Anthropic-Version": ""}
			if w.wire == model.WireAnthropic {
				want = map[string]string{"Authorization": "", "X-Api-Key": canaryKey, "Anthropic-Version": "2023-06-01"}
			}
			for k, v := range want {
				if got := h.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestWireErrorsHideKey: a provider's error echoing the key, whole or
// mid-stream, never shows it.
func TestWireErrorsHideKey(t *testing.T) {
	for _, w := range wireServers {
		for _, stream := range []bool{false, true} {
			t.Run(w.wire, func(t *testing.T) {
				srv := w.start(t)
				c := wireClient(srv, canaryKey)
				srv.Push(modeltest.Reply{Text: "partial answer", Error: "invalid key " + canaryKey})
				r := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}
				var err error
				if stream {
					_, err = c.Stream(t.Context(), r, nil)
				} else {
					_, err = c.Chat(t.Context(), r)
				}
				if err == nil {
					t.Fatal("no error")
				}
				if strings.Contains(err.Error(), canaryKey) || !strings.Contains(err.Error(), "invalid key") {
					t.Errorf("error %q: want the provider's message without the key", err)
				}
			})
		}
	}
}

func TestWireModels(t *testing.T) {
	for _, w := range wireServers {
		t.Run(w.wire, func(t *testing.T) {
			srv := w.start(t)
			c := wireClient(srv, canaryKey)
			ids, err := c.Models(t.Context())
			if err != nil || !cmp.Equal(ids, []string{"scripted-1", "scripted-2"}) {
				t.Errorf("Models = %q, %v", ids, err)
			}
			if err := c.Ping(t.Context()); err != nil {
				t.Errorf("Ping: %v", err)
			}
		})
	}
}

// TestWireAnthropicMerges: consecutive messages of one role are one
// Anthropic message, system messages the top-level system.
func TestWireAnthropicMerges(t *testing.T) {
	srv := modeltest.NewAnthropic(t)
	c := wireClient(srv, canaryKey)
	msgs := []model.Message{
		{Role: model.RoleSystem, Content: "be brief"},
		{Role: model.RoleUser, Content: "first"},
		{Role: model.RoleUser, Content: "second"},
	}
	if _, err := c.Stream(t.Context(), model.Request{Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	want := []model.Message{{Role: model.RoleSystem, Content: "be brief"}, {Role: model.RoleUser, Content: "firstsecond"}}
	if diff := cmp.Diff(want, srv.Requests()[0].Messages); diff != "" {
		t.Errorf("messages the server read (-want +got):\n%s", diff)
	}
	if got := srv.Requests()[0].MaxTokens; got != model.AnthropicMaxTokens {
		t.Errorf("max_tokens = %d, want the default %d", got, model.AnthropicMaxTokens)
	}
}

// TestWireResponsesReasoningEffort: reasoning_effort goes where each
// OpenAI wire has it.
func TestWireReasoningEffort(t *testing.T) {
	for _, w := range wireServers[:2] {
		t.Run(w.wire, func(t *testing.T) {
			srv := w.start(t)
			r := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, ReasoningEffort: "high"}
			if _, err := wireClient(srv, "").Stream(t.Context(), r, nil); err != nil {
				t.Fatal(err)
			}
			if got := srv.Requests()[0].ReasoningEffort; got != "high" {
				t.Errorf("reasoning effort = %q, want high", got)
			}
		})
	}
}

func TestWireUnknownRefused(t *testing.T) {
	for _, bad := range []string{"chat", "Responses", "anthropic", "openai-responses"} {
		c := model.New(model.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", WireAPI: bad}, nil)
		_, err := c.Chat(t.Context(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
		if !errors.Is(err, model.ErrConfig) || !strings.Contains(err.Error(), "wire API") {
			t.Errorf("WireAPI %q: err = %v, want a refusal wrapping ErrConfig", bad, err)
		}
	}
	for _, good := range append([]string{""}, model.WireAPIs...) {
		if _, err := model.CheckWireAPI(good); err != nil {
			t.Errorf("CheckWireAPI(%q): %v", good, err)
		}
	}
}

// TestWireAnthropicRefusesResponseFormat: Anthropic has no response
// format; asking for one is an error, not an answer in another shape.
func TestWireAnthropicRefusesResponseFormat(t *testing.T) {
	srv := modeltest.NewAnthropic(t)
	_, err := wireClient(srv, "").Chat(t.Context(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}},
		ResponseFormat: json.RawMessage(`{"type":"json_object"}`)})
	if err == nil || len(srv.Requests()) != 0 {
		t.Errorf("err = %v, %d requests sent; want an error before sending", err, len(srv.Requests()))
	}
}
