package workspace

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/threads"
	"github.com/zero-dev/zero/internal/workspace/web"
)

// allowancesListed bounds the allowances a list shows.
const allowancesListed = 1000

// allowanceRoutes are the routes of the threads' standing allowances
// ("always" and "in this thread"): a person in a browser lists them, and
// only the owner in a browser revokes one, as only the owner answers an
// approval. No bearer caller uses them.
func (w *Workspace) allowanceRoutes(mux *http.ServeMux) {
	mux.Handle("GET /api/allowances", w.api(browser, w.listAllowances))
	mux.Handle("POST /api/allowances/revoke", w.api(approval, w.revokeAllowanceAPI))
	mux.Handle("GET /allowances", w.page(anyone, w.allowancesPage))
	mux.Handle("POST /allowances/revoke", w.page(approval, w.revokeAllowancePage))
}

func (w *Workspace) listAllowances(r *http.Request, _ *auth.Caller) (any, error) {
	list, total, err := w.threads.Allowances(r.Context(), allowancesListed)
	return map[string]any{"allowances": list, "total": total}, err
}

// allowanceKey is what names an allowance to revoke.
type allowanceKey struct {
	Scope    string `json:"scope"`
	Thread   int64  `json:"thread"`
	ServerID int64  `json:"server_id"` // the plugin's id, with Plugin
	Plugin   bool   `json:"plugin"`
	Sandbox  bool   `json:"sandbox"` // a sandboxed thread's tool: no server_id
	Tool     string `json:"tool"`
}

func (w *Workspace) revokeAllowanceAPI(r *http.Request, c *auth.Caller) (any, error) {
	var k allowanceKey
	if err := decode(r, &k); err != nil {
		return nil, err
	}
	return w.revokeAllowance(r.Context(), c, k)
}

// revokeAllowance revokes the allowance k names, and records it with the
// tool, its server, the scope and the hash and fingerprint it was bound to.
func (w *Workspace) revokeAllowance(ctx context.Context, c *auth.Caller, k allowanceKey) (threads.Allowance, error) {
	a, err := w.threads.Revoke(ctx, threads.Allowance{Scope: k.Scope, Thread: k.Thread, ServerID: k.ServerID, Plugin: k.Plugin, Sandbox: k.Sandbox, Tool: k.Tool})
	if err != nil {
		return a, threadError(err)
	}
	target := "threads"
	if a.Scope == threads.AnswerThread {
		target = threadTarget(a.Thread)
	}
	detail := map[string]string{"scope": a.Scope, "tool": a.Tool, "tool_hash": a.Hash, "fingerprint": a.Fingerprint, "set_by": a.SetBy}
	switch {
	case a.Sandbox:
		detail["sandbox"] = "true"
	case a.Plugin:
		detail["plugin"], detail["plugin_name"] = strconv.FormatInt(a.ServerID, 10), a.Server
	default:
		detail["server"], detail["server_name"] = strconv.FormatInt(a.ServerID, 10), a.Server
	}
	return a, w.record(c, "allowance.revoke", target, detail)
}

// allowancesData is the allowances page's.
type allowancesData struct {
	Allowances []allowanceRow
	Unlisted   int // past allowancesListed
}

type allowanceRow struct {
	threads.Allowance
	When string // when it was given, "" if not kept
}

func (w *Workspace) allowancesPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	list, total, err := w.threads.Allowances(r.Context(), allowancesListed)
	if err != nil {
		return err
	}
	d := allowancesData{Unlisted: total - len(list)}
	for _, a := range list {
		d.Allowances = append(d.Allowances, allowanceRow{Allowance: a, When: shownWhen(a.SetAt)})
	}
	return w.render(rw, r, c, http.StatusOK, "allowances", "Allowances", d)
}

func (w *Workspace) revokeAllowancePage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	k := allowanceKey{Scope: r.PostFormValue("scope"), Tool: r.PostFormValue("tool")}
	k.Thread, _ = strconv.ParseInt(r.PostFormValue("thread"), 10, 64)
	k.ServerID, _ = strconv.ParseInt(r.PostFormValue("server_id"), 10, 64)
	k.Plugin = r.PostFormValue("plugin") == "1"
	k.Sandbox = r.PostFormValue("sandbox") == "1"
	if _, err := w.revokeAllowance(r.Context(), c, k); err != nil {
		return err
	}
	return redirectDone(rw, r, "/allowances", "allow_revoked")
}

// shownWhen is t as the thread pages show a time, "" for none.
func shownWhen(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(whenLayout)
}

// shownAllowance is an allowance event's body as a thread's page shows
// it: the call that ran without asking, and what let it.
type shownAllowance struct {
	CallID, Scope, Server, Tool, By, When, Hash, Fingerprint string
	Plugin                                                   bool // Server names a plugin
	Sandbox                                                  bool // a sandboxed thread's tool: Fingerprint names its backend
}

func showAllowance(b threads.AllowanceEvent) *shownAllowance {
	return &shownAllowance{CallID: b.CallID, Scope: b.Scope, Server: web.Visible(b.Server), Plugin: b.Plugin, Sandbox: b.Sandbox, Tool: web.Visible(b.Tool), By: web.Visible(b.SetBy),
		When: shownWhen(b.SetAt), Hash: web.Visible(b.Hash), Fingerprint: web.Visible(b.Fingerprint)}
}
