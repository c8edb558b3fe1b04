package workspace

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/plugins"
)

// pluginsData is the plugins page's: the installed plugins, and the
// add-from-a-repository form with what was typed.
type pluginsData struct {
	Plugins []plugins.Plugin
	Form    plugins.Request
	Problem string
}

// pluginPreviewData is the preview page's: the preview, and why it is
// shown again (an install refused because the preview no longer held).
type pluginPreviewData struct {
	P        *plugins.Preview
	Manifest string // plugin.json as shown: hidden characters made visible
	Changed  string
}

// pluginData is a plugin's page: the plugin, and, after a refused enable,
// that it changed.
type pluginData struct {
	P        plugins.Plugin
	Conflict string
	Problem  string
}

func (w *Workspace) pluginPageRoutes(mux *http.ServeMux) {
	mux.Handle("GET /plugins", w.page(anyone, w.pluginsPage))
	mux.Handle("POST /plugins/preview", w.page(approval, w.previewPluginPage))
	mux.Handle("POST /plugins/install", w.page(approval, w.installPluginPage))
	mux.Handle("GET /plugins/{id}", w.page(anyone, w.pluginPage))
	mux.Handle("POST /plugins/{id}/enable", w.page(approval, w.enablePluginPage))
	mux.Handle("POST /plugins/{id}/disable", w.page(writer, w.disablePluginPage))
	mux.Handle("POST /plugins/{id}/remove", w.page(approval, w.removePluginPage))
	mux.Handle("POST /plugins/{id}/secrets", w.page(approval, w.setSecretPage))
	mux.Handle("POST /plugins/{id}/secrets/delete", w.page(approval, w.deleteSecretPage))
}

func (w *Workspace) pluginsPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	return w.showPlugins(rw, r, c, http.StatusOK, pluginsData{Form: plugins.Request{Ref: defaultRef}})
}

func (w *Workspace) showPlugins(rw http.ResponseWriter, r *http.Request, c *auth.Caller, status int, d pluginsData) error {
	var err error
	if d.Plugins, err = w.plugins.List(r.Context()); err != nil {
		return err
	}
	return w.render(rw, r, c, status, "plugins", "Plugins", d)
}

func pluginForm(r *http.Request) plugins.Request {
	return plugins.Request{Repo: strings.TrimSpace(r.PostFormValue("repo")), Ref: strings.TrimSpace(r.PostFormValue("ref")),
		Folder: strings.TrimSpace(r.PostFormValue("folder"))}
}

// pluginProblem shows the plugins page again with why, for a refusal the
// API answers below 500, and the form as typed; other errors go up.
func (w *Workspace) pluginProblem(rw http.ResponseWriter, r *http.Request, c *auth.Caller, form plugins.Request, err error) error {
	var ae *apiError
	if errors.As(pluginError(err), &ae) && ae.Status != http.StatusInternalServerError {
		return w.showPlugins(rw, r, c, ae.Status, pluginsData{Form: form, Problem: ae.Message})
	}
	return err
}

func (w *Workspace) showPluginPreview(rw http.ResponseWriter, r *http.Request, c *auth.Caller, status int, p *plugins.Preview, changed string) error {
	title := "Preview: " + p.Name
	if p.Update != nil {
		title = "Update: " + p.Name
	}
	return w.render(rw, r, c, status, "plugin_preview", title, pluginPreviewData{P: p, Manifest: visibleText(p.Manifest), Changed: changed})
}

func (w *Workspace) previewPluginPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	form := pluginForm(r)
	p, err := w.plugins.Preview(r.Context(), form)
	if err != nil {
		return w.pluginProblem(rw, r, c, form, err)
	}
	return w.showPluginPreview(rw, r, c, http.StatusOK, p, "")
}

func (w *Workspace) installPluginPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	form := pluginForm(r)
	replace := r.PostFormValue("replace_existing") != ""
	in, err := w.plugins.Install(r.Context(), c.Actor(), form, r.PostFormValue("commit"), r.PostFormValue("permission_hash"),
		r.PostFormValue("set_hash"), replace)
	var changed *plugins.ChangedError
	if errors.As(err, &changed) {
		return w.showPluginPreview(rw, r, c, http.StatusConflict, changed.Preview, changed.Why)
	}
	if err != nil {
		return w.pluginProblem(rw, r, c, form, err)
	}
	done := "plugin_installed"
	if replace {
		done = "plugin_updated"
	}
	return redirectDone(rw, r, "/plugins/"+strconv.FormatInt(in.Plugin.ID, 10), done)
}

func (w *Workspace) pluginPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	p, err := w.plugins.Get(r.Context(), id)
	if err != nil {
		return pluginError(err)
	}
	return w.render(rw, r, c, http.StatusOK, "plugin", p.Name, pluginData{P: p})
}

// pluginAction runs one action on the plugin in the path and returns to
// its page with done; a refusal shows the page as it is now, with why.
func (w *Workspace) pluginAction(rw http.ResponseWriter, r *http.Request, c *auth.Caller, done string, act func(id int64) error) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	err = act(id)
	if err == nil {
		return redirectDone(rw, r, "/plugins/"+strconv.FormatInt(id, 10), done)
	}
	var ae *apiError
	if !errors.As(pluginError(err), &ae) || ae.Status >= http.StatusInternalServerError || ae.Code == "not_found" {
		return pluginError(err)
	}
	p, gerr := w.plugins.Get(r.Context(), id)
	if gerr != nil {
		return pluginError(gerr)
	}
	d := pluginData{P: p, Problem: ae.Message}
	if ae.Code == "approval_required" {
		d.Conflict, d.Problem = ae.Message, ""
	}
	return w.render(rw, r, c, ae.Status, "plugin", p.Name, d)
}

func (w *Workspace) enablePluginPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	return w.pluginAction(rw, r, c, "plugin_enabled", func(id int64) error {
		_, err := w.plugins.Enable(r.Context(), c.Actor(), id, r.PostFormValue("fingerprint"))
		return err
	})
}

func (w *Workspace) disablePluginPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	return w.pluginAction(rw, r, c, "plugin_disabled", func(id int64) error {
		_, err := w.plugins.Disable(r.Context(), c.Actor(), id)
		return err
	})
}

func (w *Workspace) removePluginPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := w.plugins.Remove(r.Context(), c.Actor(), id); err != nil {
		return pluginError(err)
	}
	return redirectDone(rw, r, "/plugins", "plugin_removed")
}

func (w *Workspace) setSecretPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	return w.pluginAction(rw, r, c, "secret_set", func(id int64) error {
		_, err := w.plugins.SetSecret(r.Context(), c.Actor(), id, r.PostFormValue("name"), r.PostFormValue("value"))
		return err
	})
}

func (w *Workspace) deleteSecretPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	return w.pluginAction(rw, r, c, "secret_deleted", func(id int64) error {
		_, err := w.plugins.DeleteSecret(r.Context(), c.Actor(), id, r.PostFormValue("name"))
		return err
	})
}

// prettyJSON is a JSON value indented for reading, as it is when it does
// not parse.
func prettyJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return string(out)
}

// Params are a tool's parameters as the preview shows them.
func (pluginPreviewData) Params(t plugins.Tool) string { return prettyJSON(t.Parameters) }

// Params are a tool's parameters as the plugin's page shows them.
func (pluginData) Params(t plugins.Tool) string { return prettyJSON(t.Parameters) }
