package workspace

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/runtime"
	"github.com/zero-dev/zero/internal/workspace/secrets"
	"github.com/zero-dev/zero/internal/workspace/servers"
	"github.com/zero-dev/zero/internal/workspace/web"
)

// pendingTTL is how long values typed into a form stay usable on the
// pages that carry them (a preview, a form shown again).
const pendingTTL = time.Hour

// notices are the fixed messages a page shows after an action, named by
// the done= query parameter; nothing from the request is shown as such.
var notices = map[string]string{
	"created":          "Saved and approved. It is disabled: enable it when you want your clients to use it.",
	"enabled":          "Approved, saved and enabled.",
	"draft":            "Saved as a draft. The workspace owner has to approve it before it can run.",
	"registry_draft":   "Saved as a disabled draft, derived by Zero from the registry's entry. Review what it runs below, and approve it if you agree.",
	"approved":         "Approved.",
	"updated":          "The changes are approved and saved. The server is untested again if its code-relevant fields changed.",
	"enable":           "Enabled.",
	"disabled":         "Disabled.",
	"tested":           "The test passed: the server started and listed its tools, below.",
	"test_failed":      "The test failed: the server did not start or did not answer. Its error is below.",
	"tools_approved":   "The new tool set is approved: its tools are offered again.",
	"tool_on":          "The tool is switched on.",
	"tool_off":         "The tool is switched off: no caller is offered it.",
	"debug_on":         "The debug log is on: arguments and results of this server's calls are kept, redacted, in memory.",
	"debug_off":        "The debug log is off.",
	"max_calls":        "The most calls at once is saved: calls that start from now on wait for a free one.",
	"deleted":          "Deleted, with its stored secrets.",
	"revoked":          "The token is revoked.",
	"provider_saved":   "The provider is saved.",
	"models_listed":    "The provider's models are listed.",
	"provider_deleted": "The provider is deleted, with its key.",
	"skill_added":      "The skill is added, at the commit you reviewed. It stays there: a newer commit means a new preview.",
	"skill_removed":    "The skill is removed.",
	"allow_revoked":    "The allowance is revoked: the tool's next calls ask first.",
	"plugin_installed": "The plugin is installed, at the commit you reviewed, and not enabled: review it below and enable it when you want its tools offered.",
	"plugin_updated":   "The plugin is updated, at the commit you reviewed. It is disabled until you enable it again: review what changed below.",
	"plugin_enabled":   "Enabled: its tools are offered, with what it was granted.",
	"plugin_disabled":  "Disabled: its tools are offered to no one.",
	"plugin_removed":   "The plugin is removed, with its secrets and its files.",
	"secret_set":       "The secret's value is saved. It is never shown again.",
	"secret_deleted":   "The secret's value is deleted.",
	"sandbox_saved":    "The sandbox settings are saved: threads made from now on, and sandboxed calls decided from now on, follow them.",
	"passkey_renamed":  "The passkey is renamed.",
	"passkey_removed":  "The passkey is removed: it confirms nothing from now on.",
	"passkey_settings": "The setting is saved.",
}

// pageHandler is one page route: it renders or redirects, or returns an
// error that becomes an error page.
type pageHandler func(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error

func (w *Workspace) pageRoutes(mux *http.ServeMux) {
	mux.Handle("GET /static/", web.Static())
	mux.Handle("GET /favicon.ico", web.Icon())
	mux.HandleFunc("GET /{$}", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "/servers", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /signin", w.signin)
	mux.HandleFunc("GET /login", w.login)
	mux.Handle("POST /logout", w.page(anyone, w.logoutPage))

	mux.Handle("GET /servers", w.page(anyone, w.serversPage))
	mux.Handle("GET /servers/new", w.page(writer, w.newServerPage))
	mux.Handle("POST /servers/new", w.page(writer, w.reviewNewServer))
	mux.Handle("POST /servers/create", w.page(writer, w.createServerPage).approvingWith("fingerprint"))
	mux.Handle("GET /servers/import", w.page(approval, w.importPage))
	mux.Handle("POST /servers/import", w.formWithin(w.page(approval, w.importServersPage)))
	mux.Handle("GET /servers/{id}", w.page(anyone, w.serverPage))
	mux.Handle("GET /servers/{id}/edit", w.page(approval, w.editServerPage))
	mux.Handle("POST /servers/{id}/edit", w.page(approval, w.reviewEdit))
	mux.Handle("POST /servers/{id}/update", w.page(approval, w.updateServerPage))
	mux.Handle("POST /servers/{id}/approve", w.page(approval, w.approveServerPage))
	mux.Handle("POST /servers/{id}/enable", w.page(approval, w.enableServerPage))
	mux.Handle("POST /servers/{id}/disable", w.page(writer, w.disableServerPage))
	mux.Handle("POST /servers/{id}/test", w.page(approval, w.testServerPage))
	mux.Handle("POST /servers/{id}/delete", w.page(approval, w.deleteServerPage))
	mux.Handle("POST /servers/{id}/tools/approve", w.page(approval, w.approveToolsPage))
	mux.Handle("POST /servers/{id}/tools/switch", w.page(approval, w.switchPage("tool", w.toolSwitch)))
	mux.Handle("POST /servers/{id}/debug-log", w.page(approval, w.switchPage("debug", w.debugSwitch)))
	mux.Handle("POST /servers/{id}/max-calls", w.page(approval, w.maxCallsPage))

	mux.Handle("GET /tokens", w.page(owner, w.tokensPage))
	mux.Handle("POST /tokens", w.page(approval, w.createTokenPage))
	mux.Handle("POST /tokens/{id}/delete", w.page(approval, w.revokeTokenPage))
	mux.Handle("GET /connect", w.page(owner, w.connectPage))
	mux.Handle("POST /connect/token", w.page(approval, w.connectTokenPage))
	mux.Handle("GET /users", w.page(anyone, w.usersPage))
	mux.Handle("POST /users", w.page(approval, w.addUserPage))
	mux.Handle("GET /audit", w.page(owner, w.auditPage))
	w.providerPageRoutes(mux)
	w.threadPageRoutes(mux)
	w.sandboxPageRoutes(mux)
	w.skillPageRoutes(mux)
	w.pluginPageRoutes(mux)
	w.registryPageRoutes(mux)
}

// page wraps a page route in the same gate as the API (check), for
// browser sessions only, and turns errors into pages that say what to do.
func (w *Workspace) page(need access, h pageHandler) gated {
	return gated{need: need, HandlerFunc: func(rw http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(rw, r.Body, maxBody)
		c, err := w.check(need, r)
		if err == nil && c.Kind != auth.Browser {
			w.refused(r, c, "browser_only")
			err = fail(http.StatusForbidden, "browser_only", "pages are for a person in a browser session; agents and scripts use /api/")
		}
		if err == nil {
			err = h(rw, r, c)
		}
		if err != nil {
			w.errorPage(rw, r, c, err)
		}
	}}
}

// render renders a page for caller c.
func (w *Workspace) render(rw http.ResponseWriter, r *http.Request, c *auth.Caller, status int, name, title string, data any) error {
	done := r.URL.Query().Get("done")
	p := web.Page{Title: title, Team: w.opts.Team, Notice: notices[done], Failed: done == "test_failed", Data: data}
	if c != nil {
		p.User, p.Role, p.CSRF = c.User, string(c.Role), c.CSRF()
		if n, err := w.passkeys.Count(r.Context(), c.UserID); err == nil && n > 0 {
			p.Passkeys = true
		}
	}
	return w.pages.Render(rw, status, name, p)
}

type message struct {
	Heading, Text, Next, Link, LinkText string
}

// errorPage shows an error with what to do next.
func (w *Workspace) errorPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = w.translate(err)
	}
	if ae.Code == "unauthenticated" {
		reason := ""
		if _, cerr := r.Cookie(auth.SessionCookie); cerr == nil {
			reason = "expired"
		}
		if r.Method == http.MethodGet {
			target := "/signin"
			if reason != "" {
				target += "?reason=" + reason
			}
			http.Redirect(rw, r, target, http.StatusSeeOther)
			return
		}
		w.render(rw, r, nil, http.StatusUnauthorized, "signin", "Sign in", signinData{Reason: signinReasons["expired"]})
		return
	}
	m := message{Heading: "That did not work", Text: ae.Message}
	switch ae.Code {
	case "browser_only":
		m.Heading = "This needs a person in a browser"
	case "owner_required":
		m.Heading, m.Next = "Only the owner can do this", "Ask the workspace owner to review and approve it."
	case "read_only":
		m.Heading, m.Next = "Viewers cannot change anything", "Ask the workspace owner for the member role."
	case "csrf", "cross_site":
		m.Heading = "This form is stale or came from another site"
		m.Text = "Nothing was changed. A form has to come from this workspace's own pages, in your current session."
		m.Next = "Go back, reload the page, and try again."
	case "not_found":
		m.Heading = "Not found"
	case "secret_unavailable":
		m.Heading, m.Next = "A stored secret cannot be used", "Edit the server, type its secret values again, and approve."
	case "too_large":
		m.Heading = "Too much data"
	case "internal":
		m.Heading, m.Next = "Something failed on the server", "The log of zero serve says why. Try again, or restart it."
	}
	if err := w.render(rw, r, c, ae.Status, "message", m.Heading, m); err != nil {
		w.log.Error("render error page", "error", err)
	}
}

// signinData is the sign-in page's: why the person is there.
type signinData struct{ Reason string }

var signinReasons = map[string]string{
	"expired":    "Your session has ended (sessions last 12 hours, and end when you sign out). Sign in again.",
	"signed_out": "You are signed out.",
	"link":       "This login link has expired or was already used: each link works once, for 15 minutes.",
}

func (w *Workspace) signin(rw http.ResponseWriter, r *http.Request) {
	w.render(rw, r, nil, http.StatusOK, "signin", "Sign in", signinData{Reason: signinReasons[r.URL.Query().Get("reason")]})
}

// login consumes a one-time link and sets the session cookie. Sign-ins
// and refused links are recorded: a used or expired link as such, with
// whose link it was; an unknown one as a (rate-limited) refusal.
func (w *Workspace) login(rw http.ResponseWriter, r *http.Request) {
	session, user, err := w.auth.Login(r.Context(), r.URL.Query().Get("token"))
	var le *auth.LinkError
	switch {
	case errors.As(err, &le) && le.Reason == "unknown":
		w.refused(r, nil, "unknown_link")
	case errors.As(err, &le):
		w.appendRecord(audit.Event{Actor: "user:" + le.User, Action: "auth.link_" + le.Reason, Target: "user:" + le.User})
	case err != nil:
		w.log.Error("login failed", "error", err)
	}
	if err != nil {
		w.render(rw, r, nil, http.StatusUnauthorized, "signin", "Sign in", signinData{Reason: signinReasons["link"]})
		return
	}
	w.appendRecord(audit.Event{Actor: "user:" + user, Action: "auth.sign_in", Target: "user:" + user})
	http.SetCookie(rw, &http.Cookie{
		Name: auth.SessionCookie, Value: session, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: int(auth.SessionTTL / time.Second),
	})
	http.Redirect(rw, r, "/servers", http.StatusSeeOther)
}

func (w *Workspace) logoutPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	if err := w.signOut(r, c); err != nil {
		return err
	}
	http.SetCookie(rw, &http.Cookie{Name: auth.SessionCookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(rw, r, "/signin?reason=signed_out", http.StatusSeeOther)
	return nil
}

// badge is a labelled state on a server.
type badge struct{ Text, Class string }

// serverView is a server as the pages show it.
type serverView struct {
	servers.Server
	// PasskeyApprove and PasskeyTools say what the passkey confirms when
	// approvals need one: the approval, and the new tool set's.
	PasskeyApprove, PasskeyTools string
	Shown                        shownConfig
	Initial                      string
	Badges                       []badge
	Warnings                     []servers.Warning
	Conflict                     bool
	ToolRows                     []toolRow
	ToolWarnings                 []servers.Warning
	Diffs                        []toolReview // the changed tools, field by field
	NewTools                     []toolReview // the new tools, every field
	Logs                         *logsView    // the owner's only
	CannotRun                    *cannotRun   // nil when it runs
}

// A toolRow is one listed tool and its state: offered, quarantined
// (changed or new) or switched off.
type toolRow struct {
	Name, Description, Hash, State string
	Off                            bool
}

// logsView is a server's logs as its page shows them: each line with its
// hidden characters escaped.
type logsView struct {
	Runs          []runtime.Run
	Crashes       int
	Running       bool
	Stderr, Debug []string
}

func showLines(text string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if text != "" {
			out = append(out, web.Visible(l))
		}
	}
	return out
}

// toolRows lists s's last listing with each tool's state.
func toolRows(s servers.Server) []toolRow {
	var changed []string
	if s.Drift != nil {
		changed = s.Drift.Changed
	}
	rows := []toolRow{}
	for _, t := range s.ListedTools {
		r := toolRow{Name: t.Name, Description: t.Description, Hash: t.Hash, State: "offered", Off: slices.Contains(s.DisabledTools, t.Name)}
		switch {
		case slices.Contains(s.Quarantined, t.Name) && slices.Contains(changed, t.Name):
			r.State = "quarantined: changed"
		case slices.Contains(s.Quarantined, t.Name):
			r.State = "quarantined: new"
		case r.Off:
			r.State = "switched off"
		}
		rows = append(rows, r)
	}
	return rows
}

// shownConfig is a configuration as the pages show it, with the state of
// each declared value: unset, or set and by whom.
type shownConfig struct {
	servers.Config
	values map[string]string // "env NAME" or "header Name" -> its state
}

// Value says whether the variable or header name of kind has a value.
func (c shownConfig) Value(kind, name string) string {
	if v, ok := c.values[kind+" "+name]; ok {
		return v
	}
	return "unset: the server gets none"
}

// showConfig shows cfg with the values stored for it, as seen by viewer,
// and those typed in the form being reviewed.
func showConfig(cfg servers.Config, stored []servers.StoredSecret, typed servers.Secrets, viewer string) shownConfig {
	v := shownConfig{Config: cfg, values: map[string]string{}}
	for _, sec := range stored {
		if sec.SetBy == viewer {
			v.values[sec.Kind+" "+sec.Name] = "set by you"
		} else {
			v.values[sec.Kind+" "+sec.Name] = "set by " + sec.SetBy
		}
	}
	for name := range typed.Env {
		v.values["env "+name] = "set in this form"
	}
	for name := range typed.Headers {
		v.values["header "+name] = "set in this form"
	}
	return v
}

func (w *Workspace) viewOf(s servers.Server) serverView {
	v := serverView{Server: s, Initial: "?"}
	if c, _ := utf8.DecodeRuneInString(s.Config.Name); c != utf8.RuneError {
		v.Initial = string(unicode.ToUpper(c))
	}
	if !s.Approved {
		v.Badges = append(v.Badges, badge{"waiting for approval", "unapproved"})
	}
	if s.Enabled {
		v.Badges = append(v.Badges, badge{"enabled", "enabled"})
	} else {
		v.Badges = append(v.Badges, badge{"disabled", "disabled"})
	}
	switch s.Status {
	case servers.StatusOK:
		v.Badges = append(v.Badges, badge{"tested", "passed"})
	case servers.StatusFailed:
		v.Badges = append(v.Badges, badge{"test failed", "failed"})
	default:
		v.Badges = append(v.Badges, badge{"untested", "untested"})
	}
	if s.Drift != nil {
		v.Badges = append(v.Badges, badge{"tools changed", "failed"})
	}
	return v
}

// Kind is how the list names a server's kind.
func (v serverView) Kind() string {
	if v.Config.Kind == servers.KindStdio {
		return "stdio"
	}
	return strings.ToUpper(v.Config.Kind)
}

func (w *Workspace) serversPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	list, err := w.servers.List(r.Context())
	if err != nil {
		return err
	}
	views := make([]serverView, len(list))
	for i, s := range list {
		views[i] = w.viewOf(s)
	}
	return w.render(rw, r, c, http.StatusOK, "servers", "MCP servers", struct{ Servers []serverView }{views})
}

func (w *Workspace) serverPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	return w.showServer(rw, r, c, http.StatusOK, false)
}

// showServer renders a server's page; conflict explains that an approval
// or enable was refused because the configuration changed.
func (w *Workspace) showServer(rw http.ResponseWriter, r *http.Request, c *auth.Caller, status int, conflict bool) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	s, err := w.servers.Get(r.Context(), id)
	if err != nil {
		return err
	}
	v := w.viewOf(s)
	v.Warnings, v.Conflict = w.servers.ServerWarnings(s, c.Actor()), conflict
	v.Shown = showConfig(s.Config, s.Secrets, servers.Secrets{}, c.Actor())
	v.ToolRows, v.ToolWarnings = toolRows(s), servers.ToolWarnings(s)
	v.Diffs, v.NewTools = toolReviews(s)
	v.CannotRun = w.cannotRunOf(s.Config)
	if w.showsPasskeyWords(r.Context(), c) {
		// What the passkey prompt confirms, in its words (passkeys_api.go).
		v.PasskeyApprove, v.PasskeyTools = approveWords(s.Config.Name, s.Fingerprint), toolSetWords(s.Config.Name, s.ListedToolSetHash)
	}
	if c.Role == auth.Owner {
		l := w.runtime.Logs(id)
		v.Logs = &logsView{Runs: l.Runs, Crashes: l.Crashes, Running: l.Running, Stderr: showLines(l.Stderr), Debug: showLines(l.Debug)}
	}
	return w.render(rw, r, c, status, "server", s.Config.Name, v)
}

// formFields are the add/edit form's fields as text.
type formFields struct {
	Name, Kind, Command, Args, Cwd, Env, URL, Headers string
}

// fieldsOf fills the form from a configuration: names only, never values.
func fieldsOf(c servers.Config) formFields {
	return formFields{Name: c.Name, Kind: c.Kind, Command: c.Command, Args: strings.Join(c.Args, "\n"), Cwd: c.Cwd,
		Env: strings.Join(c.Env, "\n"), URL: c.URL, Headers: strings.Join(c.Headers, "\n")}
}

// formData is the add/edit form page's.
type formData struct {
	ID           int64
	Fields       formFields
	Problems     []string
	Pending      string
	PendingNames []string
	Stored       []string
}

// previewData is the review page's.
type previewData struct {
	ID          int64
	Config      servers.Config
	Shown       shownConfig
	Fingerprint string
	Warnings    []servers.Warning
	Encoded     string
	Pending     string
	SecretNames []string
	Changes     []change
	Base        string // an edit: the fingerprint of the configuration it is reviewed against
	Conflict    bool
	Stale       bool // an edit whose server changed after it was reviewed
	CanApprove  bool
	CannotRun   *cannotRun // nil when it runs; approving it is refused
	// PasskeyWords say what the passkey confirms, when approvals need one.
	PasskeyWords string
}

type change struct{ Field, Before, After string }

func (w *Workspace) newServerPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	return w.render(rw, r, c, http.StatusOK, "form", "Add an MCP server", formData{Fields: formFields{Kind: servers.KindStdio}})
}

// lines splits a textarea's text into its non-empty lines, each exactly as
// typed but for the CR a browser adds before each line break.
func lines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// parseServerForm reads the add/edit form: the configuration (only the
// fields of its kind) and the secret values typed in it.
func parseServerForm(r *http.Request) (servers.Config, servers.Secrets) {
	c := servers.Config{Name: strings.TrimSpace(r.PostFormValue("name")), Kind: r.PostFormValue("kind")}
	typed := servers.Secrets{Env: map[string]string{}, Headers: map[string]string{}}
	if c.Kind == servers.KindStdio {
		c.Command = strings.TrimSpace(r.PostFormValue("command"))
		c.Args = lines(r.PostFormValue("args"))
		c.Cwd = strings.TrimSpace(r.PostFormValue("cwd"))
		for _, l := range lines(r.PostFormValue("env")) {
			name, value, hasValue := strings.Cut(l, "=")
			name = strings.TrimSpace(name)
			c.Env = append(c.Env, name)
			if hasValue {
				typed.Env[name] = value
			}
		}
	} else {
		c.URL = strings.TrimSpace(r.PostFormValue("url"))
		for _, l := range lines(r.PostFormValue("headers")) {
			name, value, hasValue := strings.Cut(l, ":")
			name = strings.TrimSpace(name)
			c.Headers = append(c.Headers, name)
			if hasValue {
				typed.Headers[name] = strings.TrimLeft(value, " \t")
			}
		}
	}
	return c, typed
}

// pending opens the secret values an earlier page sealed for this user.
func (w *Workspace) pending(r *http.Request, c *auth.Caller) (servers.Secrets, error) {
	s := servers.Secrets{Env: map[string]string{}, Headers: map[string]string{}}
	field := r.PostFormValue("pending")
	if field == "" {
		return s, nil
	}
	plain, err := w.box.OpenPending(c.UserID, time.Now(), field)
	if errors.Is(err, secrets.ErrPendingExpired) {
		return s, fail(http.StatusBadRequest, "bad_request", "the secret values typed into this form were kept for an hour, and that hour has passed; start again")
	}
	if err != nil {
		return s, fail(http.StatusBadRequest, "bad_request", "the secret values carried by this form do not open for you; start again")
	}
	if err := json.Unmarshal(plain, &s); err != nil {
		return s, err
	}
	if s.Env == nil {
		s.Env = map[string]string{}
	}
	if s.Headers == nil {
		s.Headers = map[string]string{}
	}
	return s, nil
}

func secretNames(s servers.Secrets) []string {
	var names []string
	for name := range s.Env {
		names = append(names, name)
	}
	for name := range s.Headers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func (w *Workspace) sealPending(c *auth.Caller, s servers.Secrets) string {
	if len(s.Env)+len(s.Headers) == 0 {
		return ""
	}
	plain, _ := json.Marshal(s)
	return w.box.SealPending(c.UserID, time.Now().Add(pendingTTL), plain)
}

func encodeConfig(c servers.Config) string {
	data, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(data)
}

func decodeConfig(field string) (servers.Config, error) {
	var c servers.Config
	data, err := base64.RawURLEncoding.DecodeString(field)
	if err == nil {
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		err = dec.Decode(&c)
	}
	if err != nil {
		return c, fail(http.StatusBadRequest, "bad_request", "this form's configuration is damaged; start again")
	}
	return c, nil
}

// reviewForm handles a posted add/edit form: back to the form when the
// person asked to change something or the configuration is invalid, else
// the review page.
func (w *Workspace) reviewForm(rw http.ResponseWriter, r *http.Request, c *auth.Caller, id int64, before *servers.Server) error {
	earlier, err := w.pending(r, c)
	if err != nil {
		return err
	}
	var cfg servers.Config
	typed := servers.Secrets{}
	back, split := r.PostFormValue("back") != "", r.PostFormValue("split") != ""
	if back || split {
		if cfg, err = decodeConfig(r.PostFormValue("config")); err != nil {
			return err
		}
		if split {
			cfg = splitCommand(cfg)
		}
	} else {
		cfg, typed = parseServerForm(r)
	}
	sec := servers.MergeSecrets(cfg, earlier, typed)
	form := formData{ID: id, Fields: fieldsOf(cfg), Pending: w.sealPending(c, sec), PendingNames: secretNames(sec)}
	if before != nil {
		form.Stored = append(slices.Clone(before.EnvSecrets), before.HeaderSecrets...)
	}
	if back {
		return w.render(rw, r, c, http.StatusOK, "form", "Change "+cfg.Name, form)
	}
	p, err := w.servers.Preview(r.Context(), id, cfg, sec)
	if problems, status, ok := formProblems(err); ok {
		form.Problems = problems
		return w.render(rw, r, c, status, "form", "Fix "+cfg.Name, form)
	}
	if err != nil {
		return err
	}
	return w.render(rw, r, c, http.StatusOK, "preview", "Review "+p.Config.Name, w.previewOf(r.Context(), c, id, p, sec, before, false))
}

// formProblems turns what is wrong with a typed configuration into the
// problems its form shows again, with the status to answer.
func formProblems(err error) ([]string, int, bool) {
	var inv *servers.InvalidError
	var taken *servers.NameTakenError
	switch {
	case errors.As(err, &inv):
		return inv.Problems, http.StatusBadRequest, true
	case errors.As(err, &taken):
		return []string{taken.Error()}, http.StatusConflict, true
	}
	return nil, 0, false
}

func (w *Workspace) previewOf(ctx context.Context, c *auth.Caller, id int64, p servers.Preview, sec servers.Secrets, before *servers.Server, conflict bool) previewData {
	d := previewData{ID: id, Config: p.Config, Fingerprint: p.Fingerprint, Warnings: p.Warnings, Encoded: encodeConfig(p.Config),
		Pending: w.sealPending(c, sec), SecretNames: secretNames(sec), Conflict: conflict, CanApprove: c.Role == auth.Owner,
		CannotRun: w.cannotRunOf(p.Config)}
	var stored []servers.StoredSecret
	if before != nil {
		d.Changes = changes(before.Config, p.Config)
		d.Base = before.Fingerprint
		stored = before.Secrets
	}
	d.Shown = showConfig(p.Config, stored, sec, c.Actor())
	if w.showsPasskeyWords(ctx, c) {
		d.PasskeyWords = newServerWords(p.Fingerprint)
		if before != nil {
			d.PasskeyWords = approveWords(before.Config.Name, p.Fingerprint)
		}
	}
	return d
}

// changes lists the fields that differ between two configurations, shown
// with their hidden characters escaped.
func changes(a, b servers.Config) []change {
	var out []change
	add := func(field, before, after string) {
		if before != after {
			out = append(out, change{field, before, after})
		}
	}
	add("name", a.Name, b.Name)
	add("kind", a.Kind, b.Kind)
	cmd := func(c servers.Config) string {
		if c.Command == "" {
			return ""
		}
		return web.CommandLine(c.Command, c.Args)
	}
	add("command line", cmd(a), cmd(b))
	add("working directory", web.Visible(a.Cwd), web.Visible(b.Cwd))
	add("environment variables", strings.Join(a.Env, " "), strings.Join(b.Env, " "))
	add("URL", web.Visible(a.URL), web.Visible(b.URL))
	add("headers", strings.Join(a.Headers, " "), strings.Join(b.Headers, " "))
	return out
}

func (w *Workspace) reviewNewServer(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	return w.reviewForm(rw, r, c, 0, nil)
}

// createServerPage saves a reviewed new server: approved (and maybe
// enabled) when the owner sends its fingerprint, else a draft.
func (w *Workspace) createServerPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	cfg, err := decodeConfig(r.PostFormValue("config"))
	if err != nil {
		return err
	}
	sec, err := w.pending(r, c)
	if err != nil {
		return err
	}
	fingerprint, enable := r.PostFormValue("fingerprint"), r.PostFormValue("enable") != ""
	if fingerprint != "" {
		if err := w.authorizeRecorded(r, approval, c); err != nil {
			return err
		}
	}
	s, err := w.servers.Create(r.Context(), c.Actor(), cfg, sec, fingerprint, enable)
	var ar *servers.ApprovalRequired
	var cannot *servers.NotRunnableError
	switch {
	case errors.As(err, &ar):
		return w.render(rw, r, c, http.StatusConflict, "preview", "Review "+cfg.Name, w.previewOf(r.Context(), c, 0, ar.Preview, sec, nil, true))
	case errors.As(err, &cannot):
		return w.render(rw, r, c, http.StatusConflict, "preview", "Review "+cfg.Name, w.previewOf(r.Context(), c, 0, cannot.Preview, sec, nil, false))
	}
	if problems, status, ok := formProblems(err); ok {
		form := formData{Fields: fieldsOf(cfg), Problems: problems, Pending: w.sealPending(c, sec), PendingNames: secretNames(sec)}
		return w.render(rw, r, c, status, "form", "Fix "+cfg.Name, form)
	}
	if err != nil {
		return err
	}
	done := "draft"
	switch {
	case s.Enabled:
		done = "enabled"
	case s.Approved:
		done = "created"
	}
	return redirectDone(rw, r, "/servers/"+strconv.FormatInt(s.ID, 10), done)
}

func redirectDone(rw http.ResponseWriter, r *http.Request, path, done string) error {
	http.Redirect(rw, r, path+"?done="+url.QueryEscape(done), http.StatusSeeOther)
	return nil
}

func (w *Workspace) editServerPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	s, err := w.servers.Get(r.Context(), id)
	if err != nil {
		return err
	}
	form := formData{ID: id, Fields: fieldsOf(s.Config), Stored: append(slices.Clone(s.EnvSecrets), s.HeaderSecrets...)}
	return w.render(rw, r, c, http.StatusOK, "form", "Edit "+s.Config.Name, form)
}

func (w *Workspace) reviewEdit(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	s, err := w.servers.Get(r.Context(), id)
	if err != nil {
		return err
	}
	return w.reviewForm(rw, r, c, id, &s)
}

func (w *Workspace) updateServerPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	before, err := w.servers.Get(r.Context(), id)
	if err != nil {
		return err
	}
	cfg, err := decodeConfig(r.PostFormValue("config"))
	if err != nil {
		return err
	}
	sec, err := w.pending(r, c)
	if err != nil {
		return err
	}
	_, err = w.servers.Update(r.Context(), c.Actor(), id, cfg, sec, r.PostFormValue("fingerprint"), r.PostFormValue("base"))
	var ar *servers.ApprovalRequired
	var stale *servers.StaleError
	var cannot *servers.NotRunnableError
	switch {
	case errors.As(err, &ar):
		return w.render(rw, r, c, http.StatusConflict, "preview", "Review "+cfg.Name, w.previewOf(r.Context(), c, id, ar.Preview, sec, &before, true))
	case errors.As(err, &cannot):
		return w.render(rw, r, c, http.StatusConflict, "preview", "Review "+cfg.Name, w.previewOf(r.Context(), c, id, cannot.Preview, sec, &before, false))
	case errors.As(err, &stale):
		d := w.previewOf(r.Context(), c, id, stale.Preview, sec, &stale.Current, false)
		d.Stale = true
		return w.render(rw, r, c, http.StatusConflict, "preview", "Review "+cfg.Name, d)
	}
	if problems, status, ok := formProblems(err); ok {
		form := formData{ID: id, Fields: fieldsOf(cfg), Problems: problems, Pending: w.sealPending(c, sec), PendingNames: secretNames(sec),
			Stored: append(slices.Clone(before.EnvSecrets), before.HeaderSecrets...)}
		return w.render(rw, r, c, status, "form", "Fix "+cfg.Name, form)
	}
	if err != nil {
		return err
	}
	return redirectDone(rw, r, "/servers/"+strconv.FormatInt(id, 10), "updated")
}

// serverAction runs one action on the server in the path and returns to
// its page; a refused approval shows the page as it is now, explained.
func (w *Workspace) serverAction(rw http.ResponseWriter, r *http.Request, c *auth.Caller, done *string, act func(id int64) error) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	err = act(id)
	var ar *servers.ApprovalRequired
	var tar *servers.ToolsApprovalRequired
	var cannot *servers.NotRunnableError
	switch {
	case errors.As(err, &ar) || errors.As(err, &tar):
		return w.showServer(rw, r, c, http.StatusConflict, true)
	case errors.As(err, &cannot): // the page says why it cannot run
		return w.showServer(rw, r, c, http.StatusConflict, false)
	}
	if err != nil {
		return err
	}
	return redirectDone(rw, r, "/servers/"+strconv.FormatInt(id, 10), *done)
}

func (w *Workspace) approveServerPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	enable := r.PostFormValue("enable") != ""
	done := "approved"
	if enable {
		done = "enabled"
	}
	return w.serverAction(rw, r, c, &done, func(id int64) error {
		_, err := w.servers.Approve(r.Context(), c.Actor(), id, r.PostFormValue("fingerprint"), enable)
		return err
	})
}

func (w *Workspace) enableServerPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	done := "enable"
	return w.serverAction(rw, r, c, &done, func(id int64) error {
		_, err := w.servers.Enable(r.Context(), c.Actor(), id, r.PostFormValue("fingerprint"))
		return err
	})
}

func (w *Workspace) disableServerPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	done := "disabled"
	return w.serverAction(rw, r, c, &done, func(id int64) error {
		_, err := w.servers.Disable(r.Context(), c.Actor(), id)
		return err
	})
}

func (w *Workspace) testServerPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	done := "tested"
	return w.serverAction(rw, r, c, &done, func(id int64) error {
		s, err := w.servers.Test(r.Context(), c.Actor(), id)
		if s.Status == servers.StatusFailed {
			done = "test_failed"
		}
		return err
	})
}

func (w *Workspace) approveToolsPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	done := "tools_approved"
	return w.serverAction(rw, r, c, &done, func(id int64) error {
		_, err := w.servers.ApproveTools(r.Context(), c.Actor(), id, r.PostFormValue("tool_set_hash"))
		return err
	})
}

// switchPage is a page route for an on/off switch of a server: the form's
// on field ("1" or "0") goes to set, and the notice is notice+"_on" or
// notice+"_off".
func (w *Workspace) switchPage(notice string, set func(r *http.Request, c *auth.Caller, id int64, on bool) (servers.Server, error)) pageHandler {
	return func(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
		on := r.PostFormValue("on") == "1"
		done := notice + "_off"
		if on {
			done = notice + "_on"
		}
		return w.serverAction(rw, r, c, &done, func(id int64) error {
			_, err := set(r, c, id, on)
			return err
		})
	}
}

func (w *Workspace) toolSwitch(r *http.Request, c *auth.Caller, id int64, on bool) (servers.Server, error) {
	return w.servers.SetToolEnabled(r.Context(), c.Actor(), id, r.PostFormValue("tool"), on)
}

func (w *Workspace) debugSwitch(r *http.Request, c *auth.Caller, id int64, on bool) (servers.Server, error) {
	return w.servers.SetDebugLog(r.Context(), c.Actor(), id, on)
}

func (w *Workspace) maxCallsPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	n, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue("max_calls")))
	if err != nil {
		return fmt.Errorf("%w: %q", servers.ErrMaxCalls, r.PostFormValue("max_calls"))
	}
	done := "max_calls"
	return w.serverAction(rw, r, c, &done, func(id int64) error {
		_, err := w.servers.SetMaxCalls(r.Context(), c.Actor(), id, n)
		return err
	})
}

func (w *Workspace) deleteServerPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := w.servers.Delete(r.Context(), c.Actor(), id); err != nil {
		return err
	}
	return redirectDone(rw, r, "/servers", "deleted")
}

// tokensData is the tokens page's.
type tokensData struct {
	Tokens            []tokenRow
	Servers           []serverChoice // for the scope of a new token
	NewName, NewToken string
	Problem           string
}

// A tokenRow is a token as the tokens page lists it: Scope names the
// servers of a scoped token.
type tokenRow struct {
	auth.TokenInfo
	Scope []string
}

// A serverChoice is a server a new token may be limited to.
type serverChoice struct {
	ID   int64
	Name string
}

// serverChoices lists every server by name, for a token's scope.
func (w *Workspace) serverChoices(ctx context.Context) ([]serverChoice, error) {
	list, err := w.servers.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]serverChoice, len(list))
	for i, s := range list {
		out[i] = serverChoice{ID: s.ID, Name: s.Config.Name}
	}
	return out, nil
}

// formScope reads the scope of a token form: scope "all" (the default)
// for every server (nil), or "some" with the checked servers' ids.
func formScope(r *http.Request) ([]int64, error) {
	scope := r.PostFormValue("scope")
	checked := r.PostForm["server"]
	switch scope {
	case "", "all":
		if len(checked) > 0 {
			return nil, fail(http.StatusBadRequest, "bad_request",
				"you chose All servers and also checked some servers: choose \"Only the servers checked\" to limit the token to them, or uncheck them")
		}
		return nil, nil
	case "some":
		ids := []int64{}
		for _, v := range checked {
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil || id < 1 {
				return nil, fail(http.StatusBadRequest, "bad_request", "server %q is not a server id", v)
			}
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			return nil, fail(http.StatusBadRequest, "bad_request", "check at least one server to limit the token to, or choose All servers")
		}
		return ids, nil
	}
	return nil, fail(http.StatusBadRequest, "bad_request", "scope %q: want all or some", scope)
}

func (w *Workspace) tokensPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	var d tokensData
	if key := r.URL.Query().Get("shown"); key != "" {
		var ok bool
		if d.NewName, d.NewToken, ok = w.shown.take(c.UserID, key); !ok {
			d.Problem = "A new token is shown once, on the page right after it is created, and this one was shown already. " +
				"If you did not save it, revoke it and create another."
		}
	}
	return w.showTokens(rw, r, c, http.StatusOK, d)
}

func (w *Workspace) showTokens(rw http.ResponseWriter, r *http.Request, c *auth.Caller, status int, d tokensData) error {
	tokens, err := w.auth.Tokens(r.Context())
	if err != nil {
		return err
	}
	if d.Servers, err = w.serverChoices(r.Context()); err != nil {
		return err
	}
	names := map[int64]string{}
	for _, s := range d.Servers {
		names[s.ID] = s.Name
	}
	for _, t := range tokens {
		row := tokenRow{TokenInfo: t}
		for _, id := range t.Servers {
			row.Scope = append(row.Scope, names[id])
		}
		d.Tokens = append(d.Tokens, row)
	}
	return w.render(rw, r, c, status, "tokens", "Tokens", d)
}

// createTokenPage makes a token and redirects to the page that shows it
// once, so that a reload creates nothing.
func (w *Workspace) createTokenPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	key, err := w.newTokenShown(r, c)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
		return w.showTokens(rw, r, c, http.StatusBadRequest, tokensData{Problem: ae.Message})
	}
	if err != nil {
		return err
	}
	http.Redirect(rw, r, "/tokens?shown="+key, http.StatusSeeOther)
	return nil
}

// newTokenShown makes the token a form asks for (its name and scope) and
// keeps it for the one page that shows it: it returns the key naming it,
// never the token, for the redirect to that page.
func (w *Workspace) newTokenShown(r *http.Request, c *auth.Caller) (string, error) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	scope, err := formScope(r)
	if err != nil {
		return "", err
	}
	_, token, err := w.createTokenFor(r.Context(), c, name, scope)
	if err != nil {
		return "", err
	}
	return w.shown.put(c.UserID, name, token), nil
}

// connectData is the "Connect a client" page's: each client's
// configuration for this workspace, and a new token shown once.
type connectData struct {
	Configs           []clientConfig
	URL               string // of the MCP endpoint
	TokenFile         string // where the bridge reads the token
	Program           string // the zero binary the entries run
	Servers           []serverChoice
	NewName, NewToken string
	SaveCommand       string // saves NewToken in TokenFile
	Problem           string
}

// A clientConfig is what one client needs to use the workspace: Text goes
// in File or, with no File, is a command to run.
type clientConfig struct {
	ID, Client, File, Text, Help string
}

// The token files under $ZERO_HOME: the stdio bridge's, which the Connect
// page's command saves (often a token scoped to some servers), and the
// CLI's (zero servers). They are apart so that setting up one never
// replaces the other's token.
const (
	ClientTokenFile = "client-token"
	CLITokenFile    = "cli-token"
)

// tokenFile is where the bridge (zero mcp workspace) reads the bearer
// token with $ZERO_HOME set to the workspace's home.
func (w *Workspace) tokenFile() string { return filepath.Join(w.opts.Home, ClientTokenFile) }

// defaultTokenFile is where the bridge reads the token when a client starts
// it with ZERO_HOME unset: ~/.zero/client-token.
func defaultTokenFile() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".zero", ClientTokenFile)
}

// program is the zero binary the client entries run: this process's own,
// by its absolute path with links resolved, since a client starts it with
// its own PATH, which need not hold zero.
func (w *Workspace) program() string {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "zero"
	}
	return exe
}

// bridgeArgs are the arguments of the stdio bridge, zero mcp workspace, for
// a workspace at addr (host:port) whose token is in tokenFile: a flag only
// where the bridge's default (DefaultAddr, defaultFile) would miss it.
func bridgeArgs(addr, tokenFile, defaultFile string) []string {
	args := []string{"mcp", "workspace"}
	if addr != DefaultAddr {
		args = append(args, "--addr", addr)
	}
	if tokenFile != defaultFile {
		args = append(args, "--token-file", tokenFile)
	}
	return args
}

// clientConfigs writes each client's configuration for the workspace at
// base (http://host:port): the stdio bridge, program with args, and the
// MCP endpoint itself for clients that speak streamable HTTP, with token
// in its header, or a placeholder before a token is made.
func clientConfigs(base, program string, args []string, token string) []clientConfig {
	type stdio struct {
		Type    string   `json:"type,omitempty"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	type remote struct {
		Type    string            `json:"type,omitempty"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	text := func(list string, entry any) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // html/template escapes the page
		enc.SetIndent("", "  ")
		enc.Encode(map[string]map[string]any{list: {"zero": entry}})
		return strings.TrimSuffix(b.String(), "\n")
	}
	bridge := stdio{Command: program, Args: args}
	first := "It carries the new token, shown this once."
	if token == "" {
		token = "<token>"
		first = "Create a token above: this entry then carries it, on the page that shows the token once."
	}
	noHeader := " A client with no way to set a header (such as the MCP Inspector's CLI) uses a stdio entry above instead."
	headers := map[string]string{"Authorization": "Bearer " + token}
	endpoint := base + "/mcp"
	return []clientConfig{
		{ID: "config-claude-desktop", Client: "Claude Desktop", File: "claude_desktop_config.json", Text: text("mcpServers", bridge),
			Help: "Settings, Developer, Edit Config opens the file. Restart Claude Desktop after saving it."},
		{ID: "config-vscode", Client: "VS Code", File: ".vscode/mcp.json", Text: text("servers", stdio{Type: "stdio", Command: program, Args: args}),
			Help: "In a folder you open in VS Code; the command MCP: Open User Configuration opens the file for every folder."},
		{ID: "config-cursor", Client: "Cursor", File: "~/.cursor/mcp.json", Text: text("mcpServers", bridge),
			Help: "Or .cursor/mcp.json in a project, for that project only."},
		{ID: "config-claude-code", Client: "Claude Code", Text: web.CommandLine("claude", append([]string{"mcp", "add", "zero", "--", program}, args...)),
			Help: "Run it in a terminal, in the project; add --scope user after mcp add for every project."},
		{ID: "config-http", Client: "A client that speaks streamable HTTP (Cursor, and others)", Text: text("mcpServers", remote{URL: endpoint, Headers: headers}),
			Help: first + " The client keeps it in its own configuration file." + noHeader},
		{ID: "config-vscode-http", Client: "VS Code, over streamable HTTP", File: ".vscode/mcp.json", Text: text("servers", remote{Type: "http", URL: endpoint, Headers: headers}),
			Help: first + " VS Code keeps it in this file." + noHeader},
	}
}

func (w *Workspace) connectPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	var d connectData
	if key := r.URL.Query().Get("shown"); key != "" {
		var ok bool
		if d.NewName, d.NewToken, ok = w.shown.take(c.UserID, key); !ok {
			d.Problem = "A new token is shown once, on the page right after it is created, and this one was shown already. " +
				"If you did not save it, revoke it on the Tokens page and create another."
		}
	}
	return w.showConnect(rw, r, c, http.StatusOK, d)
}

func (w *Workspace) showConnect(rw http.ResponseWriter, r *http.Request, c *auth.Caller, status int, d connectData) error {
	var err error
	if d.Servers, err = w.serverChoices(r.Context()); err != nil {
		return err
	}
	d.TokenFile, d.URL, d.Program = w.tokenFile(), w.listenURL+"/mcp", w.program()
	d.Configs = clientConfigs(w.listenURL, d.Program, bridgeArgs(strings.TrimPrefix(w.listenURL, "http://"), d.TokenFile, defaultTokenFile()), d.NewToken)
	if d.NewToken != "" {
		d.SaveCommand = "umask 077; " + web.CommandLine("printf", []string{`%s\n`, d.NewToken}) + " > " + web.CommandLine(d.TokenFile, nil)
	}
	return w.render(rw, r, c, status, "connect", "Connect a client", d)
}

// connectTokenPage makes a token for a client and redirects to the page
// that shows it once, with the command that saves it.
func (w *Workspace) connectTokenPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	key, err := w.newTokenShown(r, c)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
		return w.showConnect(rw, r, c, http.StatusBadRequest, connectData{Problem: ae.Message})
	}
	if err != nil {
		return err
	}
	http.Redirect(rw, r, "/connect?shown="+key, http.StatusSeeOther)
	return nil
}

// importData is the import page's: the drafts an import saved, the
// entries it refused and why, its notes, and the text as sent, kept in the
// box when anything was refused.
type importData struct {
	Created  []importedDraft
	Notes    []servers.ImportMessage
	Problems []servers.ImportMessage
	Text     string
}

func (w *Workspace) importPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	return w.render(rw, r, c, http.StatusOK, "import", "Import servers", importData{})
}

// importServersPage saves the servers of the pasted configuration that can
// be saved as drafts and lists them, with the entries refused and why. The
// pasted text, which can hold secret values, is shown again only in this
// answer to the person who sent it, in the box, when something was
// refused; it is never stored.
func (w *Workspace) importServersPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	text := r.PostFormValue("json")
	res, err := w.importDrafts(r.Context(), c, []byte(text))
	var refused *servers.ImportError
	if errors.As(err, &refused) {
		return w.render(rw, r, c, http.StatusBadRequest, "import", "Import servers", importData{Notes: res.Notes, Problems: refused.Problems, Text: text})
	}
	if err != nil {
		return err
	}
	d := importData{Created: res.Created, Notes: res.Notes, Problems: res.Problems}
	if len(d.Problems) > 0 {
		d.Text = text
	}
	return w.render(rw, r, c, http.StatusOK, "import", "Imported servers", d)
}

// formWithin answers 413 for a form over maxBody before the gate reads it,
// which would find a cut form without its CSRF token.
func (w *Workspace) formWithin(next gated) gated {
	return gated{need: next.need, approvingField: next.approvingField, HandlerFunc: func(rw http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(rw, r.Body, maxBody)
		var mbe *http.MaxBytesError
		if err := r.ParseForm(); errors.As(err, &mbe) {
			w.errorPage(rw, r, nil, fail(http.StatusRequestEntityTooLarge, "too_large",
				"the form is over %d bytes (1 MiB): import fewer servers at a time", maxBody))
			return
		}
		next.ServeHTTP(rw, r)
	}}
}

func (w *Workspace) revokeTokenPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := w.revokeToken(r.Context(), c, id); err != nil {
		return err
	}
	return redirectDone(rw, r, "/tokens", "revoked")
}

// usersData is the users page's.
type usersData struct {
	Users            []user
	NewName, NewLink string
	Problem          string
}

func (w *Workspace) usersPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	var d usersData
	if key := r.URL.Query().Get("shown"); key != "" {
		var ok bool
		if d.NewName, d.NewLink, ok = w.shown.take(c.UserID, key); !ok {
			d.Problem = "A new user's login link is shown once, on the page right after the user is added, and this one was shown already."
		}
	}
	return w.showUsers(rw, r, c, http.StatusOK, d)
}

func (w *Workspace) showUsers(rw http.ResponseWriter, r *http.Request, c *auth.Caller, status int, d usersData) error {
	var err error
	if d.Users, err = w.users(r.Context()); err != nil {
		return err
	}
	return w.render(rw, r, c, status, "users", "Users", d)
}

// addUserPage adds a user and redirects to the page that shows their login
// link once, so that a reload adds nothing.
func (w *Workspace) addUserPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	name := strings.TrimSpace(r.PostFormValue("name"))
	_, link, err := w.addUser(r.Context(), c, name, auth.Role(r.PostFormValue("role")))
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
		return w.showUsers(rw, r, c, http.StatusBadRequest, usersData{Problem: ae.Message})
	}
	if err != nil {
		return err
	}
	http.Redirect(rw, r, "/users?shown="+w.shown.put(c.UserID, name, link), http.StatusSeeOther)
	return nil
}
