package plugins

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/zero-dev/zero/internal/plugin"
)

// A Run is what the runtime needs to run an enabled plugin, all of it
// from what the owner approved: nothing in it comes from a caller or from
// the plugin's running code. The runtime builds its Spec from it.
type Run struct {
	ID          int64
	Name        string
	Fingerprint string // the approved fingerprint
	// Dir is the plugin's folder (its files, read-only in the sandbox);
	// Entry the file the fixed host loads from it.
	Dir   string
	Entry string
	// Node is the node program approved: nothing else runs
	// (spawn.Cmd.Expect).
	Node         string
	Capabilities plugin.Capabilities
	// PermissionHash is the approved one, the secrets released for it.
	PermissionHash string
	// Secrets are the values of the granted secrets that are set, released
	// for PermissionHash; a granted secret without a value is absent.
	Secrets map[string]string
	// Tools are the manifest's tools, the only source of what is offered;
	// ToolHashes their tool hashes, by name.
	Tools      []plugin.Tool
	ToolHashes map[string]string
	// ToolSet is the approved tool set, name to tool hash, as approved at
	// enable: the drift gate's reference.
	ToolSet map[string]string
}

// Runnable returns what the runtime needs to run plugin id: only an
// enabled plugin whose fingerprint as installed now is the approved one
// (ErrDisabled, *ApprovalRequired), whose node program resolves to the one
// approved (ErrNoNode otherwise), and whose secrets open for the approved
// permission hash (secrets.ErrOpen otherwise).
func (m *Manager) Runnable(ctx context.Context, id int64) (Run, error) {
	r, err := m.load(ctx, m.o.DB, id)
	if err != nil {
		return Run{}, err
	}
	if !r.enabled || r.manifest.Zero == nil {
		return Run{}, fmt.Errorf("%w: %s", ErrDisabled, r.name)
	}
	if fp := r.fingerprint(); fp != r.approvedFingerprint || r.permissionHash != r.approvedPermission {
		p, err := m.view(ctx, m.o.DB, r)
		if err != nil {
			return Run{}, err
		}
		return Run{}, &ApprovalRequired{Plugin: p}
	}
	if node, err := m.resolveNode(); err != nil || node != r.approvedNode {
		return Run{}, fmt.Errorf("%w: node resolves to %q now, not to %q as approved: enable the plugin again", ErrNoNode, node, r.approvedNode)
	}
	z := r.manifest.Zero
	run := Run{ID: r.id, Name: r.name, Fingerprint: r.approvedFingerprint, Dir: m.path(r), Entry: z.Entry, Node: r.approvedNode,
		Capabilities: z.Capabilities, PermissionHash: r.approvedPermission, Secrets: map[string]string{},
		Tools: slices.Clone(z.Tools), ToolHashes: toolHashes(r.manifest), ToolSet: maps.Clone(r.approvedTools)}
	stored, err := m.storedSecrets(ctx, m.o.DB, r.id)
	if err != nil {
		return Run{}, err
	}
	for _, name := range z.Capabilities.Secrets {
		s, ok := stored[name]
		if !ok {
			continue
		}
		v, err := m.o.Box.Open(slot(r.id, name, r.approvedPermission), s.sealed)
		if err != nil {
			return Run{}, fmt.Errorf("plugin %s: secret %s: %w", r.name, name, err)
		}
		run.Secrets[name] = v
	}
	return run, nil
}
