package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/secrets"
	"github.com/zero-dev/zero/internal/workspace/servers"
)

// maxBody bounds a request body.
const maxBody = 1 << 20

// access is what a route asks of its caller.
type access int

const (
	anyone      access = iota // any signed-in caller, bearer or browser, any role
	writer                    // an owner or a member, bearer or browser
	approval                  // a browser session of the owner: approvals, tests, secrets' fate, tokens
	owner                     // the owner, bearer or browser (reading the audit log)
	browser                   // a browser session, any role (reading the allowances)
	ownPasskeys               // a browser session, any role, changing the caller's own passkeys
)

// An apiError is what the API answers on failure: a status, a stable code
// and a message, and for approval_required the new preview.
type apiError struct {
	Status  int               `json:"-"`
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Preview *servers.Preview  `json:"preview,omitempty"`
	Current *servers.Server   `json:"current,omitempty"` // a stale edit: the server as it is now
	Details map[string]string `json:"details,omitempty"`
	// Problems, for a refused import, lists what is wrong, by entry.
	Problems []servers.ImportMessage `json:"problems,omitempty"`
	// Plugin, for a plugin's refused install or enable, is the fresh
	// preview or the plugin as it is now (plugins_api.go).
	Plugin any `json:"plugin,omitempty"`
}

func (e *apiError) Error() string { return e.Message }

func fail(status int, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// handler is one route: it gets the caller and answers with a value to
// encode as JSON, or an error.
type handler func(r *http.Request, c *auth.Caller) (any, error)

func (w *Workspace) routes() *http.ServeMux {
	mux := http.NewServeMux()
	w.pageRoutes(mux)
	mux.Handle("POST /api/logout", w.api(anyone, w.logout))
	mux.Handle("GET /api/session", w.api(anyone, w.session))

	mux.Handle("GET /api/servers", w.api(anyone, w.listServers))
	mux.Handle("POST /api/servers/preview", w.api(anyone, w.previewServer))
	mux.Handle("POST /api/servers/import", w.api(approval, w.importServers))
	mux.Handle("POST /api/servers", w.api(writer, w.createServer).approvingWith("fingerprint"))
	mux.Handle("GET /api/servers/{id}", w.api(anyone, w.getServer))
	mux.Handle("PUT /api/servers/{id}", w.api(approval, w.updateServer))
	mux.Handle("DELETE /api/servers/{id}", w.api(approval, w.deleteServer))
	mux.Handle("POST /api/servers/{id}/approve", w.api(approval, w.approveServer))
	mux.Handle("POST /api/servers/{id}/enable", w.api(approval, w.enableServer))
	mux.Handle("POST /api/servers/{id}/disable", w.api(writer, w.disableServer))
	mux.Handle("POST /api/servers/{id}/test", w.api(approval, w.testServer))
	mux.Handle("POST /api/servers/{id}/tools/approve", w.api(approval, w.approveTools))
	mux.Handle("POST /api/servers/{id}/tools/{name}/enable", w.api(approval, w.switchTool(true)))
	mux.Handle("POST /api/servers/{id}/tools/{name}/disable", w.api(approval, w.switchTool(false)))
	mux.Handle("POST /api/servers/{id}/debug-log", w.api(approval, w.setDebugLog))
	mux.Handle("POST /api/servers/{id}/max-calls", w.api(approval, w.setMaxCalls))

	mux.Handle("GET /api/tokens", w.api(owner, w.listTokens))
	mux.Handle("POST /api/tokens", w.api(approval, w.createToken))
	mux.Handle("DELETE /api/tokens/{id}", w.api(approval, w.deleteToken))
	mux.Handle("GET /api/users", w.api(anyone, w.listUsers))
	mux.Handle("POST /api/users", w.api(approval, w.createUser))
	mux.Handle("GET /api/audit", w.api(owner, w.listAudit))
	w.providerRoutes(mux)
	w.threadRoutes(mux)
	w.sandboxRoutes(mux)
	w.allowanceRoutes(mux)
	w.skillRoutes(mux)
	w.pluginRoutes(mux)
	w.registryRoutes(mux)
	w.passkeyRoutes(mux)
	w.passkeyPageRoutes(mux)
	mux.Handle("/mcp", w.mcpEndpoint()) // the user's own agents: bearer callers only (endpoint.go)
	mux.Handle("/api/", w.api(anyone, func(*http.Request, *auth.Caller) (any, error) {
		return nil, fail(http.StatusNotFound, "not_found", "no such route")
	}))
	return mux
}

// api wraps a route: it identifies the caller, enforces access, checks a
// browser's unsafe requests for same origin and CSRF, and writes JSON.
func (w *Workspace) api(need access, h handler) gated {
	return gated{need: need, HandlerFunc: func(rw http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(rw, r.Body, maxBody)
		v, err := w.serveAPI(need, h, r)
		if err != nil {
			w.writeError(rw, err)
			return
		}
		writeJSON(rw, statusOf(r), v)
	}}
}

// gated is a route behind check: the access it asks for is known to the
// passkey challenge route (passkeys_api.go), which looks routes up.
type gated struct {
	need access
	http.HandlerFunc
	// approvingField names the field of a writer route's body that makes
	// the request an approval when it is set (its handler then asks
	// authorizeRecorded for approval itself); the challenge route reads it
	// only to know whether to ask for the passkey, never to decide.
	approvingField string
}

// approvingWith marks g as an approval when its body sets field.
func (g gated) approvingWith(field string) gated {
	g.approvingField = field
	return g
}

func statusOf(r *http.Request) int {
	if r.Method == http.MethodPost && (r.URL.Path == "/api/servers" || r.URL.Path == "/api/servers/import" || r.URL.Path == "/api/tokens" || r.URL.Path == "/api/users" || r.URL.Path == "/api/providers" || r.URL.Path == "/api/skills" || r.URL.Path == "/api/plugins" || r.URL.Path == "/api/registry/drafts" || r.URL.Path == "/api/passkeys" ||
		r.URL.Path == "/api/threads" || r.Pattern == "POST /api/threads/{id}/runs" || r.Pattern == "POST /api/threads/{id}/fork" ||
		r.Pattern == "POST /api/threads/{id}/retry" || r.Pattern == "POST /api/threads/{id}/regenerate" || r.Pattern == "POST /api/threads/{id}/edit") {
		return http.StatusCreated
	}
	return http.StatusOK
}

func (w *Workspace) serveAPI(need access, h handler, r *http.Request) (any, error) {
	c, err := w.check(need, r)
	if err != nil {
		return nil, err
	}
	return h(r, c)
}

// check is the one gate of every route, API and page alike: it
// identifies the caller, checks a browser's unsafe request for same origin
// and CSRF, and enforces the route's access. It records every refusal of a
// caller that sent credentials (rate-limited), and a token's first use.
func (w *Workspace) check(need access, r *http.Request) (*auth.Caller, error) {
	c, err := w.auth.Identify(r)
	if err != nil {
		if _, cerr := r.Cookie(auth.SessionCookie); cerr == nil || r.Header.Get("Authorization") != "" {
			w.refused(r, nil, "unauthenticated")
		}
		return nil, fail(http.StatusUnauthorized, "unauthenticated", "%v", err)
	}
	if c.FirstUse {
		w.appendRecord(audit.Event{Actor: c.Actor(), Action: "token.first_use", Target: fmt.Sprintf("token:%d", c.TokenID),
			Detail: map[string]string{"route": r.Pattern}})
	}
	if c.Kind == auth.Browser && r.Method != http.MethodGet && r.Method != http.MethodHead {
		var ae *apiError
		switch err := auth.CheckBrowserWrite(r, c, w.origins); {
		case errors.Is(err, auth.ErrCrossSite):
			ae = fail(http.StatusForbidden, "cross_site", "%v", err)
		case err != nil:
			ae = fail(http.StatusForbidden, "csrf", "%v", err)
		}
		if ae != nil {
			w.refused(r, c, ae.Code)
			return nil, ae
		}
		if err := keepBody(r); err != nil {
			return nil, err
		}
	}
	if err := w.authorizeRecorded(r, need, c); err != nil {
		return nil, err
	}
	return c, nil
}

// authorize checks a caller against a route's access. An approval route
// refuses a bearer caller before anything else, so an agent can never add
// or approve its own tools, whatever its user's role.
func authorize(need access, c *auth.Caller) error {
	switch need {
	case approval, browser, ownPasskeys:
		if c.Kind != auth.Browser {
			return fail(http.StatusForbidden, "browser_only", "this route is for a person in a browser session; an agent or script cannot use it")
		}
		if need == approval && c.Role != auth.Owner {
			return fail(http.StatusForbidden, "owner_required", "only the workspace owner can do this")
		}
	case owner:
		if c.Role != auth.Owner {
			return fail(http.StatusForbidden, "owner_required", "only the workspace owner can do this")
		}
	case writer:
		if c.Role == auth.Viewer {
			return fail(http.StatusForbidden, "read_only", "a viewer cannot change anything")
		}
	}
	return nil
}

// translate maps errors from below to API errors. Unknown errors are 500s
// whose message stays in the server's log, not in the answer.
func (w *Workspace) translate(err error) *apiError {
	var ar *servers.ApprovalRequired
	var tar *servers.ToolsApprovalRequired
	var stale *servers.StaleError
	var cannot *servers.NotRunnableError
	var taken *servers.NameTakenError
	var inv *servers.InvalidError
	var imp *servers.ImportError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ar):
		e := fail(http.StatusConflict, "approval_required", "%v", err)
		e.Preview = &ar.Preview
		return e
	case errors.As(err, &tar):
		e := fail(http.StatusConflict, "approval_required", "%v", err)
		e.Details = map[string]string{"tool_set_hash": tar.Listed}
		return e
	case errors.As(err, &stale):
		e := fail(http.StatusConflict, "approval_required", "%v", err)
		e.Preview, e.Current = &stale.Preview, &stale.Current
		return e
	case errors.As(err, &cannot):
		e := fail(http.StatusConflict, "not_runnable", "%v", err)
		e.Preview = &cannot.Preview
		return e
	case errors.As(err, &taken):
		return fail(http.StatusConflict, "name_taken", "%v", err)
	case errors.As(err, &inv):
		return fail(http.StatusBadRequest, "invalid_config", "%v", err)
	case errors.As(err, &imp):
		e := fail(http.StatusBadRequest, "invalid_import", "nothing was imported: %v", err)
		e.Problems = imp.Problems
		return e
	case errors.Is(err, servers.ErrNotFound), errors.Is(err, servers.ErrNoSuchTool):
		return fail(http.StatusNotFound, "not_found", "%v", err)
	case errors.Is(err, servers.ErrDisabled):
		return fail(http.StatusConflict, "server_disabled", "%v", err)
	case errors.Is(err, servers.ErrMaxCalls):
		return fail(http.StatusBadRequest, "bad_request", "%v", err)
	case errors.Is(err, secrets.ErrOpen):
		return fail(http.StatusConflict, "secret_unavailable",
			"a stored secret was not sealed for this configuration's approved fingerprint; set the secret again and approve")
	case errors.As(err, &mbe):
		return fail(http.StatusRequestEntityTooLarge, "too_large", "the request body is over %d bytes", maxBody)
	}
	w.log.Error("request failed", "error", err)
	return fail(http.StatusInternalServerError, "internal", "the request failed; the server's log says why")
}

// writeError writes err as the API answers it.
func (w *Workspace) writeError(rw http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = w.translate(err)
	}
	writeJSON(rw, ae.Status, map[string]*apiError{"error": ae})
}

func writeJSON(rw http.ResponseWriter, status int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("Cache-Control", "no-store")
	rw.WriteHeader(status)
	enc := json.NewEncoder(rw)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// decode reads a JSON body strictly: unknown fields are errors.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return fail(http.StatusBadRequest, "bad_request", "the request body is not the JSON this route takes: %v", err)
	}
	if dec.More() {
		return fail(http.StatusBadRequest, "bad_request", "unexpected data after the JSON body")
	}
	return nil
}

func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, fail(http.StatusNotFound, "not_found", "no such id %q", r.PathValue("id"))
	}
	return id, nil
}

// inScope reports whether caller c may see and act on server id: a token
// scoped to some servers only those, any other caller every server.
func inScope(c *auth.Caller, id int64) bool {
	return !c.Scoped || slices.Contains(c.Servers, id)
}

// serverID reads a server route's {id}. A server outside the caller's
// scope is not found, exactly as a server that does not exist.
func serverID(r *http.Request, c *auth.Caller) (int64, error) {
	id, err := pathID(r)
	if err != nil {
		return 0, err
	}
	if !inScope(c, id) {
		return 0, fail(http.StatusNotFound, "not_found", "%v", servers.ErrNotFound)
	}
	return id, nil
}

func (w *Workspace) logout(r *http.Request, c *auth.Caller) (any, error) {
	if c.Kind != auth.Browser {
		return nil, fail(http.StatusBadRequest, "bad_request", "only a browser session signs out")
	}
	return map[string]bool{"signed_out": true}, w.signOut(r, c)
}

// signOut ends a browser session and records it.
func (w *Workspace) signOut(r *http.Request, c *auth.Caller) error {
	if err := w.auth.Logout(r.Context(), r); err != nil {
		return err
	}
	return w.record(c, "auth.sign_out", "user:"+c.User, nil)
}

func (w *Workspace) session(_ *http.Request, c *auth.Caller) (any, error) {
	out := map[string]any{"user": c.User, "role": c.Role, "kind": c.Kind, "team": w.opts.Team}
	if c.Kind == auth.Browser {
		out["csrf_token"] = c.CSRF()
	}
	if c.Kind == auth.Bearer {
		// The token's scope, as GET /api/tokens gives it: a scoped token's
		// client can then say that what it lists is a part.
		var scope []int64
		if c.Scoped {
			scope = append([]int64{}, c.Servers...)
		}
		out["scoped"], out["servers"] = c.Scoped, scope
	}
	return out, nil
}

// serverRequest is the body of create, edit and preview.
type serverRequest struct {
	Config      servers.Config  `json:"config"`
	Secrets     servers.Secrets `json:"secrets"`
	Fingerprint string          `json:"fingerprint"`
	Enable      bool            `json:"enable"`
	// ID, in a preview, is the server an edit would replace, so that its
	// own name is not taken.
	ID int64 `json:"id,omitempty"`
	// BaseFingerprint, in an edit, is the fingerprint of the configuration
	// the edit was reviewed against.
	BaseFingerprint string `json:"base_fingerprint,omitempty"`
}

// typed refuses a typed configuration that claims a registry reference:
// Zero sets it only on a configuration it derived from a registry entry.
func (req serverRequest) typed() error {
	if req.Config.Registry != nil {
		return fail(http.StatusBadRequest, "bad_request", "config.registry is set by Zero on a server it derives from the MCP Registry, never in a typed configuration")
	}
	return nil
}

func (w *Workspace) listServers(r *http.Request, c *auth.Caller) (any, error) {
	list, err := w.servers.List(r.Context())
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(list, func(s servers.Server) bool { return !inScope(c, s.ID) }), nil
}

func (w *Workspace) previewServer(r *http.Request, c *auth.Caller) (any, error) {
	var req serverRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if err := req.typed(); err != nil {
		return nil, err
	}
	if req.ID != 0 && !inScope(c, req.ID) {
		return nil, fail(http.StatusNotFound, "not_found", "%v", servers.ErrNotFound)
	}
	return w.servers.Preview(r.Context(), req.ID, req.Config, req.Secrets)
}

func (w *Workspace) createServer(r *http.Request, c *auth.Caller) (any, error) {
	var req serverRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if err := req.typed(); err != nil {
		return nil, err
	}
	if req.Fingerprint != "" {
		// Creating with a fingerprint approves: a person's route.
		if err := w.authorizeRecorded(r, approval, c); err != nil {
			return nil, err
		}
	}
	s, err := w.servers.Create(r.Context(), c.Actor(), req.Config, req.Secrets, req.Fingerprint, req.Enable)
	if err != nil {
		return nil, err
	}
	if !s.Approved {
		return map[string]any{"server": s, "approve_url": w.approveURL(s.ID)}, nil
	}
	return map[string]any{"server": s}, nil
}

// approveURL is where a person approves a server in the browser.
func (w *Workspace) approveURL(id int64) string {
	return fmt.Sprintf("%s/servers/%d", w.base, id)
}

func (w *Workspace) getServer(r *http.Request, c *auth.Caller) (any, error) {
	id, err := serverID(r, c)
	if err != nil {
		return nil, err
	}
	return w.servers.Get(r.Context(), id)
}

func (w *Workspace) updateServer(r *http.Request, c *auth.Caller) (any, error) {
	id, req, err := idAndBody[serverRequest](r, c)
	if err != nil {
		return nil, err
	}
	if err := req.typed(); err != nil {
		return nil, err
	}
	switch {
	case req.Enable:
		return nil, fail(http.StatusBadRequest, "bad_request", "enable a server with POST /api/servers/{id}/enable")
	case req.BaseFingerprint == "":
		return nil, fail(http.StatusBadRequest, "bad_request",
			"an edit needs base_fingerprint: the fingerprint of the configuration it was reviewed against (GET /api/servers/{id})")
	}
	return w.servers.Update(r.Context(), c.Actor(), id, req.Config, req.Secrets, req.Fingerprint, req.BaseFingerprint)
}

// idAndBody reads a server route's {id} (see serverID) and its JSON body.
func idAndBody[T any](r *http.Request, c *auth.Caller) (int64, T, error) {
	var body T
	id, err := serverID(r, c)
	if err == nil {
		err = decode(r, &body)
	}
	return id, body, err
}

// fingerprintRequest is the body of approve and enable.
type fingerprintRequest struct {
	Fingerprint string `json:"fingerprint"`
	Enable      bool   `json:"enable"`
}

func (w *Workspace) approveServer(r *http.Request, c *auth.Caller) (any, error) {
	id, req, err := idAndBody[fingerprintRequest](r, c)
	if err != nil {
		return nil, err
	}
	return w.servers.Approve(r.Context(), c.Actor(), id, req.Fingerprint, req.Enable)
}

func (w *Workspace) enableServer(r *http.Request, c *auth.Caller) (any, error) {
	id, req, err := idAndBody[fingerprintRequest](r, c)
	if err != nil {
		return nil, err
	}
	return w.servers.Enable(r.Context(), c.Actor(), id, req.Fingerprint)
}

func (w *Workspace) disableServer(r *http.Request, c *auth.Caller) (any, error) {
	id, err := serverID(r, c)
	if err != nil {
		return nil, err
	}
	return w.servers.Disable(r.Context(), c.Actor(), id)
}

func (w *Workspace) testServer(r *http.Request, c *auth.Caller) (any, error) {
	id, err := serverID(r, c)
	if err != nil {
		return nil, err
	}
	return w.servers.Test(r.Context(), c.Actor(), id)
}

// approveTools approves a server's tools as last listed: the request
// echoes their tool set hash (listed_tool_set_hash). A stale hash answers
// 409 approval_required with the hash to review in details and the server
// as it is now in current.
func (w *Workspace) approveTools(r *http.Request, c *auth.Caller) (any, error) {
	id, req, err := idAndBody[struct {
		ToolSetHash string `json:"tool_set_hash"`
	}](r, c)
	if err != nil {
		return nil, err
	}
	s, err := w.servers.ApproveTools(r.Context(), c.Actor(), id, req.ToolSetHash)
	var tar *servers.ToolsApprovalRequired
	if errors.As(err, &tar) {
		e := w.translate(err)
		if now, gerr := w.servers.Get(r.Context(), id); gerr == nil {
			e.Current = &now
		}
		return nil, e
	}
	return s, err
}

// switchTool switches one tool of a server on or off.
func (w *Workspace) switchTool(on bool) handler {
	return func(r *http.Request, c *auth.Caller) (any, error) {
		id, err := serverID(r, c)
		if err != nil {
			return nil, err
		}
		return w.servers.SetToolEnabled(r.Context(), c.Actor(), id, r.PathValue("name"), on)
	}
}

func (w *Workspace) setDebugLog(r *http.Request, c *auth.Caller) (any, error) {
	id, req, err := idAndBody[struct {
		Enabled bool `json:"enabled"`
	}](r, c)
	if err != nil {
		return nil, err
	}
	return w.servers.SetDebugLog(r.Context(), c.Actor(), id, req.Enabled)
}

func (w *Workspace) setMaxCalls(r *http.Request, c *auth.Caller) (any, error) {
	id, req, err := idAndBody[struct {
		MaxCalls int `json:"max_calls"`
	}](r, c)
	if err != nil {
		return nil, err
	}
	return w.servers.SetMaxCalls(r.Context(), c.Actor(), id, req.MaxCalls)
}

func (w *Workspace) deleteServer(r *http.Request, c *auth.Caller) (any, error) {
	id, err := serverID(r, c)
	if err != nil {
		return nil, err
	}
	return map[string]bool{"deleted": true}, w.servers.Delete(r.Context(), c.Actor(), id)
}

func (w *Workspace) listTokens(r *http.Request, _ *auth.Caller) (any, error) {
	return w.auth.Tokens(r.Context())
}

func (w *Workspace) createToken(r *http.Request, c *auth.Caller) (any, error) {
	var req struct {
		Name    string  `json:"name"`
		Servers []int64 `json:"servers"` // absent or null: every server
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	id, token, err := w.createTokenFor(r.Context(), c, req.Name, req.Servers)
	if err != nil {
		return nil, err
	}
	note := "this token is shown once; it acts as " + c.User + " for every route but the browser-only ones"
	var scope []int64
	if req.Servers != nil {
		scope = slices.Compact(slices.Sorted(slices.Values(req.Servers)))
		note += ", and sees only the servers it is limited to"
	}
	return map[string]any{"id": id, "name": req.Name, "token": token, "scoped": scope != nil, "servers": scope, "note": note}, nil
}

func (w *Workspace) deleteToken(r *http.Request, c *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	return map[string]bool{"deleted": true}, w.revokeToken(r.Context(), c, id)
}

// createTokenFor makes a bearer token for the caller's user, for every
// server (scope nil) or the servers scope names, and records it.
func (w *Workspace) createTokenFor(ctx context.Context, c *auth.Caller, name string, scope []int64) (int64, string, error) {
	id, token, err := w.auth.CreateToken(ctx, c.UserID, name, scope)
	if err != nil {
		return 0, "", fail(http.StatusBadRequest, "bad_request", "%v", err)
	}
	detail := map[string]string{"name": name}
	if scope != nil {
		ids := make([]string, 0, len(scope))
		for _, sid := range slices.Compact(slices.Sorted(slices.Values(scope))) {
			ids = append(ids, strconv.FormatInt(sid, 10))
		}
		detail["servers"] = strings.Join(ids, ",")
	}
	return id, token, w.record(c, "token.create", fmt.Sprintf("token:%d", id), detail)
}

// revokeToken deletes a token and records it.
func (w *Workspace) revokeToken(ctx context.Context, c *auth.Caller, id int64) error {
	ok, err := w.auth.DeleteToken(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return fail(http.StatusNotFound, "not_found", "no such token")
	}
	w.endpoint.Revoked(id) // its /mcp sessions end now; the token is refused from here on
	return w.record(c, "token.delete", fmt.Sprintf("token:%d", id), nil)
}

// importServers saves each server of a pasted client configuration, the
// request's body, as a draft (see importDrafts).
func (w *Workspace) importServers(r *http.Request, c *auth.Caller) (any, error) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	return w.importDrafts(r.Context(), c, data)
}

// importResult is what an import saved, the entries it refused and why,
// and its notes: what it ignored, guessed or left unset.
type importResult struct {
	Created  []importedDraft         `json:"created"`
	Problems []servers.ImportMessage `json:"problems"`
	Notes    []servers.ImportMessage `json:"notes"`
}

type importedDraft struct {
	Server     servers.Server `json:"server"`
	ApproveURL string         `json:"approve_url"`
}

// importDrafts saves each server of a client configuration (see
// servers.ParseImport) that can be saved as a draft, on its own: unapproved
// and disabled, its values stored as secrets set by the caller. An entry
// refused (by the parser, the policy, or a name taken) is listed in
// Problems with why, and the others are saved all the same. When nothing
// is saved, the error is a *servers.ImportError listing every problem.
func (w *Workspace) importDrafts(ctx context.Context, c *auth.Caller, data []byte) (importResult, error) {
	entries, notes, err := servers.ParseImport(data)
	res := importResult{Created: []importedDraft{}, Problems: []servers.ImportMessage{}, Notes: notes}
	if res.Notes == nil {
		res.Notes = []servers.ImportMessage{}
	}
	var refused *servers.ImportError
	if errors.As(err, &refused) {
		res.Problems = append(res.Problems, refused.Problems...)
	} else if err != nil {
		return res, err
	}
	for _, e := range entries {
		s, err := w.servers.Create(ctx, c.Actor(), e.Config, e.Secrets, "", false)
		var inv *servers.InvalidError
		var taken *servers.NameTakenError
		switch {
		case errors.As(err, &inv):
			for _, p := range inv.Problems {
				res.Problems = append(res.Problems, servers.ImportMessage{Entry: e.Config.Name, Message: p})
			}
		case errors.As(err, &taken):
			res.Problems = append(res.Problems, servers.ImportMessage{Entry: e.Config.Name,
				Message: "a server with this name exists already: rename the entry"})
		case err != nil:
			return res, fmt.Errorf("import of %q, after %d drafts saved: %w", e.Config.Name, len(res.Created), err)
		default:
			res.Created = append(res.Created, importedDraft{Server: s, ApproveURL: w.approveURL(s.ID)})
			if why := w.servers.NotRunnable(s.Config); why != "" {
				res.Notes = append(res.Notes, servers.ImportMessage{Entry: e.Config.Name,
					Message: "saved, but it cannot run until its command resolves to a program (" + why + "); its page says more"})
			}
		}
	}
	if len(res.Created) == 0 && len(res.Problems) > 0 {
		return res, &servers.ImportError{Problems: res.Problems}
	}
	return res, nil
}

func (w *Workspace) listUsers(r *http.Request, _ *auth.Caller) (any, error) {
	return w.users(r.Context())
}

// user is a user as lists show it.
type user struct {
	ID   int64     `json:"id"`
	Name string    `json:"name"`
	Role auth.Role `json:"role"`
}

func (w *Workspace) users(ctx context.Context) ([]user, error) {
	rows, err := w.db.QueryContext(ctx, `SELECT id, name, role FROM users ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []user{}
	for rows.Next() {
		var u user
		if err := rows.Scan(&u.ID, &u.Name, &u.Role); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

func (w *Workspace) createUser(r *http.Request, c *auth.Caller) (any, error) {
	var req struct {
		Name string    `json:"name"`
		Role auth.Role `json:"role"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	id, link, err := w.addUser(r.Context(), c, req.Name, req.Role)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": id, "name": req.Name, "role": req.Role, "login_url": link}, nil
}

// addUser adds a member or viewer, records it, and returns their one-time
// login link.
func (w *Workspace) addUser(ctx context.Context, c *auth.Caller, name string, role auth.Role) (int64, string, error) {
	if !w.opts.Team {
		return 0, "", fail(http.StatusBadRequest, "team_mode_off", "a single-user workspace has one owner; start zero serve --team for more users")
	}
	if role == auth.Owner {
		return 0, "", fail(http.StatusBadRequest, "bad_request", "a workspace has one owner; add a member or a viewer")
	}
	id, err := w.auth.CreateUser(ctx, name, role)
	if err != nil {
		return 0, "", fail(http.StatusBadRequest, "bad_request", "%v", err)
	}
	link, err := w.auth.LoginLink(ctx, id)
	if err != nil {
		return 0, "", err
	}
	if err := w.record(c, "user.create", fmt.Sprintf("user:%d", id), map[string]string{"name": name, "role": string(role)}); err != nil {
		return 0, "", err
	}
	return id, auth.LoginURL(w.base, link), nil
}

func (w *Workspace) listAudit(_ *http.Request, _ *auth.Caller) (any, error) {
	return w.audit.ReadAll()
}

func (w *Workspace) record(c *auth.Caller, action, target string, detail map[string]string) error {
	_, err := w.audit.Append(audit.Event{Actor: c.Actor(), Action: action, Target: target, Detail: detail})
	return err
}
