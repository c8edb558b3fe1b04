package workspace

import (
	"errors"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/skills"
	"github.com/zero-dev/zero/internal/workspace/web"
)

// skillsData is the skills page's: the installed skills, the catalog and
// the add-from-a-repository form, with what was typed; where the skills
// are, and the command that serves them.
type skillsData struct {
	Installed []skills.Provenance
	Catalog   []skills.Entry
	Form      skills.Request
	Problem   string
	Dir       string // $ZERO_HOME/skills, as it is
	Serve     string // the command line of zero mcp skills on Dir
}

// defaultRef is the add form's branch until something else is typed.
const defaultRef = "main"

// skillPreviewData is the preview page's.
type skillPreviewData struct {
	P *skills.Preview
	// SkillMD is SKILL.md as shown: its lines kept, hidden characters
	// made visible.
	SkillMD string
}

func (w *Workspace) skillPageRoutes(mux *http.ServeMux) {
	mux.Handle("GET /skills", w.page(anyone, w.skillsPage))
	mux.Handle("POST /skills/preview", w.page(approval, w.previewSkillPage))
	mux.Handle("POST /skills/add", w.page(approval, w.addSkillPage))
	mux.Handle("POST /skills/{name}/remove", w.page(approval, w.removeSkillPage))
}

func (w *Workspace) skillsPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	return w.showSkills(rw, r, c, http.StatusOK, skillsData{Form: skills.Request{Ref: defaultRef}})
}

func (w *Workspace) showSkills(rw http.ResponseWriter, r *http.Request, c *auth.Caller, status int, d skillsData) error {
	var err error
	if d.Installed, err = w.skills.Installed(); err != nil {
		return err
	}
	if d.Catalog, err = skills.Catalog(); err != nil {
		return err
	}
	d.Dir = filepath.Join(w.opts.Home, skillsDir)
	d.Serve = web.CommandLine("zero", []string{"mcp", "skills", "--workspace", d.Dir})
	return w.render(rw, r, c, status, "skills", "Skills", d)
}

// skillForm reads the request a form names: a catalog entry, or a
// repository, ref and folder.
func skillForm(r *http.Request) skills.Request {
	return skills.Request{CatalogID: r.PostFormValue("catalog_id"), Repo: strings.TrimSpace(r.PostFormValue("repo")),
		Ref: strings.TrimSpace(r.PostFormValue("ref")), Folder: strings.TrimSpace(r.PostFormValue("folder"))}
}

// skillProblem shows the skills page again, with why, for a refusal, and
// the add form as it was typed; after a catalog entry's preview or a
// removal, which were not that form, the form as it starts. Other errors
// go up.
func (w *Workspace) skillProblem(rw http.ResponseWriter, r *http.Request, c *auth.Caller, form skills.Request, err error) error {
	if form.CatalogID != "" || form == (skills.Request{}) {
		form = skills.Request{Ref: defaultRef}
	}
	var ae *apiError
	if errors.As(skillError(err), &ae) && ae.Status != http.StatusInternalServerError {
		return w.showSkills(rw, r, c, ae.Status, skillsData{Form: form, Problem: ae.Message})
	}
	return err
}

func (w *Workspace) previewSkillPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	form := skillForm(r)
	p, err := w.skills.Preview(r.Context(), form)
	if err != nil {
		return w.skillProblem(rw, r, c, form, err)
	}
	return w.render(rw, r, c, http.StatusOK, "skill_preview", "Preview: "+p.Name, skillPreviewData{P: p, SkillMD: visibleText(p.SkillMD)})
}

func (w *Workspace) addSkillPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	form := skillForm(r)
	if _, err := w.skills.Add(r.Context(), c.Actor(), form, r.PostFormValue("commit"), r.PostFormValue("set_hash")); err != nil {
		return w.skillProblem(rw, r, c, form, err)
	}
	return redirectDone(rw, r, "/skills", "skill_added")
}

func (w *Workspace) removeSkillPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	if err := w.skills.Remove(c.Actor(), r.PathValue("name")); err != nil {
		return w.skillProblem(rw, r, c, skills.Request{}, err)
	}
	return redirectDone(rw, r, "/skills", "skill_removed")
}
