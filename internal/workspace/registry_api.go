package workspace

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/registry"
	"github.com/zero-dev/zero/internal/workspace/servers"
	"github.com/zero-dev/zero/internal/workspace/web"
)

// DefaultRegistryURL is the registry servers are added from when
// ZERO_REGISTRY_URL names none: the official MCP Registry.
const DefaultRegistryURL = registry.DefaultURL

// Bounds of the registry's routes.
const (
	registryPageSize = 30               // entries a page lists
	registryWait     = 10 * time.Second // the most a page waits on the registry
	bundleWait       = 5 * time.Minute  // the most an mcpb bundle's download takes
)

// CheckRegistryURL refuses a registry URL that is not https (or http to
// a loopback address), or that carries credentials, a query or a
// fragment.
func CheckRegistryURL(raw string) error {
	u, err := netguard.Options{Schemes: netguard.HTTPSOrLoopbackHTTP}.CheckURL(raw)
	if err != nil {
		return err
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return fmt.Errorf("%q: want https://HOST[/PATH], without a query or fragment", raw)
	}
	return nil
}

// registrySource is the registry the workspace reads, through its cache.
type registrySource struct {
	url   string
	store *registry.Store
	// Pages shown from the cache are refreshed behind, one refresh of a
	// query at a time, until the workspace closes.
	ctx     context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	running map[string]bool
}

func (w *Workspace) openRegistry() {
	u := w.opts.RegistryURL
	if u == "" {
		u = DefaultRegistryURL
	}
	client := &registry.Client{BaseURL: u, Log: w.log, HTTP: netguard.NewClient(netguard.Options{
		Schemes: netguard.HTTPSOrLoopbackHTTP, TLS: w.opts.TLS.Clone(), Resolver: w.opts.Resolver, Timeout: registryWait})}
	ctx, stop := context.WithCancel(context.Background())
	w.registry = &registrySource{url: u, ctx: ctx, stop: stop, running: map[string]bool{},
		store: registry.NewStore(registry.StoreOptions{DB: w.db, Client: client, Icons: registry.NewIcons(w.servers.IconClient()), Log: w.log})}
}

// close stops the refreshes and waits for them.
func (rs *registrySource) close() {
	rs.stop()
	rs.wg.Wait()
}

// refresh asks the registry for q's page again, behind the page that
// showed the cached one, unless a refresh of q is under way.
func (rs *registrySource) refresh(q registry.Query) {
	key := q.Search + "\x00" + q.Cursor
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.running[key] || rs.ctx.Err() != nil {
		return
	}
	rs.running[key] = true
	rs.wg.Add(1)
	go func() {
		defer rs.wg.Done()
		ctx, cancel := context.WithTimeout(rs.ctx, 2*registryWait)
		defer cancel()
		rs.store.List(ctx, q) // a failure leaves the cache as it was
		rs.mu.Lock()
		delete(rs.running, key)
		rs.mu.Unlock()
	}()
}

// registryRoutes are the registry's routes: anyone signed in explores it;
// only the owner in a browser makes a draft of an entry, as every other
// way of adding a server that the owner approves.
func (w *Workspace) registryRoutes(mux *http.ServeMux) {
	mux.Handle("GET /api/registry/servers", w.api(anyone, w.listRegistry))
	mux.Handle("GET /api/registry/servers/{name}/versions/{version}", w.api(anyone, w.registryEntry))
	mux.Handle("POST /api/registry/drafts", w.api(approval, w.registryDraft))
}

// registryListing is one page of the registry as the API answers it.
type registryListing struct {
	Registry   string          `json:"registry"`
	Servers    []registryShown `json:"servers"`
	NextCursor string          `json:"next_cursor,omitempty"`
	FetchedAt  time.Time       `json:"fetched_at"`
	// Stale, when set, says why the registry could not be asked: the
	// page is the cached one of FetchedAt.
	Stale string `json:"stale,omitempty"`
}

// registryShown is an entry as a listing shows it: never its raw bytes,
// never an icon's remote URL.
type registryShown struct {
	Name          string   `json:"name"`
	Version       string   `json:"version"`
	Title         string   `json:"title,omitempty"`
	Description   string   `json:"description"`
	Status        string   `json:"status"`
	StatusMessage string   `json:"status_message,omitempty"`
	IsLatest      bool     `json:"is_latest"`
	Transports    []string `json:"transports"`
	Icon          string   `json:"icon,omitempty"` // a data: URL the server made
	SHA256        string   `json:"sha256"`
}

func shownEntry(l registry.Listed) registryShown {
	e := l.Entry
	s := registryShown{Name: e.Name, Version: e.Version, Title: e.Title, Description: e.Description, Status: l.Status,
		StatusMessage: l.StatusMessage, IsLatest: l.IsLatest, Icon: l.Icon, SHA256: l.SHA256, Transports: []string{}}
	if s.Status == "" {
		s.Status = "active"
	}
	for _, p := range e.Packages {
		s.Transports = appendNew(s.Transports, p.RegistryType)
	}
	for _, r := range e.Remotes {
		s.Transports = appendNew(s.Transports, r.Type)
	}
	return s
}

func appendNew(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// cacheCursor starts the cursor of a page of the cache's own search,
// which a listing gives when the registry cannot be reached.
const cacheCursor = "cache:"

// refreshAfter is the age of a cached page that a listing refreshes
// behind.
const refreshAfter = 5 * time.Minute

// listPage is one page of the registry, each server's latest version or
// (allVersions, only on request) every version: the cached one when there is one
// (refreshed behind when older than refreshAfter), else the registry's,
// else, when it cannot be reached, the cache's own search, saying why.
// Icons are the server's data: URLs.
func (w *Workspace) listPage(ctx context.Context, search, cursor string, allVersions bool) (registryListing, error) {
	rs := w.registry
	q := registry.Query{Search: search, Cursor: cursor, Limit: registryPageSize, AllVersions: allVersions}
	if rest, ok := strings.CutPrefix(cursor, cacheCursor); ok {
		page, err := rs.store.Search(ctx, search, rest, registryPageSize)
		if err != nil {
			return registryListing{}, err
		}
		page.Stale = errors.New("the registry could not be reached: this is a search of the entries cached")
		return w.listingOf(page, true), nil
	}
	page, err := rs.store.CachedPage(ctx, q)
	if err == nil {
		if time.Since(page.FetchedAt) > refreshAfter {
			rs.refresh(q)
		}
		return w.listingOf(page, false), nil
	}
	page, err = rs.store.List(ctx, q)
	if err != nil && (errors.Is(err, registry.ErrUnreachable) || errors.Is(err, registry.ErrAnswer)) {
		cached, serr := rs.store.Search(ctx, search, "", registryPageSize)
		if serr == nil && len(cached.Entries) > 0 {
			cached.Stale = err
			return w.listingOf(cached, true), nil
		}
	}
	if err != nil {
		return registryListing{}, registryError(err)
	}
	return w.listingOf(page, false), nil
}

// listingOf is page as the API answers it; fromSearch: a page of the
// cache's search, whose next cursor is the cache's.
func (w *Workspace) listingOf(page registry.Page, fromSearch bool) registryListing {
	out := registryListing{Registry: w.registry.url, NextCursor: page.NextCursor, FetchedAt: page.FetchedAt, Servers: []registryShown{}}
	if fromSearch && out.NextCursor != "" {
		out.NextCursor = cacheCursor + out.NextCursor
	}
	if page.Stale != nil {
		out.Stale = page.Stale.Error()
	}
	for _, l := range page.Entries {
		out.Servers = append(out.Servers, shownEntry(l))
	}
	return out
}

func (w *Workspace) listRegistry(r *http.Request, _ *auth.Caller) (any, error) {
	q := r.URL.Query()
	return w.listPage(r.Context(), q.Get("search"), q.Get("cursor"), q.Get("versions") == "all")
}

// getEntry reads one exact version of an entry from the registry (its
// cached copy, saying why, when the registry cannot be reached), its icon
// fetched by the server.
func (w *Workspace) getEntry(ctx context.Context, name, version string) (registry.Listed, error) {
	if msg := registry.VersionProblem(version); msg != "" {
		return registry.Listed{}, fail(http.StatusBadRequest, "unpinned_version",
			"version %q of %s: %s; Zero adds an exact version only; nothing was saved", version, name, msg)
	}
	l, err := w.registry.store.Get(ctx, name, version)
	if err != nil {
		return registry.Listed{}, registryError(err)
	}
	return l, nil
}

// registryError is err as the API answers it.
func registryError(err error) error {
	switch {
	case errors.Is(err, registry.ErrDeleted):
		return fail(http.StatusGone, "entry_deleted", "%v: the registry has deleted it, and Zero does not add it", err)
	case errors.Is(err, registry.ErrNotFound):
		return fail(http.StatusNotFound, "not_found", "%v", err)
	case errors.Is(err, registry.ErrEntry):
		return fail(http.StatusBadGateway, "invalid_entry", "%v", err)
	case errors.Is(err, registry.ErrUnreachable), errors.Is(err, registry.ErrAnswer):
		return fail(http.StatusBadGateway, "registry_unreachable", "%v (the registry is ZERO_REGISTRY_URL, or the official one)", err)
	}
	var ae *apiError
	if errors.As(err, &ae) {
		return err
	}
	return err
}

// entryPath is the API path of one version of an entry.
func entryPath(name, version string) string {
	return "/api/registry/servers/" + url.PathEscape(name) + "/versions/" + url.PathEscape(version)
}

// registryOption is one package or remote of an entry, and what Zero
// would run for it: derived by Zero from the entry, with each input a
// person has not given shown as <KEY>.
type registryOption struct {
	Kind        string              `json:"kind"` // package or remote
	Index       int                 `json:"index"`
	Type        string              `json:"type"` // npm, pypi, nuget, oci, mcpb; streamable-http or sse
	Identifier  string              `json:"identifier,omitempty"`
	Config      *servers.Config     `json:"config,omitempty"`
	CommandLine string              `json:"command_line,omitempty"`
	Inputs      []registry.Declared `json:"inputs"`
	Problem     string              `json:"problem,omitempty"`
	ProblemCode string              `json:"problem_code,omitempty"`
	PostInstall []string            `json:"post_install_instructions,omitempty"`
	RuntimeHint string              `json:"runtime_hint,omitempty"`
	// BundlePending says why an mcpb bundle's command is not shown yet:
	// its manifest decides it, and the bundle is fetched only for a draft.
	BundlePending string `json:"bundle_pending,omitempty"`
}

// registryDetail is one version of an entry as its route answers it.
type registryDetail struct {
	registryShown
	WebsiteURL string           `json:"website_url,omitempty"`
	Repository string           `json:"repository,omitempty"`
	Options    []registryOption `json:"options"`
	Stale      string           `json:"stale,omitempty"`
	Registry   string           `json:"registry"`
}

func (w *Workspace) registryEntry(r *http.Request, _ *auth.Caller) (any, error) {
	l, err := w.getEntry(r.Context(), r.PathValue("name"), r.PathValue("version"))
	if err != nil {
		return nil, err
	}
	return w.detailOf(r.Context(), l), nil
}

// detailOf derives what Zero would run for each package and remote of l,
// fetching nothing.
func (w *Workspace) detailOf(ctx context.Context, l registry.Listed) registryDetail {
	e := l.Entry
	d := registryDetail{registryShown: shownEntry(l), WebsiteURL: e.WebsiteURL, Registry: w.registry.url, Options: []registryOption{}}
	if e.Repository != nil {
		d.Repository = e.Repository.URL
	}
	if l.Stale != nil {
		d.Stale = l.Stale.Error()
	}
	for i, p := range e.Packages {
		o := registryOption{Kind: "package", Index: i, Type: p.RegistryType, Identifier: p.Identifier, RuntimeHint: p.RuntimeHint}
		w.deriveShown(ctx, l, registry.Choice{Package: &i}, &o)
		d.Options = append(d.Options, o)
	}
	for i, rm := range e.Remotes {
		o := registryOption{Kind: "remote", Index: i, Type: rm.Type, Identifier: rm.URL}
		w.deriveShown(ctx, l, registry.Choice{Remote: &i}, &o)
		d.Options = append(d.Options, o)
	}
	return d
}

// deriveShown derives o's configuration as Zero would, each required input
// without a default given as <KEY>, and notes why it cannot be derived.
func (w *Workspace) deriveShown(ctx context.Context, l registry.Listed, c registry.Choice, o *registryOption) {
	o.Inputs = []registry.Declared{}
	inputs, err := registry.DeclaredInputs(l.Entry, c)
	if err == nil {
		o.Inputs = inputs
		c.Inputs, c.Secrets = map[string]string{}, map[string]string{}
		for _, in := range inputs {
			if in.Fixed || !in.Required || in.Default != "" {
				continue
			}
			if in.Secret {
				c.Secrets[in.Key] = "<" + in.Key + ">"
			} else {
				c.Inputs[in.Key] = "<" + in.Key + ">"
			}
		}
		opts := w.deriveOptions()
		opts.NoDownload = true
		var d registry.Draft
		if d, err = registry.Derive(ctx, l, c, opts); err == nil {
			o.PostInstall = d.PostInstallInstructions
			if d.BundlePending {
				o.BundlePending = "Zero runs a bundle as its manifest.json says, within what Zero allows: node or python3 on a file in the bundle, " +
					"or a program of the bundle's own. Saving a draft fetches the bundle, checks its SHA-256 against the entry's and unpacks it; " +
					"the draft's review then shows the exact command, and nothing runs until you approve it."
				return
			}
			o.Config = &d.Config
			if d.Config.Kind == servers.KindStdio {
				o.CommandLine = web.CommandLine(d.Config.Command, d.Config.Args)
			}
			return
		}
	}
	o.Problem = err.Error()
	var de *registry.DeriveError
	if errors.As(err, &de) {
		o.ProblemCode = de.Code
	}
}

// deriveOptions are what a derivation needs of the workspace.
func (w *Workspace) deriveOptions() registry.DeriveOptions {
	hc := *w.servers.IconClient()
	hc.Timeout = bundleWait
	return registry.DeriveOptions{RegistryURL: w.registry.url, Policy: servers.Policy{LocalOrigins: w.opts.AllowedLocalOrigins},
		Runtimes: w.opts.RegistryRuntimes, HTTP: &hc, Home: w.opts.Home}
}

// registryDraftRequest is the body of POST /api/registry/drafts: which
// entry, which of its packages or remotes, and the values of its declared
// inputs; never a configuration.
type registryDraftRequest struct {
	Name       string            `json:"name"`
	Version    string            `json:"version"`
	Package    *int              `json:"package,omitempty"`
	Remote     *int              `json:"remote,omitempty"`
	Digest     string            `json:"digest,omitempty"`
	ServerName string            `json:"server_name,omitempty"`
	Inputs     map[string]string `json:"inputs,omitempty"`
	Secrets    map[string]string `json:"secrets,omitempty"`
}

func (w *Workspace) registryDraft(r *http.Request, c *auth.Caller) (any, error) {
	var req registryDraftRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	s, post, err := w.draftFromRegistry(r.Context(), c, req)
	if err != nil {
		return nil, err
	}
	return map[string]any{"server": s, "approve_url": w.approveURL(s.ID), "post_install_instructions": post}, nil
}

// draftFromRegistry saves the draft Zero derives from one exact version of
// an entry, as fetched from the registry now, through the same path as
// POST /api/servers: an unapproved, disabled draft. Anything refused saves
// nothing.
func (w *Workspace) draftFromRegistry(ctx context.Context, c *auth.Caller, req registryDraftRequest) (servers.Server, []string, error) {
	l, err := w.getEntry(ctx, req.Name, req.Version)
	if err != nil {
		return servers.Server{}, nil, err
	}
	if l.Stale != nil {
		return servers.Server{}, nil, fail(http.StatusBadGateway, "registry_unreachable",
			"%v: a draft is made from the entry as the registry serves it now, to know it is not deleted", l.Stale)
	}
	d, err := registry.Derive(ctx, l, registry.Choice{Name: req.ServerName, Package: req.Package, Remote: req.Remote,
		Digest: req.Digest, Inputs: req.Inputs, Secrets: req.Secrets}, w.deriveOptions())
	if err != nil {
		return servers.Server{}, nil, deriveError(err)
	}
	s, err := w.servers.Create(ctx, c.Actor(), d.Config, d.Secrets, "", false)
	if err != nil {
		return servers.Server{}, nil, err
	}
	detail := map[string]string{"registry": w.registry.url, "name": l.Entry.Name, "version": l.Entry.Version, "entry_sha256": l.SHA256}
	if req.Package != nil {
		detail["package"] = strconv.Itoa(*req.Package)
	} else {
		detail["remote"] = strconv.Itoa(*req.Remote)
	}
	if _, err := w.audit.Append(audit.Event{Actor: c.Actor(), Action: "server.from_registry", Target: fmt.Sprintf("server:%d", s.ID),
		Fingerprint: s.Fingerprint, Detail: detail}); err != nil {
		return servers.Server{}, nil, err
	}
	return s, d.PostInstallInstructions, nil
}

// deriveError is a refused derivation as the API answers it.
func deriveError(err error) error {
	var de *registry.DeriveError
	if errors.As(err, &de) {
		e := fail(http.StatusBadRequest, de.Code, "%s; nothing was saved", de.Msg)
		if len(de.Names) > 0 {
			e.Details = map[string]string{"names": strings.Join(de.Names, ",")}
		}
		return e
	}
	return registryError(err)
}
