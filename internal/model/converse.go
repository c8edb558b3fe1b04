package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// ErrTooManyTurns reports a conversation that still asked for tools after
// the turns [Client.Converse] was allowed.
var ErrTooManyTurns = errors.New("too many turns")

// MaxToolAnswer caps the text of one tool answer; a longer one is cut and
// ends with a marker saying so.
const MaxToolAnswer = 64 << 10

const truncatedMarker = "\n[truncated: the answer was over 64 KiB]"

// A ToolFunc answers one tool call with text for the model; its error becomes
// the tool's text answer "error: ..." (the loop goes on). arguments is a JSON
// object, as the model wrote it; the ToolFunc validates it.
type ToolFunc func(ctx context.Context, arguments json.RawMessage) (string, error)

// Converse sends r and runs the tool calls the model asks for, in order, with
// funcs: a call to a tool funcs lacks, or with arguments that are not a JSON
// object, gets an error answer instead of running. It appends each answer as
// a tool message and sends the conversation again, until the model answers
// without tool calls or maxTurns requests have been sent.
//
// It returns the whole conversation (r.Messages, then each answer and tool
// message) and the model's last message. When the model still asks for tools
// on the last turn, those calls are not run: the error wraps
// [ErrTooManyTurns], and the conversation ends with the unanswered request.
// Tool answers, like errors, have the API key redacted.
func (c *Client) Converse(ctx context.Context, r Request, funcs map[string]ToolFunc, maxTurns int) (_ []Message, _ Message, err error) {
	defer func() { err = c.redactor.scrub(err) }()
	if maxTurns < 1 {
		return nil, Message{}, fmt.Errorf("converse: maxTurns is %d, want at least 1", maxTurns)
	}
	msgs := slices.Clone(r.Messages)
	var last Message
	for turn := 1; turn <= maxTurns; turn++ {
		r.Messages = msgs
		res, err := c.Chat(ctx, r)
		if err != nil {
			return msgs, last, fmt.Errorf("converse turn %d: %w", turn, err)
		}
		last = res.Message
		msgs = append(msgs, last)
		if len(last.ToolCalls) == 0 {
			return msgs, last, nil
		}
		if turn == maxTurns {
			break
		}
		for _, call := range last.ToolCalls {
			if err := ctx.Err(); err != nil {
				return msgs, last, fmt.Errorf("converse turn %d: %w", turn, err)
			}
			msgs = append(msgs, Message{
				Role:       RoleTool,
				ToolCallID: call.ID,
				Content:    capAnswer(c.redactor.r.String(runTool(ctx, call, funcs))),
			})
		}
	}
	return msgs, last, fmt.Errorf("converse: %w: the model still asked for tools after %d", ErrTooManyTurns, maxTurns)
}

// runTool answers one call: with the function's text, or with "error: ...".
func runTool(ctx context.Context, call ToolCall, funcs map[string]ToolFunc) string {
	if call.Type != "function" {
		return fmt.Sprintf("error: tool call type %q is not supported; only function is", clip(call.Type, 40))
	}
	f, ok := funcs[call.Function.Name]
	if !ok || f == nil {
		names := slices.Sorted(maps.Keys(funcs))
		return fmt.Sprintf("error: unknown tool %q; the tools are: %s", clip(call.Function.Name, 100), strings.Join(names, ", "))
	}
	args := strings.TrimSpace(call.Function.Arguments)
	if args == "" {
		args = "{}" // some models send no arguments for a tool that takes none
	}
	if !json.Valid([]byte(args)) || args[0] != '{' {
		return "error: the arguments are not a JSON object"
	}
	text, err := f(ctx, json.RawMessage(args))
	if err != nil {
		return "error: " + err.Error()
	}
	return text
}

// capAnswer cuts s to MaxToolAnswer bytes, on a rune boundary, ending with
// a marker.
func capAnswer(s string) string {
	if len(s) <= MaxToolAnswer {
		return s
	}
	cut := MaxToolAnswer - len(truncatedMarker)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + truncatedMarker
}

// clip shortens s, from the model, to at most n bytes for an error answer.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
