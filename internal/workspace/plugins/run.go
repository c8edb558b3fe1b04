package plugins

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"net/url"

	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/plugin"
	"github.com/zero-dev/zero/internal/workspace/runtime"
	"github.com/zero-dev/zero/internal/workspace/secrets"
)

// Runnable returns the Spec the runtime runs plugin id under, all of it
// from what the owner approved: nothing in it comes from a caller or from
// the plugin's running code. Only an enabled plugin whose fingerprint as
// installed now, with the node program found now, is the approved one runs
// (ErrDisabled, *ApprovalRequired otherwise), and only with the secrets
// that open for the approved permission hash (secrets.ErrOpen otherwise).
// The Spec's ToolSet is the tool set approved at enable: the drift gate's
// reference; its Env the granted secrets that are set.
func (m *Manager) Runnable(ctx context.Context, id int64) (runtime.Spec, error) {
	var epoch uint64
	if m.o.Runtime != nil {
		epoch = m.o.Runtime.Plugins().Epoch(id) // before the state the Spec is built from
	}
	r, err := m.load(ctx, m.o.DB, id)
	if err != nil {
		return runtime.Spec{}, err
	}
	return m.runnable(ctx, r, epoch)
}

// Runnables returns the Spec of every plugin Runnable accepts, by name;
// the others (disabled, changed since approved, a secret that does not
// open) are left out.
func (m *Manager) Runnables(ctx context.Context) ([]runtime.Spec, error) {
	var epochs map[int64]uint64
	if m.o.Runtime != nil {
		epochs = m.o.Runtime.Plugins().Epochs()
	}
	rows, err := m.o.DB.QueryContext(ctx, `SELECT id FROM plugins WHERE enabled = 1 ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := []runtime.Spec{}
	for _, id := range ids {
		r, err := m.load(ctx, m.o.DB, id)
		if errors.Is(err, ErrNotFound) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		s, err := m.runnable(ctx, r, epochs[id])
		var ar *ApprovalRequired
		switch {
		case err == nil:
			out = append(out, s)
		case errors.Is(err, ErrDisabled), errors.As(err, &ar), errors.Is(err, ErrNoNode), errors.Is(err, secrets.ErrOpen):
		default:
			return nil, err
		}
	}
	return out, nil
}

func (m *Manager) runnable(ctx context.Context, r *row, epoch uint64) (runtime.Spec, error) {
	if !r.enabled || r.manifest.Zero == nil {
		return runtime.Spec{}, fmt.Errorf("%w: %s", ErrDisabled, r.name)
	}
	node, err := m.resolveNode(ctx)
	if err != nil {
		return runtime.Spec{}, err
	}
	if r.fingerprint(node.Path) != r.approvedFingerprint || r.permissionHash != r.approvedPermission {
		p, err := m.view(ctx, m.o.DB, r)
		if err != nil {
			return runtime.Spec{}, err
		}
		return runtime.Spec{}, &ApprovalRequired{Plugin: p}
	}
	z := r.manifest.Zero
	tools := make([]runtime.Tool, 0, len(z.Tools))
	for _, t := range z.Tools {
		rt, err := runtime.PluginTool(t)
		if err != nil {
			return runtime.Spec{}, fmt.Errorf("plugin %s: %w", r.name, err)
		}
		tools = append(tools, rt)
	}
	s := runtime.Spec{Name: r.name, Fingerprint: r.approvedFingerprint, Kind: runtime.KindPlugin, Epoch: epoch, Program: node.Path,
		Env: map[string]string{}, Allow: m.allowFor(z.Capabilities), ToolSet: maps.Clone(r.approvedTools),
		Plugin: &runtime.Plugin{ID: r.id, Dir: m.path(r), Entry: z.Entry, Capabilities: z.Capabilities, Node: node, Tools: tools}}
	stored, err := m.storedSecrets(ctx, m.o.DB, r.id)
	if err != nil {
		return runtime.Spec{}, err
	}
	for _, name := range z.Capabilities.Secrets {
		st, ok := stored[name]
		if !ok {
			continue
		}
		v, err := m.o.Box.Open(slot(r.id, name, r.approvedPermission), st.sealed)
		if err != nil {
			return runtime.Spec{}, fmt.Errorf("plugin %s: secret %s: %w", r.name, name, err)
		}
		s.Env[name] = v
	}
	return s, nil
}

// allowFor returns the addresses the plugin's broker may reach despite
// the private-network block: those of the allowed local origins
// (ZERO_ALLOWED_LOCAL_ORIGINS) whose host and port the plugin was granted
// in network.hosts, the origin's scheme aside. localhost allows the
// loopback addresses.
func (m *Manager) allowFor(c plugin.Capabilities) []netip.Prefix {
	granted := map[string]bool{}
	for _, hp := range c.NetworkHosts {
		if canon, err := netguard.ParseHostPort(hp); err == nil {
			granted[canon] = true
		}
	}
	var out []netip.Prefix
	for _, origin := range m.o.LocalOrigins {
		u, err := url.Parse(origin)
		if err != nil {
			continue
		}
		hp, err := netguard.ParseHostPort(u.Host)
		if err != nil || !granted[hp] {
			continue
		}
		h, err := netguard.ParseHost(u.Hostname())
		if err != nil {
			continue
		}
		if a, isAddr := h.Addr(); isAddr {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		} else if h.IsLoopback() {
			out = append(out, netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128"))
		}
	}
	return out
}
