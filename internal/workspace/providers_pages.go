package workspace

import (
	"errors"
	"net/http"
	"strings"

	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/providers"
)

// providersData is the providers page's. Form holds what was typed, but
// never the key.
type providersData struct {
	Providers []providers.Provider
	Form      providers.Provider
	Problem   string
}

func (w *Workspace) providerPageRoutes(mux *http.ServeMux) {
	mux.Handle("GET /providers", w.page(owner, w.providersPage))
	mux.Handle("POST /providers", w.page(approval, w.saveProviderPage))
	mux.Handle("POST /providers/{id}/models", w.page(approval, w.providerModelsPage))
	mux.Handle("POST /providers/{id}/delete", w.page(approval, w.deleteProviderPage))
}

func (w *Workspace) providersPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	return w.showProviders(rw, r, c, http.StatusOK, providersData{Form: providers.Provider{Stream: true}})
}

func (w *Workspace) showProviders(rw http.ResponseWriter, r *http.Request, c *auth.Caller, status int, d providersData) error {
	var err error
	if d.Providers, err = w.providers.List(r.Context()); err != nil {
		return err
	}
	return w.render(rw, r, c, status, "providers", "Model providers", d)
}

// saveProviderPage saves the form: a new provider, or the one of that
// name. A refusal shows the page again with what was typed, but the key.
func (w *Workspace) saveProviderPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	p := providers.Provider{Name: strings.TrimSpace(r.PostFormValue("name")), BaseURL: r.PostFormValue("base_url"),
		Stream: r.PostFormValue("stream") != "", DefaultModel: strings.TrimSpace(r.PostFormValue("default_model"))}
	all, err := w.providers.List(r.Context())
	if err != nil {
		return err
	}
	for _, old := range all {
		if old.Name == p.Name {
			p.ID = old.ID
		}
	}
	var key providers.Key
	switch v := r.PostFormValue("api_key"); {
	case r.PostFormValue("clear_key") != "":
		key = providers.Key{Set: true}
	case v != "":
		key = providers.Key{Set: true, Value: v}
	}
	if _, err := w.providers.Save(r.Context(), c.Actor(), p, key); err != nil {
		var ae *apiError
		if errors.As(providerError(err), &ae) && ae.Status < 500 {
			return w.showProviders(rw, r, c, ae.Status, providersData{Form: p, Problem: ae.Message})
		}
		return err
	}
	return redirectDone(rw, r, "/providers", "provider_saved")
}

func (w *Workspace) providerModelsPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if _, err := w.providers.Discover(r.Context(), c.Actor(), id); err != nil {
		if errors.Is(err, providers.ErrNotFound) {
			return providerError(err)
		}
		return w.showProviders(rw, r, c, http.StatusBadGateway, providersData{Form: providers.Provider{Stream: true}, Problem: err.Error()})
	}
	return redirectDone(rw, r, "/providers", "models_listed")
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
