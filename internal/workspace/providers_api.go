package workspace

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/providers"
)

// providerRoutes are the model providers' routes: anyone signed in lists
// them (never a key); only the owner, in a browser, changes one or has its
// models listed, since each decides where a key is sent.
func (w *Workspace) providerRoutes(mux *http.ServeMux) {
	mux.Handle("GET /api/providers", w.api(anyone, w.listProviders))
	mux.Handle("POST /api/providers", w.api(approval, w.saveProvider))
	mux.Handle("PUT /api/providers/{id}", w.api(approval, w.saveProvider))
	mux.Handle("DELETE /api/providers/{id}", w.api(approval, w.deleteProvider))
	mux.Handle("POST /api/providers/{id}/models", w.api(approval, w.discoverModels))
}

func (w *Workspace) listProviders(r *http.Request, _ *auth.Caller) (any, error) {
	return w.providers.List(r.Context())
}

// saveProvider creates (POST) or replaces (PUT) a provider. api_key absent
// keeps the saved key while the base URL stays; a string sets it; "" or
// null clears it.
func (w *Workspace) saveProvider(r *http.Request, c *auth.Caller) (any, error) {
	var req struct {
		Name         string           `json:"name"`
		BaseURL      string           `json:"base_url"`
		WireAPI      string           `json:"wire_api"` // absent: chat-completions
		Stream       *bool            `json:"stream"`   // absent: true
		DefaultModel string           `json:"default_model"`
		APIKey       *json.RawMessage `json:"api_key"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	p := providers.Provider{Name: req.Name, BaseURL: req.BaseURL, WireAPI: req.WireAPI, Stream: req.Stream == nil || *req.Stream, DefaultModel: req.DefaultModel}
	if r.Method == http.MethodPut {
		id, err := pathID(r)
		if err != nil {
			return nil, err
		}
		p.ID = id
	}
	var key providers.Key
	if req.APIKey != nil {
		key.Set = true
		if string(*req.APIKey) != "null" {
			if err := json.Unmarshal(*req.APIKey, &key.Value); err != nil {
				return nil, fail(http.StatusBadRequest, "bad_request", "api_key: a string, or null to clear it")
			}
		}
	}
	saved, err := w.providers.Save(r.Context(), c.Actor(), p, key)
	if err != nil {
		return nil, providerError(err)
	}
	// The endpoint is asked whether it answers; one that does not is saved
	// all the same, with a warning.
	return savedProvider{saved, w.reachWarning(r.Context(), saved)}, nil
}

// savedProvider is a provider as saved, and a warning when its endpoint
// did not answer.
type savedProvider struct {
	providers.Provider
	Warning string `json:"warning,omitempty"`
}

func (w *Workspace) deleteProvider(r *http.Request, c *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	return map[string]bool{"deleted": true}, providerError(w.providers.Delete(r.Context(), c.Actor(), id))
}

func (w *Workspace) discoverModels(r *http.Request, c *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	p, err := w.providers.Discover(r.Context(), c.Actor(), id)
	if err != nil && !errors.Is(err, providers.ErrNotFound) {
		return nil, fail(http.StatusBadGateway, "provider_failed", "%v", err)
	}
	return p, providerError(err)
}

// providerError is err as the API answers it.
func providerError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, providers.ErrInvalid):
		return fail(http.StatusBadRequest, "invalid_provider", "%v", err)
	case errors.Is(err, providers.ErrTaken):
		return fail(http.StatusConflict, "name_taken", "%v", err)
	case errors.Is(err, providers.ErrNotFound):
		return fail(http.StatusNotFound, "not_found", "%v", err)
	}
	return err
}
