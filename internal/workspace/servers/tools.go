package servers

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/zero-dev/zero/internal/workspace/runtime"
	"github.com/zero-dev/zero/internal/workspace/secrets"
)

var (
	// ErrMaxCalls reports a bound of calls at once out of its range.
	ErrMaxCalls = fmt.Errorf("the most calls at once is a whole number from 1 to %d, or 0 for the default (%d)",
		runtime.MaxPerServerLimit, runtime.DefaultMaxPerServer)
	// ErrDisabled reports a server that is switched off: nothing runs it.
	ErrDisabled = errors.New("the server is disabled")
	// ErrNoSuchTool reports a tool that is neither in a server's approved
	// tool set nor in its last listing.
	ErrNoSuchTool = errors.New("no such tool")
)

// A ToolsApprovalRequired error refuses a tool set approval whose hash is
// not that of the server's last listing: Listed is the hash to review and
// send back, "" when there is no listing to approve.
type ToolsApprovalRequired struct{ Listed string }

func (e *ToolsApprovalRequired) Error() string {
	if e.Listed == "" {
		return "approval required: the server has no listing of tools under its approved configuration to approve; press Test"
	}
	return "approval required: the server's tools as last listed have the tool set hash " + e.Listed + "; review them and send that hash back"
}

// A toolSet is a stored set of tools: the approved one, or the last
// listing, each for the configuration fingerprint it was made under.
type toolSet struct {
	fingerprint, hash string
	tools             []runtime.Tool
}

// loadToolSet returns server id's approved set (table tool_sets) or last
// listing (tool_listings) if it was made under fingerprint fp, else nil.
func loadToolSet(ctx context.Context, q querier, table string, id int64, fp string) (*toolSet, error) {
	var s toolSet
	var tools string
	err := q.QueryRowContext(ctx, `SELECT fingerprint, hash, tools FROM `+table+` WHERE server_id = ?`, id).Scan(&s.fingerprint, &s.hash, &tools)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	case s.fingerprint != fp:
		return nil, nil
	}
	if err := json.Unmarshal([]byte(tools), &s.tools); err != nil {
		return nil, fmt.Errorf("server %d: stored tools: %w", id, err)
	}
	return &s, nil
}

// approveSet stores l as server id's approved tool set, for fp.
func (m *Manager) approveSet(ctx context.Context, q querier, id int64, fp string, l toolSet, actor string) error {
	tools, _ := json.Marshal(l.tools)
	_, err := q.ExecContext(ctx, `INSERT INTO tool_sets (server_id, fingerprint, hash, tools, approved_by, approved_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (server_id) DO UPDATE SET fingerprint = excluded.fingerprint, hash = excluded.hash, tools = excluded.tools,
		approved_by = excluded.approved_by, approved_at = excluded.approved_at`,
		id, fp, l.hash, string(tools), actor, stamp(m.now()))
	return err
}

// forgetTools deletes what was approved and listed of server id's tools:
// its configuration changed, and its next Test records a new set. The
// switches stay: they only take tools away.
func forgetTools(ctx context.Context, q querier, id int64) error {
	for _, table := range []string{"tool_sets", "tool_listings"} {
		if _, err := q.ExecContext(ctx, `DELETE FROM `+table+` WHERE server_id = ?`, id); err != nil {
			return err
		}
	}
	return nil
}

// listed records a listing of server cur's tools made under fp, by a Test
// (via "test", which actor pressed) or a runtime connection (via
// "connection"), and compares it with the approved set. The first Test of
// an approved configuration with no approved set records the listing as the
// set (first). A drift seen for the first time is audited: another listing
// than the last one, differing from the approved set.
func (m *Manager) listed(ctx context.Context, q querier, cur *row, fp string, l runtime.Listing, actor, via string) (runtime.Drift, bool, error) {
	set, err := loadToolSet(ctx, q, "tool_sets", cur.id, fp)
	if err != nil {
		return runtime.Drift{}, false, err
	}
	prev, err := loadToolSet(ctx, q, "tool_listings", cur.id, fp)
	if err != nil {
		return runtime.Drift{}, false, err
	}
	tools, _ := json.Marshal(l.Tools)
	if _, err := q.ExecContext(ctx, `INSERT INTO tool_listings (server_id, fingerprint, hash, tools, listed_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (server_id) DO UPDATE SET fingerprint = excluded.fingerprint, hash = excluded.hash, tools = excluded.tools, listed_at = excluded.listed_at`,
		cur.id, fp, l.Hash, string(tools), stamp(m.now())); err != nil {
		return runtime.Drift{}, false, err
	}
	if set == nil {
		if via != "test" {
			return runtime.Compare(nil, l.Tools), false, nil
		}
		if err := m.approveSet(ctx, q, cur.id, fp, toolSet{fp, l.Hash, l.Tools}, actor); err != nil {
			return runtime.Drift{}, false, err
		}
		d := runtime.Compare(nil, l.Tools)
		detail := map[string]string{"tool_set_hash": l.Hash, "via": "first test"}
		addLists(detail, d)
		return runtime.Drift{}, true, m.record(actor, "server.tools_approved", cur.id, cur.config.Name, fp, detail)
	}
	d := runtime.Compare(set.tools, l.Tools)
	if d.Empty() || prev != nil && prev.hash == l.Hash {
		return d, false, nil
	}
	detail := map[string]string{"tool_set_hash": set.hash, "listed_tool_set_hash": l.Hash, "via": via}
	addLists(detail, d)
	return d, false, m.record("zero", "server.tools_changed", cur.id, cur.config.Name, fp, detail)
}

// addLists adds a drift's lists of names to an audit record's detail, each
// a JSON array (a tool's name may hold a comma).
func addLists(detail map[string]string, d runtime.Drift) {
	for key, names := range map[string][]string{"changed": d.Changed, "added": d.Added, "removed": d.Removed} {
		b, _ := json.Marshal(names)
		detail[key] = string(b)
	}
}

// Observe records a listing a runtime connection made under s: the drift
// gate's comparison is audited as a Test's is (server.tools_changed). A
// listing made under a fingerprint that is no longer the approved one is
// ignored. It is the runtime's Options.Observe.
func (m *Manager) Observe(ctx context.Context, s runtime.Spec, l runtime.Listing) error {
	tx, err := m.o.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	cur, err := m.lockAndLoad(ctx, tx, s.ServerID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if cur.approved != s.Fingerprint || cur.config.Fingerprint() != s.Fingerprint {
		return nil
	}
	if _, _, err := m.listed(ctx, tx, cur, s.Fingerprint, l, "zero", "connection"); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	m.announce(s.ServerID)
	return nil
}

// ApproveTools approves server id's tools as last listed (by a Test or a
// connection), if hash is that listing's tool set hash, else it answers
// ToolsApprovalRequired with the hash to review. The server's configuration
// must be approved as it would run now. Changed and new tools are then
// offered; removed ones are gone from the set.
func (m *Manager) ApproveTools(ctx context.Context, actor string, id int64, hash string) (Server, error) {
	s, err := m.change(ctx, id, actor, func(tx *sql.Tx, cur *row) (string, map[string]string, error) {
		p, err := m.preview(ctx, tx, id, cur.config, Secrets{})
		if err != nil {
			return "", nil, err
		}
		fp := p.Fingerprint
		if cur.approved != fp || cur.config.Fingerprint() != fp {
			return "", nil, &ApprovalRequired{p}
		}
		listing, err := loadToolSet(ctx, tx, "tool_listings", id, fp)
		if err != nil {
			return "", nil, err
		}
		if listing == nil || listing.hash != hash {
			listed := ""
			if listing != nil {
				listed = listing.hash
			}
			return "", nil, &ToolsApprovalRequired{Listed: listed}
		}
		set, err := loadToolSet(ctx, tx, "tool_sets", id, fp)
		if err != nil {
			return "", nil, err
		}
		detail := map[string]string{"tool_set_hash": hash}
		var before []runtime.Tool
		if set != nil {
			before, detail["previous_tool_set_hash"] = set.tools, set.hash
		}
		addLists(detail, runtime.Compare(before, listing.tools))
		return "server.tools_approved", detail, m.approveSet(ctx, tx, id, fp, *listing, actor)
	})
	if err == nil {
		m.renew(id) // a connection that listed something else does not serve the new set
	}
	return s, err
}

// SetToolEnabled switches one of server id's tools on or off. An off tool
// is never offered nor called, by a Spec built before either. Switching off
// needs no approval, but like switching on it is the owner's.
func (m *Manager) SetToolEnabled(ctx context.Context, actor string, id int64, tool string, on bool) (Server, error) {
	if !on {
		defer m.o.Runtime.Invalidate(id)
	}
	return m.change(ctx, id, actor, func(tx *sql.Tx, cur *row) (string, map[string]string, error) {
		known, err := m.knownTool(ctx, tx, cur, tool)
		if err != nil {
			return "", nil, err
		}
		if !known {
			return "", nil, ErrNoSuchTool
		}
		action := "server.tool_enable"
		if on {
			_, err = tx.ExecContext(ctx, `DELETE FROM tools_off WHERE server_id = ? AND name = ?`, id, tool)
		} else {
			action = "server.tool_disable"
			_, err = tx.ExecContext(ctx, `INSERT INTO tools_off (server_id, name, set_by, set_at) VALUES (?, ?, ?, ?)
				ON CONFLICT (server_id, name) DO UPDATE SET set_by = excluded.set_by, set_at = excluded.set_at`,
				id, tool, actor, stamp(m.now()))
		}
		return action, map[string]string{"tool": tool}, err
	})
}

// knownTool reports whether tool is in server cur's approved set, its last
// listing, or switched off.
func (m *Manager) knownTool(ctx context.Context, q querier, cur *row, tool string) (bool, error) {
	for _, table := range []string{"tool_sets", "tool_listings"} {
		set, err := loadToolSet(ctx, q, table, cur.id, cur.approved)
		if err != nil {
			return false, err
		}
		if set != nil && slices.ContainsFunc(set.tools, func(t runtime.Tool) bool { return t.Name == tool }) {
			return true, nil
		}
	}
	off, err := toolsOff(ctx, q, cur.id)
	return slices.Contains(off, tool), err
}

func toolsOff(ctx context.Context, q querier, id int64) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM tools_off WHERE server_id = ? ORDER BY name`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// SetDebugLog turns server id's debug log on or off: with it on, the
// runtime keeps the arguments and results of its calls, redacted, in
// memory (see runtime.Logs).
func (m *Manager) SetDebugLog(ctx context.Context, actor string, id int64, on bool) (Server, error) {
	return m.change(ctx, id, actor, func(tx *sql.Tx, cur *row) (string, map[string]string, error) {
		_, err := tx.ExecContext(ctx, `UPDATE servers SET debug_log = ?, updated_at = ? WHERE id = ?`, on, stamp(m.now()), id)
		state := "off"
		if on {
			state = "on"
		}
		return "server.debug_log", map[string]string{"debug_log": state}, err
	})
}

// SetMaxCalls sets the most calls the workspace makes to server id at
// once, from 1 to runtime.MaxPerServerLimit; 0 goes back to the default
// (runtime.DefaultMaxPerServer). More calls wait their turn, within their
// own timeout. It approves nothing and needs no approval: it bounds what
// runs, it does not change what runs.
func (m *Manager) SetMaxCalls(ctx context.Context, actor string, id int64, n int) (Server, error) {
	if n < 0 || n > runtime.MaxPerServerLimit {
		return Server{}, fmt.Errorf("%w: %d", ErrMaxCalls, n)
	}
	return m.change(ctx, id, actor, func(tx *sql.Tx, cur *row) (string, map[string]string, error) {
		_, err := tx.ExecContext(ctx, `UPDATE servers SET max_calls = ?, updated_at = ? WHERE id = ?`, n, stamp(m.now()), id)
		return "server.max_calls", map[string]string{"max_calls": strconv.Itoa(maxCallsOf(n))}, err
	})
}

// maxCallsOf is a stored max_calls as it applies: 0 is the default.
func maxCallsOf(n int) int {
	if n <= 0 {
		return runtime.DefaultMaxPerServer
	}
	return n
}

// Runnable returns how the runtime reaches server id: it must be enabled
// (else ErrDisabled), its configuration as it would run now (its program
// resolved afresh, today's policy applied) the approved and saved one (else
// ApprovalRequired), and its secrets must open for the approved
// fingerprint. The Spec carries the approved tool set (nil when none is
// approved for this configuration), the tools switched off and the debug
// switch.
func (m *Manager) Runnable(ctx context.Context, id int64) (runtime.Spec, error) {
	epoch := m.o.Runtime.Epoch(id) // before the state the Spec is built from
	cur, err := m.load(ctx, m.o.DB, id)
	if err != nil {
		return runtime.Spec{}, err
	}
	return m.runnable(ctx, cur, epoch)
}

func (m *Manager) runnable(ctx context.Context, cur *row, epoch uint64) (runtime.Spec, error) {
	if !cur.enabled {
		return runtime.Spec{}, fmt.Errorf("server %q: %w", cur.config.Name, ErrDisabled)
	}
	p, err := m.preview(ctx, m.o.DB, cur.id, cur.config, Secrets{})
	if err != nil {
		return runtime.Spec{}, err
	}
	fp := p.Fingerprint
	if cur.approved != fp || cur.config.Fingerprint() != fp {
		return runtime.Spec{}, &ApprovalRequired{p}
	}
	sec, _, err := m.openSecrets(ctx, m.o.DB, cur.id, fp)
	if err != nil {
		return runtime.Spec{}, err
	}
	s := m.spec(cur.id, p.Config, fp, sec)
	set, err := loadToolSet(ctx, m.o.DB, "tool_sets", cur.id, fp)
	if err != nil {
		return runtime.Spec{}, err
	}
	if set != nil {
		s.ToolSet = runtime.SetOf(set.tools)
	}
	if s.Disabled, err = toolsOff(ctx, m.o.DB, cur.id); err != nil {
		return runtime.Spec{}, err
	}
	s.Debug, s.Epoch, s.MaxCalls = cur.debug, epoch, maxCallsOf(cur.maxCalls)
	return s, nil
}

// Runnables returns the Spec of every server Runnable accepts, by name;
// the others (disabled, waiting for approval, a secret that does not open)
// are left out.
func (m *Manager) Runnables(ctx context.Context) ([]runtime.Spec, error) {
	epochs := m.o.Runtime.Epochs() // before the state the Specs are built from
	rs, err := loadRows(ctx, m.o.DB, ` WHERE enabled = 1 ORDER BY name`)
	if err != nil {
		return nil, err
	}
	out := []runtime.Spec{}
	for _, r := range rs {
		s, err := m.runnable(ctx, r, epochs[r.id])
		var ar *ApprovalRequired
		var inv *InvalidError
		switch {
		case err == nil:
			out = append(out, s)
		case errors.As(err, &ar), errors.As(err, &inv), errors.Is(err, secrets.ErrOpen):
		default:
			return nil, err
		}
	}
	return out, nil
}

// toolsView fills in what s shows of its tools: the approved set and the
// last listing under its approved fingerprint, the drift between them, the
// tools offered, quarantined and switched off.
func (m *Manager) toolsView(ctx context.Context, q querier, r *row, s *Server) error {
	s.Tools, s.ListedTools, s.Quarantined = []runtime.Tool{}, []runtime.Tool{}, []string{}
	var err error
	if s.DisabledTools, err = toolsOff(ctx, q, r.id); err != nil {
		return err
	}
	if r.approved == "" {
		return nil
	}
	set, err := loadToolSet(ctx, q, "tool_sets", r.id, r.approved)
	if err != nil {
		return err
	}
	listing, err := loadToolSet(ctx, q, "tool_listings", r.id, r.approved)
	if err != nil {
		return err
	}
	var approved []runtime.Tool
	if set != nil {
		approved, s.ToolSetHash = set.tools, set.hash
		s.ListedTools = set.tools
	}
	if listing != nil {
		s.ListedTools, s.ListedToolSetHash = listing.tools, listing.hash
	}
	if set == nil && listing == nil {
		return nil
	}
	d := runtime.Compare(approved, s.ListedTools)
	if !d.Empty() {
		s.Drift = &d
	}
	hashes := runtime.SetOf(approved)
	for _, t := range s.ListedTools {
		switch {
		case hashes[t.Name] != t.Hash:
			s.Quarantined = append(s.Quarantined, t.Name)
		case !slices.Contains(s.DisabledTools, t.Name):
			s.Tools = append(s.Tools, t)
		}
	}
	return nil
}

// ToolWarnings are the drift gate's warnings about s: its tools changed
// since the owner approved them, and each annotation hint that went from
// its safe value to its unsafe one among the changed tools.
func ToolWarnings(s Server) []Warning {
	if s.Drift == nil {
		return nil
	}
	ws := []Warning{{"tools-changed", "danger", fmt.Sprintf(
		"the server's tools changed since you approved them (%d changed, %d new, %d removed): changed and new tools are quarantined, offered to no caller, until you approve the new tool set",
		len(s.Drift.Changed), len(s.Drift.Added), len(s.Drift.Removed))}}
	for _, d := range s.Drift.Diffs {
		for _, e := range d.Escalations {
			ws = append(ws, Warning{"tool-escalation", "danger", fmt.Sprintf(
				"tool %s: %s was %s when you approved it and is now %s (a missing hint counts as %s)",
				strconv.Quote(d.Name), e.Hint, strconv.FormatBool(e.Approved), strconv.FormatBool(e.Listed), strconv.FormatBool(e.Listed))})
		}
	}
	return ws
}
