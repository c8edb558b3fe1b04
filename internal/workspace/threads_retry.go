package workspace

import (
	"context"
	"net/http"
	"strconv"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// retryRoutes run a thread again: a retry of a run that failed or was
// interrupted, from where it ended; a regenerate of a model's answer and
// an edit of a user's message, each in a fork made before the message,
// which keeps the branch up to it (the thread forked keeps everything).
// They take the start-run and fork routes' callers: an owner or a member,
// bearer or browser, not a scoped token.
func (w *Workspace) retryRoutes(mux *http.ServeMux) {
	mux.Handle("POST /api/threads/{id}/retry", w.api(writer, w.threadAPI(w.retryRun)))
	mux.Handle("POST /api/threads/{id}/regenerate", w.api(writer, w.threadAPI(w.forkRoute(model.RoleAssistant))))
	mux.Handle("POST /api/threads/{id}/edit", w.api(writer, w.threadAPI(w.forkRoute(model.RoleUser))))
}

func (w *Workspace) retryRun(r *http.Request, c *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	run, err := w.runThread(r.Context(), c, threads.Start{Thread: id, Retry: true})
	return run, threadError(err)
}

// forkRoute is the regenerate route (role assistant: no prompt, the model
// answers again) or the edit route (role user: the new text as prompt).
func (w *Workspace) forkRoute(role string) handler {
	return func(r *http.Request, c *auth.Caller) (any, error) {
		id, err := pathID(r)
		if err != nil {
			return nil, err
		}
		var req struct {
			Seq    int64   `json:"seq"`
			Prompt *string `json:"prompt"`
		}
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		prompt := ""
		switch {
		case role == model.RoleAssistant && req.Prompt != nil:
			return nil, fail(http.StatusBadRequest, "invalid_thread", "a regenerate takes no prompt: the model answers again")
		case role == model.RoleUser && req.Prompt == nil:
			return nil, threadError(threads.CheckPrompt(""))
		case role == model.RoleUser:
			if err := threads.CheckPrompt(*req.Prompt); err != nil {
				return nil, threadError(err)
			}
			prompt = *req.Prompt
		}
		return w.forkAndRun(r.Context(), c, id, req.Seq, role, prompt)
	}
}

// forkAndRun forks thread id before its event seq, a message of role, and
// starts a run of the fork: with prompt, or as a retry (the model answers
// again). The fork and the run are recorded as the fork and run routes
// record them, the fork's record naming the message.
func (w *Workspace) forkAndRun(ctx context.Context, c *auth.Caller, id, seq int64, role, prompt string) (any, error) {
	// The provider first: no fork is made for a run that cannot start.
	if _, err := w.threadStart(ctx, id); err != nil {
		return nil, threadError(err)
	}
	fork, err := w.threads.ForkBefore(ctx, id, seq, role)
	if err != nil {
		return nil, threadError(err)
	}
	why := map[string]string{model.RoleAssistant: "regenerate", model.RoleUser: "edit"}[role]
	if err := w.record(c, "thread.fork", threadTarget(fork.ID), map[string]string{"from": threadTarget(id),
		"seq": strconv.FormatInt(fork.ForkedAt, 10), why: strconv.FormatInt(seq, 10)}); err != nil {
		return nil, err
	}
	run, err := w.runThread(ctx, c, threads.Start{Thread: fork.ID, Prompt: prompt, Retry: prompt == ""})
	if err != nil {
		return nil, threadError(err)
	}
	return map[string]any{"thread": fork, "run": run}, nil
}
