package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// AnthropicMaxTokens is the max_tokens of an Anthropic request that sets
// none: the API requires one, and every Claude model takes this many.
const AnthropicMaxTokens = 4096

// anthropicVersion is the Messages API version the client speaks.
const anthropicVersion = "2023-06-01"

// anthropicWire is Anthropic's Messages API: the system prompt is a
// top-level field, the messages alternate user and assistant (consecutive
// ones of a role are merged), a tool call is a tool_use block of the
// assistant and its answer a tool_result block of the next user message.
// It has no reasoning effort (left out) and no response format (refused).
type anthropicWire struct{}

func (anthropicWire) path() string       { return "/v1/messages" }
func (anthropicWire) modelsPath() string { return "/v1/models" }

func (anthropicWire) header(h http.Header, key string) {
	h.Set("anthropic-version", anthropicVersion)
	if key != "" {
		h.Set("x-api-key", key)
	}
}

type anthropicRequest struct {
	Model       string             `json:"model"`
	MaxTokens   int                `json:"max_tokens"`
	System      string             `json:"system,omitempty"`
	Messages    []anthropicMessage `json:"messages"`
	Tools       []anthropicTool    `json:"tools,omitempty"`
	ToolChoice  json.RawMessage    `json:"tool_choice,omitempty"`
	Temperature *float64           `json:"temperature,omitempty"`
	Stream      bool               `json:"stream,omitempty"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

// An anthropicBlock is one content block: text (Text), tool_use (ID,
// Name, Input) or tool_result (ToolUseID, Content).
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

func (anthropicWire) encode(r Request, stream bool) ([]byte, error) {
	if len(r.ResponseFormat) > 0 {
		return nil, errors.New("a response format: the anthropic-messages wire has none")
	}
	w := anthropicRequest{Model: r.Model, MaxTokens: r.MaxTokens, Temperature: r.Temperature, Stream: stream}
	if w.MaxTokens == 0 {
		w.MaxTokens = AnthropicMaxTokens
	}
	var system []string
	for _, m := range r.Messages {
		role, blocks := RoleUser, []anthropicBlock(nil)
		switch m.Role {
		case RoleSystem:
			system = append(system, m.Content)
			continue
		case RoleUser:
			blocks = textBlock(m.Content)
		case RoleAssistant:
			role, blocks = RoleAssistant, textBlock(m.Content)
			for _, c := range m.ToolCalls {
				blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: c.ID, Name: c.Function.Name, Input: inputObject(c.Function.Arguments)})
			}
		case RoleTool:
			blocks = []anthropicBlock{{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content}}
		default:
			return nil, fmt.Errorf("message role %q", clip(m.Role, 40))
		}
		if len(blocks) == 0 {
			continue // the API refuses an empty message
		}
		if n := len(w.Messages); n > 0 && w.Messages[n-1].Role == role {
			w.Messages[n-1].Content = append(w.Messages[n-1].Content, blocks...)
			continue
		}
		w.Messages = append(w.Messages, anthropicMessage{Role: role, Content: blocks})
	}
	w.System = strings.Join(system, "\n\n")
	for _, t := range r.Tools {
		w.Tools = append(w.Tools, anthropicTool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: schemaOf(t)})
	}
	if len(r.ToolChoice) > 0 {
		choice, err := anthropicToolChoice(r.ToolChoice)
		if err != nil {
			return nil, err
		}
		w.ToolChoice = choice
	}
	return json.Marshal(w)
}

// textBlock is a text block of s, or none for "" (the API refuses an
// empty one).
func textBlock(s string) []anthropicBlock {
	if s == "" {
		return nil
	}
	return []anthropicBlock{{Type: "text", Text: s}}
}

// inputObject is a tool call's arguments as the object tool_use.input
// must be: {} when the model wrote none, or wrote something else.
func inputObject(args string) json.RawMessage {
	args = strings.TrimSpace(args)
	if !json.Valid([]byte(args)) || !strings.HasPrefix(args, "{") {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(args)
}

// anthropicToolChoice writes a chat-completions tool_choice in Anthropic's
// terms.
func anthropicToolChoice(raw json.RawMessage) (json.RawMessage, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		t, ok := map[string]string{"auto": "auto", "required": "any", "none": "none"}[s]
		if !ok {
			return nil, fmt.Errorf("tool choice %q", clip(s, 40))
		}
		return json.Marshal(map[string]string{"type": t})
	}
	var named struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &named) != nil || named.Function.Name == "" {
		return nil, errors.New("tool choice: want auto, none, required or a function")
	}
	return json.Marshal(map[string]string{"type": "tool", "name": named.Function.Name})
}

// anthropicFinish is the chat-completions finish reason of a stop_reason.
func anthropicFinish(stop string) string {
	switch stop {
	case "end_turn", "stop_sequence":
		return "stop"
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	case "refusal":
		return "content_filter"
	}
	return stop
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

func (u anthropicUsage) usage() Usage {
	in := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
	return Usage{PromptTokens: in, CompletionTokens: u.OutputTokens, TotalTokens: in + u.OutputTokens}
}

// message is the Message of an answer's content blocks: the text blocks
// joined, each tool_use a call.
func anthropicAnswer(blocks []anthropicBlock, stop string, u anthropicUsage) (Response, error) {
	if stop == "" {
		return Response{}, fmt.Errorf("model response: %w: no stop reason", ErrResponse)
	}
	m := Message{Role: RoleAssistant}
	var b strings.Builder
	for _, bl := range blocks {
		switch bl.Type {
		case "text":
			b.WriteString(bl.Text)
		case "tool_use":
			args := string(bl.Input)
			if args == "" {
				args = "{}"
			}
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: bl.ID, Type: "function", Function: FunctionCall{Name: bl.Name, Arguments: args}})
		}
	}
	m.Content = b.String()
	return answer(m, anthropicFinish(stop), u.usage())
}

func (anthropicWire) decode(data []byte, r redactor) (Response, error) {
	var w struct {
		Content    []anthropicBlock `json:"content"`
		StopReason string           `json:"stop_reason"`
		Usage      anthropicUsage   `json:"usage"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return Response{}, fmt.Errorf("model response: %w: malformed JSON: %w", ErrResponse, err)
	}
	if w.StopReason == "" {
		if msg, ok := providerMessage(data); ok {
			return Response{}, fmt.Errorf("model response: %w: %s", ErrResponse, r.quote(msg))
		}
	}
	return anthropicAnswer(w.Content, w.StopReason, w.Usage)
}

// An anthropicEvent is one event of a streamed message.
type anthropicEvent struct {
	Index   int `json:"index"`
	Message *struct {
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *anthropicBlock `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anthropicUsage `json:"usage"`
}

func (anthropicWire) read(body io.Reader, r redactor, onText func(string)) (Response, error) {
	var (
		blocks []anthropicBlock
		byIdx  = map[int]int{} // a stream index to its block's position
		args   = map[int]*strings.Builder{}
		stop   string
		usage  anthropicUsage
	)
	handle := typedEvents(r, func(typ string, e anthropicEvent) error {
		switch typ {
		case "message_start":
			if e.Message != nil {
				usage = e.Message.Usage
			}
		case "content_block_start":
			if e.ContentBlock == nil {
				return fmt.Errorf("%w: content_block_start without its block", ErrResponse)
			}
			if _, ok := byIdx[e.Index]; ok {
				return fmt.Errorf("%w: content block %d started twice", ErrResponse, e.Index)
			}
			byIdx[e.Index] = len(blocks)
			bl := *e.ContentBlock
			bl.Input = nil // the whole input comes as input_json_delta
			blocks = append(blocks, bl)
			args[e.Index] = &strings.Builder{}
			if bl.Type == "text" && bl.Text != "" && onText != nil {
				onText(bl.Text)
			}
		case "content_block_delta":
			pos, ok := byIdx[e.Index]
			if !ok || e.Delta == nil {
				return fmt.Errorf("%w: a delta of content block %d, never started", ErrResponse, e.Index)
			}
			switch e.Delta.Type {
			case "text_delta":
				blocks[pos].Text += e.Delta.Text
				if onText != nil && e.Delta.Text != "" {
					onText(e.Delta.Text)
				}
			case "input_json_delta":
				args[e.Index].WriteString(e.Delta.PartialJSON)
			}
		case "message_delta":
			if e.Delta != nil && e.Delta.StopReason != "" {
				stop = e.Delta.StopReason
			}
			if e.Usage != nil {
				usage.OutputTokens = e.Usage.OutputTokens
			}
		case "message_stop":
			return errDone
		}
		return nil
	})
	return readEvents(body, handle, func() (Response, error) {
		if stop == "" {
			return Response{}, fmt.Errorf("model response: %w: the stream ended without a stop reason", ErrResponse)
		}
		for idx, pos := range byIdx {
			if blocks[pos].Type == "tool_use" && args[idx].Len() > 0 {
				blocks[pos].Input = json.RawMessage(args[idx].String())
			}
		}
		return anthropicAnswer(blocks, stop, usage)
	})
}
