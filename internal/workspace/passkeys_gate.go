package workspace

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/passkeys"
)

// The passkey gate. With passkeys required (passkeys.Service.Required: on
// by default once the owner has one), a browser's change on an approval
// route must carry a WebAuthn assertion made for that exact request; so
// must a change to the caller's own passkeys once it has one. An agent
// that holds the session, or drives the browser, has no passkey to touch.
// The gate is part of authorizeRecorded, so no approval can skip it.

const (
	// passkeyHeader carries an API request's assertion: the base64url (no
	// padding) of {"nonce": ..., "credential": {...}}.
	passkeyHeader = "Zero-Passkey"
	// passkeyField carries a form's: the same JSON, as a form field.
	passkeyField = "passkey_assertion"
)

func unsafeMethod(m string) bool {
	return m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions
}

// keepBody reads the body of an unsafe browser request that is not a form
// (already bounded by maxBody), so that the gate can bind an assertion to
// its bytes after a handler has read them: r.Body and r.GetBody give the
// same bytes. A urlencoded form's values are parsed once, by r.ParseForm,
// and kept; a multipart form is never confirmed (requestAction).
func keepBody(r *http.Request) error {
	if ct := mediaType(r); ct == formURLEncoded || ct == multipartForm || r.Body == nil {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return err
}

const (
	formURLEncoded = "application/x-www-form-urlencoded"
	multipartForm  = "multipart/form-data"
)

// mediaType is r's Content-Type without its parameters.
func mediaType(r *http.Request) string {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return ct
}

// passkeyNeeded reports whether a request by c with method, to a route
// that asks need, must carry an assertion now.
func (w *Workspace) passkeyNeeded(ctx context.Context, method string, need access, c *auth.Caller) (bool, error) {
	if c.Kind != auth.Browser || !unsafeMethod(method) {
		return false, nil
	}
	switch need {
	case approval:
		return w.passkeys.Required(ctx, w.ownerID)
	case ownPasskeys:
		n, err := w.passkeys.Count(ctx, c.UserID)
		return n > 0, err
	}
	return false, nil
}

// requestAction is the action r asks for, as an assertion binds it: its
// method, path and query, and its body (a form's values in their canonical
// encoding, without the assertion and the CSRF token), and the assertion
// it carries, or nil.
func requestAction(r *http.Request, c *auth.Caller) (passkeys.Action, []byte, error) {
	a := passkeys.Action{UserID: c.UserID, Method: r.Method, Path: r.URL.RequestURI()}
	var assertion []byte
	if h := r.Header.Get(passkeyHeader); h != "" {
		raw, err := base64.RawURLEncoding.DecodeString(h)
		if err != nil {
			return a, nil, errors.New("the " + passkeyHeader + " header is not base64url")
		}
		assertion = raw
	}
	switch mediaType(r) {
	case multipartForm:
		return a, nil, errors.New("a change that needs a passkey is sent as a urlencoded form or as JSON")
	case formURLEncoded:
		if err := r.ParseForm(); err != nil {
			return a, nil, err
		}
		if assertion == nil && r.PostForm.Get(passkeyField) != "" {
			assertion = []byte(r.PostForm.Get(passkeyField))
		}
		a.Body = []byte(canonicalForm(r.PostForm))
		return a, assertion, nil
	}
	if r.GetBody != nil {
		body, err := r.GetBody()
		if err != nil {
			return a, nil, err
		}
		if a.Body, err = io.ReadAll(body); err != nil {
			return a, nil, err
		}
	}
	return a, assertion, nil
}

// canonicalForm is a form's values as an assertion binds them: sorted by
// name, without the assertion itself and the CSRF token.
func canonicalForm(v url.Values) string {
	kept := url.Values{}
	for k, vs := range v {
		if k != passkeyField && k != "csrf_token" {
			kept[k] = vs
		}
	}
	return kept.Encode()
}

// confirmPasskey checks that r carries an assertion by one of c's
// passkeys, made for exactly this request, with a challenge not used
// before. On success c names the credential, so every audit record of
// the request does. A refusal is audited (access.refused, reason passkey).
func (w *Workspace) confirmPasskey(r *http.Request, c *auth.Caller) error {
	refuse := func(code, format string, args ...any) error {
		w.refused(r, c, "passkey")
		return fail(http.StatusForbidden, code, format, args...)
	}
	a, raw, err := requestAction(r, c)
	if err != nil {
		return refuse("passkey_refused", "%v", err)
	}
	if raw == nil {
		return refuse("passkey_required", "this change needs your passkey: the page asks for it, for this exact change")
	}
	var sent struct {
		Nonce      string          `json:"nonce"`
		Credential json.RawMessage `json:"credential"`
	}
	if err := json.Unmarshal(raw, &sent); err != nil || sent.Nonce == "" || len(sent.Credential) == 0 {
		return refuse("passkey_refused", "the passkey assertion is not {nonce, credential}")
	}
	pk, err := w.passkeys.VerifyAssertion(r.Context(), passkeys.User{ID: c.UserID, Name: c.User}, a, sent.Nonce, sent.Credential)
	if err != nil {
		return refuse("passkey_refused", "the passkey assertion is refused: %v", err)
	}
	c.Passkey = shortCredential(pk.CredentialID)
	return nil
}

// shortCredential is how records and pages name a credential.
func shortCredential(id string) string {
	if len(id) > 16 {
		return id[:16]
	}
	return id
}
