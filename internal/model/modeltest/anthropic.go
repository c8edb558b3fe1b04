package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/zero-dev/zero/internal/model"
)

// anthropicBody is what the Anthropic server reads of a request.
type anthropicBody struct {
	Model     *string         `json:"model"`
	MaxTokens *int            `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	ToolChoice  json.RawMessage `json:"tool_choice"`
	Temperature *float64        `json:"temperature"`
	Stream      bool            `json:"stream"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// anthropicRefusal is the Messages API's error body.
func anthropicRefusal(msg string) any {
	return map[string]any{"type": "error", "error": map[string]string{"type": "invalid_request_error", "message": msg}}
}

// blocks reads content, a string or a list of blocks.
func blocks(content json.RawMessage) ([]anthropicBlock, error) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}, nil
	}
	var bs []anthropicBlock
	if err := json.Unmarshal(content, &bs); err != nil {
		return nil, err
	}
	return bs, nil
}

// text is the text of content, a string or a list of text blocks.
func text(content json.RawMessage) string {
	bs, _ := blocks(content)
	var b strings.Builder
	for _, bl := range bs {
		b.WriteString(bl.Text)
	}
	return b.String()
}

// checkAnthropic applies the rules the Messages API applies to a request
// (stricter on one: it refuses two messages of one role in a row, which
// the API merges, so that the client's own merging is what a test sees):
// a model and max_tokens; roles user and assistant, alternating; no empty
// text; each tool_result names a tool_use of the assistant message just
// before, and each tool_use is answered in the message just after. It
// returns the request as a [model.Request], or the error's text.
func checkAnthropic(b anthropicBody) (model.Request, string) {
	req := model.Request{ToolChoice: b.ToolChoice, Temperature: b.Temperature}
	switch {
	case b.Model == nil || *b.Model == "":
		return req, "model: Field required"
	case b.MaxTokens == nil:
		return req, "max_tokens: Field required"
	case len(b.Messages) == 0:
		return req, "messages: at least one message is required"
	}
	req.Model, req.MaxTokens = *b.Model, *b.MaxTokens
	if sys := text(b.System); sys != "" {
		req.Messages = append(req.Messages, model.Message{Role: model.RoleSystem, Content: sys})
	}
	for _, t := range b.Tools {
		req.Tools = append(req.Tools, model.Tool{Type: "function", Function: model.FunctionDef{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}})
	}
	var open map[string]bool // the tool_use ids of the message before
	for i, m := range b.Messages {
		if m.Role != model.RoleUser && m.Role != model.RoleAssistant {
			return req, fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		if i > 0 && b.Messages[i-1].Role == m.Role {
			return req, fmt.Sprintf("messages: roles must alternate between \"user\" and \"assistant\", but found multiple %q roles in a row", m.Role)
		}
		bs, err := blocks(m.Content)
		if err != nil {
			return req, fmt.Sprintf("messages.%d.content: Input should be a valid list", i)
		}
		answered := map[string]bool{}
		msg := model.Message{Role: m.Role}
		var uses map[string]bool
		for j, bl := range bs {
			switch bl.Type {
			case "text":
				if bl.Text == "" {
					return req, "messages: text content blocks must be non-empty"
				}
				msg.Content += bl.Text
			case "tool_use":
				if m.Role != model.RoleAssistant {
					return req, fmt.Sprintf("messages.%d.content.%d: tool_use blocks are only allowed in assistant messages", i, j)
				}
				if uses == nil {
					uses = map[string]bool{}
				}
				uses[bl.ID] = true
				args := string(bl.Input)
				if args == "" {
					args = "{}"
				}
				msg.ToolCalls = append(msg.ToolCalls, Call(bl.ID, bl.Name, args))
			case "tool_result":
				if m.Role != model.RoleUser || !open[bl.ToolUseID] || answered[bl.ToolUseID] {
					return req, fmt.Sprintf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, bl.ToolUseID)
				}
				answered[bl.ToolUseID] = true
				req.Messages = append(req.Messages, model.Message{Role: model.RoleTool, ToolCallID: bl.ToolUseID, Content: text(bl.Content)})
			default:
				return req, fmt.Sprintf("messages.%d.content.%d.type: unknown block type %q", i, j, bl.Type)
			}
		}
		for id := range open {
			if !answered[id] {
				return req, fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, id)
			}
		}
		open = uses
		if msg.Content != "" || len(msg.ToolCalls) > 0 {
			req.Messages = append(req.Messages, msg)
		}
	}
	if len(open) > 0 {
		return req, fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after", len(b.Messages)-1)
	}
	return req, ""
}

func (s *Server) serveAnthropic(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("anthropic-version") == "" {
		s.refuseWith(w, "anthropic-version: header is required", anthropicRefusal("anthropic-version: header is required"))
		return
	}
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/models":
		writeJSON(w, http.StatusOK, map[string]any{"data": []any{
			map[string]string{"type": "model", "id": "scripted-1", "display_name": "Scripted 1"},
			map[string]string{"type": "model", "id": "scripted-2", "display_name": "Scripted 2"},
		}, "has_more": false, "first_id": "scripted-1", "last_id": "scripted-2"})
		return
	case r.Method != "POST" || r.URL.Path != "/v1/messages":
		http.NotFound(w, r)
		return
	}
	var b anthropicBody
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		s.refuseWith(w, err.Error(), anthropicRefusal("There was an issue with your request body: "+err.Error()))
		return
	}
	req, why := checkAnthropic(b)
	if why != "" {
		s.refuseWith(w, why, anthropicRefusal(why))
		return
	}
	rep, ok := s.next(r, req)
	if !ok {
		return
	}
	stop := "end_turn"
	if len(rep.Calls) > 0 {
		stop = "tool_use"
	}
	if !b.Stream {
		if rep.Error != "" {
			writeJSON(w, http.StatusBadRequest, anthropicRefusal(rep.Error))
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": req.Model,
			"content": anthropicContent(rep), "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]int{"input_tokens": rep.Usage.PromptTokens, "output_tokens": rep.Usage.CompletionTokens}})
		return
	}
	send := sender(w)
	event := func(typ string, v map[string]any) {
		v["type"] = typ
		send(typ, v)
	}
	event("message_start", map[string]any{"message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
		"model": req.Model, "content": []any{}, "stop_reason": nil, "usage": map[string]int{"input_tokens": rep.Usage.PromptTokens, "output_tokens": 1}}})
	event("ping", map[string]any{})
	idx := 0
	if rep.Text != "" || rep.Error != "" {
		event("content_block_start", map[string]any{"index": 0, "content_block": map[string]string{"type": "text", "text": ""}})
		half := len(rep.Text) / 2
		delta := func(d string) {
			event("content_block_delta", map[string]any{"index": 0, "delta": map[string]string{"type": "text_delta", "text": d}})
		}
		delta(rep.Text[:half])
		if rep.Error != "" {
			send("error", map[string]any{"type": "error", "error": map[string]string{"type": "overloaded_error", "message": rep.Error}})
			return
		}
		if !pause(r, rep) {
			return
		}
		delta(rep.Text[half:])
		event("content_block_stop", map[string]any{"index": 0})
		idx++
	}
	for _, c := range rep.Calls {
		event("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Function.Name, "input": map[string]any{}}})
		args := c.Function.Arguments
		half := len(args) / 2
		for _, d := range []string{args[:half], args[half:]} {
			event("content_block_delta", map[string]any{"index": idx, "delta": map[string]string{"type": "input_json_delta", "partial_json": d}})
		}
		event("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": rep.Usage.CompletionTokens}})
	event("message_stop", map[string]any{})
}

// anthropicContent is rep's content blocks.
func anthropicContent(rep Reply) []any {
	out := []any{}
	if rep.Text != "" {
		out = append(out, map[string]string{"type": "text", "text": rep.Text})
	}
	for _, c := range rep.Calls {
		input := json.RawMessage(c.Function.Arguments)
		if !json.Valid(input) {
			input = json.RawMessage(`{}`)
		}
		out = append(out, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Function.Name, "input": input})
	}
	return out
}
