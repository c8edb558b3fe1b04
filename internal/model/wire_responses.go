package model

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// responsesWire is OpenAI's Responses API: the conversation is a list of
// input items (messages, function_call and function_call_output items
// tied by call_id), sent with store false, so the provider keeps nothing
// of it; the answer is a list of output items.
type responsesWire struct{}

func (responsesWire) path() string       { return "/responses" }
func (responsesWire) modelsPath() string { return "/models" }

func (responsesWire) header(h http.Header, key string) { chatWire{}.header(h, key) }

type responsesRequest struct {
	Model           string            `json:"model"`
	Input           []responsesInput  `json:"input"`
	Tools           []responsesTool   `json:"tools,omitempty"`
	ToolChoice      json.RawMessage   `json:"tool_choice,omitempty"`
	Temperature     *float64          `json:"temperature,omitempty"`
	MaxOutputTokens int               `json:"max_output_tokens,omitempty"`
	Reasoning       *responsesEffort  `json:"reasoning,omitempty"`
	Text            *responsesTextOpt `json:"text,omitempty"`
	Store           bool              `json:"store"`
	Stream          bool              `json:"stream,omitempty"`
}

type responsesEffort struct {
	Effort string `json:"effort"`
}

type responsesTextOpt struct {
	Format json.RawMessage `json:"format"`
}

// A responsesInput is one input item: a message (Role, Content), a
// function_call (CallID, Name, Arguments) or a function_call_output
// (CallID, Output).
type responsesInput struct {
	Type      string  `json:"type"`
	Role      string  `json:"role,omitempty"`
	Content   *string `json:"content,omitempty"`
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
	Output    *string `json:"output,omitempty"`
}

type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptySchema is the parameters of a tool that declares none, for the
// wires that require a schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

func schemaOf(t Tool) json.RawMessage {
	if len(t.Function.Parameters) == 0 {
		return emptySchema
	}
	return t.Function.Parameters
}

func (responsesWire) encode(r Request, stream bool) ([]byte, error) {
	w := responsesRequest{Model: r.Model, Temperature: r.Temperature, MaxOutputTokens: r.MaxTokens, Stream: stream}
	if r.ReasoningEffort != "" {
		w.Reasoning = &responsesEffort{r.ReasoningEffort}
	}
	for _, m := range r.Messages {
		switch m.Role {
		case RoleSystem, RoleUser:
			w.Input = append(w.Input, responsesInput{Type: "message", Role: m.Role, Content: &m.Content})
		case RoleAssistant:
			if m.Content != "" || len(m.ToolCalls) == 0 {
				w.Input = append(w.Input, responsesInput{Type: "message", Role: m.Role, Content: &m.Content})
			}
			for _, c := range m.ToolCalls {
				w.Input = append(w.Input, responsesInput{Type: "function_call", CallID: c.ID, Name: c.Function.Name, Arguments: &c.Function.Arguments})
			}
		case RoleTool:
			w.Input = append(w.Input, responsesInput{Type: "function_call_output", CallID: m.ToolCallID, Output: &m.Content})
		default:
			return nil, fmt.Errorf("message role %q", clip(m.Role, 40))
		}
	}
	for _, t := range r.Tools {
		w.Tools = append(w.Tools, responsesTool{Type: "function", Name: t.Function.Name, Description: t.Function.Description, Parameters: schemaOf(t)})
	}
	if len(r.ToolChoice) > 0 {
		// {"type":"function","function":{"name":N}} is {"type":"function","name":N} here.
		var named struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		w.ToolChoice = r.ToolChoice
		if json.Unmarshal(r.ToolChoice, &named) == nil && named.Function.Name != "" {
			w.ToolChoice, _ = json.Marshal(map[string]string{"type": "function", "name": named.Function.Name})
		}
	}
	if len(r.ResponseFormat) > 0 {
		// {"type":"json_schema","json_schema":{...}} is {"type":"json_schema",...} here.
		var f struct {
			Type       string                     `json:"type"`
			JSONSchema map[string]json.RawMessage `json:"json_schema"`
		}
		if err := json.Unmarshal(r.ResponseFormat, &f); err != nil {
			return nil, fmt.Errorf("response format: %w", err)
		}
		format := r.ResponseFormat
		if f.JSONSchema != nil {
			f.JSONSchema["type"], _ = json.Marshal(f.Type)
			format, _ = json.Marshal(f.JSONSchema)
		}
		w.Text = &responsesTextOpt{Format: format}
	}
	return json.Marshal(w)
}

// A responsesObject is the Responses API's answer, whole or as
// response.completed carries it.
type responsesObject struct {
	Status            string          `json:"status"`
	Output            []responsesItem `json:"output"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// A responsesItem is one output item: a message, whose content parts hold
// its text, or a function_call. Other items (reasoning) are left out.
type responsesItem struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

// finish is the chat-completions finish reason of o's status, or an error
// for a response that did not finish.
func (o *responsesObject) finish(r redactor) (string, error) {
	switch o.Status {
	case "completed":
		return "stop", nil
	case "incomplete":
		if o.IncompleteDetails != nil && o.IncompleteDetails.Reason == "content_filter" {
			return "content_filter", nil
		}
		return "length", nil
	case "failed":
		msg := "no reason given"
		if o.Error != nil && o.Error.Message != "" {
			msg = o.Error.Message
		}
		return "", fmt.Errorf("model response: %w: the response failed: %s", ErrResponse, r.quote(msg))
	}
	return "", fmt.Errorf("model response: %w: the response's status is %q", ErrResponse, clip(o.Status, 40))
}

func (o *responsesObject) usage() Usage {
	if o.Usage == nil {
		return Usage{}
	}
	return Usage{PromptTokens: o.Usage.InputTokens, CompletionTokens: o.Usage.OutputTokens, TotalTokens: o.Usage.TotalTokens}
}

// response is the Response of o with the output items given (o's own,
// or those a stream assembled).
func (o *responsesObject) response(items []responsesItem, text *string, r redactor) (Response, error) {
	finish, err := o.finish(r)
	if err != nil {
		return Response{}, err
	}
	m := Message{Role: RoleAssistant}
	var b strings.Builder
	for _, it := range items {
		switch it.Type {
		case "message":
			for _, p := range it.Content {
				b.WriteString(p.Text + p.Refusal)
			}
		case "function_call":
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: it.CallID, Type: "function", Function: FunctionCall{Name: it.Name, Arguments: it.Arguments}})
		}
	}
	m.Content = b.String()
	if text != nil {
		m.Content = *text
	}
	return answer(m, finish, o.usage())
}

func (responsesWire) decode(data []byte, r redactor) (Response, error) {
	var o responsesObject
	if err := json.Unmarshal(data, &o); err != nil {
		return Response{}, fmt.Errorf("model response: %w: malformed JSON: %w", ErrResponse, err)
	}
	if o.Status == "" {
		err := fmt.Errorf("model response: %w: no status", ErrResponse)
		if msg, ok := providerMessage(data); ok {
			err = fmt.Errorf("%w: %s", err, r.quote(msg))
		}
		return Response{}, err
	}
	return o.response(o.Output, nil, r)
}

// A responsesEvent is one event of a streamed response.
type responsesEvent struct {
	OutputIndex int              `json:"output_index"`
	Item        *responsesItem   `json:"item"`
	Delta       string           `json:"delta"`
	Arguments   *string          `json:"arguments"`
	Response    *responsesObject `json:"response"`
}

func (responsesWire) read(body io.Reader, r redactor, onText func(string)) (Response, error) {
	var (
		text  strings.Builder
		items = map[int]*responsesItem{}
		order []int // output indexes, as they were added
		done  *responsesObject
	)
	handle := typedEvents(r, func(typ string, e responsesEvent) error {
		item := func() (*responsesItem, error) {
			it, ok := items[e.OutputIndex]
			if !ok {
				return nil, fmt.Errorf("%w: %s for output item %d, never added", ErrResponse, clip(typ, 60), e.OutputIndex)
			}
			return it, nil
		}
		switch typ {
		case "response.output_item.added":
			if e.Item == nil {
				return fmt.Errorf("%w: %s without its item", ErrResponse, typ)
			}
			if _, ok := items[e.OutputIndex]; !ok {
				order = append(order, e.OutputIndex)
			}
			it := *e.Item
			items[e.OutputIndex] = &it
		case "response.output_text.delta", "response.refusal.delta":
			text.WriteString(e.Delta)
			if onText != nil && e.Delta != "" {
				onText(e.Delta)
			}
		case "response.function_call_arguments.delta":
			it, err := item()
			if err != nil {
				return err
			}
			it.Arguments += e.Delta
		case "response.function_call_arguments.done":
			it, err := item()
			if err != nil {
				return err
			}
			if e.Arguments != nil {
				it.Arguments = *e.Arguments
			}
		case "response.output_item.done":
			it, err := item()
			if err != nil {
				return err
			}
			if e.Item != nil && e.Item.Type == "function_call" {
				*it = *e.Item
			}
		case "response.completed", "response.incomplete", "response.failed":
			if e.Response == nil {
				return fmt.Errorf("%w: %s without its response", ErrResponse, typ)
			}
			done = e.Response
			return errDone
		}
		return nil
	})
	return readEvents(body, handle, func() (Response, error) {
		if done == nil {
			return Response{}, fmt.Errorf("model response: %w: the stream ended before the response was done", ErrResponse)
		}
		out := make([]responsesItem, 0, len(order))
		for _, i := range order {
			out = append(out, *items[i])
		}
		s := text.String()
		return done.response(out, &s, r)
	})
}
