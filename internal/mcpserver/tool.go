package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	segjson "github.com/segmentio/encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Validator checks decoded tool arguments beyond their JSON types: required
// fields, ranges, combinations.
type Validator interface {
	Validate() error
}

// A Handler serves one tool call with arguments already decoded and
// validated. A returned error becomes a tool error the model can read
// (isError), never a protocol error, and so does a result over the reply
// budget ([ReplyBudget]).
type Handler[In any] func(ctx context.Context, req *mcp.CallToolRequest, in *In) (*mcp.CallToolResult, error)

// AddTool registers a tool whose arguments decode strictly into In (see
// [DecodeArgs]) and, if In implements [Validator], pass Validate before h
// runs; if In implements [ReplyHinter], its hint goes into the error that an
// answer over the reply budget becomes. The tool's InputSchema must describe
// In; the handler is trusted to return output that matches the
// OutputSchema, which is not re-validated.
func AddTool[In any](s *mcp.Server, t *mcp.Tool, h Handler[In]) {
	s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in In
		if err := DecodeArgs(req.Params.Arguments, &in); err != nil {
			return ErrorResult(fmt.Errorf("invalid arguments for %s: %w", t.Name, err)), nil
		}
		noteCall(ctx, t, any(&in))
		if v, ok := any(&in).(Validator); ok {
			if err := v.Validate(); err != nil {
				return ErrorResult(fmt.Errorf("invalid arguments for %s: %w", t.Name, err)), nil
			}
		}
		res, err := h(ctx, req, &in)
		if err != nil {
			return ErrorResult(err), nil
		}
		return res, nil
	})
}

// DecodeArgs decodes tool arguments into the struct v strictly: keys match
// case-sensitively, an unknown key, a value of the wrong type or anything
// after the object is an error. Missing or null arguments decode as {}.
func DecodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	rest, err := segjson.Parse(raw, v, segjson.DisallowUnknownFields|segjson.DontMatchCaseInsensitiveStructFields)
	if err != nil {
		return cleanJSONError(err)
	}
	if len(rest) != 0 {
		return errors.New("unexpected data after the arguments object")
	}
	return nil
}

// cleanJSONError rewords decoder errors for the model to read: the
// argument's path and the JSON types expected and received, never a Go type
// or the text of other arguments (see jsontype.go).
func cleanJSONError(err error) error {
	var te *segjson.UnmarshalTypeError
	if errors.As(err, &te) {
		return typeError(te.Field, te.Type, te.Value)
	}
	return otherJSONError(err)
}

// TextOutput is the structured output of a tool that answers with text, as
// the reference servers declare it: {"content": "..."}.
type TextOutput struct {
	Content string `json:"content"`
}

// TextOutputSchema is the output schema of [TextOutput].
var TextOutputSchema = json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"],"additionalProperties":false}`)

// TextResult returns a successful result carrying text both as a content
// block and as structured output.
func TextResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: TextOutput{Content: text},
	}
}

// ErrorResult returns a tool error carrying err's message.
func ErrorResult(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}},
		IsError: true,
	}
}
