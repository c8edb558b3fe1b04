package threads

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Decisions on a thread's tool call.
const (
	Allow = "allow" // runs without asking
	Ask   = "ask"   // waits for a person's answer
	Deny  = "deny"  // refused without asking
)

// A ToolRef names a tool as the runtime offers it now: its server (or
// plugin), name, hash, and the fingerprint of the server's approved
// configuration (the plugin's approval).
type ToolRef struct {
	ServerID int64 // the server's id, or the plugin's when Plugin is set
	Plugin   bool  // a plugin's tool: plugins are numbered apart from servers
	// Sandbox marks a sandboxed thread's tool (a built-in, or a plugin the
	// model wrote): ServerID is 0, Hash the tool's definition's (a
	// model-authored plugin's files'), Fingerprint the backend's name.
	Sandbox     bool
	Tool        string
	Hash        string
	Fingerprint string
}

// A Verdict is a decision and why, in words a person reads; for an
// allow, the allowance that gives it.
type Verdict struct {
	Decision  string     `json:"decision"`
	Reason    string     `json:"reason"`
	Allowance *Allowance `json:"allowance,omitempty"`
}

// The tables of approval rules: a server's tools', a plugin's tools' and
// sandboxed threads' tools' apart, as their ids are numbered apart (a
// sandboxed thread's tool has none).
type ruleTables struct {
	rules, allows string // the owner's rules, the threads' allowances
	id            string // their column of the server's or plugin's id; "" for sandboxed tools
	owners        string // the table of servers, or of plugins; "" for sandboxed tools
}

// tablesOf returns the tables of the rules of t's kind of tool.
func tablesOf(t ToolRef) ruleTables {
	switch {
	case t.Sandbox:
		return ruleTables{"sandbox_tool_rules", "sandbox_thread_allows", "", ""}
	case t.Plugin:
		return ruleTables{"plugin_tool_rules", "plugin_thread_allows", "plugin_id", "plugins"}
	}
	return ruleTables{"tool_rules", "thread_allows", "server_id", "servers"}
}

// name names a's tool, for messages.
func (tb ruleTables) name(a Allowance) string {
	switch tb.owners {
	case "plugins":
		return fmt.Sprintf("%s (plugin %d)", a.Tool, a.ServerID)
	case "":
		return a.Tool + " (a sandboxed thread's tool)"
	}
	return fmt.Sprintf("%s (server %d)", a.Tool, a.ServerID)
}

// key is the columns that name a tool in the tables, its condition and
// its values for t.
func (tb ruleTables) key(t ToolRef) (cols, where string, args []any) {
	if tb.id == "" {
		return "tool", "tool = ?", []any{t.Tool}
	}
	return tb.id + ", tool", tb.id + " = ? AND tool = ?", []any{t.ServerID, t.Tool}
}

// Decide says what a call of t in thread id needs. A deny by the owner wins
// over everything, whatever the tool became. An allow, the owner's for
// every thread or one thread's, holds only while the tool's hash and the
// server's fingerprint are those it was given for: after a drift the call
// is asked again. With neither, the call is asked, but a sandboxed
// thread's (t.Sandbox), whose fingerprint is the backend, which takes the
// owner's default for sandboxed threads (SandboxSettings.Approval). A
// plugin's tool has its own rules: one given for a server's tool of the
// same id and name does not hold for it; nor does one of a host thread's
// tool for a sandboxed thread's.
func (s *Store) Decide(ctx context.Context, id int64, t ToolRef) (Verdict, error) {
	tb := tablesOf(t)
	_, where, key := tb.key(t)
	var rule, hash, fp, by, at string
	err := s.db.QueryRowContext(ctx, `SELECT rule, tool_hash, fingerprint, set_by, set_at FROM `+tb.rules+` WHERE `+where, key...).
		Scan(&rule, &hash, &fp, &by, &at)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Verdict{}, err
	}
	allowance := func(scope string, thread int64) *Allowance {
		return &Allowance{Scope: scope, Thread: thread, ServerID: t.ServerID, Plugin: t.Plugin, Sandbox: t.Sandbox, Tool: t.Tool, Hash: hash, Fingerprint: fp,
			SetBy: by, SetAt: parseStamp(at)}
	}
	switch {
	case rule == Deny:
		return Verdict{Deny, "the workspace owner denies this tool", nil}, nil
	case rule == Allow && hash == t.Hash && fp == t.Fingerprint:
		return Verdict{Allow, "the workspace owner always allows this tool", allowance(AnswerAlways, 0)}, nil
	}
	drifted := rule == Allow
	err = s.db.QueryRowContext(ctx, `SELECT tool_hash, fingerprint, set_by, set_at FROM `+tb.allows+` WHERE thread_id = ? AND `+where,
		append([]any{id}, key...)...).Scan(&hash, &fp, &by, &at)
	switch {
	case err == nil && hash == t.Hash && fp == t.Fingerprint:
		return Verdict{Allow, "allowed for this thread", allowance(AnswerThread, id)}, nil
	case err == nil:
		drifted = true
	case !errors.Is(err, sql.ErrNoRows):
		return Verdict{}, err
	}
	if t.Sandbox {
		set, err := s.SandboxSettings(ctx)
		if err != nil {
			return Verdict{}, err
		}
		if set.Approval == Allow {
			return Verdict{Allow, "the owner's default for sandboxed threads allows this tool", &Allowance{Scope: ScopeSandboxDefault, Thread: id,
				Sandbox: true, Tool: t.Tool, Hash: t.Hash, Fingerprint: t.Fingerprint, SetBy: set.SetBy, SetAt: set.SetAt}}, nil
		}
	}
	if drifted {
		return Verdict{Ask, "the tool or its server changed since it was allowed", nil}, nil
	}
	return Verdict{Ask, "this tool is not allowed without asking", nil}, nil
}

// SetRule sets the owner's rule for t in every thread: Allow (for t's hash
// and fingerprint), Deny, or "" to remove it.
func (s *Store) SetRule(ctx context.Context, actor string, t ToolRef, rule string) error {
	tb := tablesOf(t)
	cols, where, key := tb.key(t)
	switch rule {
	case "":
		_, err := s.db.ExecContext(ctx, `DELETE FROM `+tb.rules+` WHERE `+where, key...)
		return err
	case Allow, Deny:
	default:
		return fmt.Errorf("%w: rule %q: want allow, deny or none", ErrInvalid, rule)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO `+tb.rules+` (`+cols+`, rule, tool_hash, fingerprint, set_by, set_at) VALUES (`+marks(len(key)+5)+`)
		ON CONFLICT (`+cols+`) DO UPDATE SET rule = excluded.rule, tool_hash = excluded.tool_hash, fingerprint = excluded.fingerprint,
		set_by = excluded.set_by, set_at = excluded.set_at`, append(key, rule, t.Hash, t.Fingerprint, actor, stamp(s.now()))...)
	return err
}

// AllowInThread allows t, as it is now, for the rest of thread id, given
// by actor.
func (s *Store) AllowInThread(ctx context.Context, actor string, id int64, t ToolRef) error {
	tb := tablesOf(t)
	cols, _, key := tb.key(t)
	_, err := s.db.ExecContext(ctx, `INSERT INTO `+tb.allows+` (thread_id, `+cols+`, tool_hash, fingerprint, set_by, set_at) VALUES (`+marks(len(key)+5)+`)
		ON CONFLICT (thread_id, `+cols+`) DO UPDATE SET tool_hash = excluded.tool_hash, fingerprint = excluded.fingerprint,
		set_by = excluded.set_by, set_at = excluded.set_at`,
		append(append([]any{id}, key...), t.Hash, t.Fingerprint, actor, stamp(s.now()))...)
	return err
}

// marks is n placeholders, for a statement's values.
func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }
