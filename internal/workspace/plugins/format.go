package plugins

// The calls into the manifest's package (plugin), the frozen hashes (pin)
// and the fixed host (host), in one place.
//
// PROVISIONAL until branches wt-pformat and wt-psandbox are merged: these
// bodies stand in for plugin.Parse, (*plugin.Tool).Hash,
// (plugin.Capabilities).Hash, pin.PluginFingerprint, the capability words
// and host.Hash.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/zero-dev/zero/internal/plugin"
)

// hostHash stands for host.Hash.
const hostHash = "sha256:provisional-host"

// parseManifest reads plugin.json.
func parseManifest(data []byte) (*plugin.Manifest, error) {
	var raw struct {
		plugin.Manifest
		Schema     string                     `json:"$schema"`
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	m := raw.Manifest
	if m.Name == "" {
		return nil, fmt.Errorf("name is required")
	}
	ext, ok := raw.Extensions[plugin.ExtensionKey]
	if !ok {
		return &m, nil
	}
	var z plugin.Extension
	dec = json.NewDecoder(bytes.NewReader(ext))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&z); err != nil {
		return nil, fmt.Errorf("extensions[%q]: %w", plugin.ExtensionKey, err)
	}
	seen := map[string]bool{}
	for _, t := range z.Tools {
		if seen[t.Name] {
			return nil, fmt.Errorf("the tool name %q is used twice", t.Name)
		}
		seen[t.Name] = true
		var schema struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(t.Parameters, &schema) != nil || schema.Type != "object" {
			return nil, fmt.Errorf("tool %q: parameters must be a JSON Schema of \"type\": \"object\"", t.Name)
		}
	}
	if !strings.HasSuffix(z.Entry, ".js") || strings.Contains(z.Entry, "..") || strings.HasPrefix(z.Entry, "/") {
		return nil, fmt.Errorf("entry %q: want a relative .js file inside the folder", z.Entry)
	}
	m.Zero = &z
	return &m, nil
}

func provisionalHash(kind string, v any) string {
	data, _ := json.Marshal(v)
	sum := sha256.Sum256(append([]byte(kind+"\n"), data...))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// toolHash is a tool's hash (pin.PluginToolHash).
func toolHash(t plugin.Tool) string { return provisionalHash("zero-plugin-tool-v1", t) }

// permissionHash is the hash of a capability set (pin.PermissionHash).
func permissionHash(c plugin.Capabilities) string {
	return provisionalHash("zero-plugin-permissions-v1", c)
}

// fingerprint is the approval fingerprint of a plugin
// (pin.PluginFingerprint): its commit, permission hash, tool hashes, staged
// set hash and the fixed host's hash.
func fingerprint(commit, permission string, tools map[string]string, set string) string {
	return provisionalHash("zero-plugin-fingerprint-v1", []any{commit, permission, tools, set, hostHash})
}

// capabilityWords says, in plain words, what c lets a plugin do.
func capabilityWords(c plugin.Capabilities) []string {
	var out []string
	if len(c.FSRead) > 0 {
		out = append(out, "reads files in the thread workspace under: "+strings.Join(c.FSRead, ", "))
	}
	if len(c.FSWrite) > 0 {
		out = append(out, "reads and writes files in the thread workspace under: "+strings.Join(c.FSWrite, ", "))
	}
	if len(c.NetworkHosts) > 0 {
		out = append(out, "connects to: "+strings.Join(c.NetworkHosts, ", "))
	}
	if c.Process {
		out = append(out, "starts child processes")
	}
	if len(c.Secrets) > 0 {
		out = append(out, "receives the secrets: "+strings.Join(slices.Sorted(slices.Values(c.Secrets)), ", "))
	}
	if len(out) == 0 {
		out = append(out, "nothing beyond reading its own folder: no files, no network, no child process, no secret")
	}
	return out
}
