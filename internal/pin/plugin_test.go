package pin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The vectors in this file are frozen, as those in golden_test.go are:
// installed plugins' provenance and approvals hold these hashes.

// goldenHash is the SHA-256 of the golden bytes, computed here without the
// code under test.
func goldenHash(encoding string) string {
	sum := sha256.Sum256([]byte(encoding))
	return "sha256:" + hex.EncodeToString(sum[:])
}

var pluginToolGoldens = []struct {
	name     string
	tool     PluginTool
	encoding string
	hash     string
}{
	{
		name: "fetch_status",
		tool: PluginTool{Name: "fetch_status", Description: "Fetch a URL and report its HTTP status.",
			Parameters: json.RawMessage(`{
				"type": "object",
				"properties": {"url": {"type": "string", "description": "The URL to fetch"}}
			}`),
			Required:     []string{"url"},
			Capabilities: json.RawMessage(`{"network.hosts": ["api.example.com:443"]}`)},
		encoding: "zero-plugin-tool-v1\n" +
			"name 12:fetch_status\n" +
			"description 39:Fetch a URL and report its HTTP status.\n" +
			`parameters 89:{"properties":{"url":{"description":"The URL to fetch","type":"string"}},"type":"object"}` + "\n" +
			"required 1\n" +
			"3:url\n" +
			`capabilities 41:{"network.hosts":["api.example.com:443"]}` + "\n",
		hash: "sha256:af8fc175bd46a054df94993078b47699cbe5b1ad38d56619ea52767f2976e8b1",
	},
	{
		name: "no description, no required, no capabilities",
		tool: PluginTool{Name: "ping", Parameters: json.RawMessage(`{"type":"object"}`), Capabilities: json.RawMessage(`{}`)},
		encoding: "zero-plugin-tool-v1\n" +
			"name 4:ping\n" +
			"description 0:\n" +
			`parameters 17:{"type":"object"}` + "\n" +
			"required 0\n" +
			"capabilities 2:{}\n",
		hash: "sha256:6d26f6753f319d5d181654b72c4e5194c6954e28d860ddec05c24ca32796b20f",
	},
	{
		name: "required in the order written, numbers as written, unicode kept",
		tool: PluginTool{Name: "sum.v2", Description: "Line one\nréponse ☃ <b>&",
			Parameters:   json.RawMessage(`{"type":"object","properties":{"b":{"type":"number","maximum":1.0e3},"a":{"type":"string"}}}`),
			Required:     []string{"b", "a"},
			Capabilities: json.RawMessage(`{"process":true,"limits":{"timeout_ms":1000},"fs.read":["notes"]}`)},
		encoding: "zero-plugin-tool-v1\n" +
			"name 6:sum.v2\n" +
			"description 26:Line one\nréponse ☃ <b>&\n" +
			`parameters 92:{"properties":{"a":{"type":"string"},"b":{"maximum":1.0e3,"type":"number"}},"type":"object"}` + "\n" +
			"required 2\n" +
			"1:b\n" +
			"1:a\n" +
			`capabilities 65:{"fs.read":["notes"],"limits":{"timeout_ms":1000},"process":true}` + "\n",
		hash: "sha256:cd27f544c0c87567aaa9f2405de7d232017600517587b5e3aeaf5f9850fb36b4",
	},
	{
		name: "empty parameters and capabilities are null, an empty required name is kept",
		tool: PluginTool{Name: "x", Required: []string{""}},
		encoding: "zero-plugin-tool-v1\n" +
			"name 1:x\n" +
			"description 0:\n" +
			"parameters 4:null\n" +
			"required 1\n" +
			"0:\n" +
			"capabilities 4:null\n",
		hash: "sha256:ee01f9d24c4a4320708e9c3fb9151ed7e85a1f36748e391e745d6c13f4bfbcfc",
	},
}

func TestPluginToolGolden(t *testing.T) {
	for _, g := range pluginToolGoldens {
		t.Run(g.name, func(t *testing.T) {
			enc, err := pluginToolEncoding(g.tool)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(g.encoding, string(enc)); diff != "" {
				t.Errorf("encoding (-want +got):\n%s", diff)
			}
			got, err := PluginToolHash(g.tool)
			if err != nil {
				t.Fatal(err)
			}
			if got != g.hash {
				t.Errorf("PluginToolHash = %s, want %s", got, g.hash)
			}
			if want := goldenHash(g.encoding); g.hash != want {
				t.Errorf("golden hash %s is not the hash of the golden bytes (%s)", g.hash, want)
			}
		})
	}
}

var permissionGoldens = []struct {
	name         string
	capabilities string
	encoding     string
	hash         string
}{
	{
		name:         "nothing",
		capabilities: `{}`,
		encoding:     "zero-plugin-permissions-v1\ncapabilities 2:{}\n",
		hash:         "sha256:103155c703992b18510b63824255856ee35cd9af96cda536ccd32f2056eb6ebf",
	},
	{
		name:         "empty is null",
		capabilities: ``,
		encoding:     "zero-plugin-permissions-v1\ncapabilities 4:null\n",
		hash:         "sha256:10cc4c66679f1d040c2b131759e0a22a0daa774eaad915c9247b6eeb095e6357",
	},
	{
		name: "everything, keys sorted, lists in the order written",
		capabilities: `{
			"secrets": ["API_KEY"],
			"process": true,
			"network.hosts": ["api.example.com:443", "[::1]:8080"],
			"limits": {"timeout_ms": 10000, "memory_mib": 128, "processes": 16},
			"fs.write": ["out"],
			"fs.read": ["notes", "docs/a b"]
		}`,
		encoding: "zero-plugin-permissions-v1\n" +
			`capabilities 203:{"fs.read":["notes","docs/a b"],"fs.write":["out"],"limits":{"memory_mib":128,"processes":16,"timeout_ms":10000},` +
			`"network.hosts":["api.example.com:443","[::1]:8080"],"process":true,"secrets":["API_KEY"]}` + "\n",
		hash: "sha256:7d15912d6136719fb8347ced5b28364d8d5ed5bad0cd88c48b14454a17e1e558",
	},
}

func TestPermissionGolden(t *testing.T) {
	for _, g := range permissionGoldens {
		t.Run(g.name, func(t *testing.T) {
			enc, err := permissionsEncoding(json.RawMessage(g.capabilities))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(g.encoding, string(enc)); diff != "" {
				t.Errorf("encoding (-want +got):\n%s", diff)
			}
			got, err := PermissionHash(json.RawMessage(g.capabilities))
			if err != nil {
				t.Fatal(err)
			}
			if got != g.hash {
				t.Errorf("PermissionHash = %s, want %s", got, g.hash)
			}
			if want := goldenHash(g.encoding); g.hash != want {
				t.Errorf("golden hash %s is not the hash of the golden bytes (%s)", g.hash, want)
			}
		})
	}
}

var pluginApprovalGoldens = []struct {
	name     string
	approval PluginApproval
	encoding string
	hash     string
}{
	{
		name: "two tools, sorted by name",
		approval: PluginApproval{
			Commit:         "0123456789abcdef0123456789abcdef01234567",
			PermissionHash: "sha256:" + strings.Repeat("a", 64),
			Tools: map[string]string{
				"read_note":    "sha256:" + strings.Repeat("2", 64),
				"fetch_status": "sha256:" + strings.Repeat("1", 64),
			},
			StagedHash: "sha256:" + strings.Repeat("b", 64),
			HostHash:   "sha256:" + strings.Repeat("c", 64),
			Program:    "/usr/bin/node",
		},
		encoding: "zero-plugin-approval-v1\n" +
			"commit 40:0123456789abcdef0123456789abcdef01234567\n" +
			"permissions 71:sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n" +
			"tools 2\n" +
			"12:fetch_status 71:sha256:1111111111111111111111111111111111111111111111111111111111111111\n" +
			"9:read_note 71:sha256:2222222222222222222222222222222222222222222222222222222222222222\n" +
			"staged 71:sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n" +
			"host 71:sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\n" +
			"program 13:/usr/bin/node\n",
		hash: "sha256:7e8b61eecd88756e54c70eea04ded929d8b46a88cd618d95227e03bca60fd348",
	},
	{
		name:     "zero value",
		approval: PluginApproval{},
		encoding: "zero-plugin-approval-v1\ncommit 0:\npermissions 0:\ntools 0\nstaged 0:\nhost 0:\nprogram 0:\n",
		hash:     "sha256:4200878c02693207c469e15df733ba21c869d80f4ff972deb42905161c22049a",
	},
}

func TestPluginFingerprintGolden(t *testing.T) {
	for _, g := range pluginApprovalGoldens {
		t.Run(g.name, func(t *testing.T) {
			if diff := cmp.Diff(g.encoding, string(pluginApprovalEncoding(g.approval))); diff != "" {
				t.Errorf("encoding (-want +got):\n%s", diff)
			}
			if got := PluginFingerprint(g.approval); got != g.hash {
				t.Errorf("PluginFingerprint = %s, want %s", got, g.hash)
			}
			if want := goldenHash(g.encoding); g.hash != want {
				t.Errorf("golden hash %s is not the hash of the golden bytes (%s)", g.hash, want)
			}
		})
	}
}

func basePluginTool() PluginTool {
	return PluginTool{
		Name:         "fetch_status",
		Description:  "Fetch a URL.",
		Parameters:   json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"},"n":{"type":"integer"}}}`),
		Required:     []string{"url", "n"},
		Capabilities: json.RawMessage(`{"network.hosts":["api.example.com:443"],"secrets":["API_KEY"]}`),
	}
}

// TestPluginToolHashChangesWithEveryField: each field, and each way of
// moving a value from one field to the next, gives its own hash.
func TestPluginToolHashChangesWithEveryField(t *testing.T) {
	variants := map[string]func(*PluginTool){
		"name":                       func(p *PluginTool) { p.Name = "fetch_statuz" },
		"name case":                  func(p *PluginTool) { p.Name = "Fetch_status" },
		"description":                func(p *PluginTool) { p.Description = "Fetch a URL!" },
		"description trailing space": func(p *PluginTool) { p.Description += " " },
		"name/description boundary":  func(p *PluginTool) { p.Name, p.Description = "fetch_statusF", "etch a URL." },
		"parameter type": func(p *PluginTool) {
			p.Parameters = json.RawMessage(`{"type":"object","properties":{"url":{"type":"number"},"n":{"type":"integer"}}}`)
		},
		"parameter description": func(p *PluginTool) {
			p.Parameters = json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","description":"x"},"n":{"type":"integer"}}}`)
		},
		"no parameters":              func(p *PluginTool) { p.Parameters = nil },
		"required order":             func(p *PluginTool) { p.Required = []string{"n", "url"} },
		"required dropped":           func(p *PluginTool) { p.Required = p.Required[:1] },
		"required empty":             func(p *PluginTool) { p.Required = nil },
		"required name with a space": func(p *PluginTool) { p.Required = []string{"url n"} },
		"required empty name":        func(p *PluginTool) { p.Required = append(p.Required, "") },
		"capabilities host": func(p *PluginTool) {
			p.Capabilities = json.RawMessage(`{"network.hosts":["api.example.com:444"],"secrets":["API_KEY"]}`)
		},
		"capabilities secret dropped": func(p *PluginTool) { p.Capabilities = json.RawMessage(`{"network.hosts":["api.example.com:443"]}`) },
		"capabilities process": func(p *PluginTool) {
			p.Capabilities = json.RawMessage(`{"network.hosts":["api.example.com:443"],"secrets":["API_KEY"],"process":true}`)
		},
		"capabilities empty":         func(p *PluginTool) { p.Capabilities = json.RawMessage(`{}`) },
		"capabilities none":          func(p *PluginTool) { p.Capabilities = nil },
		"parameters as capabilities": func(p *PluginTool) { p.Parameters, p.Capabilities = p.Capabilities, p.Parameters },
	}
	seen := map[string]string{mustPluginToolHash(t, basePluginTool()): "base"}
	for name, change := range variants {
		p := basePluginTool()
		change(&p)
		h := mustPluginToolHash(t, p)
		if other, ok := seen[h]; ok {
			t.Errorf("%s and %s hash alike", name, other)
		}
		seen[h] = name
	}
}

func mustPluginToolHash(t *testing.T, p PluginTool) string {
	t.Helper()
	h, err := PluginToolHash(p)
	if err != nil {
		t.Fatalf("PluginToolHash(%+v): %v", p, err)
	}
	return h
}

// TestPluginHashesIgnoreLayout: key order, whitespace and escapes that
// decode alike do not change a tool's or a plugin's hash.
func TestPluginHashesIgnoreLayout(t *testing.T) {
	want := mustPluginToolHash(t, basePluginTool())
	p := basePluginTool()
	p.Parameters = json.RawMessage("{ \"properties\" : {\"n\":{\"type\":\"integer\"},\n\"url\":{\"type\":\"str\\u0069ng\"}}, \"type\":\"object\" }")
	p.Capabilities = json.RawMessage(`{"secrets":["API_KEY"], "network.hosts":["api.example.com:443"]}`)
	if got := mustPluginToolHash(t, p); got != want {
		t.Error("the layout of the JSON changed the tool hash")
	}
	a, err := PermissionHash(json.RawMessage(`{"process":true,"fs.read":["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := PermissionHash(json.RawMessage(" {\"fs.read\" : [\"\\u0061\"], \"process\":true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("the layout of the JSON changed the permission hash")
	}
}

// TestPermissionHashChanges: every capability changes the permission
// hash, and so does the order of a list (a plugin is hashed as written).
func TestPermissionHashChanges(t *testing.T) {
	seen := map[string]string{}
	for name, caps := range map[string]string{
		"nothing":          `{}`,
		"null":             `null`,
		"fs.read":          `{"fs.read":["a"]}`,
		"fs.write":         `{"fs.write":["a"]}`,
		"fs.read two":      `{"fs.read":["a","b"]}`,
		"fs.read reversed": `{"fs.read":["b","a"]}`,
		"host":             `{"network.hosts":["a:1"]}`,
		"host port":        `{"network.hosts":["a:2"]}`,
		"process":          `{"process":true}`,
		"process false":    `{"process":false}`,
		"secret":           `{"secrets":["A"]}`,
		"timeout":          `{"limits":{"timeout_ms":1000}}`,
		"memory":           `{"limits":{"memory_mib":1000}}`,
		"processes":        `{"limits":{"processes":1000}}`,
		"empty limits":     `{"limits":{}}`,
	} {
		h, err := PermissionHash(json.RawMessage(caps))
		if err != nil {
			t.Fatal(err)
		}
		if other, ok := seen[h]; ok {
			t.Errorf("%s and %s hash alike", name, other)
		}
		seen[h] = name
	}
}

// TestPluginHashesRefuseBadJSON: what canonical JSON refuses, the plugin
// hashes refuse, naming the field.
func TestPluginHashesRefuseBadJSON(t *testing.T) {
	for _, s := range []string{`{`, `{"a":1,"a":2}`, "\"\xff\"", `{} {}`, `[1,]`} {
		p := basePluginTool()
		p.Parameters = json.RawMessage(s)
		if _, err := PluginToolHash(p); !errors.Is(err, ErrInvalidJSON) || !strings.Contains(err.Error(), "parameters") {
			t.Errorf("parameters %q: err = %v, want ErrInvalidJSON naming the parameters", s, err)
		}
		p = basePluginTool()
		p.Capabilities = json.RawMessage(s)
		if _, err := PluginToolHash(p); !errors.Is(err, ErrInvalidJSON) || !strings.Contains(err.Error(), "capabilities") {
			t.Errorf("tool capabilities %q: err = %v, want ErrInvalidJSON naming the capabilities", s, err)
		}
		if _, err := PermissionHash(json.RawMessage(s)); !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("capabilities %q: err = %v, want ErrInvalidJSON", s, err)
		}
	}
}

// TestPluginFingerprintChangesWithEveryField: each part of an approval
// changes the fingerprint, and no value moved from one part to the next
// collides.
func TestPluginFingerprintChangesWithEveryField(t *testing.T) {
	base := func() PluginApproval {
		return PluginApproval{Commit: "c1", PermissionHash: "p1", Tools: map[string]string{"a": "h1", "b": "h2"},
			StagedHash: "s1", HostHash: "o1", Program: "/usr/bin/node"}
	}
	variants := map[string]func(*PluginApproval){
		"commit":              func(a *PluginApproval) { a.Commit = "c2" },
		"permissions":         func(a *PluginApproval) { a.PermissionHash = "p2" },
		"tool hash":           func(a *PluginApproval) { a.Tools = map[string]string{"a": "h1", "b": "h3"} },
		"tool renamed":        func(a *PluginApproval) { a.Tools = map[string]string{"a": "h1", "c": "h2"} },
		"tool added":          func(a *PluginApproval) { a.Tools["c"] = "h3" },
		"tool removed":        func(a *PluginApproval) { delete(a.Tools, "b") },
		"no tools":            func(a *PluginApproval) { a.Tools = nil },
		"staged":              func(a *PluginApproval) { a.StagedHash = "s2" },
		"host":                func(a *PluginApproval) { a.HostHash = "o2" },
		"program":             func(a *PluginApproval) { a.Program = "/usr/local/bin/node" },
		"commit/permissions":  func(a *PluginApproval) { a.Commit, a.PermissionHash = "c1p", "1" },
		"staged/host":         func(a *PluginApproval) { a.StagedHash, a.HostHash = "", "s1o1" },
		"host/program":        func(a *PluginApproval) { a.HostHash, a.Program = "", "o1/usr/bin/node" },
		"tool name into hash": func(a *PluginApproval) { a.Tools = map[string]string{"a": "h1", "": "b h2"} },
	}
	seen := map[string]string{PluginFingerprint(base()): "base"}
	for name, change := range variants {
		a := base()
		change(&a)
		h := PluginFingerprint(a)
		if other, ok := seen[h]; ok {
			t.Errorf("%s and %s have the same fingerprint", name, other)
		}
		seen[h] = name
	}
}

// TestCanonicalJSONSaysWhere: a repeated key deep in a document is named
// with the JSON Pointer of the object that repeats it.
func TestCanonicalJSONSaysWhere(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1,"a":2}`, `invalid JSON: duplicate key "a"`},
		{`{"x":[0,{"y":{"b":1,"b":2}}]}`, `invalid JSON: duplicate key "b" (at /x/1/y)`},
		{`{"a/b~":{"k":1,"k":1}}`, `invalid JSON: duplicate key "k" (at /a~1b~0)`},
	} {
		_, err := CanonicalJSON(json.RawMessage(tc.in))
		if !errors.Is(err, ErrInvalidJSON) {
			t.Fatalf("%s: err = %v, want ErrInvalidJSON", tc.in, err)
		}
		if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
}

// FuzzPluginToolHash checks that PluginToolHash never panics, is
// deterministic, agrees with the canonical forms of its JSON, and that no
// byte moved between name, description and the required list keeps the
// hash.
func FuzzPluginToolHash(f *testing.F) {
	f.Add("fetch_status", "Fetch.", []byte(`{"type":"object","properties":{"url":{"type":"string"}}}`), "url", []byte(`{"network.hosts":["a:1"]}`))
	f.Add("", "", []byte(nil), "", []byte(nil))
	f.Add("x", "y\nrequired 0", []byte(`{"a":1,"a":2}`), "a\x00b", []byte(`{"fs.read":["\u0061"]}`))
	f.Fuzz(func(t *testing.T, name, desc string, params []byte, required string, caps []byte) {
		var req []string
		if required != "" {
			req = strings.Split(required, "\x00")
		}
		p := PluginTool{Name: name, Description: desc, Parameters: params, Required: req, Capabilities: caps}
		h1, err1 := PluginToolHash(p)
		h2, err2 := PluginToolHash(p)
		if h1 != h2 || (err1 == nil) != (err2 == nil) {
			t.Fatal("PluginToolHash is not deterministic")
		}
		if err1 != nil {
			if !errors.Is(err1, ErrInvalidJSON) {
				t.Fatalf("error %v does not wrap ErrInvalidJSON", err1)
			}
			return
		}
		cp, err := CanonicalJSON(params)
		if err != nil {
			t.Fatal(err)
		}
		cc, err := CanonicalJSON(caps)
		if err != nil {
			t.Fatal(err)
		}
		canon := PluginTool{Name: name, Description: desc, Parameters: cp, Required: req, Capabilities: cc}
		if h3, err := PluginToolHash(canon); err != nil || h3 != h1 {
			t.Fatalf("the canonical forms hash differently: %v", err)
		}
		if ph, err := PermissionHash(cc); err != nil || ph == h1 {
			t.Fatalf("a permission hash equals a tool hash, or fails: %v", err)
		}
		if len(desc) > 0 {
			moved := p
			moved.Name, moved.Description = name+desc[:1], desc[1:]
			if h4, err := PluginToolHash(moved); err != nil || h4 == h1 {
				t.Fatalf("moving a byte from description to name keeps the hash: %v", err)
			}
			moved = p
			moved.Description, moved.Required = desc[1:], append([]string{desc[:1]}, req...)
			if h5, err := PluginToolHash(moved); err != nil || h5 == h1 {
				t.Fatalf("moving a byte from description to required keeps the hash: %v", err)
			}
		}
	})
}
