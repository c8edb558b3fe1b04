package threads

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"

	"github.com/zero-dev/zero/internal/model"
)

// ExportJSONL writes thread id's events, one JSON object a line, in order.
func (s *Store) ExportJSONL(ctx context.Context, id int64, w io.Writer) error {
	events, err := s.Events(ctx, id, 0)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // as the events are stored (see marshal)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

// ExportMarkdown writes thread id as Markdown: its title, then each
// message event in order under a heading with its number and who wrote
// it. A person's or a model's text is Markdown in a block quote, so that
// whatever it holds (an open fence, a heading, an HTML comment) ends with
// the quote and cannot reach the next heading. A model's calls follow its
// text, each with its arguments, and a tool's result is its text as the
// model read it inside the wrapper; both are in fenced blocks whose fence
// is longer than any run of backticks inside, so they stay text.
func (s *Store) ExportMarkdown(ctx context.Context, id int64, w io.Writer) error {
	t, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	events, err := s.Events(ctx, id, 0)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\nThread %d, %s, model %s\n", escapeInline(t.Title), t.ID, t.Created.UTC().Format(time.RFC3339), codeSpan(t.Model))
	names := map[string]string{} // call id -> tool name
	for _, e := range events {
		if e.Kind != KindMessage {
			continue
		}
		var m model.Message
		json.Unmarshal(e.Body, &m)
		switch m.Role {
		case model.RoleUser:
			fmt.Fprintf(&b, "\n## %d. User\n", e.Seq)
		case model.RoleAssistant:
			fmt.Fprintf(&b, "\n## %d. Assistant\n", e.Seq)
		case model.RoleSystem:
			fmt.Fprintf(&b, "\n## %d. System\n", e.Seq)
		case model.RoleTool:
			name := names[m.ToolCallID]
			if name == "" {
				name = m.Name
			}
			fmt.Fprintf(&b, "\n## %d. Result of %s (call %s)\n\n", e.Seq, codeSpan(name), codeSpan(m.ToolCallID))
			text, _ := Unwrap(m.Content)
			b.WriteString(fenced("text", text))
			continue
		default:
			fmt.Fprintf(&b, "\n## %d. Message\n", e.Seq)
		}
		if m.Content != "" {
			b.WriteString("\n" + quoted(m.Content))
		}
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Function.Name
			fmt.Fprintf(&b, "\nCalls %s (call %s) with:\n\n", codeSpan(c.Function.Name), codeSpan(c.ID))
			var args bytes.Buffer
			if json.Indent(&args, bytes.TrimSpace([]byte(c.Function.Arguments)), "", "  ") == nil {
				b.WriteString(fenced("json", args.String()))
			} else {
				b.WriteString(fenced("text", c.Function.Arguments))
			}
		}
		if b.Len() >= 64<<10 {
			if _, err := io.WriteString(w, b.String()); err != nil {
				return err
			}
			b.Reset()
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// lines splits text at each of Markdown's line endings: \n, \r\n and \r.
func lines(text string) []string {
	return strings.Split(strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n"), "\n")
}

// quoted is text as a block quote, every line of it.
func quoted(text string) string {
	var b strings.Builder
	for _, l := range lines(strings.TrimRight(text, "\r\n")) {
		if l == "" {
			b.WriteString(">\n")
		} else {
			b.WriteString("> " + l + "\n")
		}
	}
	return b.String()
}

// fenced is text in a fenced code block whose fence is longer than any run
// of backticks in it (three at least), so that no line of it can close
// the block.
func fenced(info, text string) string {
	fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
	return fence + info + "\n" + strings.Join(lines(strings.TrimRight(text, "\r\n")), "\n") + "\n" + fence + "\n"
}

// codeSpan is s, on one line, as an inline code span whose backticks are
// more than any run inside; "(none)" for a blank s.
func codeSpan(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

func longestRun(s string, c byte) int {
	longest, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			longest = max(longest, n)
		} else {
			n = 0
		}
	}
	return longest
}

// escapeInline is s with every ASCII punctuation character backslashed,
// so that it reads as the text it is.
func escapeInline(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && unicode.IsPunct(r) || r < 0x80 && unicode.IsSymbol(r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
