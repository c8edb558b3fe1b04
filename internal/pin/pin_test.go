package pin

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func base() ServerConfig {
	return ServerConfig{
		Kind:        "stdio",
		Command:     "npx",
		Program:     "/usr/bin/npx",
		Args:        []string{"-y", "server", "--root", "/data"},
		Cwd:         "work",
		EnvNames:    []string{"API_KEY", "HOME_DIR"},
		URL:         "https://example.com/mcp",
		HeaderNames: []string{"Authorization", "X-Team"},
	}
}

// TestFingerprintChangesWithEveryField changes each field of a config in
// several ways; every variant must have its own fingerprint.
func TestFingerprintChangesWithEveryField(t *testing.T) {
	variants := map[string]func(*ServerConfig){
		"kind":                 func(c *ServerConfig) { c.Kind = "http" },
		"kind case":            func(c *ServerConfig) { c.Kind = "STDIO" },
		"command":              func(c *ServerConfig) { c.Command = "npm" },
		"command empty":        func(c *ServerConfig) { c.Command = "" },
		"command trailing sp":  func(c *ServerConfig) { c.Command = "npx " },
		"program":              func(c *ServerConfig) { c.Program = "/home/me/bin/npx" },
		"program empty":        func(c *ServerConfig) { c.Program = "" },
		"arg changed":          func(c *ServerConfig) { c.Args[1] = "server2" },
		"arg added":            func(c *ServerConfig) { c.Args = append(c.Args, "--x") },
		"empty arg added":      func(c *ServerConfig) { c.Args = append(c.Args, "") },
		"arg removed":          func(c *ServerConfig) { c.Args = c.Args[:3] },
		"args reordered":       func(c *ServerConfig) { c.Args[2], c.Args[3] = c.Args[3], c.Args[2] },
		"args joined":          func(c *ServerConfig) { c.Args = []string{"-y", "server", "--root /data"} },
		"args none":            func(c *ServerConfig) { c.Args = nil },
		"cwd":                  func(c *ServerConfig) { c.Cwd = "work/sub" },
		"cwd dot":              func(c *ServerConfig) { c.Cwd = "./work" },
		"cwd empty":            func(c *ServerConfig) { c.Cwd = "" },
		"env name changed":     func(c *ServerConfig) { c.EnvNames[0] = "API_KEY2" },
		"env name added":       func(c *ServerConfig) { c.EnvNames = append(c.EnvNames, "DEBUG") },
		"env name removed":     func(c *ServerConfig) { c.EnvNames = c.EnvNames[:1] },
		"env name case":        func(c *ServerConfig) { c.EnvNames[0] = "api_key" },
		"env name duplicated":  func(c *ServerConfig) { c.EnvNames = append(c.EnvNames, "API_KEY") },
		"url":                  func(c *ServerConfig) { c.URL = "https://example.com/mcp/" },
		"url empty":            func(c *ServerConfig) { c.URL = "" },
		"url scheme":           func(c *ServerConfig) { c.URL = "http://example.com/mcp" },
		"header changed":       func(c *ServerConfig) { c.HeaderNames[1] = "X-Teams" },
		"header added":         func(c *ServerConfig) { c.HeaderNames = append(c.HeaderNames, "Cookie") },
		"header removed":       func(c *ServerConfig) { c.HeaderNames = c.HeaderNames[:1] },
		"command into args":    func(c *ServerConfig) { c.Command = ""; c.Args = append([]string{"npx"}, c.Args...) },
		"cwd into url":         func(c *ServerConfig) { c.Cwd = ""; c.URL = "work" + c.URL },
		"env name into header": func(c *ServerConfig) { c.EnvNames = c.EnvNames[:1]; c.HeaderNames = append(c.HeaderNames, "Home_dir") },
	}
	seen := map[string]string{Fingerprint(base()): "base"}
	for name, change := range variants {
		c := base()
		change(&c)
		fp := Fingerprint(c)
		if other, ok := seen[fp]; ok {
			t.Errorf("%s and %s have the same fingerprint", name, other)
		}
		seen[fp] = name
	}
}

// TestRegistryReferenceIsFingerprinted: a reference gives the v3 encoding,
// each of its fields (the entry's SHA-256 above all: an entry whose bytes
// change upstream) gives another fingerprint, and a configuration without
// one keeps its v2 bytes.
func TestRegistryReferenceIsFingerprinted(t *testing.T) {
	ref := func() *Registry {
		return &Registry{URL: "https://registry.example", Name: "io.example/srv", Version: "1.0.0", EntrySHA256: strings.Repeat("a", 64)}
	}
	if got := string(Canonical(base())); !strings.HasPrefix(got, serverVersion) || strings.Contains(got, "registry") {
		t.Errorf("a configuration without a reference is not v2:\n%s", got)
	}
	with := base()
	with.Registry = ref()
	if got := string(Canonical(with)); !strings.HasPrefix(got, serverVersionV3) || !strings.HasPrefix(got[len(serverVersionV3):], string(Canonical(base())[len(serverVersion):])) {
		t.Errorf("v3 is not v2's lines with the reference after them:\n%s", got)
	}
	variants := map[string]func(*Registry){
		"url":             func(r *Registry) { r.URL = "https://registry.example/" },
		"name":            func(r *Registry) { r.Name = "io.example/srv2" },
		"version":         func(r *Registry) { r.Version = "1.0.1" },
		"entry bytes":     func(r *Registry) { r.EntrySHA256 = strings.Repeat("b", 64) },
		"name to version": func(r *Registry) { r.Name, r.Version = "io.example/srv1", ".0.0" },
		"empty":           func(r *Registry) { *r = Registry{} },
	}
	seen := map[string]string{Fingerprint(base()): "no reference", Fingerprint(with): "base"}
	for name, change := range variants {
		c := base()
		c.Registry = ref()
		change(c.Registry)
		fp := Fingerprint(c)
		if other, ok := seen[fp]; ok {
			t.Errorf("%s and %s have the same fingerprint", name, other)
		}
		seen[fp] = name
	}
}

// TestFingerprintIgnoresNameOrder: env and header names are sets to the
// reader, and header names are compared as HTTP does.
func TestFingerprintIgnoresNameOrder(t *testing.T) {
	want := Fingerprint(base())
	same := map[string]func(*ServerConfig){
		"env reversed":     func(c *ServerConfig) { slices.Reverse(c.EnvNames) },
		"headers reversed": func(c *ServerConfig) { slices.Reverse(c.HeaderNames) },
		"header case":      func(c *ServerConfig) { c.HeaderNames = []string{"x-team", "AUTHORIZATION"} },
		"empty not nil":    func(c *ServerConfig) {},
	}
	for name, change := range same {
		c := base()
		change(&c)
		if got := Fingerprint(c); got != want {
			t.Errorf("%s: fingerprint changed", name)
		}
	}
	if Fingerprint(ServerConfig{Args: []string{}}) != Fingerprint(ServerConfig{}) {
		t.Error("an empty list and a nil list differ")
	}
}

// TestCanonicalDoesNotChangeItsInput: sorting works on copies.
func TestCanonicalDoesNotChangeItsInput(t *testing.T) {
	c := ServerConfig{EnvNames: []string{"B", "A"}, HeaderNames: []string{"x-b", "x-a"}}
	Canonical(c)
	if diff := cmp.Diff(ServerConfig{EnvNames: []string{"B", "A"}, HeaderNames: []string{"x-b", "x-a"}}, c); diff != "" {
		t.Errorf("input changed (-want +got):\n%s", diff)
	}
}

// TestCanonicalIsUnambiguous lists pairs that a naive encoding (joining
// with spaces, commas or newlines) would confuse.
func TestCanonicalIsUnambiguous(t *testing.T) {
	pairs := []struct {
		name string
		a, b ServerConfig
	}{
		{"one arg with a space vs two", ServerConfig{Args: []string{"a b"}}, ServerConfig{Args: []string{"a", "b"}}},
		{"one arg with a newline vs two", ServerConfig{Args: []string{"a\nb"}}, ServerConfig{Args: []string{"a", "b"}}},
		{"empty arg vs none", ServerConfig{Args: []string{""}}, ServerConfig{}},
		{"two empty args vs one", ServerConfig{Args: []string{"", ""}}, ServerConfig{Args: []string{""}}},
		{"empty env name vs none", ServerConfig{EnvNames: []string{""}}, ServerConfig{}},
		{"empty header name vs none", ServerConfig{HeaderNames: []string{""}}, ServerConfig{}},
		{"command vs first arg", ServerConfig{Command: "a"}, ServerConfig{Args: []string{"a"}}},
		{"command vs program", ServerConfig{Command: "/a"}, ServerConfig{Program: "/a"}},
		{"value looking like a field", ServerConfig{Command: "x\ncwd 0:"}, ServerConfig{Command: "x"}},
		{"length prefix in value", ServerConfig{Args: []string{"1:a"}}, ServerConfig{Args: []string{"a"}}},
		{"kind vs command", ServerConfig{Kind: "stdio"}, ServerConfig{Command: "stdio"}},
		{"url vs cwd", ServerConfig{URL: "x"}, ServerConfig{Cwd: "x"}},
		{"env vs header", ServerConfig{EnvNames: []string{"X"}}, ServerConfig{HeaderNames: []string{"X"}}},
		{"args vs env", ServerConfig{Args: []string{"X"}}, ServerConfig{EnvNames: []string{"X"}}},
	}
	for _, p := range pairs {
		if string(Canonical(p.a)) == string(Canonical(p.b)) {
			t.Errorf("%s: encode alike", p.name)
		}
		if _, err := parseCanonical(Canonical(p.a)); err != nil {
			t.Errorf("%s: %v", p.name, err)
		}
	}
}

// TestHeaderCanonicalizationMatchesHTTP: the encoding canonicalizes header
// names exactly as net/http does.
func TestHeaderCanonicalizationMatchesHTTP(t *testing.T) {
	for _, h := range []string{"x-api-key", "AUTHORIZATION", "content-TYPE", "x_under", "bad header", "", "ünï"} {
		got, err := parseCanonical(Canonical(ServerConfig{HeaderNames: []string{h}}))
		if err != nil {
			t.Fatal(err)
		}
		if want := http.CanonicalHeaderKey(h); got.HeaderNames[0] != want {
			t.Errorf("%q encoded as %q, net/http says %q", h, got.HeaderNames[0], want)
		}
	}
}

var (
	readFileSchema = `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["path"]}`
	readFileAnn    = `{"readOnlyHint":true,"destructiveHint":false}`
)

// tool is a Tool of those fields; an empty ann means none.
func tool(name, desc, schema, ann string) Tool {
	t := Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema)}
	if ann != "" {
		t.Annotations = json.RawMessage(ann)
	}
	return t
}

func mustToolHash(t *testing.T, tl Tool) string {
	t.Helper()
	h, err := ToolHash(tl)
	if err != nil {
		t.Fatalf("ToolHash(%+v): %v", tl, err)
	}
	return h
}

// TestToolHashIgnoresLayout: key order and whitespace do not change a tool's
// hash, nor do string escapes that decode to the same text.
func TestToolHashIgnoresLayout(t *testing.T) {
	want := mustToolHash(t, tool("read_file", "Read a file", readFileSchema, readFileAnn))
	for _, s := range []struct{ schema, ann string }{
		{`{"required":["path"],"properties":{"limit":{"minimum":1,"type":"integer"},"path":{"type":"string"}},"type":"object"}`, readFileAnn},
		{"{\n  \"type\" : \"object\",\n\t\"properties\": {\"path\": {\"type\": \"string\"}, \"limit\": {\"type\": \"integer\", \"minimum\": 1}},\r\n \"required\": [ \"path\" ]\n}\n", readFileAnn},
		{`{"type":"ob\u006aect","properties":{"path":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["path"]}`, readFileAnn},
		{readFileSchema, ` { "destructiveHint" : false , "readOnlyHint" : true } `},
	} {
		if got := mustToolHash(t, tool("read_file", "Read a file", s.schema, s.ann)); got != want {
			t.Errorf("hash of %q changed", s.schema)
		}
	}
	if mustToolHash(t, tool("t", "", "{}", "")) != mustToolHash(t, tool("t", "", "{}", "null")) {
		t.Error("no annotations and null annotations differ")
	}
	out := tool("t", "", "{}", "")
	out.OutputSchema = json.RawMessage("null")
	if mustToolHash(t, tool("t", "", "{}", "")) != mustToolHash(t, out) {
		t.Error("no output schema and a null one differ")
	}
}

// TestToolHashChangesWithContent: anything a model or a client reads
// changes the hash.
func TestToolHashChangesWithContent(t *testing.T) {
	seen := map[string]string{}
	add := func(label string, tl Tool) {
		h := mustToolHash(t, tl)
		if other, ok := seen[h]; ok {
			t.Errorf("%s and %s hash alike", label, other)
		}
		seen[h] = label
	}
	with := func(tl Tool, change func(*Tool)) Tool {
		change(&tl)
		return tl
	}
	base := tool("read_file", "Read a file", readFileSchema, readFileAnn)
	add("base", base)
	add("name", tool("read_files", "Read a file", readFileSchema, readFileAnn))
	add("description", tool("read_file", "Read a file.", readFileSchema, readFileAnn))
	add("description whitespace", tool("read_file", "Read a file ", readFileSchema, readFileAnn))
	add("name/description boundary", tool("read_fileR", "ead a file", readFileSchema, readFileAnn))
	add("schema value", tool("read_file", "Read a file", strings.Replace(readFileSchema, `"minimum":1`, `"minimum":2`, 1), readFileAnn))
	add("number as written", tool("read_file", "Read a file", strings.Replace(readFileSchema, `"minimum":1`, `"minimum":1.0`, 1), readFileAnn))
	add("required dropped", tool("read_file", "Read a file", strings.Replace(readFileSchema, `"path"]`, `]`, 1), readFileAnn))
	add("array order", tool("read_file", "Read a file", `{"type":"object","required":["a","b"]}`, readFileAnn))
	add("array order 2", tool("read_file", "Read a file", `{"type":"object","required":["b","a"]}`, readFileAnn))
	add("string in schema", tool("read_file", "Read a file", strings.Replace(readFileSchema, `"string"`, `"String"`, 1), readFileAnn))
	add("annotation", tool("read_file", "Read a file", readFileSchema, `{"readOnlyHint":false,"destructiveHint":false}`))
	add("no annotations", tool("read_file", "Read a file", readFileSchema, ""))
	add("empty annotations", tool("read_file", "Read a file", readFileSchema, "{}"))
	add("schema moved to annotations", tool("read_file", "Read a file", "null", readFileSchema))
	add("title", with(base, func(t *Tool) { t.Title = "Read" }))
	add("title/description boundary", with(base, func(t *Tool) { t.Title, t.Description = "R", "ead a file" }))
	add("output schema", with(base, func(t *Tool) { t.OutputSchema = json.RawMessage(`{"type":"object"}`) }))
	add("empty output schema", with(base, func(t *Tool) { t.OutputSchema = json.RawMessage(`{}`) }))
	add("input schema as output schema", with(base, func(t *Tool) { t.InputSchema, t.OutputSchema = nil, json.RawMessage(readFileSchema) }))
}

// TestToolHashVersions: the two encodings never hash alike, and the first
// is blind to the title and the output schema, which is why the second
// exists.
func TestToolHashVersions(t *testing.T) {
	base := tool("read_file", "Read a file", readFileSchema, readFileAnn)
	v1, err := ToolHashV1(base.Name, base.Description, base.InputSchema, base.Annotations)
	if err != nil {
		t.Fatal(err)
	}
	if v1 == mustToolHash(t, base) {
		t.Error("ToolHash and ToolHashV1 agree")
	}
	titled := base
	titled.Title, titled.OutputSchema = "Read", json.RawMessage(`{"type":"object"}`)
	if again, _ := ToolHashV1(titled.Name, titled.Description, titled.InputSchema, titled.Annotations); again != v1 {
		t.Error("ToolHashV1 saw the title or the output schema")
	}
}

func TestToolHashRefusesBadJSON(t *testing.T) {
	for _, s := range []string{
		`{`, `{"a":1,}`, `[1,]`, `{"a":1} {}`, `{"a":1}x`, `nul`, ` `, `{"a":1,"a":2}`,
		`{"x":{"a":1,"a":1}}`, "\"\xff\"", `{'a':1}`, `01`, `NaN`,
	} {
		for field, tl := range map[string]Tool{
			"input schema":  {Name: "t", InputSchema: json.RawMessage(s)},
			"output schema": {Name: "t", InputSchema: json.RawMessage(`{}`), OutputSchema: json.RawMessage(s)},
			"annotations":   {Name: "t", InputSchema: json.RawMessage(`{}`), Annotations: json.RawMessage(s)},
		} {
			if _, err := ToolHash(tl); !errors.Is(err, ErrInvalidJSON) {
				t.Errorf("%s %q: err = %v, want ErrInvalidJSON", field, s, err)
			}
		}
		if _, err := ToolHashV1("t", "", json.RawMessage(s), nil); !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("v1 schema %q: err = %v, want ErrInvalidJSON", s, err)
		}
	}
}

// TestCanonicalJSONMatchesEncodingJSON: canonical JSON reads back, with
// encoding/json, as the same value the input reads as.
func TestCanonicalJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{"b":[1,2.50,-0,1e-7,{"z":null,"a":true}],"a":"\u003c\/\ud83d\ude00\n\u0000"}`,
		`"\ud800"`, `[]`, `{}`, `"\\\""`, `123456789012345678901234567890`,
	} {
		got, err := canonicalJSON(json.RawMessage(s))
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		json.Unmarshal([]byte(s), &a)
		if err := json.Unmarshal(got, &b); err != nil {
			t.Fatalf("%q: canonical form %q does not parse: %v", s, got, err)
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("%q: canonical form %q reads differently (-want +got):\n%s", s, got, diff)
		}
		again, err := canonicalJSON(got)
		if err != nil || string(again) != string(got) {
			t.Errorf("%q: canonical form %q is not a fixed point: %q, %v", s, got, again, err)
		}
	}
}

// parseCanonical decodes Canonical's output, refusing anything else. That a
// decoder exists which gives back the (normalized) config proves the encoding
// is injective; the fuzz test checks it on random configs.
func parseCanonical(b []byte) (ServerConfig, error) {
	rest := string(b)
	var c ServerConfig
	fail := func(what string) (ServerConfig, error) {
		return ServerConfig{}, errors.New("bad encoding at " + what + ": " + strings.Clone(rest[:min(20, len(rest))]))
	}
	expect := func(prefix string) bool {
		if !strings.HasPrefix(rest, prefix) {
			return false
		}
		rest = rest[len(prefix):]
		return true
	}
	number := func() (int, bool) {
		n, i := 0, 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' && i < 9 {
			n = n*10 + int(rest[i]-'0')
			i++
		}
		if i == 0 || (rest[0] == '0' && i > 1) {
			return 0, false
		}
		rest = rest[i:]
		return n, true
	}
	str := func() (string, bool) {
		n, ok := number()
		if !ok || !expect(":") || len(rest) < n+1 || rest[n] != '\n' {
			return "", false
		}
		s := rest[:n]
		rest = rest[n+1:]
		return s, true
	}
	field := func(name string, dst *string) bool {
		if !expect(name + " ") {
			return false
		}
		s, ok := str()
		*dst = s
		return ok
	}
	list := func(name string, dst *[]string) bool {
		if !expect(name + " ") {
			return false
		}
		n, ok := number()
		if !ok || !expect("\n") {
			return false
		}
		for range n {
			s, ok := str()
			if !ok {
				return false
			}
			*dst = append(*dst, s)
		}
		return true
	}
	v3 := expect(serverVersionV3)
	switch {
	case !v3 && !expect(serverVersion):
		return fail("version")
	case !field("kind", &c.Kind):
		return fail("kind")
	case !field("command", &c.Command):
		return fail("command")
	case !field("program", &c.Program):
		return fail("program")
	case !list("args", &c.Args):
		return fail("args")
	case !field("cwd", &c.Cwd):
		return fail("cwd")
	case !list("env", &c.EnvNames):
		return fail("env")
	case !field("url", &c.URL):
		return fail("url")
	case !list("headers", &c.HeaderNames):
		return fail("headers")
	}
	if v3 {
		c.Registry = &Registry{}
		switch {
		case !field("registry-url", &c.Registry.URL):
			return fail("registry-url")
		case !field("registry-name", &c.Registry.Name):
			return fail("registry-name")
		case !field("registry-version", &c.Registry.Version):
			return fail("registry-version")
		case !field("registry-sha256", &c.Registry.EntrySHA256):
			return fail("registry-sha256")
		}
	}
	if rest != "" {
		return fail("end")
	}
	return c, nil
}

// normalize is what Canonical keeps of a config.
func normalize(c ServerConfig) ServerConfig {
	c.Args = slices.Clone(c.Args)
	c.EnvNames = slices.Sorted(slices.Values(c.EnvNames))
	var h []string
	for _, n := range c.HeaderNames {
		h = append(h, http.CanonicalHeaderKey(n))
	}
	slices.Sort(h)
	c.HeaderNames = h
	return c
}

var cmpConfig = cmpopts.EquateEmpty()
