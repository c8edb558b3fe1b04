package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// manifest wraps Zero's part in a manifest named "p".
func manifest(zero string) string {
	return `{"name": "p", "extensions": {"dev.zero.plugin": ` + zero + `}}`
}

// withTools is a manifest whose Zero's part has the entry plugin.js, the
// capabilities caps (a JSON object) and the tools given (JSON objects).
func withTools(caps string, tools ...string) string {
	return manifest(`{"entry": "plugin.js", "capabilities": ` + caps + `, "tools": [` + strings.Join(tools, ", ") + `]}`)
}

// tool is a tool named name taking one string, s, with the capabilities
// caps (a JSON object).
func tool(name, caps string) string {
	return `{"name": "` + name + `", "description": "d", "parameters": {"type": "object", "properties": {"s": {"type": "string"}}}, ` +
		`"required": ["s"], "capabilities": ` + caps + `}`
}

// withParams is a manifest with one tool, t, whose parameters are params.
func withParams(params string) string {
	return withTools(`{}`, `{"name": "t", "parameters": `+params+`}`)
}

// withCaps is a manifest whose plugin has the capabilities caps.
func withCaps(caps string) string {
	return withTools(caps, tool("t", `{}`))
}

// refusals are manifests Parse refuses, each with what its error must say.
// FuzzParse starts from them.
var refusals = []struct {
	name, json string
	want       []string
}{
	{"byte order mark", "\xef\xbb\xbf" + `{"name": "p"}`, []string{"byte order mark"}},
	{"invalid UTF-8", "{\"name\": \"p\", \"description\": \"\xff\"}", []string{"not valid UTF-8"}},
	{"invalid JSON", `{"name": "p",}`, []string{"invalid JSON"}},
	{"trailing data", `{"name": "p"} {}`, []string{"trailing data"}},
	{"empty", ``, []string{"must be a JSON object, not nothing"}},
	{"not an object", `["name"]`, []string{"must be a JSON object, not an array"}},
	{"null", `null`, []string{"must be a JSON object, not null"}},
	{"duplicate top-level key", `{"name": "p", "name": "q"}`, []string{`duplicate key "name"`}},
	{"duplicate key deep", withParams(`{"type": "object", "properties": {"a": {"type": "string"}, "a": {"type": "number"}}}`),
		[]string{`duplicate key "a" (at /extensions/dev.zero.plugin/tools/0/parameters/properties)`}},
	{"duplicate key in another client's part", `{"name": "p", "extensions": {"com.example": {"x": 1, "x": 2}}}`,
		[]string{`duplicate key "x" (at /extensions/com.example)`}},
	{"unknown top-level key", `{"name": "p", "tools": []}`, []string{`top level: unknown key "tools"`, "Agent Plugins 1.0 defines only", `extensions["dev.zero.plugin"]`}},
	{"top-level key in another case", `{"Name": "p"}`, []string{`unknown key "Name"`, `"name" is missing`}},
	{"name missing", `{"version": "1"}`, []string{`"name" is missing`}},
	{"name not a string", `{"name": 5}`, []string{`"name": must be a string, not a number`}},
	{"name null", `{"name": null}`, []string{`"name": must be a string, not null`}},
	{"name empty", `{"name": ""}`, []string{`name "" is not a valid plugin name`}},
	{"name with a space", `{"name": "my plugin"}`, []string{`name "my plugin" is not a valid plugin name`}},
	{"name in upper case", `{"name": "Notes"}`, []string{`name "Notes" is not a valid plugin name`, "lower-case"}},
	{"name with a slash", `{"name": "a/b"}`, []string{`name "a/b"`}},
	{"name starting with a dot", `{"name": ".p"}`, []string{`name ".p"`}},
	{"name too long", `{"name": "` + strings.Repeat("a", 65) + `"}`, []string{"is not a valid plugin name", "1-64"}},
	{"version not a string", `{"name": "p", "version": 1}`, []string{`"version": must be a string, not a number`}},
	{"description not a string", `{"name": "p", "description": ["a"]}`, []string{`"description": must be a string, not an array`}},
	{"homepage not a string", `{"name": "p", "homepage": {}}`, []string{`"homepage": must be a string, not an object`}},
	{"license null", `{"name": "p", "license": null}`, []string{`"license": must be a string, not null`}},
	{"$schema not a string", `{"name": "p", "$schema": true}`, []string{`"$schema": must be a string, not true or false`}},
	{"keywords not a list", `{"name": "p", "keywords": "a"}`, []string{`"keywords": must be an array, not a string`}},
	{"keyword not a string", `{"name": "p", "keywords": ["a", 1]}`, []string{`"keywords"[1]: must be a string, not a number`}},
	{"author a number", `{"name": "p", "author": 1}`, []string{`"author": must be a string or an object, not a number`}},
	{"repository an array", `{"name": "p", "repository": []}`, []string{`"repository": must be a string or an object, not an array`}},
	{"extensions not an object", `{"name": "p", "extensions": []}`, []string{`"extensions": must be an object, not an array`}},
	{"Zero's part null", manifest(`null`), []string{`extensions["dev.zero.plugin"]: must be an object, not null`}},
	{"Zero's part a string", manifest(`"plugin.js"`), []string{`extensions["dev.zero.plugin"]: must be an object, not a string`}},
	{"Zero's part with an unknown key", manifest(`{"entry": "plugin.js", "entrypoint": "x.js", "tools": [` + tool("t", `{}`) + `]}`),
		[]string{`extensions["dev.zero.plugin"]: unknown key "entrypoint" (allowed: entry, capabilities, tools)`}},
	{"Zero's part with a key in another case", manifest(`{"Entry": "plugin.js", "tools": [` + tool("t", `{}`) + `]}`),
		[]string{`unknown key "Entry"`, `"entry" is missing`}},
	{"entry missing", manifest(`{"tools": [` + tool("t", `{}`) + `]}`), []string{`"entry" is missing`}},
	{"entry not a string", manifest(`{"entry": 1, "tools": [` + tool("t", `{}`) + `]}`), []string{`.entry: must be a string`}},
	{"entry outside the folder", manifest(`{"entry": "../plugin.js", "tools": [` + tool("t", `{}`) + `]}`), []string{`entry "../plugin.js" must be a relative path to a .js file`}},
	{"entry absolute", manifest(`{"entry": "/plugin.js", "tools": [` + tool("t", `{}`) + `]}`), []string{`entry "/plugin.js"`}},
	{"entry not .js", manifest(`{"entry": "plugin.ts", "tools": [` + tool("t", `{}`) + `]}`), []string{`entry "plugin.ts"`}},
	{"entry with ./", manifest(`{"entry": "./plugin.js", "tools": [` + tool("t", `{}`) + `]}`), []string{`entry "./plugin.js"`}},
	{"entry hidden", manifest(`{"entry": ".plugin.js", "tools": [` + tool("t", `{}`) + `]}`), []string{`entry ".plugin.js"`}},
	{"entry with //", manifest(`{"entry": "a//plugin.js", "tools": [` + tool("t", `{}`) + `]}`), []string{`entry "a//plugin.js"`}},
	{"entry with a backslash", manifest(`{"entry": "a\\plugin.js", "tools": [` + tool("t", `{}`) + `]}`), []string{`entry "a\\plugin.js"`}},
	{"entry like an option", manifest(`{"entry": "-r.js", "tools": [` + tool("t", `{}`) + `]}`), []string{`entry "-r.js"`}},
	{"tools missing", manifest(`{"entry": "plugin.js"}`), []string{`"tools" is missing`}},
	{"tools empty", manifest(`{"entry": "plugin.js", "tools": []}`), []string{`"tools" is empty`}},
	{"tools not a list", manifest(`{"entry": "plugin.js", "tools": {}}`), []string{`.tools: must be an array, not an object`}},
	{"tool not an object", withTools(`{}`, `"t"`), []string{`.tools[0]: must be an object, not a string`}},
	{"tool with an unknown key", withTools(`{}`, `{"name": "t", "parameters": {"type": "object"}, "inputSchema": {}}`),
		[]string{`.tools[0]: unknown key "inputSchema" (allowed: name, description, parameters, required, capabilities)`}},
	{"tool name missing", withTools(`{}`, `{"parameters": {"type": "object"}}`), []string{`.tools[0]: "name" is missing`}},
	{"tool name empty", withTools(`{}`, tool("", `{}`)), []string{`tool name "" is empty`}},
	{"tool name with a space", withTools(`{}`, tool("read file", `{}`)), []string{`tool name "read file" holds ' '`}},
	{"tool name with a slash", withTools(`{}`, tool("a/b", `{}`)), []string{`tool name "a/b" holds '/'`}},
	{"tool name not ASCII", withTools(`{}`, tool("lés", `{}`)), []string{`tool name "lés" holds 'é'`}},
	{"tool name too long", withTools(`{}`, tool(strings.Repeat("t", 129), `{}`)), []string{"is 129 bytes long: MCP allows at most 128"}},
	{"duplicate tool names", withTools(`{}`, tool("t", `{}`), tool("t", `{}`)), []string{`two tools are named "t"`}},
	{"tool names differing in case", withTools(`{}`, tool("Read", `{}`), tool("read", `{}`)), []string{`tools "Read" and "read" differ only in case`}},
	{"description not a string", withTools(`{}`, `{"name": "t", "description": 1, "parameters": {"type": "object"}}`), []string{`tool "t".description: must be a string`}},
	{"parameters missing", withTools(`{}`, `{"name": "t"}`), []string{`tool "t": "parameters" is missing`}},
	{"parameters an array", withParams(`[]`), []string{`tool "t".parameters: must be a JSON Schema object, not an array`}},
	{"parameters a string", withParams(`"object"`), []string{`tool "t".parameters: must be a JSON Schema object, not a string`}},
	{"parameters true", withParams(`true`), []string{`must be a JSON Schema object, not true or false`}},
	{"parameters without a type", withParams(`{"properties": {}}`), []string{`tool "t".parameters: "type" is missing`}},
	{"parameters of type array", withParams(`{"type": "array"}`), []string{`tool "t".parameters: "type" is "array"`}},
	{"parameters with a list of types", withParams(`{"type": ["object"]}`), []string{`tool "t".parameters.type: must be a string, not an array`}},
	{"parameters with required", withParams(`{"type": "object", "properties": {"a": {}}, "required": ["a"]}`),
		[]string{`tool "t".parameters: "required" belongs in the tool's own "required" list`}},
	{"properties not an object", withParams(`{"type": "object", "properties": []}`), []string{`.parameters.properties: must be an object of property schemas, not an array`}},
	{"invalid schema", withParams(`{"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}`), []string{`tool "t".parameters: not a JSON Schema Zero can use`}},
	{"a keyword of the wrong shape", withParams(`{"type": "object", "properties": {"a": {"type": "object", "required": "b"}}}`), []string{`tool "t".parameters: not a JSON Schema:`}},
	{"both $defs and definitions", withParams(`{"type": "object", "$defs": {}, "definitions": {}}`), []string{`tool "t".parameters: not a JSON Schema Zero can use`}},
	{"remote $ref", withParams(`{"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}`),
		[]string{`tool "t".parameters:`, "https://example.com/s.json", "Zero never fetches a schema"}},
	{"required not a list", withTools(`{}`, `{"name": "t", "parameters": {"type": "object"}, "required": "a"}`), []string{`tool "t".required: must be an array, not a string`}},
	{"required not strings", withTools(`{}`, `{"name": "t", "parameters": {"type": "object", "properties": {"a": {}}}, "required": [1]}`), []string{`tool "t".required[0]: must be a string`}},
	{"required not a property", withTools(`{}`, `{"name": "t", "parameters": {"type": "object", "properties": {"a": {}}}, "required": ["b"]}`),
		[]string{`tool "t": required names "b", which is not among parameters.properties`}},
	{"required without properties", withTools(`{}`, `{"name": "t", "parameters": {"type": "object"}, "required": ["a"]}`),
		[]string{`required names "a", which is not among parameters.properties`}},
	{"required twice", withTools(`{}`, `{"name": "t", "parameters": {"type": "object", "properties": {"a": {}}}, "required": ["a", "a"]}`),
		[]string{`tool "t": required names "a" twice`}},
	{"capabilities not an object", withCaps(`[]`), []string{`extensions["dev.zero.plugin"].capabilities: must be an object, not an array`}},
	{"unknown capability", withCaps(`{"network": ["a.example:443"]}`), []string{`.capabilities: unknown key "network" (allowed: fs.read, fs.write, network.hosts, process, secrets, limits)`}},
	{"fs.read not a list", withCaps(`{"fs.read": "notes"}`), []string{`.capabilities["fs.read"]: must be an array, not a string`}},
	{"fs.read item not a string", withCaps(`{"fs.read": [null]}`), []string{`.capabilities["fs.read"][0]: must be a string, not null`}},
	{"path empty", withCaps(`{"fs.read": [""]}`), []string{`fs.read "" is empty`}},
	{"path absolute", withCaps(`{"fs.read": ["/etc"]}`), []string{`fs.read "/etc" is absolute`}},
	{"path up", withCaps(`{"fs.write": ["../x"]}`), []string{`fs.write "../x" leaves the thread workspace`}},
	{"path up inside", withCaps(`{"fs.read": ["a/../../b"]}`), []string{`fs.read "a/../../b" leaves the thread workspace`}},
	{"path ..", withCaps(`{"fs.read": [".."]}`), []string{`fs.read ".." leaves the thread workspace`}},
	{"path not clean", withCaps(`{"fs.read": ["a/./b"]}`), []string{`fs.read "a/./b" is not clean: write "a/b"`}},
	{"path with a final slash", withCaps(`{"fs.read": ["notes/"]}`), []string{`fs.read "notes/" is not clean: write "notes"`}},
	{"path with ./", withCaps(`{"fs.read": ["./notes"]}`), []string{`fs.read "./notes" is not clean: write "notes"`}},
	{"path with ~", withCaps(`{"fs.read": ["~/notes"]}`), []string{`fs.read "~/notes" starts with ~`}},
	{"path with a comma", withCaps(`{"fs.read": ["a,/etc"]}`), []string{`fs.read "a,/etc" holds a comma`}},
	{"path with a wildcard", withCaps(`{"fs.write": ["a*"]}`), []string{`fs.write "a*" holds *`}},
	{"path with a backslash", withCaps(`{"fs.read": ["a\\b"]}`), []string{`fs.read "a\\b" holds \`}},
	{"path with a tab", withCaps(`{"fs.read": ["a\tb"]}`), []string{`holds the control or invisible character U+0009`}},
	{"path with a bidi control", withCaps(`{"fs.read": ["a\u202eb"]}`), []string{`holds the control or invisible character U+202E`}},
	{"path with a no-break space", withCaps(`{"fs.read": ["a\u00a0b"]}`), []string{`holds the space character U+00A0`}},
	{"path with a leading space", withCaps(`{"fs.read": ["a/ b"]}`), []string{`fs.read "a/ b" has a name that starts or ends with a space`}},
	{"path too long", withCaps(`{"fs.read": ["` + strings.Repeat("a", MaxPath+1) + `"]}`), []string{"is over 1024 bytes"}},
	{"path twice", withCaps(`{"fs.read": ["a", "a"]}`), []string{`fs.read lists "a" twice`}},
	{"path read and written", withCaps(`{"fs.read": ["a"], "fs.write": ["a"]}`), []string{`"a" is in both fs.read and fs.write`}},
	{"host without a port", withCaps(`{"network.hosts": ["api.example.com"]}`), []string{`network.hosts "api.example.com" has no port`}},
	{"port 0", withCaps(`{"network.hosts": ["api.example.com:0"]}`), []string{`has the port "0"`}},
	{"port too big", withCaps(`{"network.hosts": ["api.example.com:65536"]}`), []string{`has the port "65536"`}},
	{"port with a leading zero", withCaps(`{"network.hosts": ["api.example.com:0443"]}`), []string{`has the port "0443"`}},
	{"port by name", withCaps(`{"network.hosts": ["api.example.com:https"]}`), []string{`has the port "https"`}},
	{"no host", withCaps(`{"network.hosts": [":443"]}`), []string{`network.hosts ":443" has no host`}},
	{"host in upper case", withCaps(`{"network.hosts": ["API.example.com:443"]}`), []string{`network.hosts "API.example.com:443" is not in canonical form: write "api.example.com:443"`}},
	{"host in another script", withCaps(`{"network.hosts": ["bücher.example:443"]}`), []string{`is not in canonical form: write "xn--bcher-kva.example:443"`}},
	{"IPv4 in short form", withCaps(`{"network.hosts": ["127.1:8080"]}`), []string{`is not in canonical form: write "127.0.0.1:8080"`}},
	{"IPv6 long form", withCaps(`{"network.hosts": ["[0:0::1]:8080"]}`), []string{`is not in canonical form: write "[::1]:8080"`}},
	{"IPv6 without brackets", withCaps(`{"network.hosts": ["::1:8080"]}`), []string{`network.hosts "::1:8080" is an IPv6 address without brackets: write "[::1]:8080"`}},
	{"IPv6 with a zone", withCaps(`{"network.hosts": ["[fe80::1%eth0]:80"]}`), []string{`network.hosts "[fe80::1%eth0]:80" is not a valid host: not an IPv6 address`}},
	{"host not a host", withCaps(`{"network.hosts": ["a b:80"]}`), []string{`network.hosts "a b:80" is not a valid host: the domain holds the forbidden character ' '`}},
	{"host with a wildcard", withCaps(`{"network.hosts": ["*.example.com:443"]}`), []string{`network.hosts "*.example.com:443" is not a host name`}},
	{"host with an underscore", withCaps(`{"network.hosts": ["a_b.example.com:443"]}`), []string{`is not a host name`}},
	{"host with a final dot", withCaps(`{"network.hosts": ["example.com.:443"]}`), []string{`network.hosts "example.com.:443" ends in a dot: write "example.com:443"`}},
	{"host twice", withCaps(`{"network.hosts": ["a.example:1", "a.example:1"]}`), []string{`network.hosts lists "a.example:1" twice`}},
	{"process not a boolean", withCaps(`{"process": "yes"}`), []string{`.capabilities.process: must be true or false, not a string`}},
	{"secret for the loader", withCaps(`{"secrets": ["LD_PRELOAD"]}`), []string{`secrets: environment variable rejected: "LD_PRELOAD"`}},
	{"secret NODE_OPTIONS", withCaps(`{"secrets": ["NODE_OPTIONS"]}`), []string{`"NODE_OPTIONS"`, "rejected"}},
	{"secret that steers", withCaps(`{"secrets": ["PATH"]}`), []string{`secrets: "PATH" decides which program a name runs`}},
	{"secret that configures node", withCaps(`{"secrets": ["NODE_EXTRA_CA_CERTS"]}`), []string{`secrets: "NODE_EXTRA_CA_CERTS": NODE_* variables configure the node`}},
	{"secret of Zero's", withCaps(`{"secrets": ["ZERO_HOME"]}`), []string{`secrets: "ZERO_HOME": ZERO_* names are Zero's own`}},
	{"secret not a name", withCaps(`{"secrets": ["API-KEY"]}`), []string{`"API-KEY" is not a valid name`}},
	{"secret starting with a digit", withCaps(`{"secrets": ["1KEY"]}`), []string{`"1KEY" is not a valid name`}},
	{"secret empty", withCaps(`{"secrets": [""]}`), []string{`"" is empty`}},
	{"secret name too long", withCaps(`{"secrets": ["` + strings.Repeat("A", 129) + `"]}`), []string{`is over 128 bytes`}},
	{"secret twice", withCaps(`{"secrets": ["KEY", "KEY"]}`), []string{`secrets lists "KEY" twice`}},
	{"limits not an object", withCaps(`{"limits": 30}`), []string{`.capabilities.limits: must be an object, not a number`}},
	{"unknown limit", withCaps(`{"limits": {"cpu": 1}}`), []string{`.capabilities.limits: unknown key "cpu" (allowed: timeout_ms, memory_mib, processes)`}},
	{"limit not a number", withCaps(`{"limits": {"timeout_ms": "30"}}`), []string{`.limits.timeout_ms: must be a whole number, not a string`}},
	{"limit with a fraction", withCaps(`{"limits": {"memory_mib": 1.5}}`), []string{`.limits.memory_mib: 1.5 is not a whole number in range`}},
	{"limit with an exponent", withCaps(`{"limits": {"memory_mib": 1e3}}`), []string{`.limits.memory_mib: 1e3 is not a whole number in range`}},
	{"limit out of any range", withCaps(`{"limits": {"processes": 99999999999}}`), []string{`.limits.processes: 99999999999 is not a whole number in range`}},
	{"timeout negative", withCaps(`{"limits": {"timeout_ms": -1}}`), []string{`limits.timeout_ms is -1: want 0 (Zero's default, 30000) or from 100 to 600000`}},
	{"timeout too short", withCaps(`{"limits": {"timeout_ms": 99}}`), []string{`limits.timeout_ms is 99`}},
	{"timeout too long", withCaps(`{"limits": {"timeout_ms": 600001}}`), []string{`limits.timeout_ms is 600001`}},
	{"memory too small", withCaps(`{"limits": {"memory_mib": 63}}`), []string{`limits.memory_mib is 63: want 0 (Zero's default, 256) or from 64 to 4096`}},
	{"memory too big", withCaps(`{"limits": {"memory_mib": 4097}}`), []string{`limits.memory_mib is 4097`}},
	{"processes too few", withCaps(`{"limits": {"processes": 15}}`), []string{`limits.processes is 15: want 0 (Zero's default, 32) or from 16 to 1024`}},
	{"processes too many", withCaps(`{"limits": {"processes": 1025}}`), []string{`limits.processes is 1025`}},
	{"limits on a tool", withTools(`{"limits": {"timeout_ms": 1000}}`, tool("t", `{"limits": {"timeout_ms": 1000}}`)),
		[]string{`tool "t".capabilities: "limits" are the plugin's, not a tool's`}},
	{"tool capabilities not an object", withTools(`{}`, tool("t", `true`)), []string{`tool "t".capabilities: must be an object, not true or false`}},
	{"tool capability unknown", withTools(`{}`, tool("t", `{"fs": []}`)), []string{`tool "t".capabilities: unknown key "fs"`}},
	{"tool capability invalid", withTools(`{"fs.read": ["a"]}`, tool("t", `{"fs.read": ["/a"]}`)), []string{`tool "t".capabilities: fs.read "/a" is absolute`}},
	{"tool reads beyond the plugin", withTools(`{"fs.read": ["notes"]}`, tool("t", `{"fs.read": ["other"]}`)),
		[]string{`tool "t".capabilities: fs.read "other" is not among the plugin's capabilities`}},
	{"tool reads a folder of a granted path", withTools(`{"fs.read": ["notes/a"]}`, tool("t", `{"fs.read": ["notes"]}`)),
		[]string{`fs.read "notes" is not among the plugin's capabilities`}},
	{"tool reads a sibling with the same prefix", withTools(`{"fs.read": ["notes"]}`, tool("t", `{"fs.read": ["notes2"]}`)),
		[]string{`fs.read "notes2" is not among the plugin's capabilities`}},
	{"tool writes what the plugin only reads", withTools(`{"fs.read": ["notes"]}`, tool("t", `{"fs.write": ["notes"]}`)),
		[]string{`fs.write "notes" is not among the plugin's capabilities`}},
	{"tool connects beyond the plugin", withTools(`{"network.hosts": ["a.example:443"]}`, tool("t", `{"network.hosts": ["a.example:80"]}`)),
		[]string{`tool "t".capabilities: network.hosts "a.example:80" is not among the plugin's capabilities`}},
	{"tool starts programs, the plugin does not", withTools(`{}`, tool("t", `{"process": true}`)),
		[]string{`tool "t".capabilities: process is not among the plugin's capabilities`}},
	{"tool receives a secret the plugin does not", withTools(`{"secrets": ["A"]}`, tool("t", `{"secrets": ["B"]}`)),
		[]string{`tool "t".capabilities: secrets "B" is not among the plugin's capabilities`}},
	{"many problems", withCaps(`{"fs.read": ["/1", "/2", "/3", "/4", "/5", "/6", "/7", "/8", "/9", "/10", "/11", "/12", "/13", "/14", "/15", "/16", "/17", "/18", "/19", "/20", "/21", "/22"]}`),
		[]string{`fs.read "/20" is absolute: paths are relative to the thread workspace; and 2 more problems`}},
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse([]byte(tc.json))
			if !errors.Is(err, ErrManifest) {
				t.Fatalf("Parse = %+v, %v; want an error wrapping ErrManifest", m, err)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestParseRefusesTooBig: a manifest over MaxManifest bytes is refused
// before it is read; one of exactly MaxManifest bytes is read.
func TestParseRefusesTooBig(t *testing.T) {
	at := func(size int) []byte {
		head := `{"name": "p", "description": "`
		return []byte(head + strings.Repeat("a", size-len(head)-2) + `"}`)
	}
	if _, err := Parse(at(MaxManifest)); err != nil {
		t.Fatalf("a manifest of MaxManifest bytes: %v", err)
	}
	_, err := Parse(at(MaxManifest + 1))
	if !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), fmt.Sprintf("it is %d bytes, over the 262144 bytes", MaxManifest+1)) {
		t.Fatalf("a manifest of MaxManifest+1 bytes: err = %v", err)
	}
}

func TestParseAccepts(t *testing.T) {
	limits := func(l Limits) *Limits { return &l }
	obj := json.RawMessage(`{"properties":{"s":{"type":"string"}},"type":"object"}`)
	for _, tc := range []struct {
		name, json string
		want       *Manifest
	}{
		{"an Agent Plugin without Zero's part", `{"name": "p", "version": "1.0.0", "keywords": []}`,
			&Manifest{Name: "p", Version: "1.0.0", Keywords: []string{}}},
		{"other clients' extensions, kept", `{"name": "p", "extensions": {"com.example.x": {"tools": 1, "Tools": [1, 2]}, "org.other": null}}`,
			&Manifest{Name: "p", Extensions: map[string]json.RawMessage{
				"com.example.x": json.RawMessage(`{"tools": 1, "Tools": [1, 2]}`), "org.other": json.RawMessage(`null`)}}},
		{"author and repository as strings", `{"name": "a.b_c-1", "author": "Me <me@example.com>", "repository": "https://example.com/r.git", "$schema": "s"}`,
			&Manifest{Schema: "s", Name: "a.b_c-1", Author: json.RawMessage(`"Me <me@example.com>"`), Repository: json.RawMessage(`"https://example.com/r.git"`)}},
		{"an entry in a folder, no capabilities, parameters in canonical form",
			manifest(`{"entry": "dist/plugin.js", "tools": [{"name": "t", "parameters": {"type":"object" , "properties": {"s": {"type": "str\u0069ng"}}}}]}`),
			&Manifest{Name: "p", Zero: &Extension{Entry: "dist/plugin.js", Tools: []Tool{{Name: "t", Parameters: obj}}}}},
		{"tool capabilities within the plugin's", withTools(
			`{"fs.read": ["notes"], "fs.write": ["out"], "network.hosts": ["[::1]:8080", "xn--bcher-kva.example:443", "127.0.0.1:1"], "process": true, "secrets": ["api_key", "B"], "limits": {"timeout_ms": 1000}}`,
			tool("reader", `{"fs.read": ["notes/a b/c.md", "out/x"], "fs.write": ["out/y"]}`),
			tool("caller", `{"network.hosts": ["[::1]:8080"], "secrets": ["B"], "process": true}`)),
			&Manifest{Name: "p", Zero: &Extension{Entry: "plugin.js",
				Capabilities: Capabilities{FSRead: []string{"notes"}, FSWrite: []string{"out"},
					NetworkHosts: []string{"[::1]:8080", "xn--bcher-kva.example:443", "127.0.0.1:1"}, Process: true, Secrets: []string{"api_key", "B"},
					Limits: limits(Limits{TimeoutMS: 1000})},
				Tools: []Tool{
					{Name: "reader", Description: "d", Parameters: obj, Required: []string{"s"},
						Capabilities: Capabilities{FSRead: []string{"notes/a b/c.md", "out/x"}, FSWrite: []string{"out/y"}}},
					{Name: "caller", Description: "d", Parameters: obj, Required: []string{"s"},
						Capabilities: Capabilities{NetworkHosts: []string{"[::1]:8080"}, Secrets: []string{"B"}, Process: true}},
				}}}},
		{"the whole workspace", withTools(`{"fs.write": ["."], "limits": {}}`, tool("t", `{"fs.read": ["a"], "fs.write": ["."]}`)),
			&Manifest{Name: "p", Zero: &Extension{Entry: "plugin.js",
				Capabilities: Capabilities{FSWrite: []string{"."}, Limits: &Limits{}},
				Tools:        []Tool{{Name: "t", Description: "d", Parameters: obj, Required: []string{"s"}, Capabilities: Capabilities{FSRead: []string{"a"}, FSWrite: []string{"."}}}}}}},
		{"limits at their bounds", withCaps(`{"limits": {"timeout_ms": 600000, "memory_mib": 64, "processes": 1024}}`),
			&Manifest{Name: "p", Zero: &Extension{Entry: "plugin.js",
				Capabilities: Capabilities{Limits: &Limits{TimeoutMS: MaxTimeoutMS, MemoryMiB: MinMemoryMiB, Processes: MaxProcesses}},
				Tools:        []Tool{{Name: "t", Description: "d", Parameters: obj, Required: []string{"s"}}}}}},
		{"a local $ref", withParams(`{"type": "object", "$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}`),
			&Manifest{Name: "p", Zero: &Extension{Entry: "plugin.js", Tools: []Tool{{Name: "t",
				Parameters: json.RawMessage(`{"$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}},"type":"object"}`)}}}}},
		{"tool names MCP allows", withTools(`{}`, tool("a.b-c_D", `{}`), tool(strings.Repeat("t", 128), `{}`)),
			&Manifest{Name: "p", Zero: &Extension{Entry: "plugin.js", Tools: []Tool{
				{Name: "a.b-c_D", Description: "d", Parameters: obj, Required: []string{"s"}},
				{Name: strings.Repeat("t", 128), Description: "d", Parameters: obj, Required: []string{"s"}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}
