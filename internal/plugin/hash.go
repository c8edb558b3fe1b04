package plugin

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/zero-dev/zero/internal/pin"
)

// Hash returns the tool's hash ([pin.PluginToolHash]): over its name,
// description, parameters, required list and capabilities, the latter in
// their JSON form ([Capabilities.JSON]).
func (t *Tool) Hash() (string, error) {
	caps, err := t.Capabilities.JSON()
	if err != nil {
		return "", err
	}
	return pin.PluginToolHash(pin.PluginTool{Name: t.Name, Description: t.Description, Parameters: t.Parameters,
		Required: t.Required, Capabilities: caps})
}

// Hash returns the permission hash of c ([pin.PermissionHash]) over its
// JSON form ([Capabilities.JSON]).
func (c Capabilities) Hash() (string, error) {
	caps, err := c.JSON()
	if err != nil {
		return "", err
	}
	return pin.PermissionHash(caps)
}

// JSON returns the form of c the hashes cover: c as encoding/json writes
// it, with empty lists, a false process and limits that are all zero left
// out, so that what reads alike hashes alike. Lists keep their order.
func (c Capabilities) JSON() (json.RawMessage, error) {
	if c.Limits != nil && *c.Limits == (Limits{}) {
		c.Limits = nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("capabilities: %w", err)
	}
	return b, nil
}

// ToolHashes returns each tool's name and hash, what an approval and
// [Compare] take.
func (e *Extension) ToolHashes() (map[string]string, error) {
	out := make(map[string]string, len(e.Tools))
	for i := range e.Tools {
		h, err := e.Tools[i].Hash()
		if err != nil {
			return nil, err
		}
		out[e.Tools[i].Name] = h
	}
	return out, nil
}

// InputSchema returns the tool's input schema as MCP offers it: the
// parameters, with "required" set to the tool's required list when it has
// one, in canonical JSON.
func (t *Tool) InputSchema() (json.RawMessage, error) {
	var schema map[string]json.RawMessage
	if err := json.Unmarshal(t.Parameters, &schema); err != nil || schema == nil {
		return nil, fmt.Errorf("tool %q: parameters are not a JSON object", t.Name)
	}
	if len(t.Required) > 0 {
		req, err := json.Marshal(t.Required)
		if err != nil {
			return nil, fmt.Errorf("tool %q: required: %w", t.Name, err)
		}
		schema["required"] = req
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: parameters: %w", t.Name, err)
	}
	return pin.CanonicalJSON(b)
}

// Compare tells an update's tools apart, given the tool hashes recorded at
// the last install (old) and those of the update (new), each a tool name
// to its hash: changed are the names in both whose hash differs, added
// those only in new, removed those only in old, each list in alphabetical
// order (by bytes). A renamed tool is removed under its old name and added
// under its new one. An old record without hashes (a nil map: a plugin
// installed before tool hashes existed) reports every new tool as changed,
// so that nothing is trusted by default; an empty, non-nil map is a
// record of no tools.
func Compare(old, new map[string]string) (changed, added, removed []string) {
	if old == nil {
		return slices.Sorted(maps.Keys(new)), nil, nil
	}
	for _, name := range slices.Sorted(maps.Keys(new)) {
		switch h, ok := old[name]; {
		case !ok:
			added = append(added, name)
		case h != new[name]:
			changed = append(changed, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(old)) {
		if _, ok := new[name]; !ok {
			removed = append(removed, name)
		}
	}
	return changed, added, removed
}
