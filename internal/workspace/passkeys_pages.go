package workspace

import (
	"net/http"

	"github.com/zero-dev/zero/internal/workspace/auth"
)

// passkeyPageRoutes are the Security page's: a person's passkeys (added in
// the page's script, which asks the authenticator), and the owner's
// setting of whether approvals need one.
func (w *Workspace) passkeyPageRoutes(mux *http.ServeMux) {
	mux.Handle("GET /security", w.page(browser, w.securityPage))
	mux.Handle("POST /security/passkeys/{id}/rename", w.page(ownPasskeys, w.renamePasskeyPage))
	mux.Handle("POST /security/passkeys/{id}/remove", w.page(ownPasskeys, w.removePasskeyPage))
	mux.Handle("POST /security/settings", w.page(approval, w.passkeySettingsPage))
}

// securityData is the Security page's.
type securityData struct {
	passkeyList
	Origin string // where passkeys work: http://localhost:PORT
}

func (w *Workspace) securityPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	list, err := w.passkeyList(r.Context(), c)
	if err != nil {
		return err
	}
	return w.render(rw, r, c, http.StatusOK, "security", "Security", securityData{passkeyList: list, Origin: w.base})
}

func (w *Workspace) renamePasskeyPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if _, err := w.savePasskeyName(r.Context(), c, id, r.PostFormValue("name")); err != nil {
		return err
	}
	http.Redirect(rw, r, "/security?done=passkey_renamed", http.StatusSeeOther)
	return nil
}

func (w *Workspace) removePasskeyPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	if _, err := w.removePasskey(r, c); err != nil {
		return err
	}
	http.Redirect(rw, r, "/security?done=passkey_removed", http.StatusSeeOther)
	return nil
}

func (w *Workspace) passkeySettingsPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	if _, err := w.savePasskeySetting(r.Context(), c, r.PostFormValue("required") == "on"); err != nil {
		return err
	}
	http.Redirect(rw, r, "/security?done=passkey_settings", http.StatusSeeOther)
	return nil
}
