package workspace

import (
	"context"
	"net/http"
	"os"
	"path/filepath"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/sandbox"
	"github.com/zero-dev/zero/internal/workspace/sandboxed"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// sandboxThread gives t, a sandboxed thread to make, its backend: the
// strongest the owner's settings allow whose probe passes here; none is a
// 409 sandbox_unavailable, and no thread is made.
func (w *Workspace) sandboxThread(ctx context.Context, t threads.Thread, copy bool) (threads.Thread, error) {
	set, err := w.threads.SandboxSettings(ctx)
	if err != nil {
		return t, err
	}
	r, err := w.chooseBackend(ctx, set.Policy())
	if err != nil {
		return t, err
	}
	t.Backend, t.WorkspaceCopy = string(r.Backend()), copy
	return t, nil
}

// workspaceMode names how a sandboxed thread's guests get its work
// folder.
func workspaceMode(copy bool) string {
	if copy {
		return "copy"
	}
	return "bind"
}

// sandboxRunner returns the runner of sandboxed thread t's backend, once
// its probe passes now: a run uses exactly the thread's backend, never
// another, never the host; else it is a 409 sandbox_unavailable.
func (w *Workspace) sandboxRunner(ctx context.Context, t threads.Thread) (sandbox.Runner, string, error) {
	// The owner's settings as they are now: a pin or a minimum set since
	// the thread was made holds for its runs too.
	set, err := w.threads.SandboxSettings(ctx)
	if err != nil {
		return nil, "", err
	}
	if !set.Policy().Allows(sandbox.Backend(t.Backend)) {
		return nil, "", fail(http.StatusConflict, "sandbox_unavailable", "%v: thread %d's backend %s is not allowed by the sandbox settings now (%s)",
			sandbox.ErrUnavailable, t.ID, t.Backend, set.Words())
	}
	r, err := w.chooseBackend(ctx, sandbox.Policy{Pin: sandbox.Backend(t.Backend)})
	if err != nil {
		return nil, "", err
	}
	// The folder itself, not a link put in its place; canonical, as a
	// guest's workspace must be.
	if fi, err := os.Lstat(t.WorkDir()); err != nil || !fi.IsDir() {
		return nil, "", fail(http.StatusConflict, "work_folder_invalid", "thread %d's work folder %s is not a folder (a link, or missing): nothing runs", t.ID, t.WorkDir())
	}
	ws, err := filepath.EvalSymlinks(t.WorkDir())
	if err != nil {
		return nil, "", fail(http.StatusConflict, "work_folder_invalid", "thread %d's work folder: %v", t.ID, err)
	}
	return r, ws, nil
}

// sandboxTools is the toolbox of a run of sandboxed thread t: its
// built-in tools and the plugins the model wrote, each call in a fresh
// guest on the thread's backend, which must be usable now. Each call is
// audited: sandbox.call, or plugin.model_authored.call.
func (w *Workspace) sandboxTools(ctx context.Context, t threads.Thread) (threads.Toolbox, error) {
	r, ws, err := w.sandboxRunner(ctx, t)
	if err != nil {
		return nil, err
	}
	_, node := w.sandboxRunners(ctx)
	return sandboxed.New(sandboxed.Options{Runner: r, Workspace: ws, Copy: t.WorkspaceCopy, Helper: w.opts.SandboxHelper,
		HelperArgs: w.opts.SandboxHelperArgs, Node: node, Limits: w.sandboxLimits, Thread: t.ID, Log: w.log,
		Record: func(ctx context.Context, c sandboxed.Call) error {
			action, detail := "sandbox.call", map[string]string{"tool": c.Tool, "backend": string(c.Backend), "outcome": c.Outcome}
			if c.ModelAuthored {
				action, detail["plugin"] = "plugin.model_authored.call", c.Plugin
			}
			actor := c.Caller
			if actor == "" {
				actor = threadTarget(t.ID)
			}
			_, err := w.audit.Append(audit.Event{Actor: actor, Action: action, Target: threadTarget(t.ID), Detail: detail})
			return err
		}}), nil
}
