package pin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The vectors in this file are frozen. Stored approvals hold these
// fingerprints and tool hashes, so changing any expected byte or hash here
// is a breaking change: every existing approval would stop matching. A new
// encoding gets a new version line and its own vectors beside these.

// serverGoldensV1 are the first encoding's vectors: CanonicalV1 still opens
// what was stored under it.
var serverGoldensV1 = []struct {
	name        string
	config      ServerConfig
	canonical   string
	fingerprint string
}{
	{
		name:   "zero value",
		config: ServerConfig{},
		canonical: "zero-mcp-server-v1\n" +
			"kind 0:\n" +
			"command 0:\n" +
			"args 0\n" +
			"cwd 0:\n" +
			"env 0\n" +
			"url 0:\n" +
			"headers 0\n",
		fingerprint: "sha256:35506bdf13e7b3a9f3b5d1839ae91fff720ab46cd5ba08a1ebb3934d57370736",
	},
	{
		name: "stdio",
		config: ServerConfig{
			Kind:     "stdio",
			Command:  "npx",
			Args:     []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp/x y"},
			EnvNames: []string{"ZED_TOKEN", "API_KEY"},
		},
		canonical: "zero-mcp-server-v1\n" +
			"kind 5:stdio\n" +
			"command 3:npx\n" +
			"args 3\n" +
			"2:-y\n" +
			"39:@modelcontextprotocol/server-filesystem\n" +
			"8:/tmp/x y\n" +
			"cwd 0:\n" +
			"env 2\n" +
			"7:API_KEY\n" +
			"9:ZED_TOKEN\n" +
			"url 0:\n" +
			"headers 0\n",
		fingerprint: "sha256:4d420711707736812bacd83274f586e6806be8bc068616b50d908762fb7c8644",
	},
	{
		name: "http",
		config: ServerConfig{
			Kind:        "http",
			URL:         "https://mcp.example.com/mcp?x=1",
			HeaderNames: []string{"x-api-key", "authorization"},
		},
		canonical: "zero-mcp-server-v1\n" +
			"kind 4:http\n" +
			"command 0:\n" +
			"args 0\n" +
			"cwd 0:\n" +
			"env 0\n" +
			"url 31:https://mcp.example.com/mcp?x=1\n" +
			"headers 2\n" +
			"13:Authorization\n" +
			"9:X-Api-Key\n",
		fingerprint: "sha256:8851ab782b4ee8dbfecf6d3e26f90f7acc9fb34b360fe3467dab7004ef5ccfde",
	},
	{
		name: "every field, awkward values",
		config: ServerConfig{
			Kind:        "stdio",
			Command:     "/usr/bin/env",
			Args:        []string{"a\nb", "", "é 日本"},
			Cwd:         "sub/dir",
			EnvNames:    []string{"B", "A", "B"},
			URL:         "http://ignored.example",
			HeaderNames: []string{"content-type"},
		},
		canonical: "zero-mcp-server-v1\n" +
			"kind 5:stdio\n" +
			"command 12:/usr/bin/env\n" +
			"args 3\n" +
			"3:a\nb\n" +
			"0:\n" +
			"9:é 日本\n" +
			"cwd 7:sub/dir\n" +
			"env 3\n" +
			"1:A\n" +
			"1:B\n" +
			"1:B\n" +
			"url 22:http://ignored.example\n" +
			"headers 1\n" +
			"12:Content-Type\n",
		fingerprint: "sha256:e8112c3b229c7c4c604021472808aa485a204afc4577efc988196f3ca4194b6a",
	},
}

// serverGoldens are the current (v2) encoding's vectors.
var serverGoldens = []struct {
	name        string
	config      ServerConfig
	canonical   string
	fingerprint string
}{
	{
		name:   "zero value",
		config: ServerConfig{},
		canonical: "zero-mcp-server-v2\n" +
			"kind 0:\n" +
			"command 0:\n" +
			"program 0:\n" +
			"args 0\n" +
			"cwd 0:\n" +
			"env 0\n" +
			"url 0:\n" +
			"headers 0\n",
		fingerprint: "sha256:9527f92b6e177c6c170429eb609c44fc3521d90191d975d3009860addcd4965b",
	},
	{
		name: "stdio",
		config: ServerConfig{
			Kind:     "stdio",
			Command:  "npx",
			Program:  "/usr/share/nodejs/npm/bin/npx-cli.js",
			Args:     []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp/x y"},
			EnvNames: []string{"ZED_TOKEN", "API_KEY"},
		},
		canonical: "zero-mcp-server-v2\n" +
			"kind 5:stdio\n" +
			"command 3:npx\n" +
			"program 36:/usr/share/nodejs/npm/bin/npx-cli.js\n" +
			"args 3\n" +
			"2:-y\n" +
			"39:@modelcontextprotocol/server-filesystem\n" +
			"8:/tmp/x y\n" +
			"cwd 0:\n" +
			"env 2\n" +
			"7:API_KEY\n" +
			"9:ZED_TOKEN\n" +
			"url 0:\n" +
			"headers 0\n",
		fingerprint: "sha256:c1dc8f224b7bb2b3b8586ad835d68a4258b46f3e0d570059299d6df1ae0944b5",
	},
	{
		name: "http",
		config: ServerConfig{
			Kind:        "http",
			URL:         "https://mcp.example.com/mcp?x=1",
			HeaderNames: []string{"x-api-key", "authorization"},
		},
		canonical: "zero-mcp-server-v2\n" +
			"kind 4:http\n" +
			"command 0:\n" +
			"program 0:\n" +
			"args 0\n" +
			"cwd 0:\n" +
			"env 0\n" +
			"url 31:https://mcp.example.com/mcp?x=1\n" +
			"headers 2\n" +
			"13:Authorization\n" +
			"9:X-Api-Key\n",
		fingerprint: "sha256:e9174b58b90045aade0d47a20dfe1752a601b077ee78f0883472a908a8dee3c6",
	},
	{
		name: "a program path with a line break",
		config: ServerConfig{
			Kind:    "stdio",
			Command: "./srv",
			Program: "/home/u/.zero/workspace/a\nb/srv",
			Args:    []string{"program 0:"},
		},
		canonical: "zero-mcp-server-v2\n" +
			"kind 5:stdio\n" +
			"command 5:./srv\n" +
			"program 31:/home/u/.zero/workspace/a\nb/srv\n" +
			"args 1\n" +
			"10:program 0:\n" +
			"cwd 0:\n" +
			"env 0\n" +
			"url 0:\n" +
			"headers 0\n",
		fingerprint: "sha256:0210a09b55618f685a2cd1d137b075aba1d1f50a8a118143d439934321bbe873",
	},
}

// serverGoldensV3 are the registry encoding's vectors: a configuration
// derived from an MCP Registry entry.
var serverGoldensV3 = []struct {
	name        string
	config      ServerConfig
	canonical   string
	fingerprint string
}{
	{
		name:   "empty reference",
		config: ServerConfig{Registry: &Registry{}},
		canonical: "zero-mcp-server-v3\n" +
			"kind 0:\n" +
			"command 0:\n" +
			"program 0:\n" +
			"args 0\n" +
			"cwd 0:\n" +
			"env 0\n" +
			"url 0:\n" +
			"headers 0\n" +
			"registry-url 0:\n" +
			"registry-name 0:\n" +
			"registry-version 0:\n" +
			"registry-sha256 0:\n",
		fingerprint: "sha256:b7718ee35dec87b1c75c87e52e8d0cc938f35a9129e1335742a127c424c23a93",
	},
	{
		name: "npm package",
		config: ServerConfig{
			Kind:     "stdio",
			Command:  "npx",
			Program:  "/usr/bin/npx",
			Args:     []string{"-y", "@modelcontextprotocol/server-filesystem@1.0.2"},
			EnvNames: []string{"API_KEY"},
			Registry: &Registry{
				URL:         "https://registry.modelcontextprotocol.io",
				Name:        "io.github.modelcontextprotocol/filesystem",
				Version:     "1.0.2",
				EntrySHA256: "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
			},
		},
		canonical: "zero-mcp-server-v3\n" +
			"kind 5:stdio\n" +
			"command 3:npx\n" +
			"program 12:/usr/bin/npx\n" +
			"args 2\n" +
			"2:-y\n" +
			"45:@modelcontextprotocol/server-filesystem@1.0.2\n" +
			"cwd 0:\n" +
			"env 1\n" +
			"7:API_KEY\n" +
			"url 0:\n" +
			"headers 0\n" +
			"registry-url 40:https://registry.modelcontextprotocol.io\n" +
			"registry-name 41:io.github.modelcontextprotocol/filesystem\n" +
			"registry-version 5:1.0.2\n" +
			"registry-sha256 64:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae\n",
		fingerprint: "sha256:9a2785a948e9ebb8c8531a812fa692c38bd5aef29a3b99631d647dac1f86a543",
	},
}

func TestServerGoldenV3(t *testing.T) {
	for _, g := range serverGoldensV3 {
		t.Run(g.name, func(t *testing.T) {
			if diff := cmp.Diff(g.canonical, string(Canonical(g.config))); diff != "" {
				t.Errorf("Canonical (-want +got):\n%s", diff)
			}
			if got := Fingerprint(g.config); got != g.fingerprint {
				t.Errorf("Fingerprint = %s, want %s", got, g.fingerprint)
			}
			sum := sha256.Sum256([]byte(g.canonical))
			if want := "sha256:" + hex.EncodeToString(sum[:]); g.fingerprint != want {
				t.Errorf("golden fingerprint %s is not the hash of the golden bytes (%s)", g.fingerprint, want)
			}
		})
	}
}

func TestServerGoldenV1(t *testing.T) {
	for _, g := range serverGoldensV1 {
		t.Run(g.name, func(t *testing.T) {
			g.config.Program = "/ignored/by/v1"
			if diff := cmp.Diff(g.canonical, string(CanonicalV1(g.config))); diff != "" {
				t.Errorf("CanonicalV1 (-want +got):\n%s", diff)
			}
			if got := FingerprintV1(g.config); got != g.fingerprint {
				t.Errorf("FingerprintV1 = %s, want %s", got, g.fingerprint)
			}
			sum := sha256.Sum256([]byte(g.canonical))
			if want := "sha256:" + hex.EncodeToString(sum[:]); g.fingerprint != want {
				t.Errorf("golden fingerprint %s is not the hash of the golden bytes (%s)", g.fingerprint, want)
			}
		})
	}
}

func TestServerGolden(t *testing.T) {
	for _, g := range serverGoldens {
		t.Run(g.name, func(t *testing.T) {
			if diff := cmp.Diff(g.canonical, string(Canonical(g.config))); diff != "" {
				t.Errorf("Canonical (-want +got):\n%s", diff)
			}
			if got := Fingerprint(g.config); got != g.fingerprint {
				t.Errorf("Fingerprint = %s, want %s", got, g.fingerprint)
			}
			// The expected fingerprint is the SHA-256 of the expected bytes,
			// computed here without the code under test.
			sum := sha256.Sum256([]byte(g.canonical))
			if want := "sha256:" + hex.EncodeToString(sum[:]); g.fingerprint != want {
				t.Errorf("golden fingerprint %s is not the hash of the golden bytes (%s)", g.fingerprint, want)
			}
		})
	}
}

// toolGoldensV1 are the first tool encoding's vectors: ToolHashV1 still
// recognises what was approved under it.
var toolGoldensV1 = []struct {
	name                    string
	tool, description       string
	inputSchema, annotation string
	encoding                string
	hash                    string
}{
	{
		name:        "read_file",
		tool:        "read_file",
		description: "Read a file.",
		inputSchema: `{
			"type": "object",
			"properties": {"path": {"type": "string", "description": "Path to read"}},
			"required": ["path"]
		}`,
		annotation: `{"readOnlyHint": true, "title": "Read file"}`,
		encoding: "zero-mcp-tool-v1\n" +
			"name 9:read_file\n" +
			"description 12:Read a file.\n" +
			`inputSchema 106:{"properties":{"path":{"description":"Path to read","type":"string"}},"required":["path"],"type":"object"}` + "\n" +
			`annotations 41:{"readOnlyHint":true,"title":"Read file"}` + "\n",
		hash: "sha256:6cf5bd895b62025cfe6cbfd1832534f44f7f7ae89ab4342705bbfcfb04f8bf35",
	},
	{
		name:        "no annotations",
		tool:        "ping",
		description: "",
		inputSchema: `{"type":"object"}`,
		encoding: "zero-mcp-tool-v1\n" +
			"name 4:ping\n" +
			"description 0:\n" +
			`inputSchema 17:{"type":"object"}` + "\n" +
			"annotations 4:null\n",
		hash: "sha256:08b0f9b0a8d51bfab6546ac241910c0535a2bd8aa0d038590892083ca5daced8",
	},
	{
		name:        "escapes, numbers and unicode",
		tool:        "search",
		description: "Find <b>things</b> & more.\nSecond line: ☃",
		inputSchema: `{"type":"object","properties":{"q":{"type":"string","maxLength":1.0e3,"minLength":0,` +
			`"pattern":"^\\d+\u0041\"\t\u0001\u007f\u2028</script>$","default":"\u00e9"}},"additionalProperties":false}`,
		annotation: `null`,
		encoding: "zero-mcp-tool-v1\n" +
			"name 6:search\n" +
			"description 43:Find <b>things</b> & more.\nSecond line: ☃\n" +
			"inputSchema 173:" + `{"additionalProperties":false,"properties":{"q":{"default":"é","maxLength":1.0e3,"minLength":0,` +
			`"pattern":"^\\d+A\"\t\u0001` + "\x7f\u2028" + `</script>$","type":"string"}},"type":"object"}` + "\n" +
			"annotations 4:null\n",
		hash: "sha256:d9ef4c39f7259dde3468e0c34541faaf27bd32d31a9ec67a16cec923fccba232",
	},
}

func TestToolGoldenV1(t *testing.T) {
	for _, g := range toolGoldensV1 {
		t.Run(g.name, func(t *testing.T) {
			var ann json.RawMessage
			if g.annotation != "" {
				ann = json.RawMessage(g.annotation)
			}
			enc, err := toolEncodingV1(g.tool, g.description, json.RawMessage(g.inputSchema), ann)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(g.encoding, string(enc)); diff != "" {
				t.Errorf("encoding (-want +got):\n%s", diff)
			}
			got, err := ToolHashV1(g.tool, g.description, json.RawMessage(g.inputSchema), ann)
			if err != nil {
				t.Fatal(err)
			}
			if got != g.hash {
				t.Errorf("ToolHashV1 = %s, want %s", got, g.hash)
			}
			sum := sha256.Sum256([]byte(g.encoding))
			if want := "sha256:" + hex.EncodeToString(sum[:]); g.hash != want {
				t.Errorf("golden hash %s is not the hash of the golden bytes (%s)", g.hash, want)
			}
		})
	}
}

// toolGoldens are the second tool encoding's vectors, which cover the
// title and the output schema too.
var toolGoldens = []struct {
	name     string
	tool     Tool
	encoding string
	hash     string
}{
	{
		name: "read_file",
		tool: Tool{Name: "read_file", Title: "Read file", Description: "Read a file.",
			InputSchema: json.RawMessage(`{
				"type": "object",
				"properties": {"path": {"type": "string", "description": "Path to read"}},
				"required": ["path"]
			}`),
			OutputSchema: json.RawMessage(`{"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]}`),
			Annotations:  json.RawMessage(`{"readOnlyHint": true, "title": "Read file"}`)},
		encoding: "zero-mcp-tool-v2\n" +
			"name 9:read_file\n" +
			"title 9:Read file\n" +
			"description 12:Read a file.\n" +
			`inputSchema 106:{"properties":{"path":{"description":"Path to read","type":"string"}},"required":["path"],"type":"object"}` + "\n" +
			`outputSchema 83:{"properties":{"content":{"type":"string"}},"required":["content"],"type":"object"}` + "\n" +
			`annotations 41:{"readOnlyHint":true,"title":"Read file"}` + "\n",
		hash: "sha256:38060fc16ddeac1d10f2d1c8023e7af6351ec7275cef3c1cad6ea7ecf4b7c77f",
	},
	{
		name: "no title, output schema or annotations",
		tool: Tool{Name: "ping", InputSchema: json.RawMessage(`{"type":"object"}`)},
		encoding: "zero-mcp-tool-v2\n" +
			"name 4:ping\n" +
			"title 0:\n" +
			"description 0:\n" +
			`inputSchema 17:{"type":"object"}` + "\n" +
			"outputSchema 4:null\n" +
			"annotations 4:null\n",
		hash: "sha256:cdca3ca8f752d5e8f43b115e858ce8dd9c2f9b2865a005af6381629d316d252a",
	},
	{
		name: "a title with escapes, numbers as written",
		tool: Tool{Name: "search", Title: "Sök ☃\t<b>", Description: "Find things.", InputSchema: json.RawMessage(`{"type":"object"}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","maximum":1.0e3}}}`), Annotations: json.RawMessage("null")},
		encoding: "zero-mcp-tool-v2\n" +
			"name 6:search\n" +
			"title 12:Sök ☃\t<b>\n" +
			"description 12:Find things.\n" +
			`inputSchema 17:{"type":"object"}` + "\n" +
			`outputSchema 71:{"properties":{"n":{"maximum":1.0e3,"type":"integer"}},"type":"object"}` + "\n" +
			"annotations 4:null\n",
		hash: "sha256:df54064cd97499a2e022b1004c024892cd2a9237be26cf9dad6500e81cdacbee",
	},
}

func TestToolGolden(t *testing.T) {
	for _, g := range toolGoldens {
		t.Run(g.name, func(t *testing.T) {
			enc, err := toolEncoding(g.tool)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(g.encoding, string(enc)); diff != "" {
				t.Errorf("encoding (-want +got):\n%s", diff)
			}
			got, err := ToolHash(g.tool)
			if err != nil {
				t.Fatal(err)
			}
			if got != g.hash {
				t.Errorf("ToolHash = %s, want %s", got, g.hash)
			}
			sum := sha256.Sum256([]byte(g.encoding))
			if want := "sha256:" + hex.EncodeToString(sum[:]); g.hash != want {
				t.Errorf("golden hash %s is not the hash of the golden bytes (%s)", g.hash, want)
			}
		})
	}
}
