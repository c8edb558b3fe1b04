package plugins

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/zero-dev/zero/internal/workspace/secrets"
)

// secretKind is the kind of a plugin's secret slot: no server's secret has
// it, so that a value sealed for a plugin never opens as a server's, nor a
// server's as a plugin's, whatever their ids.
const secretKind = "plugin"

// slot is where plugin id's secret name belongs, sealed for the
// permission hash given.
func slot(id int64, name, permission string) secrets.Slot {
	return secrets.Slot{ServerID: id, Kind: secretKind, Name: name, Fingerprint: permission}
}

type storedSecret struct {
	sealed       []byte
	permission   string
	setBy, setAt string
}

func (m *Manager) storedSecrets(ctx context.Context, q querier, id int64) (map[string]storedSecret, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, sealed, permission_hash, set_by, set_at FROM plugin_secrets WHERE plugin_id = ?`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]storedSecret{}
	for rows.Next() {
		var name string
		var s storedSecret
		if err := rows.Scan(&name, &s.sealed, &s.permission, &s.setBy, &s.setAt); err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, rows.Err()
}

// SetSecret sets the value of secret name, which plugin id must declare:
// write-only, sealed for the plugin's permission hash as installed now. A
// value set for a permission hash that is not the approved one is
// released only once the plugin is enabled under it.
func (m *Manager) SetSecret(ctx context.Context, actor string, id int64, name, value string) (Plugin, error) {
	return m.change(ctx, actor, id, "plugin.secret.set", func(tx *sql.Tx, cur *row) (map[string]string, error) {
		if !slices.Contains(cur.capabilities().Secrets, name) {
			return nil, fmt.Errorf("%w: %q (it declares %s)", ErrSecretUnknown, name, declared(cur))
		}
		if value == "" || len(value) > MaxSecretLen {
			return nil, fmt.Errorf("%w: a secret's value is 1 to %d bytes", ErrInvalid, MaxSecretLen)
		}
		sealed, err := m.o.Box.Seal(slot(cur.id, name, cur.permissionHash), value)
		if err != nil {
			return nil, err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO plugin_secrets (plugin_id, name, sealed, permission_hash, set_by, set_at) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (plugin_id, name) DO UPDATE SET sealed = excluded.sealed, permission_hash = excluded.permission_hash,
			set_by = excluded.set_by, set_at = excluded.set_at`, cur.id, name, sealed, cur.permissionHash, actor, stamp(m.o.Now()))
		return map[string]string{"secret": name}, err
	})
}

// DeleteSecret deletes the value of secret name of plugin id.
func (m *Manager) DeleteSecret(ctx context.Context, actor string, id int64, name string) (Plugin, error) {
	return m.change(ctx, actor, id, "plugin.secret.delete", func(tx *sql.Tx, cur *row) (map[string]string, error) {
		res, err := tx.ExecContext(ctx, `DELETE FROM plugin_secrets WHERE plugin_id = ? AND name = ?`, cur.id, name)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, fmt.Errorf("%w: %q has no value set", ErrSecretUnknown, name)
		}
		return map[string]string{"secret": name}, nil
	})
}

func declared(r *row) string {
	if names := r.capabilities().Secrets; len(names) > 0 {
		return strings.Join(names, ", ")
	}
	return "none"
}

// reseal, in an approval, seals plugin cur's stored secrets again for its
// permission hash as installed (the one approved): each is opened for the
// hash it was sealed for, so a value set under an earlier approval
// follows the plugin to the new one only through this approval. The
// values of names it no longer declares are deleted. It returns the names
// sealed again.
func (m *Manager) reseal(ctx context.Context, tx *sql.Tx, cur *row) (string, error) {
	stored, err := m.storedSecrets(ctx, tx, cur.id)
	if err != nil {
		return "", err
	}
	var moved []string
	for name, s := range stored {
		if !slices.Contains(cur.capabilities().Secrets, name) {
			if _, err := tx.ExecContext(ctx, `DELETE FROM plugin_secrets WHERE plugin_id = ? AND name = ?`, cur.id, name); err != nil {
				return "", err
			}
			continue
		}
		if s.permission == cur.permissionHash {
			continue
		}
		value, err := m.o.Box.Open(slot(cur.id, name, s.permission), s.sealed)
		if err != nil {
			return "", fmt.Errorf("plugin secret %s: %w", name, err)
		}
		sealed, err := m.o.Box.Seal(slot(cur.id, name, cur.permissionHash), value)
		if err != nil {
			return "", err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE plugin_secrets SET sealed = ?, permission_hash = ? WHERE plugin_id = ? AND name = ?`,
			sealed, cur.permissionHash, cur.id, name); err != nil {
			return "", err
		}
		moved = append(moved, name)
	}
	slices.Sort(moved)
	return strings.Join(moved, ","), nil
}
