package pin

import (
	"encoding/json"
	"fmt"
)

// Version lines of the plugin encodings.
const (
	pluginToolVersion     = "zero-plugin-tool-v1\n"
	permissionsVersion    = "zero-plugin-permissions-v1\n"
	pluginApprovalVersion = "zero-plugin-approval-v1\n"
)

// A PluginTool is one tool as a plugin's manifest declares it: what the
// model reads of it and what it may do.
type PluginTool struct {
	Name, Description string
	Parameters        json.RawMessage // a JSON Schema
	Required          []string        // in the order written
	Capabilities      json.RawMessage // the tool's capabilities object
}

// PluginToolHash hashes one plugin tool: its name, description,
// parameters, required list and capabilities. The description and
// parameters are in it because the model reads them. It returns "sha256:"
// and the lowercase hex SHA-256 of this frozen encoding:
//
//	zero-plugin-tool-v1
//	name <len>:<name>
//	description <len>:<description>
//	parameters <len>:<canonical JSON>
//	required <count>
//	<len>:<name>            one line per name, in the order written
//	capabilities <len>:<canonical JSON>
//
// with every line ending in "\n", <len> a decimal count of bytes, and
// canonical JSON as [ToolHash] writes it (arrays keep their order). Nothing
// is Unicode-normalized. An empty Parameters or Capabilities is hashed as
// null. JSON that [CanonicalJSON] refuses is refused with an error wrapping
// [ErrInvalidJSON].
func PluginToolHash(t PluginTool) (string, error) {
	b, err := pluginToolEncoding(t)
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}

// pluginToolEncoding returns the bytes [PluginToolHash] hashes.
func pluginToolEncoding(t PluginTool) ([]byte, error) {
	params, err := canonicalJSON(t.Parameters)
	if err != nil {
		return nil, fmt.Errorf("tool %q parameters: %w", t.Name, err)
	}
	caps, err := canonicalJSON(t.Capabilities)
	if err != nil {
		return nil, fmt.Errorf("tool %q capabilities: %w", t.Name, err)
	}
	b := make([]byte, 0, len(pluginToolVersion)+len(t.Name)+len(t.Description)+len(params)+len(caps)+96)
	b = append(b, pluginToolVersion...)
	b = appendField(b, "name", t.Name)
	b = appendField(b, "description", t.Description)
	b = appendField(b, "parameters", string(params))
	b = appendList(b, "required", t.Required)
	b = appendField(b, "capabilities", string(caps))
	return b, nil
}

// PermissionHash hashes a plugin's whole capability set, the object its
// manifest declares. It returns "sha256:" and the lowercase hex SHA-256 of
// this frozen encoding:
//
//	zero-plugin-permissions-v1
//	capabilities <len>:<canonical JSON>
//
// with each line ending in "\n". Canonical JSON, and what is refused, are
// as for [PluginToolHash]; an empty capabilities is hashed as null.
func PermissionHash(capabilities json.RawMessage) (string, error) {
	b, err := permissionsEncoding(capabilities)
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}

// permissionsEncoding returns the bytes [PermissionHash] hashes.
func permissionsEncoding(capabilities json.RawMessage) ([]byte, error) {
	caps, err := canonicalJSON(capabilities)
	if err != nil {
		return nil, fmt.Errorf("capabilities: %w", err)
	}
	b := append([]byte(permissionsVersion), "capabilities "...)
	return appendString(b, string(caps)), nil
}

// A PluginApproval is what an owner approves when enabling a plugin.
type PluginApproval struct {
	Commit         string            // the full commit SHA the plugin was staged from
	PermissionHash string            // [PermissionHash] of the plugin's capabilities
	Tools          map[string]string // tool name to [PluginToolHash]
	StagedHash     string            // the hash of the staged set: every file's git blob id
	HostHash       string            // the SHA-256 of Zero's fixed host (host.js)
	Program        string            // the absolute path of the node that runs the host
}

// PluginFingerprint returns "sha256:" and the lowercase hex SHA-256 of this
// frozen encoding of a:
//
//	zero-plugin-approval-v1
//	commit <len>:<commit>
//	permissions <len>:<permission hash>
//	tools <count>
//	<len>:<name> <len>:<tool hash>    one line per tool, sorted by the bytes of its name
//	staged <len>:<staged set hash>
//	host <len>:<host hash>
//	program <len>:<program>
//
// with every line ending in "\n" and <len> a decimal count of bytes. The
// tools lines are those of [ToolSetHash]. Enabling a plugin echoes it, so
// the approval covers the exact code, what it may do, what each tool tells
// the model, the host that runs it and the node that runs the host.
func PluginFingerprint(a PluginApproval) string {
	return sha256Hex(pluginApprovalEncoding(a))
}

// pluginApprovalEncoding returns the bytes [PluginFingerprint] hashes.
func pluginApprovalEncoding(a PluginApproval) []byte {
	b := append([]byte(nil), pluginApprovalVersion...)
	b = appendField(b, "commit", a.Commit)
	b = appendField(b, "permissions", a.PermissionHash)
	b = appendTools(b, a.Tools)
	b = appendField(b, "staged", a.StagedHash)
	b = appendField(b, "host", a.HostHash)
	return appendField(b, "program", a.Program)
}
