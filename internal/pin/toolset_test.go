package pin

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var toolSetGoldens = []struct {
	name     string
	tools    map[string]string
	encoding string
	hash     string
}{
	{
		name: "two tools, sorted by name",
		tools: map[string]string{
			"read_file": "sha256:6cf5bd895b62025cfe6cbfd1832534f44f7f7ae89ab4342705bbfcfb04f8bf35",
			"ping":      "sha256:08b0f9b0a8d51bfab6546ac241910c0535a2bd8aa0d038590892083ca5daced8",
		},
		encoding: "zero-mcp-tool-set-v1\n" +
			"tools 2\n" +
			"4:ping 71:sha256:08b0f9b0a8d51bfab6546ac241910c0535a2bd8aa0d038590892083ca5daced8\n" +
			"9:read_file 71:sha256:6cf5bd895b62025cfe6cbfd1832534f44f7f7ae89ab4342705bbfcfb04f8bf35\n",
		hash: "sha256:c9cd07602cc2870415273941b955707f0067efecb9ae43df912c06ea762c1873",
	},
	{
		name:     "empty",
		tools:    nil,
		encoding: "zero-mcp-tool-set-v1\ntools 0\n",
		hash:     "sha256:b62926d412f2db227eb582a99ad45305fddf0438e47bee05c7db35b97ae43fe4",
	},
	{
		name:     "names with spaces, newlines and unicode",
		tools:    map[string]string{"a b\nc": "x", "☃": "y"},
		encoding: "zero-mcp-tool-set-v1\ntools 2\n5:a b\nc 1:x\n3:☃ 1:y\n",
		hash:     "sha256:ce971e9bdb44b8682ecd6698a3e8fe845346e94be103c642c0e0bc5f6eff1897",
	},
}

// TestToolSetGolden holds the frozen encoding of a tool set and its hash.
func TestToolSetGolden(t *testing.T) {
	for _, g := range toolSetGoldens {
		t.Run(g.name, func(t *testing.T) {
			if diff := cmp.Diff(g.encoding, string(toolSetEncoding(g.tools))); diff != "" {
				t.Errorf("encoding (-want +got):\n%s", diff)
			}
			if got := ToolSetHash(g.tools); got != g.hash {
				t.Errorf("ToolSetHash = %s, want %s", got, g.hash)
			}
			sum := sha256.Sum256([]byte(g.encoding))
			if want := "sha256:" + hex.EncodeToString(sum[:]); g.hash != want {
				t.Errorf("golden hash %s is not the hash of the golden bytes (%s)", g.hash, want)
			}
		})
	}
}

// TestToolSetHashChanges: a changed tool hash, an added, a removed or a
// renamed tool each change the set's hash, and moving text between a name
// and its hash does not collide.
func TestToolSetHashChanges(t *testing.T) {
	base := map[string]string{"a": "h1", "b": "h2"}
	seen := map[string]string{ToolSetHash(base): "base"}
	for name, set := range map[string]map[string]string{
		"changed": {"a": "h1", "b": "h3"},
		"added":   {"a": "h1", "b": "h2", "c": "h4"},
		"removed": {"a": "h1"},
		"renamed": {"a": "h1", "c": "h2"},
		"shifted": {"a": "h1", "b h": "2"},
		"empty":   {},
	} {
		h := ToolSetHash(set)
		if other, ok := seen[h]; ok {
			t.Errorf("%s hashes like %s", name, other)
		}
		seen[h] = name
	}
}
