package workspace

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/registry"
)

func (w *Workspace) registryPageRoutes(mux *http.ServeMux) {
	mux.Handle("GET /registry", w.page(anyone, w.explorePage))
	mux.Handle("GET /registry/servers/{name}/versions/{version}", w.page(anyone, w.registryEntryPage))
	mux.Handle("POST /registry/drafts", w.page(approval, w.registryDraftPage))
}

// exploreData is the Explore page's.
type exploreData struct {
	Registry, Search, Problem, Fetched, Next string
	Stale, AllVersions                       bool
	Entries                                  []exploreRow
}

// exploreRow is one entry as the Explore page lists it.
type exploreRow struct {
	registryShown
	Shown, Initial, Link string
}

func rowOf(s registryShown) exploreRow {
	row := exploreRow{registryShown: s, Shown: s.Title, Initial: "?", Link: entryPagePath(s.Name, s.Version)}
	if row.Shown == "" {
		row.Shown = s.Name
	}
	if c, _ := utf8.DecodeRuneInString(strings.TrimPrefix(s.Name[strings.LastIndexByte(s.Name, '/')+1:], "-")); c != utf8.RuneError {
		row.Initial = string(unicode.ToUpper(c))
	}
	return row
}

// entryPagePath is the page of one version of an entry.
func entryPagePath(name, version string) string {
	return "/registry/servers/" + url.PathEscape(name) + "/versions/" + url.PathEscape(version)
}

func (w *Workspace) explorePage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	q := r.URL.Query()
	d := exploreData{Registry: w.registry.url, Search: q.Get("search"), AllVersions: q.Get("versions") == "all"}
	list, err := w.listPage(r.Context(), d.Search, q.Get("cursor"), d.AllVersions)
	status := http.StatusOK
	var ae *apiError
	switch {
	case errors.As(err, &ae) && ae.Status != http.StatusInternalServerError:
		d.Problem, status = ae.Message, ae.Status
	case err != nil:
		return err
	default:
		d.Fetched, d.Stale = list.FetchedAt.UTC().Format("2006-01-02 15:04 UTC"), list.Stale != ""
		if list.Stale != "" {
			d.Problem = list.Stale
		}
		for _, s := range list.Servers {
			d.Entries = append(d.Entries, rowOf(s))
		}
		if list.NextCursor != "" {
			next := url.Values{"search": {d.Search}, "cursor": {list.NextCursor}}
			if d.AllVersions {
				next.Set("versions", "all")
			}
			d.Next = "/registry?" + next.Encode()
		}
	}
	return w.render(rw, r, c, status, "registry", "Explore the MCP Registry", d)
}

// entryData is an entry's page's.
type entryData struct {
	registryDetail
	Shown, Initial, PostInstall, Problem string
	Options                              []entryOption
}

// entryOption is one package or remote as the entry's page shows it, with
// the fields of its form.
type entryOption struct {
	registryOption
	ID, Label, Field string
	Inputs           []entryInput
}

// entryInput is one declared input as a form field.
type entryInput struct {
	registry.Declared
	ID, Field string
}

func (w *Workspace) registryEntryPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	return w.showEntry(rw, r, c, http.StatusOK, r.PathValue("name"), r.PathValue("version"), "")
}

// showEntry renders the page of one version of an entry, with problem
// when a draft of it was refused.
func (w *Workspace) showEntry(rw http.ResponseWriter, r *http.Request, c *auth.Caller, status int, name, version, problem string) error {
	l, err := w.getEntry(r.Context(), name, version)
	if err != nil {
		return err
	}
	det := w.detailOf(r.Context(), l)
	row := rowOf(det.registryShown)
	d := entryData{registryDetail: det, Shown: row.Shown, Initial: row.Initial, Problem: problem}
	if det.Stale != "" && d.Problem == "" {
		d.Problem = "Shown from the cache: " + det.Stale
	}
	var post []string
	if l.Entry.PostInstallInstructions != "" {
		post = append(post, l.Entry.PostInstallInstructions)
	}
	for _, o := range det.Options {
		field := o.Kind
		eo := entryOption{registryOption: o, ID: fmt.Sprintf("%s-%d", o.Kind, o.Index), Field: field,
			Label: fmt.Sprintf("%s %d: %s %s", o.Kind, o.Index+1, o.Type, o.Identifier)}
		for i, in := range o.Inputs {
			if in.Fixed {
				continue
			}
			prefix := "input:"
			if in.Secret {
				prefix = "secret:"
			}
			eo.Inputs = append(eo.Inputs, entryInput{Declared: in, ID: fmt.Sprintf("%s-in-%d", eo.ID, i), Field: prefix + in.Key})
		}
		for _, p := range o.PostInstall {
			if !contains(post, p) {
				post = append(post, p)
			}
		}
		d.Options = append(d.Options, eo)
	}
	d.PostInstall = strings.Join(post, "\n\n")
	return w.render(rw, r, c, status, "registry_entry", d.Shown, d)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// registryDraftPage makes a draft from the form of an entry's page: its
// name, version, package or remote, and input:KEY and secret:KEY fields
// (an empty one is not given).
func (w *Workspace) registryDraftPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	if err := r.ParseForm(); err != nil {
		return fail(http.StatusBadRequest, "bad_request", "the form could not be read: %v", err)
	}
	req := registryDraftRequest{Name: r.PostForm.Get("name"), Version: r.PostForm.Get("version"),
		Inputs: map[string]string{}, Secrets: map[string]string{}}
	for field, into := range map[string]**int{"package": &req.Package, "remote": &req.Remote} {
		if v := r.PostForm.Get(field); v != "" {
			i, err := strconv.Atoi(v)
			if err != nil {
				return fail(http.StatusBadRequest, "bad_request", "%s %q is not an index", field, v)
			}
			*into = &i
		}
	}
	for field, values := range r.PostForm {
		value := strings.Join(values, "")
		if value == "" {
			continue
		}
		if key, ok := strings.CutPrefix(field, "input:"); ok {
			req.Inputs[key] = value
		} else if key, ok := strings.CutPrefix(field, "secret:"); ok {
			req.Secrets[key] = value
		}
	}
	s, _, err := w.draftFromRegistry(r.Context(), c, req)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status < http.StatusInternalServerError && ae.Code != "entry_deleted" && ae.Code != "not_found" {
		return w.showEntry(rw, r, c, ae.Status, req.Name, req.Version, ae.Message)
	}
	if err != nil {
		return err
	}
	return redirectDone(rw, r, fmt.Sprintf("/servers/%d", s.ID), "registry_draft")
}
