package workspace

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/providers"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// threadRoutes are the agent threads' routes. Anyone signed in reads
// threads; an owner or a member makes them, runs and cancels them; only
// the owner in a browser answers an approval or sets the approval timeout.
// A token scoped to some servers uses none of them: a thread reaches every
// approved server.
func (w *Workspace) threadRoutes(mux *http.ServeMux) {
	mux.Handle("GET /api/threads", w.api(anyone, w.threadAPI(w.listThreads)))
	mux.Handle("POST /api/threads", w.api(writer, w.threadAPI(w.createThread)))
	mux.Handle("GET /api/threads/{id}", w.api(anyone, w.threadAPI(w.getThread)))
	mux.Handle("POST /api/threads/{id}/runs", w.api(writer, w.threadAPI(w.startRun)))
	mux.Handle("POST /api/threads/{id}/cancel", w.api(writer, w.threadAPI(w.cancelRun)))
	mux.Handle("POST /api/threads/{id}/fork", w.api(writer, w.threadAPI(w.forkThread)))
	w.retryRoutes(mux)
	mux.Handle("GET /api/threads/{id}/events", w.threadStream())
	mux.Handle("GET /api/threads/{id}/export", w.threadExport())
	mux.Handle("GET /api/threads/{id}/events/{seq}/rendered", w.api(anyone, w.threadAPI(w.renderedEvent)))
	mux.Handle("POST /api/approvals/{id}", w.api(approval, w.answerApproval))
	mux.Handle("GET /api/thread-settings", w.api(anyone, w.threadSettings))
	mux.Handle("PUT /api/thread-settings", w.api(approval, w.setThreadSettings))
}

// threadAPI refuses a scoped token, then serves h.
func (w *Workspace) threadAPI(h handler) handler {
	return func(r *http.Request, c *auth.Caller) (any, error) {
		if err := threadCaller(c); err != nil {
			return nil, err
		}
		return h(r, c)
	}
}

func threadCaller(c *auth.Caller) error {
	if c.Scoped {
		return fail(http.StatusForbidden, "scoped_token", "a token scoped to some servers cannot use threads: a thread reaches every approved server")
	}
	return nil
}

// threadError is err as the API answers it.
func threadError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, threads.ErrNotFound):
		return fail(http.StatusNotFound, "not_found", "%v", err)
	case errors.Is(err, threads.ErrInvalid), errors.Is(err, threads.ErrArgs):
		return fail(http.StatusBadRequest, "invalid_thread", "%v", err)
	case errors.Is(err, threads.ErrBusy):
		return fail(http.StatusConflict, "busy", "%v", err)
	case errors.Is(err, threads.ErrNothingToRetry):
		return fail(http.StatusConflict, "nothing_to_retry", "%v", err)
	case errors.Is(err, threads.ErrAnswered), errors.Is(err, threads.ErrNotWaiting):
		return fail(http.StatusConflict, "not_pending", "%v", err)
	}
	return err
}

// A threadView is a thread in a list, with the events a search matched.
type threadView struct {
	threads.Thread
	Matches []int64 `json:"matches,omitempty"`
}

func (w *Workspace) listThreads(r *http.Request, _ *auth.Caller) (any, error) {
	ctx := r.Context()
	q := r.URL.Query().Get("q")
	if q == "" {
		all, err := w.threads.List(ctx)
		out := make([]threadView, 0, len(all))
		for _, t := range all {
			out = append(out, threadView{Thread: t})
		}
		return out, err
	}
	hits, err := w.threads.Search(ctx, q, 100)
	if err != nil {
		return nil, threadError(err)
	}
	out := make([]threadView, 0, len(hits))
	for _, h := range hits {
		t, err := w.threads.Get(ctx, h.Thread)
		if err != nil {
			return nil, err
		}
		out = append(out, threadView{Thread: t, Matches: h.Seqs})
	}
	return out, nil
}

// provider returns the provider named name; a name that names none is a
// 400 that says what to do.
func (w *Workspace) provider(ctx context.Context, name string) (providers.Provider, error) {
	all, err := w.providers.List(ctx)
	if err != nil {
		return providers.Provider{}, err
	}
	if len(all) == 0 {
		return providers.Provider{}, fail(http.StatusBadRequest, "invalid_thread", "There are no model providers yet: the workspace owner adds one on the Model providers page.")
	}
	for _, p := range all {
		if p.Name == name {
			return p, nil
		}
	}
	return providers.Provider{}, fail(http.StatusBadRequest, "invalid_thread", "There is no model provider %q: choose one from the list, or the workspace owner adds it on the Model providers page.", name)
}

func (w *Workspace) createThread(r *http.Request, c *auth.Caller) (any, error) {
	var req struct {
		Title         string `json:"title"`
		Provider      string `json:"provider"`
		Model         string `json:"model"`
		Runtime       string `json:"runtime"`
		WorkspaceCopy bool   `json:"workspace_copy"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	t, err := w.makeThread(r.Context(), c, threadForm{Title: strings.TrimSpace(req.Title), Provider: req.Provider, Model: strings.TrimSpace(req.Model),
		Runtime: req.Runtime, Copy: req.WorkspaceCopy})
	return t, threadError(err)
}

func threadTarget(id int64) string { return "thread:" + strconv.FormatInt(id, 10) }

func (w *Workspace) getThread(r *http.Request, _ *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	t, err := w.threads.Get(ctx, id)
	if err != nil {
		return nil, threadError(err)
	}
	// The run first, then the events: they hold at least what the run's
	// status says happened.
	out := map[string]any{"thread": t, "run": nil}
	if run, ok, err := w.threads.LastRun(ctx, id); err != nil {
		return nil, err
	} else if ok {
		out["run"] = run
	}
	events, err := w.threads.Events(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	if events == nil {
		events = []threads.Event{}
	}
	out["events"] = events
	return out, nil
}

func (w *Workspace) startRun(r *http.Request, c *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	var req struct {
		Prompt string `json:"prompt"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	run, err := w.runThread(r.Context(), c, threads.Start{Thread: id, Prompt: req.Prompt})
	return run, threadError(err)
}

// runThread starts a run of thread how.Thread with how's prompt (or as a
// retry), on the thread's provider as it is saved now, and records it.
func (w *Workspace) runThread(ctx context.Context, c *auth.Caller, how threads.Start) (threads.Run, error) {
	id := how.Thread
	st, err := w.threadStart(ctx, id)
	if err != nil {
		return threads.Run{}, err
	}
	st.Prompt, st.Retry, st.Actor = how.Prompt, how.Retry, threadTarget(id)+":"+c.Actor()
	run, err := w.runner.Start(ctx, st)
	if err != nil {
		return threads.Run{}, err
	}
	detail := map[string]string{"run": strconv.FormatInt(run.ID, 10)}
	if how.Retry {
		detail["retry"] = "true"
	}
	return run, w.record(c, "thread.run", threadTarget(id), detail)
}

// threadStart is what a run of thread id runs with: the thread's
// provider as it is saved now, the tools approved (a sandboxed thread's:
// its guests' tools, on its backend, which must be usable now), the
// limits.
func (w *Workspace) threadStart(ctx context.Context, id int64) (threads.Start, error) {
	t, err := w.threads.Get(ctx, id)
	if err != nil {
		return threads.Start{}, err
	}
	p, err := w.provider(ctx, t.Provider)
	if err != nil {
		return threads.Start{}, err
	}
	client, _, err := w.providers.Client(ctx, p.ID)
	if err != nil {
		return threads.Start{}, fail(http.StatusConflict, "provider_unavailable", "%v", err)
	}
	var tools threads.Toolbox = w.endpoint.Threads()
	if t.Runtime == threads.RuntimeSandbox {
		if tools, err = w.sandboxTools(ctx, t); err != nil {
			return threads.Start{}, err
		}
	}
	return threads.Start{Thread: id, Model: providerModel{client: client, stream: p.Stream, model: t.Model},
		Tools: tools, Limits: w.threadLimits}, nil
}

// providerModel answers a run's steps with a provider's model: streamed,
// or whole for a provider that is switched to it.
type providerModel struct {
	client *model.Client
	stream bool
	model  string
}

func (m providerModel) Answer(ctx context.Context, r model.Request, onText func(string)) (model.Response, error) {
	r.Model = m.model
	if m.stream {
		return m.client.Stream(ctx, r, onText)
	}
	return m.client.Chat(ctx, r)
}

func (w *Workspace) cancelRun(r *http.Request, c *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	if _, err := w.threads.Get(r.Context(), id); err != nil {
		return nil, threadError(err)
	}
	cancelled, err := w.runner.Cancel(r.Context(), id, c.Actor())
	if err != nil {
		return nil, err
	}
	if cancelled {
		if err := w.record(c, "thread.cancel", threadTarget(id), nil); err != nil {
			return nil, err
		}
	}
	return map[string]bool{"cancelled": cancelled}, nil
}

func (w *Workspace) forkThread(r *http.Request, c *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	var req struct {
		Seq int64 `json:"seq"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	t, err := w.threads.Fork(r.Context(), id, req.Seq)
	if err != nil {
		return nil, threadError(err)
	}
	return t, w.record(c, "thread.fork", threadTarget(t.ID), map[string]string{"from": threadTarget(id), "seq": strconv.FormatInt(req.Seq, 10)})
}

// streamedThread passes r through the gate (any caller signed in, a
// scoped token excepted) and returns the thread its path names: what a
// route that writes its own answer, not JSON, starts with.
func (w *Workspace) streamedThread(r *http.Request) (threads.Thread, error) {
	c, err := w.check(anyone, r)
	if err != nil {
		return threads.Thread{}, err
	}
	if err := threadCaller(c); err != nil {
		return threads.Thread{}, err
	}
	id, err := pathID(r)
	if err != nil {
		return threads.Thread{}, err
	}
	t, err := w.threads.Get(r.Context(), id)
	return t, threadError(err)
}

// threadStream serves a thread's events as server-sent events.
func (w *Workspace) threadStream() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		t, err := w.streamedThread(r)
		if err == nil {
			err = threadError(w.threads.ServeEvents(rw, r, t.ID))
		}
		if err != nil {
			w.writeError(rw, err)
		}
	})
}

// threadExport serves a thread as a JSONL or Markdown download.
func (w *Workspace) threadExport() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		t, err := w.streamedThread(r)
		format := r.URL.Query().Get("format")
		if err == nil && format != "jsonl" && format != "markdown" {
			err = fail(http.StatusBadRequest, "bad_request", "format: jsonl or markdown")
		}
		if err != nil {
			w.writeError(rw, err)
			return
		}
		ext, ctype, export := "jsonl", "application/jsonl", w.threads.ExportJSONL
		if format == "markdown" {
			ext, ctype, export = "md", "text/markdown; charset=utf-8", w.threads.ExportMarkdown
		}
		rw.Header().Set("Content-Type", ctype)
		rw.Header().Set("Cache-Control", "no-store")
		rw.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="thread-%d.%s"`, t.ID, ext))
		if err := export(r.Context(), t.ID, rw); err != nil {
			w.log.Warn("export a thread", "thread", t.ID, "err", err)
		}
	})
}

// answerApproval records the owner's answer to a pending approval of a
// thread's tool call, and wakes the run waiting for it.
func (w *Workspace) answerApproval(r *http.Request, c *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	var req struct {
		Answer string `json:"answer"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	a, err := w.runner.Answer(r.Context(), c.Actor(), id, req.Answer)
	if err != nil {
		return nil, threadError(err)
	}
	_, thread, err := w.threads.GetApproval(r.Context(), id)
	if err != nil {
		return nil, err
	}
	detail := map[string]string{"approval": strconv.FormatInt(id, 10), "answer": a.Status, "server": strconv.FormatInt(a.Tool.ServerID, 10),
		"tool": a.Tool.Tool, "tool_hash": a.Tool.Hash, "fingerprint": a.Tool.Fingerprint}
	if a.Tool.Sandbox {
		delete(detail, "server")
		detail["sandbox"] = "true"
	}
	return a, w.record(c, "thread.approval", threadTarget(thread), detail)
}

func (w *Workspace) threadSettings(r *http.Request, _ *auth.Caller) (any, error) {
	d, err := w.threads.ApprovalTimeout(r.Context())
	return map[string]int64{"approval_timeout_seconds": int64(d / time.Second)}, err
}

func (w *Workspace) setThreadSettings(r *http.Request, c *auth.Caller) (any, error) {
	var req struct {
		Seconds int64 `json:"approval_timeout_seconds"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if req.Seconds < 0 || req.Seconds > int64(threads.MaxApprovalTimeout/time.Second) {
		req.Seconds = -1 // refused below, never wrapped around
	}
	if err := w.threads.SetApprovalTimeout(r.Context(), c.Actor(), time.Duration(req.Seconds)*time.Second); err != nil {
		return nil, threadError(err)
	}
	if err := w.record(c, "thread.settings", "threads", map[string]string{"approval_timeout_seconds": strconv.FormatInt(req.Seconds, 10)}); err != nil {
		return nil, err
	}
	return w.threadSettings(r, c)
}
