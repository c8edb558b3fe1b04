// Package pin owns Zero's frozen hashes: the approval fingerprint of an MCP
// server's configuration ([Fingerprint]), the hash of what a model reads
// of one MCP tool ([ToolHash]) and the hash of a server's whole tool set
// ([ToolSetHash]), which an owner echoes to approve it; and for a plugin,
// each tool's hash ([PluginToolHash]), the hash of its capabilities
// ([PermissionHash]) and its approval fingerprint ([PluginFingerprint]).
// Approvals store these values and compare them later, so the encodings
// they hash are frozen: each starts with a version line, and golden tests
// hold the exact bytes and hashes. Changing an encoding is a breaking
// change: every stored approval stops matching. A new encoding gets a new
// version line and lives beside the old one.
//
// The encodings are unambiguous. Every string is written as its length in
// bytes, a colon and the bytes themselves, and every list as its count
// followed by its items, so no two configurations encode alike: ["a b"] and
// ["a", "b"], [""] and [], a value moved from one field to the next, all
// differ.
//
// A fingerprint proves that a configuration is the one that was approved. It
// says nothing about whether the program it names is safe to run.
//
// Server fingerprints have had three encodings. [Canonical] writes v2, which
// adds the absolute path the command resolved to, for every configuration
// without a registry reference, and v3, which adds the reference, for one
// derived from an MCP Registry entry: a server that does not come from a
// registry keeps its v2 fingerprint. [CanonicalV1] is kept to open what was
// stored under the first encoding.
package pin

import (
	"crypto/sha256"
	"encoding/hex"
	"net/textproto"
	"slices"
	"strconv"
)

// ServerConfig is what an MCP server's approval fingerprint covers.
type ServerConfig struct {
	Kind        string   // "stdio", "http" or "sse"
	Command     string   // stdio, as typed
	Program     string   // stdio: the absolute path Command resolved to; "" if it resolved to nothing (v2 only)
	Args        []string // stdio, order matters
	Cwd         string   // stdio, relative
	EnvNames    []string // names only, never values; the encoding sorts them
	URL         string   // http/sse
	HeaderNames []string // names only; canonicalized (http.CanonicalHeaderKey) and sorted by the encoding
	// Registry is the MCP Registry entry the configuration was derived
	// from, or nil; set, it selects the v3 encoding.
	Registry *Registry
}

// Registry names the exact MCP Registry entry a configuration was derived
// from: an entry whose bytes change upstream is another configuration.
type Registry struct {
	URL         string // the registry's base URL
	Name        string // the entry's reverse-DNS name
	Version     string // the entry's exact version
	EntrySHA256 string // the SHA-256 of the entry's bytes, as the registry served them
}

// Version lines of the server encodings.
const (
	serverVersionV3 = "zero-mcp-server-v3\n"
	serverVersion   = "zero-mcp-server-v2\n"
	serverVersionV1 = "zero-mcp-server-v1\n"
)

// Canonical returns the frozen encoding of c that [Fingerprint] hashes:
//
//	zero-mcp-server-v2
//	kind <len>:<Kind>
//	command <len>:<Command>
//	program <len>:<Program>
//	args <count>
//	<len>:<arg>             one line per argument, in order
//	cwd <len>:<Cwd>
//	env <count>
//	<len>:<name>            one line per name, sorted by bytes
//	url <len>:<URL>
//	headers <count>
//	<len>:<name>            one line per name, canonicalized, then sorted by bytes
//
// Every line ends in "\n" and every <len> is a decimal count of bytes, so a
// value may hold any byte, newlines included. Every field is written whatever
// the Kind, so nothing outside the encoding can change what runs. A nil list
// and an empty list encode alike; duplicate names are kept.
//
// When c.Registry is set, the encoding is v3 instead: the version line
// zero-mcp-server-v3, the same lines as v2, then
//
//	registry-url <len>:<URL>
//	registry-name <len>:<Name>
//	registry-version <len>:<Version>
//	registry-sha256 <len>:<EntrySHA256>
func Canonical(c ServerConfig) []byte {
	if c.Registry == nil {
		return encode(c, serverVersion, true)
	}
	b := encode(c, serverVersionV3, true)
	b = appendField(b, "registry-url", c.Registry.URL)
	b = appendField(b, "registry-name", c.Registry.Name)
	b = appendField(b, "registry-version", c.Registry.Version)
	return appendField(b, "registry-sha256", c.Registry.EntrySHA256)
}

// CanonicalV1 is the first encoding: [Canonical]'s v2 with the v1 version
// line and without the program line. It is frozen; nothing new is fingerprinted
// with it.
func CanonicalV1(c ServerConfig) []byte {
	return encode(c, serverVersionV1, false)
}

func encode(c ServerConfig, version string, program bool) []byte {
	b := make([]byte, 0, 256)
	b = append(b, version...)
	b = appendField(b, "kind", c.Kind)
	b = appendField(b, "command", c.Command)
	if program {
		b = appendField(b, "program", c.Program)
	}
	b = appendList(b, "args", c.Args)
	b = appendField(b, "cwd", c.Cwd)
	env := slices.Clone(c.EnvNames)
	slices.Sort(env)
	b = appendList(b, "env", env)
	b = appendField(b, "url", c.URL)
	headers := make([]string, len(c.HeaderNames))
	for i, h := range c.HeaderNames {
		headers[i] = textproto.CanonicalMIMEHeaderKey(h) // what http.CanonicalHeaderKey does
	}
	slices.Sort(headers)
	b = appendList(b, "headers", headers)
	return b
}

// Fingerprint returns "sha256:" and the lowercase hex SHA-256 of
// [Canonical](c): v2, or v3 for a configuration with a registry reference.
func Fingerprint(c ServerConfig) string {
	return sha256Hex(Canonical(c))
}

// FingerprintV1 is [Fingerprint] over [CanonicalV1](c), for opening what
// was stored under the first encoding.
func FingerprintV1(c ServerConfig) string {
	return sha256Hex(CanonicalV1(c))
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// appendField writes "<name> <len>:<value>\n".
func appendField(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ' ')
	return appendString(b, value)
}

// appendList writes "<name> <count>\n" and then each item as "<len>:<item>\n".
func appendList(b []byte, name string, items []string) []byte {
	b = append(b, name...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(items)), 10)
	b = append(b, '\n')
	for _, s := range items {
		b = appendString(b, s)
	}
	return b
}

// appendString writes "<len>:<s>\n".
func appendString(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	b = append(b, s...)
	return append(b, '\n')
}
