package policy

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

const fullOperator = `ceiling: fix
isolation: [local, container]
eventModes:
  pull_request: fix
  issue: observe
  issue_comment: autonomous
repositories:
  - name: acme/widgets
    path: /srv/checkouts/widgets
  - name: group/sub/tool
    path: /srv/checkouts/tool
    remote: upstream
checkTimeout: 20m
sandboxReadOnly: [/opt/go, /root/.pyenv]
checkLimits:
  memoryMiB: 512
  pids: 64
`

// repos builds an operator file listing repositories, one "name path"
// pair each.
func repos(pairs ...string) string {
	var b strings.Builder
	b.WriteString("repositories:\n")
	for _, p := range pairs {
		name, path, _ := strings.Cut(p, " ")
		b.WriteString("  - name: '" + name + "'\n    path: '" + path + "'\n")
	}
	return b.String()
}

type operatorCase struct {
	name string
	in   string
	want Operator
	err  string
	is   error
}

var operatorCases = []operatorCase{
	{name: "full", in: fullOperator, want: Operator{
		Ceiling:    Fix,
		Isolation:  []string{Local, Container},
		EventModes: map[string]Mode{"pull_request": Fix, "issue": Observe, "issue_comment": Autonomous},
		Repositories: []OperatorRepo{
			{Name: "acme/widgets", Path: "/srv/checkouts/widgets", Remote: "origin"},
			{Name: "group/sub/tool", Path: "/srv/checkouts/tool", Remote: "upstream"},
		},
		CheckTimeout:    20 * time.Minute,
		SandboxReadOnly: []string{"/opt/go", "/root/.pyenv"},
		CheckLimits:     Limits{MemoryMiB: 512, CPUPercent: DefaultCheckLimits.CPUPercent, Pids: 64},
	}},
	{name: "empty", in: "", want: DefaultOperator()},
	{name: "comments", in: "# operator\n", want: DefaultOperator()},
	{name: "ceiling only", in: "ceiling: autonomous\n", want: Operator{Ceiling: Autonomous, Isolation: []string{Local}, CheckTimeout: DefaultCheckTimeout, CheckLimits: DefaultCheckLimits}},
	{name: "container only", in: "isolation: [container]\n", want: Operator{Isolation: []string{Container}, CheckTimeout: DefaultCheckTimeout, CheckLimits: DefaultCheckLimits}},
	{name: "sibling paths", in: repos("a/b /srv/a", "a/c /srv/ab", "a/d /srv/a-b"), want: Operator{Isolation: []string{Local}, CheckLimits: DefaultCheckLimits, CheckTimeout: DefaultCheckTimeout, Repositories: []OperatorRepo{
		{Name: "a/b", Path: "/srv/a", Remote: "origin"}, {Name: "a/c", Path: "/srv/ab", Remote: "origin"}, {Name: "a/d", Path: "/srv/a-b", Remote: "origin"},
	}}},
	{name: "dotted names", in: repos("my.org/my_repo-2.go /x"), want: Operator{Isolation: []string{Local}, CheckLimits: DefaultCheckLimits, CheckTimeout: DefaultCheckTimeout, Repositories: []OperatorRepo{
		{Name: "my.org/my_repo-2.go", Path: "/x", Remote: "origin"},
	}}},
	{name: "check timeout", in: "checkTimeout: 90s\n", want: Operator{Isolation: []string{Local}, CheckLimits: DefaultCheckLimits, CheckTimeout: 90 * time.Second}},
	{name: "check timeout bounds", in: "checkTimeout: 1h\n", want: Operator{Isolation: []string{Local}, CheckLimits: DefaultCheckLimits, CheckTimeout: time.Hour}},
	{name: "check limits", in: "checkLimits: {memoryMiB: 64, cpuPercent: 50, pids: 16}\n", want: Operator{Isolation: []string{Local}, CheckTimeout: DefaultCheckTimeout, CheckLimits: Limits{MemoryMiB: 64, CPUPercent: 50, Pids: 16}}},
	{name: "check limits out of bounds", in: "checkLimits: {memoryMiB: 8}\n", err: "checkLimits.memoryMiB 8: want a whole number from 16"},
	{name: "check limits not whole", in: "checkLimits: {pids: 9.5}\n", err: "checkLimits.pids 9.5"},
	{name: "read-only binds", in: "sandboxReadOnly: [/usr/local/go]\n", want: Operator{Isolation: []string{Local}, CheckLimits: DefaultCheckLimits, CheckTimeout: DefaultCheckTimeout, SandboxReadOnly: []string{"/usr/local/go"}}},

	{name: "check timeout short", in: "checkTimeout: 500ms\n", err: `checkTimeout "500ms": want a duration from 1s to 1h0m0s`},
	{name: "check timeout long", in: "checkTimeout: 2h\n", err: "want a duration"},
	{name: "check timeout negative", in: "checkTimeout: -1m\n", err: "want a duration"},
	{name: "check timeout unitless", in: "checkTimeout: '600'\n", err: "want a duration"},
	{name: "check timeout number", in: "checkTimeout: 600\n", err: "want a string"},
	{name: "read-only relative", in: "sandboxReadOnly: [opt/go]\n", err: `sandboxReadOnly: path "opt/go": must be an absolute, clean path`},
	{name: "read-only root", in: "sandboxReadOnly: [/]\n", err: "below the root"},
	{name: "read-only unclean", in: "sandboxReadOnly: [/opt/../etc]\n", err: "clean path"},
	{name: "read-only twice", in: "sandboxReadOnly: [/opt/go, /opt/go]\n", err: `"/opt/go" is listed twice`},
	{name: "read-only newline", in: "sandboxReadOnly: [\"/opt/\\ngo\"]\n", err: "control character"},
	{name: "read-only scalar", in: "sandboxReadOnly: /opt/go\n", err: "into a list of strings"},
	{name: "unknown field", in: "ceiling: fix\nmaxRuns: 3\n", err: "field maxRuns is not an operator field"},
	{name: "unknown repository field", in: "repositories:\n  - name: a/b\n    path: /x\n    branch: main\n", err: "field branch is not a repositories field"},
	{name: "ceiling number", in: "ceiling: 2\n", err: "want a mode"},
	{name: "ceiling unknown", in: "ceiling: full\n", err: `unknown mode "full"`},
	{name: "isolation empty", in: "isolation: []\n", err: "list at least one"},
	{name: "isolation docker", in: "isolation: [docker]\n", err: `isolation "docker": must be local or container`},
	{name: "isolation none", in: "isolation: [none]\n", err: "must be local or container"},
	{name: "isolation twice", in: "isolation: [local, local]\n", err: "local is listed twice"},
	{name: "isolation scalar", in: "isolation: local\n", err: "into a list of strings"},
	{name: "event kind unknown", in: "eventModes:\n  release: fix\n", err: `unknown event kind "release"`},
	{name: "event mode unknown", in: "eventModes:\n  push: yolo\n", err: `unknown mode "yolo"`},
	{name: "event mode bool", in: "eventModes:\n  push: true\n", err: "want a mode"},
	{name: "eventModes list", in: "eventModes: [push]\n", err: "into eventModes"},
	{name: "missing path", in: "repositories:\n  - name: a/b\n", err: "repositories[0]: name and path are required"},
	{name: "missing name", in: "repositories:\n  - path: /x\n", err: "name and path are required"},
	{name: "relative path", in: repos("a/b srv/a"), err: `path "srv/a": must be an absolute, clean path`},
	{name: "dot path", in: repos("a/b ./a"), err: "must be an absolute, clean path"},
	{name: "unclean path", in: repos("a/b /srv/x/../a"), err: "must be an absolute, clean path"},
	{name: "trailing slash", in: repos("a/b /srv/a/"), err: "must be an absolute, clean path"},
	{name: "double slash", in: repos("a/b /srv//a"), err: "must be an absolute, clean path"},
	{name: "root path", in: repos("a/b /"), err: "must be an absolute, clean path below the root"},
	{name: "empty path", in: repos("a/b "), err: "must be an absolute"},
	{name: "path NUL", in: "repositories:\n  - name: a/b\n    path: \"/srv/a\\0b\"\n", err: "path contains NUL"},
	{name: "path newline", in: "repositories:\n  - name: a/b\n    path: \"/srv/a\\nb\"\n", err: "path contains the control character"},
	{name: "duplicate name", in: repos("acme/w /srv/a", "acme/w /srv/b"), err: `repositories[1]: "acme/w" is listed twice`},
	{name: "duplicate name other case", in: repos("acme/w /srv/a", "Acme/W /srv/b"), err: "is listed twice"},
	{name: "duplicate path", in: repos("acme/a /srv/a", "acme/b /srv/a"), err: `path "/srv/a" is also acme/a's`},
	{name: "nested path", in: repos("acme/a /srv/a", "acme/b /srv/a/b"), err: `acme/b's path "/srv/a/b" is inside acme/a's`},
	{name: "nested path listed first", in: repos("acme/b /srv/a/b/c", "acme/a /srv/a"), err: "is inside acme/a's"},
	{name: "name one segment", in: repos("widgets /x"), err: "want owner/name"},
	{name: "name empty segment", in: repos("/acme/w /x"), err: "segment"},
	{name: "name trailing slash", in: repos("acme/w/ /x"), err: "segment"},
	{name: "name dotdot", in: repos("acme/.. /x"), err: "segment"},
	{name: "name dot", in: repos("./w /x"), err: "segment"},
	{name: "name space", in: "repositories:\n  - {name: acme/wid gets, path: /x}\n", err: `segment "wid gets"`},
	{name: "name dash", in: repos("acme/-w /x"), err: "segment"},
	{name: "name number", in: "repositories:\n  - name: 12\n    path: /x\n", err: "want a string"},
	{name: "remote dash", in: "repositories:\n  - {name: a/b, path: /x, remote: --upload-pack=x}\n", err: "remote"},
	{name: "remote option", in: "repositories:\n  - {name: a/b, path: /x, remote: -v}\n", err: `remote "-v": want a git remote name`},
	{name: "remote dot", in: "repositories:\n  - {name: a/b, path: /x, remote: .origin}\n", err: "want a git remote name"},
	{name: "remote dotdot", in: "repositories:\n  - {name: a/b, path: /x, remote: a..b}\n", err: "want a git remote name"},
	{name: "remote lock", in: "repositories:\n  - {name: a/b, path: /x, remote: up.lock}\n", err: "want a git remote name"},
	{name: "remote slash", in: "repositories:\n  - {name: a/b, path: /x, remote: up/stream}\n", err: "want a git remote name"},
	{name: "remote empty", in: "repositories:\n  - {name: a/b, path: /x, remote: ''}\n", err: "want a git remote name"},
	{name: "remote URL", in: "repositories:\n  - {name: a/b, path: /x, remote: 'https://github.com/a/b'}\n", is: ErrEndpointOrCredential},
	{name: "token key", in: "repositories:\n  - {name: a/b, path: /x, token: ghp_x}\n", is: ErrEndpointOrCredential},
	{name: "webhook secret", in: "webhookSecret: x\n", is: ErrEndpointOrCredential},
	{name: "alias", in: "ceiling: &c fix\neventModes: {push: *c}\n", err: "anchors and aliases"},
	{name: "two documents", in: "ceiling: fix\n---\nceiling: observe\n", err: "more than one YAML document"},
	{name: "not a mapping", in: "[fix]\n", err: "must be a mapping of fields (ceiling, isolation, eventModes, repositories, checkTimeout, sandboxReadOnly, checkLimits)"},
	{name: "too large", in: "# " + strings.Repeat("x", MaxSize), is: ErrTooLarge},
}

func TestParseOperator(t *testing.T) {
	for _, tc := range operatorCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseOperator([]byte(tc.in))
			if tc.err == "" && tc.is == nil {
				if err != nil {
					t.Fatalf("error: %v", err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("operator (-want +got):\n%s", diff)
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
			if diff := cmp.Diff(DefaultOperator(), got); diff != "" {
				t.Errorf("with an error, the operator is not DefaultOperator() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultOperator(t *testing.T) {
	o := DefaultOperator()
	if o.Ceiling != Observe || !o.Provides(Local) || o.Provides(Container) || len(o.Repositories) != 0 ||
		o.CheckTimeout != 10*time.Minute || len(o.SandboxReadOnly) != 0 {
		t.Errorf("DefaultOperator() = %+v", o)
	}
	for _, kind := range append(eventKinds, "", "release") {
		if m := o.EventMode(kind); m != Observe {
			t.Errorf("default EventMode(%q) = %v, want observe", kind, m)
		}
	}
	if _, ok := o.Repository("acme/widgets"); ok {
		t.Error("the default operator enables a repository")
	}
}

func TestOperatorLookups(t *testing.T) {
	o, err := ParseOperator([]byte(fullOperator))
	if err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[string]Mode{"pull_request": Fix, "issue": Observe, "issue_comment": Autonomous, "push": Observe, "release": Observe, "": Observe} {
		if got := o.EventMode(kind); got != want {
			t.Errorf("EventMode(%q) = %v, want %v", kind, got, want)
		}
	}
	if r, ok := o.Repository("ACME/Widgets"); !ok || r.Path != "/srv/checkouts/widgets" || r.Remote != "origin" {
		t.Errorf("Repository(ACME/Widgets) = %+v, %v", r, ok)
	}
	if r, ok := o.Repository("group/sub/tool"); !ok || r.Remote != "upstream" {
		t.Errorf("Repository(group/sub/tool) = %+v, %v", r, ok)
	}
	for _, name := range []string{"acme", "acme/widgets/x", "sub/tool", "acme/gadgets", ""} {
		if r, ok := o.Repository(name); ok {
			t.Errorf("Repository(%q) = %+v, want none", name, r)
		}
	}
	for iso, want := range map[string]bool{Local: true, Container: true, "none": false, "": false, "Container": false} {
		if got := o.Provides(iso); got != want {
			t.Errorf("Provides(%q) = %v, want %v", iso, got, want)
		}
	}
	// A hand-built operator with a value that is not a mode asks for observe.
	if m := (Operator{EventModes: map[string]Mode{"push": 9}}).EventMode("push"); m != Observe {
		t.Errorf("EventMode with an invalid mode = %v, want observe", m)
	}
}

func TestOperatorRoundTrip(t *testing.T) {
	for _, in := range []string{"", fullOperator} {
		o, err := ParseOperator([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		out, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseOperator(out)
		if err != nil {
			t.Fatalf("parse of\n%s: %v", out, err)
		}
		if diff := cmp.Diff(o, back); diff != "" {
			t.Errorf("round trip of\n%s(-want +got):\n%s", out, diff)
		}
	}
}

// TestLimitsFor: a repository's runner.limits lower the operator's check
// limits, field by field, and never raise them; bad values are refused.
func TestLimitsFor(t *testing.T) {
	o := DefaultOperator()
	o.CheckLimits = Limits{MemoryMiB: 1024, CPUPercent: 100, Pids: 256}
	r, err := ParseRepo([]byte("runner:\n  limits: {memoryMiB: 512, cpuPercent: 400}\n"), func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if got := o.LimitsFor(r); got != (Limits{MemoryMiB: 512, CPUPercent: 100, Pids: 256}) {
		t.Errorf("limits: %+v", got)
	}
	if got := o.LimitsFor(Default()); got != o.CheckLimits {
		t.Errorf("without runner.limits: %+v", got)
	}
	for _, bad := range []string{"runner:\n  limits: {memoryMiB: 1}\n", "runner:\n  limits: {pids: -3}\n", "runner:\n  limits: {disk: 5}\n"} {
		if _, err := ParseRepo([]byte(bad), func(string) bool { return true }); err == nil {
			t.Errorf("%q was taken", bad)
		}
	}
}
