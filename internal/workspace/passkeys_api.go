package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/passkeys"
)

// passkeyRoutes are the routes of people's passkeys. Each person manages
// their own, in a browser; once they have one, every change to them needs
// an assertion (ownPasskeys). Whether approvals need a passkey is the
// owner's setting, an approval itself.
func (w *Workspace) passkeyRoutes(mux *http.ServeMux) {
	mux.Handle("GET /api/passkeys", w.api(browser, w.listPasskeys))
	mux.Handle("POST /api/passkeys/registrations", w.api(browser, w.beginPasskeyRegistration))
	mux.Handle("POST /api/passkeys", w.api(ownPasskeys, w.finishPasskeyRegistration))
	mux.Handle("PUT /api/passkeys/{id}", w.api(ownPasskeys, w.renamePasskey))
	mux.Handle("DELETE /api/passkeys/{id}", w.api(ownPasskeys, w.removePasskey))
	mux.Handle("PUT /api/passkeys/settings", w.api(approval, w.setPasskeySettings))
	mux.Handle("POST /api/passkeys/challenge", w.api(browser, w.passkeyChallenge))
}

// passkeyUser is c as the passkeys package knows a person.
func passkeyUser(c *auth.Caller) passkeys.User { return passkeys.User{ID: c.UserID, Name: c.User} }

// passkeyList is the caller's passkeys and whether approvals need one.
type passkeyList struct {
	Passkeys []passkeys.Passkey `json:"passkeys"`
	Required bool               `json:"required"`
}

func (w *Workspace) listPasskeys(r *http.Request, c *auth.Caller) (any, error) {
	return w.passkeyList(r.Context(), c)
}

func (w *Workspace) passkeyList(ctx context.Context, c *auth.Caller) (passkeyList, error) {
	list, err := w.passkeys.List(ctx, c.UserID)
	if err != nil {
		return passkeyList{}, err
	}
	req, err := w.passkeys.Required(ctx, w.ownerID)
	if list == nil {
		list = []passkeys.Passkey{}
	}
	return passkeyList{Passkeys: list, Required: req}, err
}

func (w *Workspace) beginPasskeyRegistration(r *http.Request, c *auth.Caller) (any, error) {
	options, nonce, err := w.passkeys.BeginRegistration(r.Context(), passkeyUser(c))
	if err != nil {
		return nil, err
	}
	return map[string]any{"nonce": nonce, "options": options}, nil
}

func (w *Workspace) finishPasskeyRegistration(r *http.Request, c *auth.Caller) (any, error) {
	var req struct {
		Nonce      string          `json:"nonce"`
		Name       string          `json:"name"`
		Credential json.RawMessage `json:"credential"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	pk, err := w.passkeys.FinishRegistration(r.Context(), passkeyUser(c), req.Nonce, req.Name, req.Credential)
	if err != nil {
		return nil, passkeyError(err)
	}
	return pk, w.record(c, "passkey.register", "user:"+c.User, map[string]string{"passkey": strconv.FormatInt(pk.ID, 10),
		"name": pk.Name, "credential": shortCredential(pk.CredentialID), "aaguid": pk.AAGUID})
}

func (w *Workspace) renamePasskey(r *http.Request, c *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	var req struct {
		Name string `json:"name"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	return w.savePasskeyName(r.Context(), c, id, req.Name)
}

// savePasskeyName renames one of c's passkeys, audited.
func (w *Workspace) savePasskeyName(ctx context.Context, c *auth.Caller, id int64, name string) (passkeys.Passkey, error) {
	pk, err := w.passkeys.Rename(ctx, c.UserID, id, name)
	if err != nil {
		return pk, passkeyError(err)
	}
	return pk, w.record(c, "passkey.rename", "user:"+c.User, map[string]string{"passkey": strconv.FormatInt(id, 10), "name": pk.Name})
}

func (w *Workspace) removePasskey(r *http.Request, c *auth.Caller) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	if err := w.passkeys.Remove(r.Context(), c.UserID, id); err != nil {
		return nil, passkeyError(err)
	}
	return map[string]bool{"removed": true}, w.record(c, "passkey.remove", "user:"+c.User, map[string]string{"passkey": strconv.FormatInt(id, 10)})
}

func (w *Workspace) setPasskeySettings(r *http.Request, c *auth.Caller) (any, error) {
	var req struct {
		Required *bool `json:"required"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if req.Required == nil {
		return nil, fail(http.StatusBadRequest, "bad_request", "give required: true or false")
	}
	return w.savePasskeySetting(r.Context(), c, *req.Required)
}

// savePasskeySetting sets whether approvals need a passkey, audited.
func (w *Workspace) savePasskeySetting(ctx context.Context, c *auth.Caller, on bool) (passkeyList, error) {
	if err := w.passkeys.SetRequired(ctx, c.Actor(), on); err != nil {
		return passkeyList{}, err
	}
	if err := w.record(c, "passkey.settings", "passkeys", map[string]string{"required": strconv.FormatBool(on)}); err != nil {
		return passkeyList{}, err
	}
	return w.passkeyList(ctx, c)
}

// passkeyError maps the passkeys package's refusals to API errors.
func passkeyError(err error) error {
	switch {
	case errors.Is(err, passkeys.ErrNotFound):
		return fail(http.StatusNotFound, "not_found", "%v", err)
	case errors.Is(err, passkeys.ErrInvalidName):
		return fail(http.StatusBadRequest, "bad_request", "%v", err)
	case errors.Is(err, passkeys.ErrChallengeUnknown), errors.Is(err, passkeys.ErrRegistration):
		return fail(http.StatusBadRequest, "passkey_refused", "%v", err)
	case errors.Is(err, passkeys.ErrNoPasskey):
		return fail(http.StatusConflict, "no_passkey", "%v: add one on the Security page", err)
	}
	return err
}

// challengeRequest names the request a person is about to send, exactly:
// its method, its path with its query, and its body: a JSON request's
// bytes (Body) or a form's urlencoded values (Form).
type challengeRequest struct {
	Method string  `json:"method"`
	Path   string  `json:"path"`
	Body   *string `json:"body,omitempty"`
	Form   *string `json:"form,omitempty"`
}

// challengeAnswer says whether that request needs the caller's passkey,
// what the passkey confirms, in words, and, when it does, the options for
// navigator.credentials.get and the nonce to send back with the assertion.
type challengeAnswer struct {
	Needed  bool            `json:"needed"`
	Words   string          `json:"words"`
	Nonce   string          `json:"nonce,omitempty"`
	Options json.RawMessage `json:"options,omitempty"`
}

// passkeyChallenge makes the challenge of an assertion for one request:
// derived from that request (its method, path and body, as the gate binds
// them) and a single-use nonce. The route it names is looked up in the
// workspace's own routes, so the answer is the gate's.
func (w *Workspace) passkeyChallenge(r *http.Request, c *auth.Caller) (any, error) {
	var req challengeRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	target, err := http.NewRequestWithContext(r.Context(), req.Method, req.Path, nil)
	if err != nil || !strings.HasPrefix(req.Path, "/") || (req.Body != nil) == (req.Form != nil) {
		return nil, fail(http.StatusBadRequest, "bad_request", "name the request: method, path (with its query) and body (JSON) or form (urlencoded)")
	}
	target.Host = r.Host
	h, pattern := w.mux.Handler(target)
	a := passkeys.Action{UserID: c.UserID, Method: target.Method, Path: target.URL.RequestURI()}
	var form url.Values
	if req.Form != nil {
		if form, err = url.ParseQuery(*req.Form); err != nil {
			return nil, fail(http.StatusBadRequest, "bad_request", "form: %v", err)
		}
		a.Body = []byte(canonicalForm(form))
	} else {
		a.Body = []byte(*req.Body)
	}
	value := bodyValue(a.Body, form)
	a.Words = w.passkeyWords(r.Context(), pattern, target.URL.Path, value)
	g, ok := h.(gated)
	if !ok {
		return challengeAnswer{Words: a.Words}, nil
	}
	need := g.need
	if g.approvingField != "" && value(g.approvingField) != "" {
		need = approval // as its handler will ask
	}
	needed, err := w.passkeyNeeded(r.Context(), target.Method, need, c)
	if err != nil || !needed {
		return challengeAnswer{Words: a.Words}, err
	}
	options, nonce, err := w.passkeys.BeginAssertion(r.Context(), passkeyUser(c), a)
	if err != nil {
		return nil, passkeyError(err)
	}
	return challengeAnswer{Needed: true, Words: a.Words, Nonce: nonce, Options: options}, nil
}

// passkeyWords says what a request does, as the passkey prompt confirms it
// and the review pages show it: a server's name and the first 12
// characters of the fingerprint or tool set it approves, or the route.
func (w *Workspace) passkeyWords(ctx context.Context, pattern, path string, value func(string) string) string {
	_, route, _ := strings.Cut(pattern, " ")
	if strings.HasPrefix(route, "/api/servers/{id}") || strings.HasPrefix(route, "/servers/{id}") {
		parts := strings.Split(strings.Trim(path, "/"), "/")
		i := 1
		if parts[0] == "api" {
			i = 2
		}
		if i < len(parts) {
			if id, err := strconv.ParseInt(parts[i], 10, 64); err == nil {
				if s, err := w.servers.Get(ctx, id); err == nil {
					switch {
					case strings.HasSuffix(route, "/tools/approve"):
						return toolSetWords(s.Config.Name, value("tool_set_hash"))
					case strings.HasSuffix(route, "/approve") || strings.HasSuffix(route, "/update") || pattern == "PUT /api/servers/{id}":
						return approveWords(s.Config.Name, value("fingerprint"))
					}
					return fmt.Sprintf("%s, server %q", pattern, s.Config.Name)
				}
			}
		}
	}
	if (route == "/api/servers" || route == "/servers/create") && value("fingerprint") != "" {
		return newServerWords(value("fingerprint"))
	}
	if pattern == "" {
		return "no such route"
	}
	return pattern
}

// newServerWords says what saving a new server approved confirms.
func newServerWords(fingerprint string) string {
	return "Approve a new server with fingerprint " + prefix12(fingerprint)
}

// bodyValue reads a string field of a request about to be sent, to word
// it: a form's value, or a JSON body's top-level string.
func bodyValue(body []byte, form url.Values) func(string) string {
	var m map[string]any
	if form == nil {
		json.Unmarshal(body, &m)
	}
	return func(name string) string {
		if form != nil {
			return form.Get(name)
		}
		s, _ := m[name].(string)
		return s
	}
}

// showsPasskeyWords reports whether a review shows c what the passkey
// confirms: c is the owner, and approvals need a passkey.
func (w *Workspace) showsPasskeyWords(ctx context.Context, c *auth.Caller) bool {
	if c.Role != auth.Owner {
		return false
	}
	req, err := w.passkeys.Required(ctx, w.ownerID)
	return err == nil && req
}

// approveWords says what approving a server confirms.
func approveWords(name, fingerprint string) string {
	return fmt.Sprintf("Approve server %q with fingerprint %s", name, prefix12(fingerprint))
}

// toolSetWords says what approving a server's tool set confirms.
func toolSetWords(name, hash string) string {
	return fmt.Sprintf("Approve the tools of server %q, tool set %s", name, prefix12(hash))
}

func prefix12(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
