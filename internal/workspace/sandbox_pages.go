package workspace

import (
	"errors"
	"net/http"

	"github.com/zero-dev/zero/internal/sandbox"
	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

func (w *Workspace) sandboxPageRoutes(mux *http.ServeMux) {
	mux.Handle("GET /sandbox", w.page(owner, w.sandboxPage))
	mux.Handle("POST /sandbox", w.page(approval, w.saveSandboxPage))
}

// sandboxData is the sandbox page's: the owner's settings (as typed, after
// a refusal), and each backend as its probe found it here.
type sandboxData struct {
	Settings threads.SandboxSettings
	Backends []backendProbe
	Tiers    []sandbox.Backend
	Problem  string
}

// isolation says, for the page, what keeps each backend's guest apart
// (docs/security/sandbox.md says more).
var isolation = map[sandbox.Backend]string{
	sandbox.SmolVM:      "a microVM with a kernel of its own; needs a usable /dev/kvm",
	sandbox.DockerRunsc: "Docker with gVisor: a kernel in user space between the guest and this machine's",
	sandbox.Runsc:       "gVisor's runsc alone, no daemon: a kernel in user space between the guest and this machine's",
	sandbox.Docker:      "Docker with runc: namespaces and cgroups on this machine's kernel",
	sandbox.Bubblewrap:  "bubblewrap: namespaces and cgroups on this machine's kernel",
}

func (w *Workspace) sandboxPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	set, err := w.threads.SandboxSettings(r.Context())
	if err != nil {
		return err
	}
	return w.showSandbox(rw, r, c, http.StatusOK, sandboxData{Settings: set})
}

func (w *Workspace) showSandbox(rw http.ResponseWriter, r *http.Request, c *auth.Caller, status int, d sandboxData) error {
	d.Backends, d.Tiers = w.probeBackends(r.Context()), sandbox.Tiers
	for i := range d.Backends {
		d.Backends[i].Isolation = isolation[d.Backends[i].Backend]
	}
	return w.render(rw, r, c, status, "sandbox", "Sandbox", d)
}

// saveSandboxPage saves the form; a refusal shows it again as typed.
func (w *Workspace) saveSandboxPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	set := threads.SandboxSettings{Pin: r.PostFormValue("pin"), Minimum: r.PostFormValue("minimum"), Approval: r.PostFormValue("approval")}
	_, err := w.saveSandboxSettings(r.Context(), c, set)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
		return w.showSandbox(rw, r, c, http.StatusBadRequest, sandboxData{Settings: set, Problem: ae.Message})
	}
	if err != nil {
		return err
	}
	http.Redirect(rw, r, "/sandbox?done=sandbox_saved", http.StatusSeeOther)
	return nil
}
