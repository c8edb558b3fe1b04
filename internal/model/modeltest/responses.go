package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/zero-dev/zero/internal/model"
)

// responsesBody is what the Responses server reads of a request.
type responsesBody struct {
	Model *string `json:"model"`
	Input []struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		CallID    string          `json:"call_id"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		Output    string          `json:"output"`
	} `json:"input"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"tools"`
	ToolChoice      json.RawMessage `json:"tool_choice"`
	Temperature     *float64        `json:"temperature"`
	MaxOutputTokens int             `json:"max_output_tokens"`
	Reasoning       *struct {
		Effort string `json:"effort"`
	} `json:"reasoning"`
	Stream bool `json:"stream"`
}

// responsesRefusal is the Responses API's error body.
func responsesRefusal(msg, param, code string) any {
	return map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": param, "code": code}}
}

// checkResponses applies the rules the Responses API applies to a
// request: a model is named; every function_call_output answers a
// function_call made before it, and every function_call is answered.
// It returns the request as a [model.Request], the error's text and the
// parameter it names.
func checkResponses(b responsesBody) (model.Request, string, string) {
	req := model.Request{ToolChoice: b.ToolChoice, Temperature: b.Temperature, MaxTokens: b.MaxOutputTokens}
	if b.Model == nil || *b.Model == "" {
		return req, "Missing required parameter: 'model'.", "model"
	}
	req.Model = *b.Model
	if b.Reasoning != nil {
		req.ReasoningEffort = b.Reasoning.Effort
	}
	for _, t := range b.Tools {
		req.Tools = append(req.Tools, model.Tool{Type: "function", Function: model.FunctionDef{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	called, answered := map[string]bool{}, map[string]bool{}
	for _, it := range b.Input {
		switch it.Type {
		case "function_call":
			if it.CallID == "" || called[it.CallID] {
				return req, fmt.Sprintf("Duplicate or empty call_id %q in function_call input items.", it.CallID), "input"
			}
			called[it.CallID] = true
			last := len(req.Messages) - 1
			if last < 0 || req.Messages[last].Role != model.RoleAssistant {
				req.Messages = append(req.Messages, model.Message{Role: model.RoleAssistant})
				last++
			}
			req.Messages[last].ToolCalls = append(req.Messages[last].ToolCalls, Call(it.CallID, it.Name, it.Arguments))
		case "function_call_output":
			if !called[it.CallID] || answered[it.CallID] {
				return req, fmt.Sprintf("No tool call found for function call output with call_id %s.", it.CallID), "input"
			}
			answered[it.CallID] = true
			req.Messages = append(req.Messages, model.Message{Role: model.RoleTool, ToolCallID: it.CallID, Content: it.Output})
		case "message", "":
			var text string
			if err := json.Unmarshal(it.Content, &text); err != nil {
				return req, "Invalid type for 'input[].content': expected a string.", "input"
			}
			switch it.Role {
			case model.RoleSystem, "developer", model.RoleUser, model.RoleAssistant:
			default:
				return req, fmt.Sprintf("Invalid value: '%s'. Supported values are: 'assistant', 'system', 'developer', and 'user'.", it.Role), "input"
			}
			req.Messages = append(req.Messages, model.Message{Role: it.Role, Content: text})
		default:
			return req, fmt.Sprintf("Invalid value: '%s'.", it.Type), "input"
		}
	}
	for id := range called {
		if !answered[id] {
			return req, fmt.Sprintf("No tool output found for function call %s.", id), "input"
		}
	}
	if len(req.Messages) == 0 {
		return req, "Missing required parameter: 'input'.", "input"
	}
	return req, "", ""
}

func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/models":
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{map[string]string{"id": "scripted-1"}, map[string]string{"id": "scripted-2"}}})
		return
	case r.Method != "POST" || r.URL.Path != "/v1/responses":
		http.NotFound(w, r)
		return
	}
	var b responsesBody
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		s.refuseWith(w, err.Error(), responsesRefusal("We could not parse the JSON body of your request.", "", ""))
		return
	}
	req, why, param := checkResponses(b)
	if why != "" {
		code := "invalid_value"
		if param == "model" {
			code = "missing_required_parameter"
		}
		s.refuseWith(w, why, responsesRefusal(why, param, code))
		return
	}
	rep, ok := s.next(r, req)
	if !ok {
		return
	}
	if !b.Stream {
		if rep.Error != "" {
			writeJSON(w, http.StatusBadRequest, responsesRefusal(rep.Error, "", ""))
			return
		}
		writeJSON(w, http.StatusOK, responsesObject(rep))
		return
	}
	send := sender(w)
	event := func(typ string, v map[string]any) {
		v["type"] = typ
		send(typ, v)
	}
	event("response.created", map[string]any{"response": map[string]any{"id": "resp_1", "object": "response", "status": "in_progress", "output": []any{}}})
	idx := 0
	if rep.Text != "" || rep.Error != "" {
		event("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []any{}}})
		half := len(rep.Text) / 2
		delta := func(d string) {
			event("response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": d})
		}
		delta(rep.Text[:half])
		if rep.Error != "" {
			event("error", map[string]any{"code": "server_error", "message": rep.Error, "param": nil})
			return
		}
		if !pause(r, rep) {
			return
		}
		delta(rep.Text[half:])
		event("response.output_text.done", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "text": rep.Text})
		event("response.output_item.done", map[string]any{"output_index": 0, "item": messageItem(rep.Text)})
		idx++
	}
	for _, c := range rep.Calls {
		item := callItem(c, idx)
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["arguments"], added["status"] = "", "in_progress"
		event("response.output_item.added", map[string]any{"output_index": idx, "item": added})
		args := c.Function.Arguments
		half := len(args) / 2
		for _, d := range []string{args[:half], args[half:]} {
			event("response.function_call_arguments.delta", map[string]any{"item_id": item["id"], "output_index": idx, "delta": d})
		}
		event("response.function_call_arguments.done", map[string]any{"item_id": item["id"], "output_index": idx, "arguments": args})
		event("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		idx++
	}
	event("response.completed", map[string]any{"response": responsesObject(rep)})
}

func messageItem(text string) map[string]any {
	return map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
}

func callItem(c model.ToolCall, idx int) map[string]any {
	return map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", idx), "call_id": c.ID, "name": c.Function.Name,
		"arguments": c.Function.Arguments, "status": "completed"}
}

// responsesObject is rep as a completed response.
func responsesObject(rep Reply) map[string]any {
	output := []any{}
	if rep.Text != "" {
		output = append(output, messageItem(rep.Text))
	}
	for _, c := range rep.Calls {
		output = append(output, callItem(c, len(output)))
	}
	return map[string]any{"id": "resp_1", "object": "response", "status": "completed", "output": output,
		"usage": map[string]int{"input_tokens": rep.Usage.PromptTokens, "output_tokens": rep.Usage.CompletionTokens, "total_tokens": rep.Usage.TotalTokens}}
}
