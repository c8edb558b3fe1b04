package workspace

import (
	"errors"
	"net/http"

	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/plugins"
)

// pluginRoutes are the plugins' routes: anyone signed in lists them; only
// the owner in a browser previews, installs, updates, enables or removes
// one, or sets its secrets, since a plugin is code that runs with what it
// is granted. Disabling, as for servers, never needs an approval.
func (w *Workspace) pluginRoutes(mux *http.ServeMux) {
	mux.Handle("GET /api/plugins", w.api(anyone, w.listPlugins))
	mux.Handle("GET /api/plugins/{id}", w.api(anyone, w.getPlugin))
	mux.Handle("POST /api/plugins/preview", w.api(approval, w.previewPlugin))
	mux.Handle("POST /api/plugins", w.api(approval, w.installPlugin))
	mux.Handle("POST /api/plugins/{id}/enable", w.api(approval, w.enablePlugin))
	mux.Handle("POST /api/plugins/{id}/disable", w.api(writer, w.disablePlugin))
	mux.Handle("DELETE /api/plugins/{id}", w.api(approval, w.removePlugin))
	mux.Handle("PUT /api/plugins/{id}/secrets/{name}", w.api(approval, w.setPluginSecret))
	mux.Handle("DELETE /api/plugins/{id}/secrets/{name}", w.api(approval, w.deletePluginSecret))
}

func (w *Workspace) listPlugins(r *http.Request, _ *auth.Caller) (any, error) {
	return w.plugins.List(r.Context())
}

func (w *Workspace) getPlugin(r *http.Request, _ *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	p, err := w.plugins.Get(r.Context(), id)
	return p, pluginError(err)
}

func (w *Workspace) previewPlugin(r *http.Request, _ *auth.Caller) (any, error) {
	var req plugins.Request
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	p, err := w.plugins.Preview(r.Context(), req)
	return p, pluginError(err)
}

// installRequest is the body of an install: the preview's request, and
// what it showed, echoed.
type installRequest struct {
	plugins.Request
	Commit          string `json:"commit"`
	PermissionHash  string `json:"permission_hash"`
	SetHash         string `json:"set_hash"`
	ReplaceExisting bool   `json:"replace_existing"`
}

func (w *Workspace) installPlugin(r *http.Request, c *auth.Caller) (any, error) {
	var req installRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	in, err := w.plugins.Install(r.Context(), c.Actor(), req.Request, req.Commit, req.PermissionHash, req.SetHash, req.ReplaceExisting)
	return in, pluginError(err)
}

func (w *Workspace) enablePlugin(r *http.Request, c *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	var req struct {
		Fingerprint string `json:"fingerprint"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	p, err := w.plugins.Enable(r.Context(), c.Actor(), id, req.Fingerprint)
	return p, pluginError(err)
}

func (w *Workspace) disablePlugin(r *http.Request, c *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	p, err := w.plugins.Disable(r.Context(), c.Actor(), id)
	return p, pluginError(err)
}

func (w *Workspace) removePlugin(r *http.Request, c *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	return map[string]bool{"removed": true}, pluginError(w.plugins.Remove(r.Context(), c.Actor(), id))
}

func (w *Workspace) setPluginSecret(r *http.Request, c *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	var req struct {
		Value string `json:"value"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	p, err := w.plugins.SetSecret(r.Context(), c.Actor(), id, r.PathValue("name"), req.Value)
	return p, pluginError(err)
}

func (w *Workspace) deletePluginSecret(r *http.Request, c *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	p, err := w.plugins.DeleteSecret(r.Context(), c.Actor(), id, r.PathValue("name"))
	return p, pluginError(err)
}

// pluginError is err as the API answers it: a preview that no longer
// holds and an enable whose fingerprint is stale are 409s that carry the
// fresh preview, or the plugin as it is now, in "plugin".
func pluginError(err error) error {
	if ae := sourceError(err, "plugin"); ae != nil {
		return ae
	}
	var changed *plugins.ChangedError
	var ar *plugins.ApprovalRequired
	switch {
	case err == nil:
		return nil
	case errors.As(err, &changed):
		e := fail(http.StatusConflict, "preview_again", "%v", err)
		e.Plugin = changed.Preview
		return e
	case errors.As(err, &ar):
		e := fail(http.StatusConflict, "approval_required", "%v", err)
		e.Plugin = ar.Plugin
		return e
	case errors.Is(err, plugins.ErrInvalid):
		return fail(http.StatusBadRequest, "invalid_plugin", "%v", err)
	case errors.Is(err, plugins.ErrSecretUnknown):
		return fail(http.StatusBadRequest, "unknown_secret", "%v", err)
	case errors.Is(err, plugins.ErrNotFound):
		return fail(http.StatusNotFound, "not_found", "%v", err)
	case errors.Is(err, plugins.ErrExists):
		return fail(http.StatusConflict, "plugin_exists", "%v", err)
	case errors.Is(err, plugins.ErrChanged):
		return fail(http.StatusConflict, "preview_again", "%v", err)
	case errors.Is(err, plugins.ErrNothingToRun):
		return fail(http.StatusConflict, "nothing_to_run", "%v", err)
	case errors.Is(err, plugins.ErrFilesChanged):
		return fail(http.StatusConflict, "files_changed", "%v", err)
	case errors.Is(err, plugins.ErrNoNode):
		return fail(http.StatusConflict, "not_runnable", "%v", err)
	}
	return err
}
