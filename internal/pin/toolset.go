package pin

import (
	"maps"
	"slices"
	"strconv"
)

// toolSetVersion is the first line of the encoding [ToolSetHash] hashes.
const toolSetVersion = "zero-mcp-tool-set-v1\n"

// ToolSetHash hashes a server's whole tool set: each tool's name and its
// [ToolHash]. An owner approves a tool set by echoing this value. It returns
// "sha256:" and the lowercase hex SHA-256 of this frozen encoding:
//
//	zero-mcp-tool-set-v1
//	tools <count>
//	<len>:<name> <len>:<tool hash>    one line per tool, sorted by the bytes of its name
//
// with every line ending in "\n" and <len> a decimal count of bytes. An empty
// or nil set encodes as "tools 0". A set is a map, so a name appears once.
func ToolSetHash(tools map[string]string) string {
	return sha256Hex(toolSetEncoding(tools))
}

// toolSetEncoding returns the bytes [ToolSetHash] hashes.
func toolSetEncoding(tools map[string]string) []byte {
	b := append([]byte(nil), toolSetVersion...)
	return appendTools(b, tools)
}

// appendTools writes "tools <count>\n" and then "<len>:<name> <len>:<hash>\n"
// for each tool, sorted by the bytes of its name.
func appendTools(b []byte, tools map[string]string) []byte {
	b = append(b, "tools "...)
	b = strconv.AppendInt(b, int64(len(tools)), 10)
	b = append(b, '\n')
	for _, name := range slices.Sorted(maps.Keys(tools)) {
		b = strconv.AppendInt(b, int64(len(name)), 10)
		b = append(b, ':')
		b = append(b, name...)
		b = append(b, ' ')
		b = appendString(b, tools[name])
	}
	return b
}
