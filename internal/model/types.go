package model

import (
	"bytes"
	"encoding/json"
)

// Roles of a [Message].
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// A Message is one turn of a conversation, in the chat-completions wire
// format; the other wires are written from it and read into it.
type Message struct {
	Role string `json:"role"`
	// Content is the text. The wire's null content (an assistant message
	// that only calls tools) decodes as "", and an empty Content with
	// ToolCalls encodes as null again.
	Content string `json:"content"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names, in a tool message, the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
}

// MarshalJSON writes m, with null content for an assistant message that
// only calls tools, as the API itself writes it. (A field added to Message
// is added here too; TestMessageRoundTrip notices one that is not.) It
// writes <, > and & as they are, and leaves their escaping to the encoder
// that called it: json.Marshal escapes them, an Encoder with
// SetEscapeHTML(false) does not.
func (m Message) MarshalJSON() ([]byte, error) {
	content := &m.Content
	if m.Content == "" && len(m.ToolCalls) > 0 {
		content = nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(struct {
		Role       string     `json:"role"`
		Content    *string    `json:"content"`
		ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
		ToolCallID string     `json:"tool_call_id,omitempty"`
		Name       string     `json:"name,omitempty"`
	}{m.Role, content, m.ToolCalls, m.ToolCallID, m.Name})
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// A ToolCall is the model asking for one tool to run.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// A FunctionCall names the function and holds its arguments as the model
// wrote them: a string that should, but need not, hold a JSON object.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// A Tool offers the model one function.
type Tool struct {
	Type     string      `json:"type"` // "function"
	Function FunctionDef `json:"function"`
}

// A FunctionDef describes a function: its name, what it does, and a JSON
// Schema of its arguments.
type FunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// A Request asks for one chat completion. It is sent as written, so the
// optional fields that are left empty are left out.
type Request struct {
	// Model defaults to the Config's model.
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
	// ToolChoice is sent only when set: "auto", "none", "required" or
	// {"type":"function","function":{"name":...}}, as JSON.
	ToolChoice  json.RawMessage `json:"tool_choice,omitempty"`
	Temperature *float64        `json:"temperature,omitempty"`
	MaxTokens   int             `json:"max_tokens,omitempty"`
	// ReasoningEffort ("low", "medium", "high", ...) is sent only when
	// set, to the wires that have it: chat completions and Responses.
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	// ResponseFormat is sent only when set, e.g. {"type":"json_object"}.
	ResponseFormat json.RawMessage `json:"response_format,omitempty"`
}

// A Response is the model's one answer to a [Request].
type Response struct {
	Message      Message
	FinishReason string // "stop", "tool_calls", "length", ...
	Usage        Usage
}

// Usage counts the tokens of one exchange, as the provider reports them.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}
