package endpoint

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxName is the longest tool name the endpoint offers: the limit of the
// common model APIs (^[a-zA-Z0-9_-]{1,64}$), stricter than MCP's 128.
const MaxName = 64

// Separator joins a server's name and a tool's name.
const Separator = "__"

// A ref is the tool behind an offered name.
type ref struct {
	server int64  // the server's id, or the plugin's
	plugin bool   // a plugin's tool
	name   string // the server's name, or the plugin's
	tool   string // the tool's name, as the server lists it or the plugin's manifest declares it
}

// source is the server or plugin r's tool belongs to.
func (r ref) source() source { return source{plugin: r.plugin, id: r.server} }

// meta is the _meta of r's tool: its server's or plugin's name, and its
// own.
func (r ref) meta() mcp.Meta {
	if r.plugin {
		return mcp.Meta{MetaPlugin: r.name, MetaTool: r.tool}
	}
	return mcp.Meta{MetaServer: r.name, MetaTool: r.tool}
}

// label is r's server or plugin, for messages: server "name", plugin "name".
func (r ref) label() string {
	if r.plugin {
		return fmt.Sprintf("plugin %q", r.name)
	}
	return fmt.Sprintf("server %q", r.name)
}

// A source is a server or a plugin, each numbered in its own table.
type source struct {
	plugin bool
	id     int64
}

// Names gives each tool of refs its offered name: SERVER__TOOL (a plugin's:
// PLUGIN__TOOL) when that is made of [A-Za-z0-9_-], at most MaxName long
// and offered once. Otherwise, every character outside that set becomes
// "_", the name is cut to leave room, and "_" and 8 hex digits of the
// SHA-256 of server and tool (for a plugin's, of "plugin", its name and
// tool) are appended; two tools whose plain names collide both get that
// form, so a plugin and a server of the same name that offer a tool of the
// same name both get it, each its own. The result depends only on refs,
// not on their order.
func Names(refs []ref) map[string]ref {
	refs = slices.Clone(refs)
	slices.SortFunc(refs, func(a, b ref) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.tool, b.tool), compareBool(a.plugin, b.plugin))
	})
	plain := map[string]int{}
	for _, r := range refs {
		plain[r.name+Separator+r.tool]++
	}
	out := make(map[string]ref, len(refs))
	for _, r := range refs {
		n := r.name + Separator + r.tool
		if plain[n] > 1 || len(n) > MaxName || !clean(n) {
			n = hashed(r)
		}
		if _, dup := out[n]; dup {
			continue // 32 bits of SHA-256 agree: the first by server and tool keeps the name
		}
		out[n] = r
	}
	return out
}

// hashed is r's name in the hashed form.
func hashed(r ref) string {
	in := r.name + "\x00" + r.tool
	if r.plugin {
		in = "plugin\x00" + in
	}
	sum := sha256.Sum256([]byte(in))
	suffix := "_" + hex.EncodeToString(sum[:4])
	var b strings.Builder
	for _, c := range r.name + Separator + r.tool {
		if b.Len() == MaxName-len(suffix) {
			break
		}
		if c < 0x80 && allowed(byte(c)) {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String() + suffix
}

func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if !allowed(s[i]) {
			return false
		}
	}
	return true
}

func allowed(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
