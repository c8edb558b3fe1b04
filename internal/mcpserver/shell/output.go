package shell

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/mcpserver"
)

// execute_command answers with readable text for the model (the exit code,
// then each stream under its own label) and with the structured output
// below. A stream that is not text (see isBinary) comes as base64 in the
// structured output only, with a note in the text. The whole reply fits the
// server's reply budget: where both streams would not, each keeps what fits
// of its beginning and is marked truncated.

// output is execute_command's structured result.
type output struct {
	ExitCode        int    `json:"exit_code"`
	Signal          string `json:"signal,omitempty"`
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	StdoutBase64    string `json:"stdout_base64,omitempty"`
	StderrBase64    string `json:"stderr_base64,omitempty"`
	TimedOut        bool   `json:"timed_out"`
	StdoutTruncated bool   `json:"stdout_truncated"`
	StderrTruncated bool   `json:"stderr_truncated"`
	Isolation       string `json:"isolation"`
	DurationMS      int64  `json:"duration_ms"`
}

// A stream is one of a command's outputs, as the reply carries it.
type stream struct {
	name   string
	raw    []byte
	binary bool
	text   string // the text, when not binary: valid UTF-8
	capped bool   // spawn kept only the first spawn.DefaultOutputLimit bytes
	size   int    // bytes of the raw output, or of its text
	kept   int    // of those, the bytes the reply carries: fewer when cut to the budget
}

func newStream(name string, raw []byte, capped bool) *stream {
	s := &stream{name: name, raw: raw, binary: isBinary(raw), capped: capped}
	s.size = len(raw)
	if !s.binary {
		s.text = strings.ToValidUTF8(string(raw), "\uFFFD")
		s.size = len(s.text)
	}
	s.kept = s.size
	return s
}

// isBinary reports whether output is sent as base64: when, terminal escape
// sequences left aside, more than one byte in ten is a control byte other
// than tab, newline and carriage return (each costs 6 bytes escaped in
// JSON), or is not part of valid UTF-8. Other output is text, with each run
// of invalid bytes shown as U+FFFD.
func isBinary(b []byte) bool {
	if bytes.IndexByte(b, 0x1b) >= 0 {
		b = ansi().ReplaceAll(b, nil)
	}
	odd := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				odd++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			odd++
		}
		i += size
	}
	return odd*10 > len(b)
}

// cost is the bytes the stream's first n raw bytes take in the reply: text
// twice (the text block and the structured output), base64 once.
func (s *stream) cost(n int) int {
	if s.binary {
		return base64.StdEncoding.EncodedLen(n)
	}
	return 2 * mcpserver.QuotedSize(s.text[:n])
}

// cut keeps of the stream what costs at most budget.
func (s *stream) cut(budget int) {
	if s.binary {
		s.kept = min(len(s.raw), max(budget, 0)/4*3)
		return
	}
	s.text = mcpserver.CutQuoted(s.text, budget/2)
	s.kept = len(s.text)
}

// ansi matches terminal escape sequences: CSI (colours, cursor moves), OSC
// (titles, links) and two-byte escapes.
var ansi = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("\x1b\\[[0-?]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)|\x1b[@-Z\\\\-_]")
})

// label is the line that introduces the stream in the text block.
func (s *stream) label(budget int) string {
	var notes []string
	switch {
	case s.size == 0:
		return "--- " + s.name + ": empty ---"
	case s.binary:
		notes = append(notes, fmt.Sprintf("%d bytes that are not text, as base64 in the structured output's %s_base64;"+
			" run the command again through od -c or base64 to read them here", s.kept, s.name))
	default:
		notes = append(notes, fmt.Sprintf("%d bytes", s.kept))
	}
	if s.kept < s.size {
		notes = append(notes, fmt.Sprintf("cut from %d bytes to fit this server's reply budget of %d bytes;"+
			" redirect the output to a file and read it in parts", s.size, budget))
	}
	if s.capped {
		notes = append(notes, fmt.Sprintf("the command wrote more: only the first %d bytes were kept", spawn.DefaultOutputLimit))
	}
	return "--- " + s.name + ": " + strings.Join(notes, "; ") + " ---"
}

// shown is the stream's text for the text block: ANSI escape sequences left
// out, with a note when there were some.
func (s *stream) shown() (text, note string) {
	if s.binary || s.kept == 0 {
		return "", ""
	}
	text = ansi().ReplaceAllString(s.text, "")
	if len(text) != len(s.text) {
		note = "(terminal escape sequences are left out here; the structured output keeps them)\n"
	}
	return text, note
}

// reply builds execute_command's answer to res within ctx's reply budget.
func reply(ctx context.Context, res *spawn.Result) *mcp.CallToolResult {
	streams := []*stream{newStream("stdout", res.Stdout, res.StdoutTruncated), newStream("stderr", res.Stderr, res.StderrTruncated)}
	out := output{
		ExitCode:   res.ExitCode,
		Signal:     res.Signal,
		TimedOut:   res.TimedOut,
		Isolation:  string(res.Isolation),
		DurationMS: res.Duration.Milliseconds(),
	}
	budget := mcpserver.ReplyBudget(ctx)
	// The room left for the streams, with room kept for the labels and
	// notes (each under 400 bytes).
	room := budget - mcpserver.ResultSize(build(out, streams[:0], budget)) - 1200
	fitStreams(streams, room)
	return build(out, streams, budget)
}

// fitStreams cuts the streams, largest first, so that together they cost at
// most room: each gets half, and what one leaves goes to the other.
func fitStreams(streams []*stream, room int) {
	a, b := streams[0], streams[1]
	ca, cb := a.cost(a.kept), b.cost(b.kept)
	if ca+cb <= room {
		return
	}
	if ca > cb {
		a, b, ca, cb = b, a, cb, ca
	}
	share := min(ca, room/2)
	if ca > share {
		a.cut(share)
	}
	b.cut(room - a.cost(a.kept))
}

// build writes the text block and the structured output from the streams.
func build(out output, streams []*stream, budget int) *mcp.CallToolResult {
	var text strings.Builder
	fmt.Fprintf(&text, "exit code: %d", out.ExitCode)
	if out.Signal != "" {
		fmt.Fprintf(&text, " (killed by signal: %s)", out.Signal)
	}
	text.WriteByte('\n')
	if out.TimedOut {
		fmt.Fprintf(&text, "timed out: the command was killed at its timeout, after %d ms\n", out.DurationMS)
	}
	if out.Isolation != string(spawn.None) && out.Isolation != "" {
		fmt.Fprintf(&text, "isolation: %s\n", out.Isolation)
	}
	for _, s := range streams {
		text.WriteString(s.label(budget) + "\n")
		shown, note := s.shown()
		text.WriteString(note)
		text.WriteString(shown)
		if shown != "" && !strings.HasSuffix(shown, "\n") {
			text.WriteByte('\n')
		}
		truncated := s.capped || s.kept < s.size
		var value, b64 string
		if s.binary {
			b64 = base64.StdEncoding.EncodeToString(s.raw[:s.kept])
		} else {
			value = s.text
		}
		switch s.name {
		case "stdout":
			out.Stdout, out.StdoutBase64, out.StdoutTruncated = value, b64, truncated
		case "stderr":
			out.Stderr, out.StderrBase64, out.StderrTruncated = value, b64, truncated
		}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: strings.TrimSuffix(text.String(), "\n")}},
		StructuredContent: out,
	}
}
