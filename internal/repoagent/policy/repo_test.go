package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// knownRisk stands in for the risk package's list of classes.
func knownRisk(class string) bool {
	switch class {
	case "docs", "tests", "deps", "config", "security":
		return true
	}
	return false
}

const fullRepo = `mode: fix
autofix:
  enabled: true
  minConfidence: 0.8
  allowedChangeRisks: [docs, tests]
  requireIsolated: true
checks:
  - [go, test, ./...]
  - [npm, test]
runner:
  isolation: container
`

// with returns Default() changed by f.
func with(f func(*Repo)) Repo {
	r := Default()
	f(&r)
	return r
}

type repoCase struct {
	name    string
	in      string
	want    Repo   // when err and is are empty
	err     string // a part of the error
	is      error  // the error wraps it
	checkID string // the error names this check ("checks[1]")
}

var repoCases = []repoCase{
	{name: "full", in: fullRepo, want: Repo{
		Mode:    Fix,
		Autofix: Autofix{Enabled: true, MinConfidence: 0.8, AllowedChangeRisks: []string{"docs", "tests"}, RequireIsolated: true},
		Checks:  [][]string{{"go", "test", "./..."}, {"npm", "test"}},
		Runner:  Runner{Isolation: Container},
	}},
	{name: "empty", in: "", want: Default()},
	{name: "comments only", in: "# nothing yet\n# see https://example.com/docs\n", want: Default()},
	{name: "lone document marker", in: "---\n", want: Default()},
	{name: "null document", in: "~\n", want: Default()},
	{name: "mode only", in: "mode: fix\n", want: with(func(r *Repo) { r.Mode = Fix })},
	{name: "autonomous", in: "mode: autonomous\n", want: with(func(r *Repo) { r.Mode = Autonomous })},
	{name: "enabled only keeps requireIsolated and minConfidence", in: "autofix:\n  enabled: true\n",
		want: with(func(r *Repo) { r.Autofix.Enabled = true })},
	{name: "null section is absent", in: "autofix:\nrunner:\n", want: Default()},
	{name: "requireIsolated false", in: "autofix: {requireIsolated: false}\n",
		want: with(func(r *Repo) { r.Autofix.RequireIsolated = false })},
	{name: "minConfidence bounds", in: "autofix: {minConfidence: 1}\n", want: with(func(r *Repo) { r.Autofix.MinConfidence = 1 })},
	{name: "minConfidence zero", in: "autofix: {minConfidence: 0.0}\n", want: with(func(r *Repo) { r.Autofix.MinConfidence = 0 })},
	{name: "no checks", in: "checks: []\n", want: Default()},
	{name: "arguments as written", in: "checks: [[sleep, 5], [tool, 0x10, true, 2024-01-01]]\n",
		want: with(func(r *Repo) { r.Checks = [][]string{{"sleep", "5"}, {"tool", "0x10", "true", "2024-01-01"}} })},
	{name: "inert characters", in: "checks: [[go, test, -run, 'Test$', '*.go', \"a&b\", '#x']]\n",
		want: with(func(r *Repo) { r.Checks = [][]string{{"go", "test", "-run", "Test$", "*.go", "a&b", "#x"}} })},
	{name: "comment after a document end", in: "mode: fix\n...\n# end\n", want: with(func(r *Repo) { r.Mode = Fix })},

	// Strict decoding.
	{name: "unknown field", in: "mode: fix\nmodel: gpt\n", err: "field model is not a policy field"},
	{name: "unknown autofix field", in: "autofix:\n  enable: true\n", err: "field enable is not an autofix field"},
	{name: "unknown runner field", in: "runner:\n  image: alpine\n", err: "field image is not a runner field"},
	{name: "mode number", in: "mode: 3\n", err: `want a mode (observe, fix or autonomous), not !!int "3"`},
	{name: "mode capitalised", in: "mode: Fix\n", err: `unknown mode "Fix"`},
	{name: "mode list", in: "mode: [fix]\n", err: "want a mode"},
	{name: "enabled quoted yes", in: "autofix:\n  enabled: \"yes\"\n", err: `want true or false, not !!str "yes"`},
	{name: "enabled bare yes", in: "autofix:\n  enabled: yes\n", err: `want true or false, not !!str "yes"`},
	{name: "enabled on", in: "autofix:\n  enabled: on\n", err: "want true or false"},
	{name: "enabled number", in: "autofix:\n  enabled: 1\n", err: "want true or false"},
	{name: "requireIsolated quoted", in: "autofix:\n  requireIsolated: \"false\"\n", err: "want true or false"},
	{name: "minConfidence string", in: "autofix:\n  minConfidence: \"0.8\"\n", err: "want a number"},
	{name: "minConfidence above 1", in: "autofix:\n  minConfidence: 1.5\n", err: "minConfidence 1.5: must be between 0 and 1"},
	{name: "minConfidence negative", in: "autofix:\n  minConfidence: -0.1\n", err: "must be between 0 and 1"},
	{name: "minConfidence NaN", in: "autofix:\n  minConfidence: .nan\n", err: "must be between 0 and 1"},
	{name: "minConfidence infinite", in: "autofix:\n  minConfidence: .inf\n", err: "must be between 0 and 1"},
	{name: "autofix scalar", in: "autofix: true\n", err: "into autofix, a mapping"},
	{name: "unknown risk", in: "autofix:\n  allowedChangeRisks: [docs, typo]\n", err: `unknown change-risk class "typo"`},
	{name: "empty risk", in: "autofix:\n  allowedChangeRisks: ['']\n", err: `unknown change-risk class ""`},
	{name: "duplicate risk", in: "autofix:\n  allowedChangeRisks: [docs, tests, docs]\n", err: `"docs" is listed twice`},
	{name: "risks not a list", in: "autofix:\n  allowedChangeRisks: docs\n", err: "into a list of strings"},
	{name: "risk not a string", in: "autofix:\n  allowedChangeRisks: [1]\n", err: "want a string"},
	{name: "null risk", in: "autofix:\n  allowedChangeRisks: [docs, ~]\n", err: "empty list item"},
	{name: "runner isolation", in: "runner:\n  isolation: docker\n", err: `runner.isolation "docker": must be local or container`},
	{name: "runner isolation none", in: "runner:\n  isolation: none\n", err: "must be local or container"},

	// Checks.
	{name: "check not a list", in: "checks: [go]\n", err: "want a check"},
	{name: "checks not a list", in: "checks: go test\n", err: "into checks, a list of argv lists"},
	{name: "check empty", in: "checks: [[]]\n", err: "checks[0]: 0 elements, want 1 to 64", checkID: "checks[0]"},
	{name: "check nested", in: "checks: [[go, [test]]]\n", err: "want a program or argument"},
	{name: "check null argument", in: "checks: [[go, ~]]\n", err: "empty list item"},
	{name: "check empty argument", in: "checks: [[go, '']]\n", err: "checks[0] argument 1: 0 bytes", checkID: "checks[0]"},
	{name: "too many checks", in: "checks:\n" + strings.Repeat("  - [true]\n", 21), err: "21 checks, at most 20"},
	{name: "too many arguments", in: "checks: [[echo" + strings.Repeat(", x", 64) + "]]\n", err: "65 elements, want 1 to 64"},
	{name: "argument too long", in: "checks: [[echo, " + strings.Repeat("x", 4097) + "]]\n", err: "argument 1: 4097 bytes, want 1 to 4096"},
	{name: "NUL", in: "checks: [[echo, \"a\\0b\"]]\n", err: "checks[0] argument 1: contains NUL"},
	{name: "tab", in: "checks: [[echo, \"a\\tb\"]]\n", err: "control character U+0009"},
	{name: "and as argument", in: "checks: [[make, '&&', rm]]\n", is: ErrShellOperator, err: `"&&"`, checkID: "checks[0]"},
	{name: "and inside argument", in: "checks:\n  - [go, test]\n  - [make && rm]\n", is: ErrShellOperator, err: `checks[1] program "make && rm" is or contains the shell operator "&&"`, checkID: "checks[1]"},
	{name: "pipe as argument", in: "checks: [[cat, f, '|', wc]]\n", is: ErrShellOperator, err: `"|"`, checkID: "checks[0]"},
	{name: "or inside argument", in: "checks: [[test, 'a||b']]\n", is: ErrShellOperator, err: `"||"`, checkID: "checks[0]"},
	{name: "semicolon as argument", in: "checks: [[true, ';', rm]]\n", is: ErrShellOperator, err: `";"`, checkID: "checks[0]"},
	{name: "semicolon inside argument", in: "checks: [[echo, 'a;b']]\n", is: ErrShellOperator, err: `checks[0] argument 1 "a;b" is or contains the shell operator ";"`, checkID: "checks[0]"},
	{name: "command substitution", in: "checks: [[echo, '$(id)']]\n", is: ErrShellOperator, err: `"$("`, checkID: "checks[0]"},
	{name: "command substitution alone", in: "checks: [[echo, '$(']]\n", is: ErrShellOperator, err: `"$("`, checkID: "checks[0]"},
	{name: "backtick", in: "checks: [[echo, '`id`']]\n", is: ErrShellOperator, err: "\"`\"", checkID: "checks[0]"},
	{name: "backtick alone", in: "checks: [[echo, '`']]\n", is: ErrShellOperator, err: "\"`\"", checkID: "checks[0]"},
	{name: "redirect out", in: "checks: [[go, test, '>', out.txt]]\n", is: ErrShellOperator, err: `">"`, checkID: "checks[0]"},
	{name: "redirect in", in: "checks: [[wc, '<in.txt']]\n", is: ErrShellOperator, err: `"<"`, checkID: "checks[0]"},
	{name: "background", in: "checks: [[server, '&']]\n", is: ErrShellOperator, err: `"&"`, checkID: "checks[0]"},
	{name: "newline", in: "checks: [[echo, \"a\\nb\"]]\n", is: ErrShellOperator, err: `"\n"`, checkID: "checks[0]"},
	{name: "operator as program", in: "checks: [['|', x]]\n", is: ErrShellOperator, err: `checks[0] program "|"`, checkID: "checks[0]"},
	{name: "third check", in: "checks: [[a], [b], [c, 'x;y']]\n", is: ErrShellOperator, checkID: "checks[2]"},

	// Endpoints and credentials.
	{name: "url key", in: "url: x\n", is: ErrEndpointOrCredential, err: `line 1: key "url"`},
	{name: "endpoint key", in: "mode: fix\nendpoint: x\n", is: ErrEndpointOrCredential, err: `line 2: key "endpoint"`},
	{name: "base_url key", in: "runner:\n  base_url: x\n", is: ErrEndpointOrCredential},
	{name: "baseURL key", in: "runner:\n  baseURL: x\n", is: ErrEndpointOrCredential},
	{name: "api_key nested", in: "autofix:\n  api_key: x\n", is: ErrEndpointOrCredential},
	{name: "apiKey nested", in: "autofix:\n  enabled: true\n  apiKey: sk-123\n", is: ErrEndpointOrCredential, err: `line 3: key "apiKey"`},
	{name: "token deep", in: "model:\n  provider:\n    GITHUB_TOKEN: x\n", is: ErrEndpointOrCredential},
	{name: "password", in: "Password: x\n", is: ErrEndpointOrCredential},
	{name: "secret", in: "webhookSecret: x\n", is: ErrEndpointOrCredential},
	{name: "credentials", in: "credentials: {}\n", is: ErrEndpointOrCredential},
	{name: "key", in: "key: x\n", is: ErrEndpointOrCredential},
	{name: "joined accesstoken", in: "accesstoken: x\n", is: ErrEndpointOrCredential},
	{name: "URL value", in: "mode: https://models.example.com/v1\n", is: ErrEndpointOrCredential, err: "line 1: a value looks like a URL"},
	{name: "URL in a check", in: "checks: [[curl, 'https://example.com']]\n", is: ErrEndpointOrCredential},
	{name: "URL in a risk", in: "autofix: {allowedChangeRisks: ['file:///etc']}\n", is: ErrEndpointOrCredential},
	{name: "URL as a key", in: "'http://x': 1\n", is: ErrEndpointOrCredential},

	// YAML features refused.
	{name: "anchor and alias", in: "autofix: &a {enabled: true}\nrunner: *a\n", err: "anchors and aliases are not allowed"},
	{name: "anchor alone", in: "mode: &m fix\n", err: "line 1: YAML anchors and aliases are not allowed"},
	{name: "merge key", in: "autofix:\n  <<: {enabled: true}\n", err: "merge keys (<<) are not allowed"},
	{name: "custom tag", in: "mode: !env MODE\n", err: `YAML tag "!env" is not allowed`},
	{name: "binary tag", in: "mode: !!binary Zml4\n", err: `YAML tag "!!binary" is not allowed`},
	{name: "duplicate key", in: "mode: fix\nmode: observe\n", err: `line 2: key "mode" appears twice`},
	{name: "non-string key", in: "1: fix\n", err: "a key must be a plain string"},
	{name: "two documents", in: "mode: fix\n---\nmode: observe\n", err: "more than one YAML document"},
	{name: "empty second document", in: "mode: fix\n---\n", err: "more than one YAML document"},
	{name: "not a mapping", in: "- mode: fix\n", err: "must be a mapping of fields (mode, autofix, checks, runner)"},
	{name: "scalar document", in: "fix\n", err: "must be a mapping"},
	{name: "syntax error", in: "mode: [fix\n", err: "invalid YAML"},
	{name: "too deep", in: "x: " + strings.Repeat("[", 20) + strings.Repeat("]", 20) + "\n", err: "nested more than 16 levels"},
	{name: "too large", in: "# " + strings.Repeat("x", MaxSize) + "\n", is: ErrTooLarge},
}

func TestParseRepo(t *testing.T) {
	for _, tc := range repoCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRepo([]byte(tc.in), knownRisk)
			if tc.err == "" && tc.is == nil && tc.checkID == "" {
				if err != nil {
					t.Fatalf("error: %v", err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("policy (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; got %+v", got)
			}
			if tc.err != "" && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %q does not contain %q", err, tc.err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %q", err, tc.is)
			}
			if tc.checkID != "" && !strings.Contains(err.Error(), tc.checkID+" ") && !strings.Contains(err.Error(), tc.checkID+":") {
				t.Errorf("error %q does not name %s", err, tc.checkID)
			}
			if diff := cmp.Diff(Default(), got); diff != "" {
				t.Errorf("with an error, the policy is not Default() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	want := Repo{
		Mode:    Observe,
		Autofix: Autofix{Enabled: false, MinConfidence: 0.9, RequireIsolated: true},
		Runner:  Runner{Isolation: "local"},
	}
	if diff := cmp.Diff(want, Default()); diff != "" {
		t.Errorf("Default() (-want +got):\n%s", diff)
	}
	// Each call is a fresh value.
	a := Default()
	a.Autofix.AllowedChangeRisks = append(a.Autofix.AllowedChangeRisks, "docs")
	if b := Default(); len(b.Autofix.AllowedChangeRisks) != 0 {
		t.Errorf("Default() shares state: %v", b.Autofix.AllowedChangeRisks)
	}
}

func TestParseRepoOrObserve(t *testing.T) {
	// A file asking for autonomous mode with one bad field is observe.
	r, err := ParseRepoOrObserve([]byte("mode: autonomous\nautofix:\n  enabled: true\n  minConfidence: 2\n"), knownRisk)
	if err == nil {
		t.Fatal("no error")
	}
	if r.Mode != Observe || r.Autofix.Enabled {
		t.Errorf("on error got mode %v, autofix enabled %v; want observe, disabled", r.Mode, r.Autofix.Enabled)
	}
	if diff := cmp.Diff(Default(), r); diff != "" {
		t.Errorf("on error (-want +got):\n%s", diff)
	}
	r, err = ParseRepoOrObserve([]byte(fullRepo), knownRisk)
	if err != nil || r.Mode != Fix {
		t.Errorf("good file: mode %v, error %v", r.Mode, err)
	}
}

func TestParseRepoNilKnownRisk(t *testing.T) {
	if _, err := ParseRepo([]byte("autofix: {allowedChangeRisks: [docs]}\n"), nil); err == nil {
		t.Error("a nil knownRisk accepted a class")
	}
	if _, err := ParseRepo([]byte("mode: fix\n"), nil); err != nil {
		t.Errorf("a nil knownRisk refused a file listing no class: %v", err)
	}
}

func TestCredentialKey(t *testing.T) {
	for _, k := range []string{
		"url", "URL", "Url", "endpoint", "endpoints", "base_url", "baseURL", "baseUrl", "BASE_URL", "base-url", "model.url",
		"api_key", "apiKey", "APIKey", "apikey", "API_KEY", "token", "githubToken", "GITHUB_TOKEN", "accesstoken",
		"password", "dbPassword", "passwd", "secret", "clientSecret", "credential", "credentials", "key", "keys",
		"sshKey", "privateKey", "keyFile", "uri", "webhook_secret",
	} {
		if !credentialKey(k) {
			t.Errorf("credentialKey(%q) = false, want true", k)
		}
	}
	for _, k := range []string{
		"mode", "autofix", "enabled", "minConfidence", "allowedChangeRisks", "requireIsolated", "checks", "runner",
		"isolation", "ceiling", "eventModes", "repositories", "name", "path", "remote", "pull_request", "issue_comment",
		"monkey", "curl", "hotkeys", "turkey",
	} {
		if credentialKey(k) {
			t.Errorf("credentialKey(%q) = true, want false", k)
		}
	}
}

// trickyRepo holds arguments that YAML would read as something else, or
// that need quoting; ParseRepo accepts them all.
var trickyRepo = Repo{
	Mode:    Autonomous,
	Autofix: Autofix{Enabled: true, MinConfidence: 0, AllowedChangeRisks: []string{"deps"}},
	Runner:  Runner{Isolation: Container},
	Checks: [][]string{
		{"go", "vet", "./..."}, {"sleep", "5"}, {"x", "true"}, {"y", "null"}, {"z", "-"}, {"w", "a b"}, {"é", "0x10"},
		{"t", " lead", "trail ", "- x", "a: b", "#c", "'q'", `"d"`, "~", "0o17", "1e3", ".inf", "*a", "&a", "!t",
			"%x", "@x", "?", "{", "}", "[", "]", ",", "\u2028", "\ufeff", "\u00a0", "yes", "on", "2024-01-01", "---", "..."},
	},
}

func TestRepoRoundTrip(t *testing.T) {
	for _, r := range []Repo{Default(), trickyRepo} {
		out, err := yaml.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseRepo(out, knownRisk)
		if err != nil {
			t.Fatalf("parse of\n%s: %v", out, err)
		}
		if diff := cmp.Diff(r, back); diff != "" {
			t.Errorf("round trip of\n%s(-want +got):\n%s", out, diff)
		}
	}
	if _, err := yaml.Marshal(Repo{Mode: 9}); err == nil {
		t.Error("marshalled a policy whose mode is not a mode")
	}
}

// TestPlainText covers what YAML cannot deliver (invalid UTF-8) as well as
// what it can.
func TestPlainText(t *testing.T) {
	for s, want := range map[string]string{
		"go":         "",
		"é ü \u2028": "",
		"\xff":       "is not valid UTF-8",
		"a\x00b":     "contains NUL",
		"a\tb":       "contains the control character U+0009",
		"a\u0085b":   "contains the control character U+0085",
		"\x7f":       "contains the control character U+007F",
	} {
		if got := plainText(s); got != want {
			t.Errorf("plainText(%q) = %q, want %q", s, got, want)
		}
	}
}
