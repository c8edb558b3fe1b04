package threads

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// KindAllowance is the event of a call that ran without asking: the
// allowance that let it (AllowanceEvent), stored with the call's result.
const KindAllowance = "allowance"

// ScopeSandboxDefault is the scope of the allowance of a sandboxed
// thread's call that the owner's default for sandboxed threads let run
// (SandboxSettings.Approval); it is in no table, and is not revoked but
// by changing that default.
const ScopeSandboxDefault = "sandbox_default"

// SandboxServer is the Server an allowance of a sandboxed thread's tool
// names: such a tool belongs to no server or plugin.
const SandboxServer = "sandbox"

// An Allowance is a standing allow of a tool: the owner's for every
// thread (Scope AnswerAlways, table tool_rules, or plugin_tool_rules for a
// plugin's tool) or one thread's (Scope AnswerThread, table thread_allows,
// or plugin_thread_allows), bound to the tool's hash and its server's
// fingerprint (its plugin's) as they were when it was given.
type Allowance struct {
	Scope       string    `json:"scope"`
	Thread      int64     `json:"thread,omitempty"`       // for AnswerThread
	ThreadTitle string    `json:"thread_title,omitempty"` // in a list
	ServerID    int64     `json:"server_id"`              // the plugin's id when Plugin is set
	Plugin      bool      `json:"plugin,omitempty"`       // a plugin's tool
	Sandbox     bool      `json:"sandbox,omitempty"`      // a sandboxed thread's tool: ServerID 0, Fingerprint the backend
	Server      string    `json:"server"`                 // its server's name, or its plugin's; SandboxServer
	Tool        string    `json:"tool"`
	Hash        string    `json:"tool_hash"`
	Fingerprint string    `json:"fingerprint"`
	SetBy       string    `json:"set_by"`
	SetAt       time.Time `json:"set_at,omitzero"` // zero for a thread's given before it was kept
}

// AllowanceEvent is the body of a KindAllowance event: call CallID of
// run Run, of the tool the model calls Name, ran under the allowance.
type AllowanceEvent struct {
	Run    int64  `json:"run"`
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	Allowance
}

// Allowances returns the first limit allowances, the owner's (by server
// and tool, then by plugin and tool) before the threads' (the newest
// thread first, a thread's servers' tools before its plugins'), and how
// many there are in all.
func (s *Store) Allowances(ctx context.Context, limit int) ([]Allowance, int, error) {
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM tool_rules WHERE rule = ?) + (SELECT count(*) FROM thread_allows)
		+ (SELECT count(*) FROM plugin_tool_rules WHERE rule = ?) + (SELECT count(*) FROM plugin_thread_allows)
		+ (SELECT count(*) FROM sandbox_tool_rules WHERE rule = ?) + (SELECT count(*) FROM sandbox_thread_allows)`, Allow, Allow, Allow).Scan(&total); err != nil {
		return nil, 0, err
	}
	out := []Allowance{}
	for _, q := range []struct {
		scope           string
		plugin, sandbox bool
		sql             string
		args            []any
	}{
		{AnswerAlways, false, false, `SELECT 0, '', r.server_id, s.name, r.tool, r.tool_hash, r.fingerprint, r.set_by, r.set_at
			FROM tool_rules r JOIN servers s ON s.id = r.server_id WHERE r.rule = ? ORDER BY s.name, r.tool LIMIT ?`, []any{Allow}},
		{AnswerAlways, true, false, `SELECT 0, '', r.plugin_id, p.name, r.tool, r.tool_hash, r.fingerprint, r.set_by, r.set_at
			FROM plugin_tool_rules r JOIN plugins p ON p.id = r.plugin_id WHERE r.rule = ? ORDER BY p.name, r.tool LIMIT ?`, []any{Allow}},
		{AnswerAlways, false, true, `SELECT 0, '', 0, '` + SandboxServer + `', r.tool, r.tool_hash, r.fingerprint, r.set_by, r.set_at
			FROM sandbox_tool_rules r WHERE r.rule = ? ORDER BY r.tool LIMIT ?`, []any{Allow}},
		{AnswerThread, false, false, `SELECT a.thread_id, t.title, a.server_id, s.name, a.tool, a.tool_hash, a.fingerprint, a.set_by, a.set_at
			FROM thread_allows a JOIN servers s ON s.id = a.server_id JOIN threads t ON t.id = a.thread_id
			ORDER BY a.thread_id DESC, s.name, a.tool LIMIT ?`, nil},
		{AnswerThread, true, false, `SELECT a.thread_id, t.title, a.plugin_id, p.name, a.tool, a.tool_hash, a.fingerprint, a.set_by, a.set_at
			FROM plugin_thread_allows a JOIN plugins p ON p.id = a.plugin_id JOIN threads t ON t.id = a.thread_id
			ORDER BY a.thread_id DESC, p.name, a.tool LIMIT ?`, nil},
		{AnswerThread, false, true, `SELECT a.thread_id, t.title, 0, '` + SandboxServer + `', a.tool, a.tool_hash, a.fingerprint, a.set_by, a.set_at
			FROM sandbox_thread_allows a JOIN threads t ON t.id = a.thread_id
			ORDER BY a.thread_id DESC, a.tool LIMIT ?`, nil},
	} {
		if len(out) >= limit {
			break
		}
		rows, err := s.db.QueryContext(ctx, q.sql, append(q.args, limit-len(out))...)
		if err != nil {
			return nil, 0, err
		}
		for rows.Next() {
			a := Allowance{Scope: q.scope, Plugin: q.plugin, Sandbox: q.sandbox}
			var at string
			if err := rows.Scan(&a.Thread, &a.ThreadTitle, &a.ServerID, &a.Server, &a.Tool, &a.Hash, &a.Fingerprint, &a.SetBy, &at); err != nil {
				rows.Close()
				return nil, 0, err
			}
			a.SetAt = parseStamp(at)
			out = append(out, a)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, 0, err
		}
	}
	return out, total, nil
}

// Revoke removes the allowance that a's scope, thread (for AnswerThread),
// server (or plugin) and tool name, and returns it as it was, its server
// named. One that is not there (revoked already) is ErrNotFound. A call
// decided on it before runs; every call decided after asks.
func (s *Store) Revoke(ctx context.Context, a Allowance) (Allowance, error) {
	tb := tablesOf(ToolRef{ServerID: a.ServerID, Plugin: a.Plugin, Sandbox: a.Sandbox, Tool: a.Tool})
	_, where, args := tb.key(ToolRef{ServerID: a.ServerID, Sandbox: a.Sandbox, Tool: a.Tool})
	var del string
	switch a.Scope {
	case AnswerAlways:
		del, args = `DELETE FROM `+tb.rules+` WHERE `+where+` AND rule = ?`, append(args, Allow)
	case AnswerThread:
		del, args = `DELETE FROM `+tb.allows+` WHERE `+where+` AND thread_id = ?`, append(args, a.Thread)
	default:
		return Allowance{}, fmt.Errorf("%w: scope %q: want %s or %s", ErrInvalid, a.Scope, AnswerAlways, AnswerThread)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Allowance{}, err
	}
	defer tx.Rollback()
	var at string
	err = tx.QueryRowContext(ctx, del+` RETURNING tool_hash, fingerprint, set_by, set_at`, args...).Scan(&a.Hash, &a.Fingerprint, &a.SetBy, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Allowance{}, fmt.Errorf("%w: no such allowance of %s: it was revoked already, or the tool asks again", ErrNotFound, tb.name(a))
	}
	if err != nil {
		return Allowance{}, err
	}
	a.SetAt = parseStamp(at)
	if a.Server = SandboxServer; tb.owners != "" {
		if err := tx.QueryRowContext(ctx, `SELECT name FROM `+tb.owners+` WHERE id = ?`, a.ServerID).Scan(&a.Server); err != nil {
			return Allowance{}, err
		}
	}
	if a.Scope == AnswerAlways {
		a.Thread = 0
	}
	return a, tx.Commit()
}
