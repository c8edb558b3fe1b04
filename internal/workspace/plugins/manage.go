package plugins

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/plugin"
	"github.com/zero-dev/zero/internal/plugin/host"
)

// A Plugin is an installed plugin as the API and pages show it.
type Plugin struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description"`
	Repo        string `json:"repo"`
	Ref         string `json:"ref"`
	Folder      string `json:"folder"`
	Commit      string `json:"commit"`
	SetHash     string `json:"set_hash"`
	// Entry, Tools and Capabilities are Zero's part of its manifest.
	Entry           string              `json:"entry"`
	Tools           []Tool              `json:"tools"`
	Capabilities    plugin.Capabilities `json:"capabilities"`
	CapabilityWords []string            `json:"capability_words"`
	PermissionHash  string              `json:"permission_hash"`
	// Fingerprint is what enabling it approves now; Approved says that it
	// is the one approved last (ApprovedFingerprint).
	Fingerprint         string   `json:"fingerprint"`
	ApprovedFingerprint string   `json:"approved_fingerprint,omitempty"`
	Approved            bool     `json:"approved"`
	Enabled             bool     `json:"enabled"`
	Runnable            bool     `json:"runnable"`             // it has tools of Zero's to run
	Node                string   `json:"node"`                 // the node program that would run it now, "" if none
	CannotRun           string   `json:"cannot_run,omitempty"` // why it cannot run on this host now, "" when it can
	ApprovedNode        string   `json:"approved_node,omitempty"`
	Secrets             []Secret `json:"secrets"` // one a name it declares
	// Skills are the skills it carries, offered through the skills' flow
	// at its commit; Servers the names of its mcp.json servers, saved as
	// drafts when it was installed.
	Skills      []SkillOffer `json:"skills"`
	Servers     []string     `json:"servers"`
	Dir         string       `json:"dir"` // its files
	InstalledBy string       `json:"installed_by"`
	InstalledAt string       `json:"installed_at"`
	UpdatedAt   string       `json:"updated_at"`
}

// A Secret is the state of one secret a plugin declares: never its value.
type Secret struct {
	Name  string `json:"name"`
	Set   bool   `json:"set"`
	SetBy string `json:"set_by,omitempty"`
	SetAt string `json:"set_at,omitempty"`
	// Pending: the value is sealed for a permission hash that is not the
	// approved one (set after an update, or before the first enable); it
	// is released once the plugin is enabled under it.
	Pending bool `json:"pending,omitempty"`
}

// Get returns one plugin.
func (m *Manager) Get(ctx context.Context, id int64) (Plugin, error) {
	r, err := m.load(ctx, m.o.DB, id)
	if err != nil {
		return Plugin{}, err
	}
	return m.view(ctx, m.o.DB, r)
}

// List returns every installed plugin, by name.
func (m *Manager) List(ctx context.Context) ([]Plugin, error) {
	rows, err := m.o.DB.QueryContext(ctx, selectRow+` ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var rs []*row
	for rows.Next() {
		r, err := scanRow(rows.Scan)
		if err != nil {
			rows.Close()
			return nil, err
		}
		rs = append(rs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := []Plugin{}
	for _, r := range rs {
		p, err := m.view(ctx, m.o.DB, r)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (m *Manager) view(ctx context.Context, q querier, r *row) (Plugin, error) {
	caps := r.capabilities()
	node, why := m.cannotRun(ctx)
	p := Plugin{ID: r.id, Name: r.name, Version: r.manifest.Version, Description: r.manifest.Description, Repo: r.repo, Ref: r.ref,
		Folder: r.folder, Commit: r.commit, SetHash: r.setHash, Tools: []Tool{}, Capabilities: caps, CapabilityWords: capabilityWords(caps),
		PermissionHash: r.permissionHash, Fingerprint: r.fingerprint(node.Path), ApprovedFingerprint: r.approvedFingerprint,
		Enabled: r.enabled, Runnable: r.manifest.Zero != nil, ApprovedNode: r.approvedNode, Secrets: []Secret{}, Dir: m.path(r),
		Node: node.Path, CannotRun: why, InstalledBy: r.installedBy, InstalledAt: r.installedAt, UpdatedAt: r.updatedAt}
	p.Approved = p.ApprovedFingerprint != "" && p.ApprovedFingerprint == p.Fingerprint
	if z := r.manifest.Zero; z != nil {
		p.Entry = z.Entry
		for _, t := range z.Tools {
			p.Tools = append(p.Tools, toolView(t))
		}
	}
	p.Skills, p.Servers = m.portable(r)
	stored, err := m.storedSecrets(ctx, q, r.id)
	if err != nil {
		return Plugin{}, err
	}
	for _, name := range slices.Sorted(slices.Values(caps.Secrets)) {
		s := Secret{Name: name}
		if st, ok := stored[name]; ok {
			s.Set, s.SetBy, s.SetAt, s.Pending = true, st.setBy, st.setAt, st.permission != r.approvedPermission || !p.Approved
		}
		p.Secrets = append(p.Secrets, s)
	}
	return p, nil
}

// resolveNode is the node program a plugin would run under now, found as
// the execution boundary finds a program, and able to run plugins (node 20
// or later, asked in bubblewrap); "" with an error wrapping ErrNoNode that
// says why if there is none.
func (m *Manager) resolveNode(ctx context.Context) (host.Node, error) {
	n, err := findNode(ctx)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, spawn.ErrIsolationUnavailable):
		return host.Node{}, fmt.Errorf("%w: bubblewrap, the sandbox every plugin runs in, is unavailable (%v)", ErrNoNode, err)
	case errors.Is(err, host.ErrNode):
		return host.Node{}, fmt.Errorf("%w: %v", ErrNoNode, err)
	}
	return host.Node{}, fmt.Errorf("%w: no node program is found in the PATH zero serve passes on: install Node.js 20 or later (%v)", ErrNoNode, err)
}

// cannotRun is why plugins cannot run on this host now, "" when they can.
func (m *Manager) cannotRun(ctx context.Context) (host.Node, string) {
	n, err := m.resolveNode(ctx)
	if err != nil {
		return n, err.Error()
	}
	return n, ""
}

// change runs fn on plugin id in a transaction, audits action with the
// detail fn returns, and commits.
func (m *Manager) change(ctx context.Context, actor string, id int64, action string, fn func(*sql.Tx, *row) (map[string]string, error)) (Plugin, error) {
	tx, err := m.o.DB.BeginTx(ctx, nil)
	if err != nil {
		return Plugin{}, err
	}
	defer tx.Rollback()
	cur, err := m.lockAndLoad(ctx, tx, id)
	if err != nil {
		return Plugin{}, err
	}
	node, _ := m.resolveNode(ctx)
	detail, err := fn(tx, cur)
	if err != nil {
		return Plugin{}, err
	}
	d := map[string]string{"name": cur.name, "commit": cur.commit}
	maps.Copy(d, detail)
	if _, err := m.o.Audit.Append(audit.Event{Actor: actor, Action: action, Target: target(id), Fingerprint: cur.fingerprint(node.Path), Detail: d}); err != nil {
		return Plugin{}, err
	}
	if err := tx.Commit(); err != nil {
		return Plugin{}, err
	}
	m.changed(id)
	if action == "plugin.remove" {
		return Plugin{}, nil
	}
	return m.Get(ctx, id)
}

// Enable enables plugin id: the approval, so fingerprint must be the
// plugin's as installed now (its commit, permission hash, tool hashes,
// file set and the fixed host's hash), else an *ApprovalRequired with the
// plugin as it is. The installed files are hashed again first. The
// approval records the fingerprint, the permission hash, the tool set
// and the node program, and seals the stored secrets again for the
// permission hash approved (those it no longer declares are deleted).
func (m *Manager) Enable(ctx context.Context, actor string, id int64, fp string) (Plugin, error) {
	return m.change(ctx, actor, id, "plugin.enable", func(tx *sql.Tx, cur *row) (map[string]string, error) {
		now, err := m.view(ctx, tx, cur)
		if err != nil {
			return nil, err
		}
		if fp != now.Fingerprint {
			return nil, &ApprovalRequired{Plugin: now}
		}
		if !now.Runnable {
			return nil, ErrNothingToRun
		}
		if h, err := installedSetHash(m.path(cur)); err != nil || h != cur.setHash {
			return nil, fmt.Errorf("%w (%s)", ErrFilesChanged, m.path(cur))
		}
		node, err := m.resolveNode(ctx)
		if err != nil {
			return nil, err
		}
		if node.Path != now.Node {
			return nil, &ApprovalRequired{Plugin: now} // the node found changed since the view
		}
		resealed, err := m.reseal(ctx, tx, cur)
		if err != nil {
			return nil, err
		}
		tools, _ := json.Marshal(toolHashes(cur.manifest))
		_, err = tx.ExecContext(ctx, `UPDATE plugins SET approved_fingerprint = ?, approved_permission_hash = ?, approved_tools = ?, approved_node = ?,
			enabled = 1, updated_at = ? WHERE id = ?`, now.Fingerprint, cur.permissionHash, string(tools), node.Path, stamp(m.o.Now()), id)
		return map[string]string{"permission_hash": cur.permissionHash, "node": node.Path, "secrets_resealed": resealed}, err
	})
}

// Disable disables plugin id. It never needs an approval.
func (m *Manager) Disable(ctx context.Context, actor string, id int64) (Plugin, error) {
	return m.change(ctx, actor, id, "plugin.disable", func(tx *sql.Tx, cur *row) (map[string]string, error) {
		_, err := tx.ExecContext(ctx, `UPDATE plugins SET enabled = 0, updated_at = ? WHERE id = ?`, stamp(m.o.Now()), id)
		return nil, err
	})
}

// Remove removes plugin id, its secrets and its files (with their
// provenance). The drafts and skills it offered are the servers' and the
// skills' own, and stay.
func (m *Manager) Remove(ctx context.Context, actor string, id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var dir string
	_, err := m.change(ctx, actor, id, "plugin.remove", func(tx *sql.Tx, cur *row) (map[string]string, error) {
		dir = cur.dir
		_, err := tx.ExecContext(ctx, `DELETE FROM plugins WHERE id = ?`, id)
		return map[string]string{"repo": cur.repo}, err
	})
	if err != nil {
		return err
	}
	// Committed: the folder goes now, or at the next start (recover).
	if err := os.RemoveAll(filepath.Join(m.o.Dir, dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// portable lists the portable parts of installed plugin r: its skills
// (skills/NAME/SKILL.md), offered at its commit, and the names of the
// servers its mcp.json lists.
func (m *Manager) portable(r *row) ([]SkillOffer, []string) {
	p := &Preview{Request: Request{Repo: r.repo, Ref: r.ref, Folder: r.folder}, Commit: r.commit, Skills: []SkillOffer{}}
	files := map[string][]byte{}
	dirs, _ := os.ReadDir(filepath.Join(m.path(r), "skills"))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(m.path(r), "skills", d.Name(), "SKILL.md")); err == nil {
			files["skills/"+d.Name()+"/SKILL.md"] = nil
		}
	}
	p.listSkills(files)
	if data, err := os.ReadFile(filepath.Join(m.path(r), mcpFile)); err == nil {
		p.offerServers(data)
	}
	names := []string{}
	for _, s := range p.Servers {
		names = append(names, s.Name)
	}
	return p.Skills, names
}
