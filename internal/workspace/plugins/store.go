package plugins

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/plugin"
)

// row is a plugin as stored.
type row struct {
	id                  int64
	name, dir           string
	repo, ref, folder   string
	commit, setHash     string
	permissionHash      string
	manifest            *plugin.Manifest
	manifestText        string
	approvedFingerprint string
	approvedPermission  string
	approvedTools       map[string]string
	approvedNode        string
	enabled             bool
	installedBy         string
	installedAt         string
	updatedAt           string
}

const selectRow = `SELECT id, name, dir, repo, ref, folder, commit_sha, set_hash, permission_hash, manifest, approved_fingerprint,
	approved_permission_hash, approved_tools, approved_node, enabled, installed_by, installed_at, updated_at FROM plugins`

func scanRow(scan func(...any) error) (*row, error) {
	var r row
	var tools string
	if err := scan(&r.id, &r.name, &r.dir, &r.repo, &r.ref, &r.folder, &r.commit, &r.setHash, &r.permissionHash, &r.manifestText,
		&r.approvedFingerprint, &r.approvedPermission, &tools, &r.approvedNode, &r.enabled, &r.installedBy, &r.installedAt, &r.updatedAt); err != nil {
		return nil, err
	}
	mf, err := parseManifest([]byte(r.manifestText))
	if err != nil {
		return nil, fmt.Errorf("plugin %s: its stored manifest: %w", r.name, err)
	}
	r.manifest = mf
	if err := json.Unmarshal([]byte(tools), &r.approvedTools); err != nil {
		return nil, fmt.Errorf("plugin %s: its approved tools: %w", r.name, err)
	}
	return &r, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (m *Manager) load(ctx context.Context, q querier, id int64) (*row, error) {
	r, err := scanRow(q.QueryRowContext(ctx, selectRow+` WHERE id = ?`, id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %d", ErrNotFound, id)
	}
	return r, err
}

// byName is the plugin of that name, nil if none.
func (m *Manager) byName(ctx context.Context, q querier, name string) (*row, error) {
	r, err := scanRow(q.QueryRowContext(ctx, selectRow+` WHERE name = ?`, name).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, err
}

// lockAndLoad is load in a transaction that goes on to change the plugin:
// on PostgreSQL its row stays locked until tx ends.
func (m *Manager) lockAndLoad(ctx context.Context, tx *sql.Tx, id int64) (*row, error) {
	if _, err := tx.ExecContext(ctx, `SELECT id FROM plugins WHERE id = ?`+database.ForUpdate(m.o.DB), id); err != nil {
		return nil, err
	}
	return m.load(ctx, tx, id)
}

// path is the folder of an installed plugin's files.
func (m *Manager) path(r *row) string { return filepath.Join(m.o.Dir, r.dir, filesDir) }

// fingerprint is r's approval fingerprint as it is installed now, run
// with the node program at path node.
func (r *row) fingerprint(node string) string {
	return fingerprint(r.commit, r.permissionHash, toolHashes(r.manifest), r.setHash, node)
}

// capabilities are what r's manifest requests as a whole.
func (r *row) capabilities() plugin.Capabilities {
	if r.manifest.Zero == nil {
		return plugin.Capabilities{}
	}
	return r.manifest.Zero.Capabilities
}
