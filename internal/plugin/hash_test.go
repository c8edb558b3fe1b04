package plugin

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/zero-dev/zero/internal/pin"
)

// The hashes here are pin's golden vectors (internal/pin/plugin_test.go):
// a tool and capabilities built in Go hash to them, so the JSON form of
// Capabilities, which those hashes cover, is frozen with them.

// TestToolHashIsFrozen: the golden tool of pin, as a plugin.Tool.
func TestToolHashIsFrozen(t *testing.T) {
	tl := Tool{Name: "fetch_status", Description: "Fetch a URL and report its HTTP status.",
		Parameters:   json.RawMessage(`{"type": "object", "properties": {"url": {"type": "string", "description": "The URL to fetch"}}}`),
		Required:     []string{"url"},
		Capabilities: Capabilities{NetworkHosts: []string{"api.example.com:443"}}}
	got, err := tl.Hash()
	if err != nil {
		t.Fatal(err)
	}
	if want := "sha256:af8fc175bd46a054df94993078b47699cbe5b1ad38d56619ea52767f2976e8b1"; got != want {
		t.Errorf("Hash = %s, want %s", got, want)
	}
	none := Tool{Name: "ping", Parameters: json.RawMessage(`{"type":"object"}`)}
	if got, err := none.Hash(); err != nil || got != "sha256:6d26f6753f319d5d181654b72c4e5194c6954e28d860ddec05c24ca32796b20f" {
		t.Errorf("Hash of a tool without capabilities = %s, %v", got, err)
	}
}

// TestPermissionHashIsFrozen: pin's golden capabilities, built in Go.
func TestPermissionHashIsFrozen(t *testing.T) {
	c := Capabilities{FSRead: []string{"notes", "docs/a b"}, FSWrite: []string{"out"}, NetworkHosts: []string{"api.example.com:443", "[::1]:8080"},
		Process: true, Secrets: []string{"API_KEY"}, Limits: &Limits{TimeoutMS: 10000, MemoryMiB: 128, Processes: 16}}
	for name, tc := range map[string]struct {
		caps Capabilities
		json string
		hash string
	}{
		"everything": {c,
			`{"fs.read":["notes","docs/a b"],"fs.write":["out"],"network.hosts":["api.example.com:443","[::1]:8080"],"process":true,"secrets":["API_KEY"],"limits":{"timeout_ms":10000,"memory_mib":128,"processes":16}}`,
			"sha256:7d15912d6136719fb8347ced5b28364d8d5ed5bad0cd88c48b14454a17e1e558"},
		"nothing":     {Capabilities{}, `{}`, "sha256:103155c703992b18510b63824255856ee35cd9af96cda536ccd32f2056eb6ebf"},
		"empty lists": {Capabilities{FSRead: []string{}, Secrets: []string{}}, `{}`, "sha256:103155c703992b18510b63824255856ee35cd9af96cda536ccd32f2056eb6ebf"},
		"zero limits": {Capabilities{Limits: &Limits{}}, `{}`, "sha256:103155c703992b18510b63824255856ee35cd9af96cda536ccd32f2056eb6ebf"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := tc.caps.JSON()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.json, string(got)); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
			h, err := tc.caps.Hash()
			if err != nil {
				t.Fatal(err)
			}
			if h != tc.hash {
				t.Errorf("Hash = %s, want %s", h, tc.hash)
			}
		})
	}
}

// TestPermissionHashReadsMarkup: encoding/json escapes <, > and & in
// JSON; the hash covers the text, which canonical JSON writes plainly.
func TestPermissionHashReadsMarkup(t *testing.T) {
	got := mustHash(t, Capabilities{FSRead: []string{"<a>&"}}.Hash)
	want, err := pin.PermissionHash(json.RawMessage(`{"fs.read":["<a>&"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Hash = %s, want %s", got, want)
	}
}

// TestHashesChangeWithEveryField: every field of a tool, and every
// capability, changes the tool's hash; every capability changes the
// permission hash.
func TestHashesChangeWithEveryField(t *testing.T) {
	base := func() Tool {
		return Tool{Name: "t", Description: "d", Parameters: json.RawMessage(`{"properties":{"a":{"type":"string"},"b":{"type":"string"}},"type":"object"}`),
			Required: []string{"a", "b"}, Capabilities: Capabilities{FSRead: []string{"r"}, FSWrite: []string{"w"}, NetworkHosts: []string{"h.example:1"},
				Secrets: []string{"S"}, Limits: &Limits{TimeoutMS: 1000, MemoryMiB: 100, Processes: 20}}}
	}
	capVariants := map[string]func(*Capabilities){
		"fs.read":          func(c *Capabilities) { c.FSRead = []string{"r2"} },
		"fs.read order":    func(c *Capabilities) { c.FSRead = []string{"r2", "r"} },
		"fs.read as write": func(c *Capabilities) { c.FSRead, c.FSWrite = c.FSWrite, c.FSRead },
		"fs.write":         func(c *Capabilities) { c.FSWrite = nil },
		"host":             func(c *Capabilities) { c.NetworkHosts = []string{"h.example:2"} },
		"process":          func(c *Capabilities) { c.Process = true },
		"secret":           func(c *Capabilities) { c.Secrets = append(c.Secrets, "T") },
		"timeout":          func(c *Capabilities) { c.Limits.TimeoutMS++ },
		"memory":           func(c *Capabilities) { c.Limits.MemoryMiB++ },
		"processes":        func(c *Capabilities) { c.Limits.Processes++ },
		"no limits":        func(c *Capabilities) { c.Limits = nil },
	}
	toolVariants := map[string]func(*Tool){
		"name":        func(t *Tool) { t.Name = "u" },
		"description": func(t *Tool) { t.Description = "e" },
		"parameters": func(t *Tool) {
			t.Parameters = json.RawMessage(`{"properties":{"a":{"type":"string"},"b":{"type":"number"}},"type":"object"}`)
		},
		"required order": func(t *Tool) { t.Required = []string{"b", "a"} },
		"required fewer": func(t *Tool) { t.Required = []string{"a"} },
	}
	for name, change := range capVariants {
		toolVariants["capabilities: "+name] = func(t *Tool) { change(&t.Capabilities) }
	}
	b := base()
	seen := map[string]string{mustHash(t, b.Hash): "base"}
	for name, change := range toolVariants {
		tl := base()
		change(&tl)
		h := mustHash(t, tl.Hash)
		if other, ok := seen[h]; ok {
			t.Errorf("tool hash: %s and %s hash alike", name, other)
		}
		seen[h] = name
	}
	seen = map[string]string{mustHash(t, b.Capabilities.Hash): "base"}
	for name, change := range capVariants {
		c := base().Capabilities
		change(&c)
		h := mustHash(t, c.Hash)
		if other, ok := seen[h]; ok {
			t.Errorf("permission hash: %s and %s hash alike", name, other)
		}
		seen[h] = name
	}
}

func mustHash(t *testing.T, hash func() (string, error)) string {
	t.Helper()
	h, err := hash()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestToolHashes(t *testing.T) {
	e := &Extension{Tools: []Tool{
		{Name: "fetch_status", Description: "Fetch a URL and report its HTTP status.",
			Parameters: json.RawMessage(`{"properties":{"url":{"description":"The URL to fetch","type":"string"}},"type":"object"}`),
			Required:   []string{"url"}, Capabilities: Capabilities{NetworkHosts: []string{"api.example.com:443"}}},
		{Name: "ping", Parameters: json.RawMessage(`{"type":"object"}`)},
	}}
	got, err := e.ToolHashes()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"fetch_status": "sha256:af8fc175bd46a054df94993078b47699cbe5b1ad38d56619ea52767f2976e8b1",
		"ping":         "sha256:6d26f6753f319d5d181654b72c4e5194c6954e28d860ddec05c24ca32796b20f",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ToolHashes (-want +got):\n%s", diff)
	}
	e.Tools[1].Parameters = json.RawMessage(`{`)
	if _, err := e.ToolHashes(); err == nil {
		t.Error("ToolHashes of invalid parameters: no error")
	}
}

func TestInputSchema(t *testing.T) {
	for _, tc := range []struct {
		name string
		tool Tool
		want string
	}{
		{"no required", Tool{Parameters: json.RawMessage(`{"type":"object"}`)}, `{"type":"object"}`},
		{"required added, in order", Tool{Parameters: json.RawMessage(`{"type":"object","properties":{"b":{},"a":{}}}`), Required: []string{"b", "a"}},
			`{"properties":{"a":{},"b":{}},"required":["b","a"],"type":"object"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.tool.InputSchema()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("InputSchema (-want +got):\n%s", diff)
			}
		})
	}
	for _, params := range []string{``, `null`, `[]`, `{`} {
		if _, err := (&Tool{Name: "t", Parameters: json.RawMessage(params)}).InputSchema(); err == nil {
			t.Errorf("InputSchema of parameters %q: no error", params)
		}
	}
}

func TestCompare(t *testing.T) {
	old := map[string]string{"a": "h1", "b": "h2", "c": "h3", "d": "h4"}
	for _, tc := range []struct {
		name                    string
		old, new                map[string]string
		changed, added, removed []string
	}{
		{"the same", old, old, nil, nil, nil},
		{"changed, added and removed, each alphabetical",
			old, map[string]string{"d": "h4x", "a": "h1x", "b": "h2", "z": "h9", "e": "h5"},
			[]string{"a", "d"}, []string{"e", "z"}, []string{"c"}},
		{"a rename is removed plus added, whatever the hash",
			old, map[string]string{"a": "h1", "b": "h2", "c": "h3", "d2": "h4"},
			nil, []string{"d2"}, []string{"d"}},
		{"every tool removed", old, map[string]string{}, nil, nil, []string{"a", "b", "c", "d"}},
		{"from no tools", map[string]string{}, map[string]string{"b": "x", "a": "y"}, nil, []string{"a", "b"}, nil},
		{"a record without hashes: every tool changed", nil, map[string]string{"z": "h", "a": "h", "B": "h"}, []string{"B", "a", "z"}, nil, nil},
		{"a record without hashes, no tools", nil, nil, nil, nil, nil},
		{"by bytes, case first", old, map[string]string{"a": "x", "B": "y", "b": "z", "c": "h3", "d": "h4"}, []string{"a", "b"}, []string{"B"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed, added, removed := Compare(tc.old, tc.new)
			got := [][]string{changed, added, removed}
			want := [][]string{tc.changed, tc.added, tc.removed}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Compare (-want +got as changed, added, removed):\n%s", diff)
			}
		})
	}
}
