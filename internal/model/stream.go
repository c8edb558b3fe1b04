package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/sse"
)

// MaxStreamEvent bounds one event of a streamed answer.
const MaxStreamEvent = 1 << 20

// streamRequest is a Request asking for a stream of chunks, with the
// token usage in the last one.
type streamRequest struct {
	Request
	Stream        bool          `json:"stream"`
	StreamOptions streamOptions `json:"stream_options"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Stream sends r as Chat does, with "stream": true, and assembles the
// streamed answer into one [Response]; onText, if not nil, receives each
// piece of the answer's text as it arrives. The whole answer is bounded as
// Chat's is (MaxResponseBody), and each event by MaxStreamEvent; the
// client's timeout bounds the whole stream, as it bounds Chat's exchange.
//
// The assembly is tolerant of what providers send (see [accumulator]), but
// a stream that ends without a finish reason, or carries an error, is an
// error, never a partial answer. A provider that answers with a whole JSON
// response instead of a stream is read as Chat reads it. Some local servers
// drop tool calls when they stream: use Chat for them.
func (c *Client) Stream(ctx context.Context, r Request, onText func(string)) (_ Response, err error) {
	defer func() { err = c.redactor.scrub(err) }()
	body, err := c.body(r, true)
	if err != nil {
		return Response{}, err
	}
	return c.exchange(ctx, body, "text/event-stream", func(res *http.Response) (Response, error) {
		if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "application/json" {
			data, err := readBody(res.Body)
			if err != nil {
				return Response{}, err
			}
			resp, err := c.wire.decode(data, c.redactor)
			if err == nil && onText != nil && resp.Message.Content != "" {
				onText(resp.Message.Content)
			}
			return resp, err
		}
		return c.wire.read(res.Body, c.redactor, onText)
	})
}

// errDone ends the reading at the stream's [DONE].
var errDone = errors.New("done")

// readStream reads chunks from body until [DONE] or its end.
func readStream(body io.Reader, r redactor, onText func(string)) (Response, error) {
	a := newAccumulator()
	return readEvents(body, func(event string, data []byte) error {
		if string(data) == "[DONE]" {
			return errDone
		}
		var ch chunk
		if err := json.Unmarshal(data, &ch); err != nil {
			return fmt.Errorf("%w: a chunk that is not JSON: %w", ErrResponse, err)
		}
		if event == "error" || len(ch.Error) > 0 {
			return streamError(data, r)
		}
		text, err := a.add(ch)
		if err == nil && text != "" && onText != nil {
			onText(text)
		}
		return err
	}, a.response)
}

// readEvents reads body's events into handle, within MaxResponseBody in
// all and MaxStreamEvent each, until handle returns errDone or the body
// ends; then done assembles the answer.
func readEvents(body io.Reader, handle func(event string, data []byte) error, done func() (Response, error)) (Response, error) {
	lim := &io.LimitedReader{R: body, N: MaxResponseBody + 1}
	err := sse.Read(lim, MaxStreamEvent, handle)
	// Each error is said "model response: " once, here; those of the
	// events, made by handle, do not say it.
	switch {
	case lim.N <= 0 || errors.Is(err, netguard.ErrBodyTooLarge):
		err = fmt.Errorf("%w: stream over %d MiB", ErrResponse, MaxResponseBody>>20)
	case errors.Is(err, sse.ErrTooLarge):
		err = fmt.Errorf("%w: %w", ErrResponse, err)
	case errors.Is(err, errDone), errors.Is(err, io.EOF):
		return done()
	}
	return Response{}, fmt.Errorf("model response: %w", err)
}

// typedEvents is readEvents' handler for a wire whose events are JSON
// objects, each named by its "type" (or else its event name): it decodes
// each into an E for handle; an "error" event is the provider's error.
func typedEvents[E any](r redactor, handle func(typ string, e E) error) func(string, []byte) error {
	return func(event string, data []byte) error {
		var (
			e    E
			head struct {
				Type string `json:"type"`
			}
		)
		if err := json.Unmarshal(data, &e); err != nil {
			return fmt.Errorf("%w: an event that is not JSON: %w", ErrResponse, err)
		}
		json.Unmarshal(data, &head)
		if head.Type == "" {
			head.Type = event
		}
		if head.Type == "error" {
			return streamError(data, r)
		}
		return handle(head.Type, e)
	}
}

// streamError is the error of an event that carries the provider's error.
func streamError(data []byte, r redactor) error {
	msg, _ := providerMessage(data)
	if msg == "" {
		msg = string(data)
	}
	return fmt.Errorf("%w: the stream carried an error: %s", ErrResponse, r.quote(msg))
}

// A chunk is one event of a streamed chat completion.
type chunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role      string          `json:"role"`
			Content   string          `json:"content"`
			ToolCalls []toolCallDelta `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// A toolCallDelta is a piece of one tool call.
type toolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// An accumulator assembles a streamed answer. It takes what providers are
// seen to send, each case tested:
//   - a piece without an index belongs to the call its id names, or, with
//     no id, to the call before it;
//   - an index already taken by a call with another id starts a new call
//     (parallel calls all sent at index 0);
//   - a name sent again in every piece is not repeated, and an empty name
//     changes nothing;
//   - a call with no id gets one ("call_N"), since the tool's answer must
//     name it;
//   - finish_reason "stop" with tool calls present is "tool_calls".
type accumulator struct {
	role    string
	text    strings.Builder
	calls   []*ToolCall
	byIndex map[int]int    // a stream index to its call's position
	byID    map[string]int // an id to its call's position
	last    int            // the position of the call the last piece went to
	finish  string
	usage   Usage
}

func newAccumulator() *accumulator {
	return &accumulator{byIndex: map[int]int{}, byID: map[string]int{}, last: -1}
}

// add takes one chunk and returns the text it adds.
func (a *accumulator) add(ch chunk) (string, error) {
	if ch.Usage != nil {
		a.usage = *ch.Usage
	}
	var text strings.Builder
	for _, c := range ch.Choices {
		if c.Index != 0 {
			return "", fmt.Errorf("%w: a chunk of choice %d, want only choice 0", ErrResponse, c.Index)
		}
		if c.Delta.Role != "" {
			a.role = c.Delta.Role
		}
		a.text.WriteString(c.Delta.Content)
		text.WriteString(c.Delta.Content)
		for _, d := range c.Delta.ToolCalls {
			a.addCall(d)
		}
		if c.FinishReason != "" {
			a.finish = c.FinishReason
		}
	}
	return text.String(), nil
}

// addCall adds one piece of a tool call to the call it belongs to.
func (a *accumulator) addCall(d toolCallDelta) {
	pos, found := -1, false
	if d.ID != "" {
		pos, found = a.byID[d.ID]
	}
	if !found && d.Index != nil {
		if p, ok := a.byIndex[*d.Index]; ok && (d.ID == "" || a.calls[p].ID == "") {
			pos, found = p, true
		}
	}
	if !found && d.Index == nil && d.ID == "" && a.last >= 0 {
		pos, found = a.last, true
	}
	if !found {
		pos = len(a.calls)
		a.calls = append(a.calls, &ToolCall{Type: "function"})
	}
	if d.Index != nil {
		a.byIndex[*d.Index] = pos
	}
	call := a.calls[pos]
	if d.ID != "" && call.ID == "" {
		call.ID = d.ID
		a.byID[d.ID] = pos
	}
	if d.Type != "" {
		call.Type = d.Type
	}
	switch name := d.Function.Name; {
	case name == "":
	case strings.HasPrefix(name, call.Function.Name):
		call.Function.Name = name // the whole name again
	default:
		call.Function.Name += name
	}
	call.Function.Arguments += d.Function.Arguments
	a.last = pos
}

// response is the assembled answer: an error if the stream never said how
// it finished, or a tool call has no name.
func (a *accumulator) response() (Response, error) {
	if a.finish == "" {
		return Response{}, fmt.Errorf("model response: %w: the stream ended without a finish reason", ErrResponse)
	}
	m := Message{Role: a.role, Content: a.text.String()}
	if m.Role == "" {
		m.Role = RoleAssistant
	}
	for _, c := range a.calls {
		m.ToolCalls = append(m.ToolCalls, *c)
	}
	return answer(m, a.finish, a.usage)
}

// answer is the Response of an assembled message: an error if a tool call
// has no name; a call with no id gets one ("call_N"), since the tool's
// answer must name it; finish "stop" with tool calls is "tool_calls".
func answer(m Message, finish string, u Usage) (Response, error) {
	for i := range m.ToolCalls {
		c := &m.ToolCalls[i]
		if c.Function.Name == "" {
			return Response{}, fmt.Errorf("model response: %w: tool call %d has no name", ErrResponse, i+1)
		}
		if c.ID == "" {
			c.ID = "call_" + strconv.Itoa(i+1)
		}
		if c.Type == "" {
			c.Type = "function"
		}
	}
	if finish == "stop" && len(m.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	return Response{Message: m, FinishReason: finish, Usage: u}, nil
}
