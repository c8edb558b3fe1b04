package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"

	"github.com/zero-dev/zero/internal/guard/markdown"
	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// markdownBudget bounds the Markdown one thread page renders, the latest
// messages first; older ones are shown as text.
const markdownBudget = 1 << 20

// A shownText is a message's text as the thread page shows it: a tool's
// result without the wrapper the model reads it in, an assistant's
// Markdown rendered (internal/guard/markdown), hidden characters escaped.
type shownText struct {
	Text     string          `json:"text"`               // as text
	Markdown []markdown.Node `json:"markdown,omitempty"` // an assistant's, rendered
	// AsText says why an assistant's text is shown as text.
	AsText string `json:"as_text,omitempty"`
}

// HTML is the rendered Markdown for a template.
func (s shownText) HTML() template.HTML { return markdown.HTML(s.Markdown) }

// showText is how the page shows m's text, an assistant's Markdown not
// rendered yet (see render).
func showText(m model.Message) shownText {
	if m.Role == model.RoleTool {
		inner, _ := threads.Unwrap(m.Content)
		return shownText{Text: visibleText(inner)}
	}
	return shownText{Text: visibleText(m.Content)}
}

// render renders src, an assistant's text, as Markdown; Markdown over its
// bounds stays text, and says why.
func (s *shownText) render(src string) {
	if src == "" {
		return
	}
	nodes, err := markdown.Render(src, visibleText)
	switch {
	case errors.Is(err, markdown.ErrTooLarge):
		s.AsText = "Shown as text: too long or too deeply nested to render as Markdown."
	case err != nil:
		s.AsText = "Shown as text: it could not be rendered as Markdown."
	default:
		s.Markdown = nodes
	}
}

// renderItems renders the assistants' Markdown of a page's items, the
// latest first, within markdownBudget.
func renderItems(items []threadItem) {
	budget := markdownBudget
	for i := len(items) - 1; i >= 0; i-- {
		it := &items[i]
		if it.Kind != threads.KindMessage || it.Role != model.RoleAssistant || it.content == "" {
			continue
		}
		if len(it.content) > budget {
			it.AsText = fmt.Sprintf("Shown as text: a page renders at most %d KiB of Markdown, the latest messages first.", markdownBudget>>10)
			continue
		}
		budget -= len(it.content)
		it.render(it.content)
	}
}

// renderedEvent serves a message event's text as the page shows it, for
// thread.js to show a message that came after the page was loaded.
func (w *Workspace) renderedEvent(r *http.Request, _ *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	seq, err := strconv.ParseInt(r.PathValue("seq"), 10, 64)
	if err != nil || seq < 1 {
		return nil, fail(http.StatusNotFound, "not_found", "no such event %q", r.PathValue("seq"))
	}
	e, err := w.threads.Event(r.Context(), id, seq)
	if err != nil {
		return nil, threadError(err)
	}
	var m model.Message
	if e.Kind != threads.KindMessage || json.Unmarshal(e.Body, &m) != nil {
		return nil, fail(http.StatusNotFound, "not_found", "event %d of thread %d is not a message", seq, id)
	}
	shown := showText(m)
	if m.Role == model.RoleAssistant {
		shown.render(m.Content)
	}
	return struct {
		Seq  int64  `json:"seq"`
		Role string `json:"role"`
		shownText
	}{e.Seq, m.Role, shown}, nil
}
