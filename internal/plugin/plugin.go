// Package plugin reads a Zero plugin: a folder whose plugin.json is a valid
// Agent Plugins 1.0 manifest, with Zero's part under the reverse-DNS key
// ExtensionKey of its "extensions": the entry file that Zero's fixed host
// runs, the capabilities the plugin requests as a whole, and its tools, each
// with its name, description, parameters (a JSON Schema of type object),
// required list and capabilities. The manifest is the only source of what a
// plugin offers: nothing its running code says changes it.
//
// [Parse] is strict: it refuses, naming what it refuses, anything it does
// not know or cannot use, and a manifest it accepts holds only valid
// capabilities ([Capabilities.Check]). The hashes an approval stores are
// [Tool.Hash] and [Capabilities.Hash], over pin's frozen encodings; [Compare]
// tells an update's changed, added and removed tools apart.
package plugin

import "encoding/json"

// ExtensionKey is the key of Zero's part in a manifest's "extensions".
const ExtensionKey = "dev.zero.plugin"

// Files and bounds.
const (
	ManifestFile = "plugin.json"
	MaxManifest  = 256 << 10 // bytes of plugin.json
)

// A Manifest is a plugin.json: the Agent Plugins 1.0 fields, and Zero's
// part (nil for an Agent Plugin that has none: it may still carry portable
// parts, skills and mcp.json servers).
type Manifest struct {
	Schema      string          `json:"$schema,omitempty"`
	Name        string          `json:"name"`
	Version     string          `json:"version,omitempty"`
	Description string          `json:"description,omitempty"`
	Author      json.RawMessage `json:"author,omitempty"` // a string or an object, as Agent Plugins allows
	Homepage    string          `json:"homepage,omitempty"`
	Repository  json.RawMessage `json:"repository,omitempty"` // a string or an object
	License     string          `json:"license,omitempty"`
	Keywords    []string        `json:"keywords,omitempty"`
	Zero        *Extension      `json:"-"`
	// Extensions are the other keys of "extensions", as written: other
	// clients' parts, kept but never read by Zero.
	Extensions map[string]json.RawMessage `json:"-"`
}

// An Extension is Zero's part of a manifest.
type Extension struct {
	Entry        string       `json:"entry"` // the file the host loads, relative to the plugin's folder: plugin.js
	Capabilities Capabilities `json:"capabilities"`
	Tools        []Tool       `json:"tools"`
}

// A Tool is one tool as the manifest declares it.
type Tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Parameters   json.RawMessage `json:"parameters"` // a JSON Schema of "type": "object", in canonical JSON after Parse
	Required     []string        `json:"required,omitempty"`
	Capabilities Capabilities    `json:"capabilities"` // within the plugin's
}

// Capabilities are what a plugin (or one of its tools) may do, in Zero's
// vocabulary. The zero value may do nothing: no files beyond its own folder,
// no network, no child process, no secret, the default limits.
//
// Their JSON form is part of the frozen tool and permission hashes: a field
// added later must be omitted when unset, so that what was hashed before
// hashes alike.
type Capabilities struct {
	FSRead       []string `json:"fs.read,omitempty"`       // paths relative to the thread workspace, read-only
	FSWrite      []string `json:"fs.write,omitempty"`      // paths relative to the thread workspace, read and write
	NetworkHosts []string `json:"network.hosts,omitempty"` // "host:port", reached through Zero's broker only
	Process      bool     `json:"process,omitempty"`       // may start child processes
	Secrets      []string `json:"secrets,omitempty"`       // names of the secrets it receives
	Limits       *Limits  `json:"limits,omitempty"`        // the plugin's only: a tool has none
}

// Limits bound a plugin's process; zero fields take Zero's defaults.
type Limits struct {
	TimeoutMS int `json:"timeout_ms,omitempty"` // one call
	MemoryMiB int `json:"memory_mib,omitempty"`
	Processes int `json:"processes,omitempty"` // processes and threads at once, as cgroups count them
}
