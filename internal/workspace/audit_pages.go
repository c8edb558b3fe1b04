package workspace

import (
	"context"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/workspace/auth"
)

// auditData is the audit page's: the records that pass the filters,
// newest first, as rows, and the chain's verification.
type auditData struct {
	Rows                  []auditRow
	Total                 int
	Actions               []string
	Action, Actor, Target string
	VerifyError           string
}

// An auditRow is a record as the audit page shows it: its target named,
// and its fingerprint and hash-like details shortened, in full on demand.
type auditRow struct {
	audit.Record
	Name, Link  string // the target's name and page, when it still exists
	Fingerprint cellValue
	Detail      []detailItem
}

type detailItem struct {
	Key   string
	Value cellValue
}

// cellValue is a value as a cell shows it: Short, when not empty, stands
// for Full, which is shown on demand.
type cellValue struct{ Full, Short string }

// hashRE is a digest as records hold them: an algorithm and its hex.
var hashRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+:[0-9a-f]{32,}$`) })

// cell shortens a digest to its algorithm and first 12 hex digits.
func cell(v string) cellValue {
	if !hashRE().MatchString(v) {
		return cellValue{Full: v}
	}
	alg, hex, _ := strings.Cut(v, ":")
	return cellValue{Full: v, Short: alg + ":" + hex[:12] + "…"}
}

func (w *Workspace) auditPage(rw http.ResponseWriter, r *http.Request, c *auth.Caller) error {
	q := r.URL.Query()
	d := auditData{Action: q.Get("action"), Actor: strings.TrimSpace(q.Get("actor")), Target: strings.TrimSpace(q.Get("target"))}
	if err := w.audit.Verify(); err != nil {
		d.VerifyError = err.Error()
	}
	all, err := w.audit.ReadAll()
	if err != nil && d.VerifyError == "" {
		d.VerifyError = err.Error()
	}
	d.Total = len(all)
	names := w.targetNames(r.Context())
	seen := map[string]bool{}
	for i := len(all) - 1; i >= 0; i-- {
		rec := all[i]
		if !seen[rec.Action] {
			seen[rec.Action] = true
			d.Actions = append(d.Actions, rec.Action)
		}
		if (d.Action == "" || rec.Action == d.Action) && (d.Actor == "" || strings.Contains(rec.Actor, d.Actor)) &&
			(d.Target == "" || rec.Target == d.Target) {
			d.Rows = append(d.Rows, auditRowOf(rec, names))
		}
	}
	slices.Sort(d.Actions)
	return w.render(rw, r, c, http.StatusOK, "audit", "Audit log", d)
}

func auditRowOf(rec audit.Record, names map[string]named) auditRow {
	row := auditRow{Record: rec, Fingerprint: cell(rec.Fingerprint)}
	if n, ok := names[rec.Target]; ok {
		row.Name, row.Link = n.name, n.link
	}
	for _, k := range slices.Sorted(maps.Keys(rec.Detail)) {
		row.Detail = append(row.Detail, detailItem{k, cell(rec.Detail[k])})
	}
	return row
}

type named struct{ name, link string }

// targetNames names the targets that still exist, by the audit target
// they are recorded as: servers, providers and threads, each with its page.
func (w *Workspace) targetNames(ctx context.Context) map[string]named {
	out := map[string]named{}
	if list, err := w.servers.List(ctx); err == nil {
		for _, s := range list {
			id := strconv.FormatInt(s.ID, 10)
			out["server:"+id] = named{s.Config.Name, "/servers/" + id}
		}
	}
	if list, err := w.providers.List(ctx); err == nil {
		for _, p := range list {
			id := strconv.FormatInt(p.ID, 10)
			out["provider:"+id] = named{p.Name, "/providers/" + id + "/edit"}
		}
	}
	if list, err := w.threads.List(ctx); err == nil {
		for _, t := range list {
			out[threadTarget(t.ID)] = named{t.Title, "/threads/" + strconv.FormatInt(t.ID, 10)}
		}
	}
	return out
}
