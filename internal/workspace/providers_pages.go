package workspace

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/providers"
)

// providersData is the providers page's. Form is the provider being added
// (ID 0) or edited, as typed, but never its key: KeySet says whether one
// is saved, Models what List models found to offer in the model field.
type providersData struct {
	Providers []providers.Provider
	Form      providers.Provider
	Problem   string
	// Warning says a saved provider's endpoint did not answer.
	Warning string
	// Wires are the wire APIs the form offers.
	Wires []wireOption
}

// A wireOption is a wire API as the form names it.
type wireOption struct{ Value, Label string }

var wireOptions = []wireOption{
	{model.WireChat, "OpenAI chat completions (and compatible servers)"},
	{model.WireResponses, "OpenAI Responses"},
	{model.WireAnthropic, "Anthropic Messages"},
}

func (w *Workspace) providerPageRoutes(mux *http.ServeMux) {
	mux.Handle("GET /providers", w.page(owner, w.providersPage))
	mux.Handle("GET /providers/{id}/edit", w.page(owner, w.editProviderPage))
	mux.Handle("POST /providers", w.page(approval, w.saveProviderPage))
	mux.Handle("POST /providers/{id}/models", w.page(approval, w.providerModelsPage))
	mux.Handle("POST /providers/{id}/delete", w.page(approval, w.deleteProviderPage))
}

func (w *Workspace) providersPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	return w.showProviders(rw, r, c, http.StatusOK, providersData{Form: providers.Provider{Stream: true}})
}

// editProviderPage shows the form filled with a provider's settings: never
// its key, only whether one is saved.
func (w *Workspace) editProviderPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	p, err := w.providers.Get(r.Context(), id)
	if err != nil {
		return providerError(err)
	}
	return w.showProviders(rw, r, c, http.StatusOK, providersData{Form: p})
}

func (w *Workspace) showProviders(rw http.ResponseWriter, r *http.Request, c *auth.Caller, status int, d providersData) error {
	var err error
	if d.Providers, err = w.providers.List(r.Context()); err != nil {
		return err
	}
	d.Wires = wireOptions
	title := "Model providers"
	if d.Form.ID != 0 {
		title = "Edit provider " + d.Form.Name
	}
	return w.render(rw, r, c, status, "providers", title, d)
}

// savedForm is the form of provider p as typed, with what is saved of it
// that the form does not carry: whether it has a key, and its models.
func (w *Workspace) savedForm(ctx context.Context, p providers.Provider) providers.Provider {
	if p.ID == 0 {
		return p
	}
	if old, err := w.providers.Get(ctx, p.ID); err == nil {
		p.KeySet, p.KeySetBy, p.Models = old.KeySet, old.KeySetBy, old.Models
	}
	return p
}

// saveProviderPage saves the form: a new provider, or the one its id
// names. A refusal shows the form again with what was typed, but the key;
// a provider saved whose endpoint does not answer is shown with a warning.
func (w *Workspace) saveProviderPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	p := providers.Provider{Name: strings.TrimSpace(r.PostFormValue("name")), BaseURL: r.PostFormValue("base_url"),
		WireAPI: r.PostFormValue("wire_api"), Stream: r.PostFormValue("stream") != "", DefaultModel: strings.TrimSpace(r.PostFormValue("default_model"))}
	if v := r.PostFormValue("id"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id < 1 {
			return fail(http.StatusBadRequest, "bad_request", "no such provider id %q", v)
		}
		p.ID = id
	}
	var key providers.Key
	switch v := r.PostFormValue("api_key"); {
	case r.PostFormValue("clear_key") != "":
		key = providers.Key{Set: true}
	case v != "":
		key = providers.Key{Set: true, Value: v}
	}
	saved, err := w.providers.Save(r.Context(), c.Actor(), p, key)
	if err != nil {
		var ae *apiError
		if errors.As(providerError(err), &ae) && ae.Status < 500 {
			msg := ae.Message
			if errors.Is(err, providers.ErrTaken) && p.ID == 0 {
				msg = "A provider named " + p.Name + " exists: use Edit in its row to change it, or give this one another name."
			}
			return w.showProviders(rw, r, c, ae.Status, providersData{Form: w.savedForm(r.Context(), p), Problem: msg})
		}
		return err
	}
	if warning := w.reachWarning(r.Context(), saved); warning != "" {
		return w.showProviders(rw, r, c, http.StatusOK, providersData{Form: saved, Warning: warning})
	}
	return redirectDone(rw, r, "/providers", "provider_saved")
}

// reachWarning asks a saved provider's endpoint whether it answers, and
// says what to do if it does not: a provider is saved even so, since a
// local server is often started after it is set up.
func (w *Workspace) reachWarning(ctx context.Context, p providers.Provider) string {
	err := w.providers.Reach(ctx, p)
	if err == nil {
		return ""
	}
	return "Saved, but " + err.Error() + ". Until it answers, threads on " + p.Name + " fail."
}

// providerModelsPage lists the endpoint's models and shows the provider's
// form, where its model field offers them.
func (w *Workspace) providerModelsPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if _, err := w.providers.Discover(r.Context(), c.Actor(), id); err != nil {
		if errors.Is(err, providers.ErrNotFound) {
			return providerError(err)
		}
		p, _ := w.providers.Get(r.Context(), id)
		return w.showProviders(rw, r, c, http.StatusBadGateway, providersData{Form: p, Problem: err.Error()})
	}
	return redirectDone(rw, r, "/providers/"+strconv.FormatInt(id, 10)+"/edit", "models_listed")
}

func (w *Workspace) deleteProviderPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := providerError(w.providers.Delete(r.Context(), c.Actor(), id)); err != nil {
		return err
	}
	return redirectDone(rw, r, "/providers", "provider_deleted")
}
