package workspace

import (
	"errors"
	"net/http"

	"github.com/zero-dev/zero/internal/gitsource"
	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/skills"
)

// skillRoutes are the skills' routes: anyone signed in lists the catalog
// and the installed skills; only the owner in a browser previews, adds or
// removes one, since a skill is text an agent follows with the user's
// permissions.
func (w *Workspace) skillRoutes(mux *http.ServeMux) {
	mux.Handle("GET /api/skills/catalog", w.api(anyone, w.skillCatalog))
	mux.Handle("GET /api/skills", w.api(anyone, w.installedSkills))
	mux.Handle("POST /api/skills/preview", w.api(approval, w.previewSkill))
	mux.Handle("POST /api/skills", w.api(approval, w.addSkill))
	mux.Handle("DELETE /api/skills/{name}", w.api(approval, w.removeSkill))
}

func (w *Workspace) skillCatalog(*http.Request, *auth.Caller) (any, error) {
	return skills.Catalog()
}

func (w *Workspace) installedSkills(*http.Request, *auth.Caller) (any, error) {
	return w.skills.Installed()
}

func (w *Workspace) previewSkill(r *http.Request, _ *auth.Caller) (any, error) {
	var req skills.Request
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	p, err := w.skills.Preview(r.Context(), req)
	return p, skillError(err)
}

func (w *Workspace) addSkill(r *http.Request, c *auth.Caller) (any, error) {
	var req struct {
		skills.Request
		Commit  string `json:"commit"`
		SetHash string `json:"set_hash"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	p, err := w.skills.Add(r.Context(), c.Actor(), req.Request, req.Commit, req.SetHash)
	return p, skillError(err)
}

func (w *Workspace) removeSkill(r *http.Request, c *auth.Caller) (any, error) {
	name := r.PathValue("name")
	return map[string]bool{"removed": true}, skillError(w.skills.Remove(c.Actor(), name))
}

// skillError is err as the API answers it.
func skillError(err error) error {
	if ae := sourceError(err, "skill"); ae != nil {
		return ae
	}
	switch {
	case errors.Is(err, skills.ErrInvalid):
		return fail(http.StatusBadRequest, "invalid_skill", "%v", err)
	case errors.Is(err, skills.ErrNotFound):
		return fail(http.StatusNotFound, "not_found", "%v", err)
	case errors.Is(err, skills.ErrExists):
		return fail(http.StatusConflict, "skill_exists", "%v", err)
	case errors.Is(err, skills.ErrChanged):
		return fail(http.StatusConflict, "preview_again", "%v", err)
	}
	return err
}

// sourceError is the API's answer to an error of reading what (a skill,
// a plugin) from its git host, nil for another error.
func sourceError(err error, what string) *apiError {
	switch {
	case errors.Is(err, gitsource.ErrInvalid):
		return fail(http.StatusBadRequest, "invalid_"+what, "%v", err)
	case errors.Is(err, gitsource.ErrSymlink), errors.Is(err, gitsource.ErrSubmodule), errors.Is(err, gitsource.ErrLimit):
		return fail(http.StatusBadRequest, what+"_refused", "%v", err)
	case errors.Is(err, gitsource.ErrNotFound):
		return fail(http.StatusNotFound, "not_found", "%v", err)
	case errors.Is(err, gitsource.ErrAuth):
		return fail(http.StatusForbidden, "repository_refused", "%v", err)
	case errors.Is(err, gitsource.ErrUnreachable), errors.Is(err, gitsource.ErrHost), errors.Is(err, gitsource.ErrTimeout):
		return fail(http.StatusBadGateway, "host_unreachable", "%v", err)
	case errors.Is(err, gitsource.ErrCorrupt):
		return fail(http.StatusBadGateway, "object_mismatch", "%v", err)
	}
	return nil
}
