package plugins

// The calls into the manifest's package (plugin), the frozen hashes (pin)
// and the fixed host (host), in one place.

import (
	"context"

	"github.com/zero-dev/zero/internal/pin"
	"github.com/zero-dev/zero/internal/plugin"
	"github.com/zero-dev/zero/internal/plugin/host"
)

// parseManifest reads plugin.json (plugin.Parse: strict).
func parseManifest(data []byte) (*plugin.Manifest, error) { return plugin.Parse(data) }

// toolHash is a tool's hash (pin.PluginToolHash). A tool that plugin.Parse
// accepted always hashes: its parameters are canonical JSON already.
func toolHash(t plugin.Tool) string {
	h, err := t.Hash()
	if err != nil {
		panic("plugins: a parsed tool does not hash: " + err.Error())
	}
	return h
}

// permissionHash is the hash of a capability set (pin.PermissionHash).
func permissionHash(c plugin.Capabilities) string {
	h, err := c.Hash()
	if err != nil {
		panic("plugins: parsed capabilities do not hash: " + err.Error())
	}
	return h
}

// fingerprint is the approval fingerprint of a plugin
// (pin.PluginFingerprint): its commit, permission hash, tool hashes, staged
// set hash, the fixed host's hash and the node program that runs it.
func fingerprint(commit, permission string, tools map[string]string, set, node string) string {
	return pin.PluginFingerprint(pin.PluginApproval{Commit: commit, PermissionHash: permission, Tools: tools, StagedHash: set,
		HostHash: host.Hash, Program: node})
}

// capabilityWords says, in plain words, what a plugin's whole capability
// set c lets it do, its limits included.
func capabilityWords(c plugin.Capabilities) []string {
	return append(c.Words(), c.EffectiveLimits().Words()...)
}

// findNode finds the node program plugins run with, as a run would.
func findNode(ctx context.Context) (host.Node, error) { return host.FindNode(ctx, "node") }
