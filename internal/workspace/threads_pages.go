package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/providers"
	"github.com/zero-dev/zero/internal/workspace/threads"
	"github.com/zero-dev/zero/internal/workspace/web"
)

// Bounds of the thread pages: the threads a list shows, the matching
// events named for each search hit, and the events a conversation shows
// (the latest; an export has them all).
const (
	threadsListed   = 200
	matchesListed   = 10
	threadEventsMax = 500
	maxSearch       = 200 // bytes of a search
)

// whenLayout is how the thread pages show a time, as web.When does.
const whenLayout = "2006-01-02 15:04 UTC"

func (w *Workspace) threadPageRoutes(mux *http.ServeMux) {
	mux.Handle("GET /threads", w.page(anyone, w.threadsPage))
	mux.Handle("POST /threads/new", w.page(writer, w.newThreadPage))
	mux.Handle("GET /threads/{id}", w.page(anyone, w.threadPage))
}

// threadForm is what the new-thread form holds: Runtime is
// threads.RuntimeHost ("" too) or threads.RuntimeSandbox, with Copy for a
// scratch copy of the work folder in each guest.
type threadForm struct {
	Title, Provider, Model, Runtime string
	Copy                            bool
}

// threadsData is the threads page's: the threads (all, or those that
// match Query), and the new-thread form.
type threadsData struct {
	Threads   []threadRow
	Query     string
	Unlisted  int // threads past threadsListed
	Providers []providers.Provider
	Form      threadForm
	Problem   string // the form's
	// SearchProblem says why a search was not run.
	SearchProblem string
}

// threadRow is one thread of the list, with where a search matched it.
type threadRow struct {
	threads.Thread
	InTitle bool
	Matches []int64 // the matching messages' Seqs, at most matchesListed
}

func (w *Workspace) threadsPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	return w.showThreads(rw, r, c, http.StatusOK, threadsData{})
}

func (w *Workspace) showThreads(rw http.ResponseWriter, r *http.Request, c *auth.Caller, status int, d threadsData) error {
	ctx := r.Context()
	var err error
	if d.Providers, err = w.providers.List(ctx); err != nil {
		return err
	}
	if d.Form.Provider == "" && len(d.Providers) > 0 {
		d.Form.Provider = d.Providers[0].Name
	}
	d.Query = strings.TrimSpace(r.URL.Query().Get("q"))
	switch {
	case len(d.Query) > maxSearch:
		d.SearchProblem = fmt.Sprintf("A search is at most %d bytes: use fewer words.", maxSearch)
		if status == http.StatusOK {
			status = http.StatusBadRequest
		}
	case d.Query == "":
		list, err := w.threads.List(ctx)
		if err != nil {
			return err
		}
		if len(list) > threadsListed {
			d.Unlisted, list = len(list)-threadsListed, list[:threadsListed]
		}
		for _, t := range list {
			d.Threads = append(d.Threads, threadRow{Thread: t})
		}
	default:
		hits, err := w.threads.Search(ctx, d.Query, threadsListed)
		if err != nil {
			return err
		}
		for _, h := range hits {
			t, err := w.threads.Get(ctx, h.Thread)
			if err != nil {
				return err
			}
			row := threadRow{Thread: t}
			for _, seq := range h.Seqs {
				switch {
				case seq == 0:
					row.InTitle = true
				case len(row.Matches) < matchesListed:
					row.Matches = append(row.Matches, seq)
				}
			}
			d.Threads = append(d.Threads, row)
		}
	}
	return w.render(rw, r, c, status, "threads", "Threads", d)
}

// newThreadPage makes a thread from the form and goes to it; a refusal
// shows the form again with what was typed.
func (w *Workspace) newThreadPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	f := threadForm{Title: strings.TrimSpace(r.PostFormValue("title")), Provider: r.PostFormValue("provider"),
		Model: strings.TrimSpace(r.PostFormValue("model")), Runtime: r.PostFormValue("runtime"), Copy: r.PostFormValue("workspace") == "copy"}
	t, err := w.makeThread(r.Context(), c, f)
	var ae *apiError
	if errors.As(err, &ae) && (ae.Status == http.StatusBadRequest || ae.Code == "sandbox_unavailable") {
		return w.showThreads(rw, r, c, ae.Status, threadsData{Form: f, Problem: ae.Message})
	}
	if err != nil {
		return err
	}
	http.Redirect(rw, r, "/threads/"+strconv.FormatInt(t.ID, 10), http.StatusSeeOther)
	return nil
}

// makeThread makes a thread of f for c, and records it: its provider
// named, its model the one typed or else the provider's default. Bad input
// is a 400 that says what to change.
func (w *Workspace) makeThread(ctx context.Context, c *auth.Caller, f threadForm) (threads.Thread, error) {
	if f.Title == "" {
		return threads.Thread{}, fail(http.StatusBadRequest, "invalid_thread", "Give the thread a title.")
	}
	p, err := w.provider(ctx, f.Provider)
	if err != nil {
		return threads.Thread{}, err
	}
	if f.Model == "" {
		f.Model = p.DefaultModel
	}
	switch {
	case f.Model == "":
		return threads.Thread{}, fail(http.StatusBadRequest, "invalid_thread", "Provider %s has no default model: type the model to use.", p.Name)
	case len(f.Model) > model.MaxModelID || strings.ContainsFunc(f.Model, unicode.IsControl):
		return threads.Thread{}, fail(http.StatusBadRequest, "invalid_thread", "A model name is at most %d bytes, with no control characters.", model.MaxModelID)
	}
	t := threads.Thread{Title: f.Title, Runtime: f.Runtime, Provider: p.Name, Model: f.Model}
	if f.Runtime == threads.RuntimeSandbox {
		if t, err = w.sandboxThread(ctx, t, f.Copy); err != nil {
			return threads.Thread{}, err
		}
	}
	t, err = w.threads.Create(ctx, t)
	if errors.Is(err, threads.ErrInvalid) {
		return threads.Thread{}, fail(http.StatusBadRequest, "invalid_thread", "The thread was not made: %s.", strings.TrimPrefix(err.Error(), threads.ErrInvalid.Error()+": "))
	}
	if err != nil {
		return threads.Thread{}, err
	}
	detail := map[string]string{"provider": p.Name, "model": f.Model, "runtime": t.Runtime}
	if t.Runtime == threads.RuntimeSandbox {
		detail["backend"], detail["workspace"] = t.Backend, workspaceMode(t.WorkspaceCopy)
	}
	return t, w.record(c, "thread.create", threadTarget(t.ID), detail)
}

// threadData is the conversation page's.
type threadData struct {
	Thread  threads.Thread
	Items   []threadItem
	Earlier int   // events before the first shown
	LastSeq int64 // the last event read: the stream's events after it are new
	Run     *threads.Run
	// CanRetry: no run going, and the thread can be run again from its
	// last message (threads.Store.Retryable).
	CanRetry bool
	Numbers  threadNumbers
	// ForkedAt is the number of the message a forked thread was forked at,
	// in the thread it was forked from; 0 when that is gone.
	ForkedAt int
}

// Active reports whether the thread's last run has not ended.
func (d threadData) Active() bool {
	return d.Run != nil && (d.Run.Status == threads.Running || d.Run.Status == threads.WaitingApproval)
}

// RunStatus is the last run's status, "none" before the first run.
func (d threadData) RunStatus() string {
	if d.Run == nil {
		return "none"
	}
	return d.Run.Status
}

// A threadItem is one entry of the conversation as the page shows it: a
// message, an approval (as its latest event has it), the allowance a call
// ran under, or a run's end. Text
// fields have their hidden characters shown (visibleText).
type threadItem struct {
	Seq  int64
	N    int    // the number shown: a message's, or a run end's run's (threadNumbers)
	Kind string // message, approval, allowance or run
	When string
	Role string // a message's: system, user, assistant, tool or other
	shownText
	content  string // an assistant's text, for renderItems
	Calls    []shownCall
	CallID   string // a tool message's call
	Tool     string // a tool message's tool, named by its call
	Approval *shownApproval
	Run      *runEnd
	Allowed  *shownAllowance // a call that ran without asking
	Ran      *shownRan       // the sandbox backend that ran a call
}

// shownRan is a call event's body as shown.
type shownRan struct{ CallID, Name, Backend, Outcome string }

type shownCall struct{ ID, Name, Args string }

type runEnd struct {
	ID            int64
	Status, Error string
}

// shownApproval is an approval event's body as shown.
type shownApproval struct {
	ID                               int64
	Server, Tool, Name, Reason       string
	Plugin                           bool // Server names a plugin
	Args, Status, Expires, By        string
	ReadOnly, Destructive, OpenWorld bool
}

// Ended is how the page says an approval ended.
func (a shownApproval) Ended() string { return approvalEnds[a.Status] }

// approvalEnds says how each approval ended (thread.js has the same words).
var approvalEnds = map[string]string{
	threads.AnswerOnce:    "Allowed once",
	threads.AnswerThread:  "Allowed in this thread",
	threads.AnswerAlways:  "Always allowed",
	threads.AnswerDecline: "Declined",
	threads.AnswerCancel:  "Cancelled: the run ended",
	threads.Expired:       "Expired: nobody answered in time, so it was declined",
}

func (w *Workspace) threadPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	// Events first: the thread's totals and its run, read after, are at
	// least as new, and the stream brings what came since.
	events, err := w.threads.Events(ctx, id, 0)
	if err != nil {
		return threadPageError(err)
	}
	t, err := w.threads.Get(ctx, id)
	if err != nil {
		return threadPageError(err)
	}
	d := threadData{Thread: t}
	if run, ok, err := w.threads.LastRun(ctx, id); err != nil {
		return err
	} else if ok {
		d.Run = &run
	}
	if n := len(events); n > 0 {
		d.LastSeq = events[n-1].Seq
	}
	d.CanRetry = !d.Active() && threads.RetryableEvents(events) == nil
	d.Numbers = numberThread(events)
	if len(events) > threadEventsMax {
		d.Earlier, events = len(events)-threadEventsMax, events[len(events)-threadEventsMax:]
	}
	d.Items = threadItems(events)
	renderItems(d.Items)
	d.Numbers.number(d.Items)
	if t.ForkedFrom != 0 {
		if from, err := w.threads.Events(ctx, t.ForkedFrom, 0); err == nil {
			d.ForkedAt = numberThread(from).message[t.ForkedAt]
		}
	}
	// An approval still pending in its events may have ended without an
	// event (the workspace stopped): the store says how it stands.
	for _, it := range d.Items {
		if a := it.Approval; a != nil && a.Status == threads.Pending {
			if now, _, err := w.threads.GetApproval(ctx, a.ID); err == nil && now.Status != threads.Pending {
				a.Status, a.By = now.Status, web.Visible(now.By)
			}
		}
	}
	return w.render(rw, r, c, http.StatusOK, "thread", web.Visible(t.Title), d)
}

// threadItems turns events into what the page shows. A later approval
// event replaces the earlier one of the same approval, in its place.
func threadItems(events []threads.Event) []threadItem {
	var items []threadItem
	approvals := map[int64]int{} // approval id -> its item
	callNames := map[string]string{}
	for _, e := range events {
		it := threadItem{Seq: e.Seq, Kind: e.Kind, When: e.Created.UTC().Format(whenLayout)}
		switch e.Kind {
		case threads.KindMessage:
			var m model.Message
			if err := json.Unmarshal(e.Body, &m); err != nil {
				it.Role, it.Text = "other", visibleText(string(e.Body))
				break
			}
			it.Role, it.shownText, it.content = m.Role, showText(m), m.Content
			switch m.Role {
			case model.RoleSystem, model.RoleUser, model.RoleAssistant, model.RoleTool:
			default:
				it.Role = "other"
			}
			for _, tc := range m.ToolCalls {
				callNames[tc.ID] = tc.Function.Name
				it.Calls = append(it.Calls, shownCall{ID: tc.ID, Name: web.Visible(tc.Function.Name), Args: visibleText(argsText([]byte(tc.Function.Arguments)))})
			}
			if m.Role == model.RoleTool {
				it.CallID, it.Tool = m.ToolCallID, callNames[m.ToolCallID]
				if it.Tool == "" {
					it.Tool = m.Name
				}
				it.Tool = web.Visible(it.Tool)
			}
		case "approval":
			b := threads.ApprovalEvent{Hints: threads.HintsOf(nil)} // a missing hint is the unsafe value
			if json.Unmarshal(e.Body, &b) != nil || b.Approval == 0 {
				continue
			}
			h := b.Hints
			args := b.Arguments
			var s string
			if json.Unmarshal(args, &s) == nil {
				args = []byte(s)
			}
			it.Approval = &shownApproval{ID: b.Approval, Server: web.Visible(b.Server), Plugin: b.Plugin, Tool: web.Visible(b.Tool), Name: web.Visible(b.Name),
				Reason: visibleText(b.Reason), Args: visibleText(argsText(args)), Status: b.Status, Expires: b.Expires.UTC().Format(whenLayout), By: web.Visible(b.By),
				ReadOnly: h.ReadOnly, Destructive: h.Destructive, OpenWorld: h.OpenWorld}
			if i, ok := approvals[b.Approval]; ok {
				it.Seq = items[i].Seq
				items[i] = it
				continue
			}
			approvals[b.Approval] = len(items)
		case threads.KindAllowance:
			var b threads.AllowanceEvent
			if json.Unmarshal(e.Body, &b) != nil {
				continue
			}
			it.Allowed = showAllowance(b)
		case threads.KindCall:
			var b threads.CallEvent
			if json.Unmarshal(e.Body, &b) != nil {
				continue
			}
			it.Ran = &shownRan{CallID: b.CallID, Name: web.Visible(b.Name), Backend: web.Visible(b.Backend), Outcome: web.Visible(b.Outcome)}
		case "run":
			var b struct {
				Run    int64  `json:"run"`
				Status string `json:"status"`
				Error  string `json:"error"`
			}
			if json.Unmarshal(e.Body, &b) != nil || (b.Status != threads.Completed && b.Status != threads.Interrupted && b.Status != threads.Failed) {
				continue
			}
			it.Run = &runEnd{ID: b.Run, Status: b.Status, Error: visibleText(b.Error)}
		default:
			continue // usage is in the totals
		}
		items = append(items, it)
	}
	return items
}

// argsText is a call's arguments indented, when they are JSON, else as
// the model wrote them. Only spacing outside strings changes, so what is
// shown is what runs.
func argsText(args []byte) string {
	var buf bytes.Buffer
	if json.Indent(&buf, bytes.TrimSpace(args), "", "  ") != nil {
		return string(args)
	}
	return buf.String()
}

// visibleText is text from a model or a tool with its hidden characters
// escaped as web.Visible does, line by line and keeping tabs (thread.js
// does the same).
func visibleText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		parts := strings.Split(strings.TrimSuffix(l, "\r"), "\t")
		for j, p := range parts {
			parts[j] = web.Visible(p)
		}
		lines[i] = strings.Join(parts, "\t")
	}
	return strings.Join(lines, "\n")
}

// threadPageError maps the thread store's errors to what a page answers.
func threadPageError(err error) error {
	switch {
	case errors.Is(err, threads.ErrNotFound):
		return fail(http.StatusNotFound, "not_found", "There is no such thread.")
	case errors.Is(err, threads.ErrInvalid):
		return fail(http.StatusBadRequest, "bad_request", "%v", err)
	}
	return err
}

// Usage says the thread's token totals, as thread.js says them.
func (d threadData) Usage() string {
	return fmt.Sprintf("Tokens: %d prompt, %d completion", d.Thread.PromptTokens, d.Thread.CompletionTokens)
}
