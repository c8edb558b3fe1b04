package policy

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/zero-dev/zero/internal/guard/spawn"
)

// FuzzParseRepo: ParseRepo never panics, returns Default() with any error,
// and a policy it accepts keeps every invariant and survives a round trip
// through yaml.v3.
func FuzzParseRepo(f *testing.F) {
	for _, tc := range repoCases {
		addSeed(f, tc.in)
	}
	if out, err := yaml.Marshal(trickyRepo); err == nil {
		f.Add(out)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRepo(data, knownRisk)
		if err != nil {
			if diff := cmp.Diff(Default(), r); diff != "" {
				t.Fatalf("error %v with a policy that is not Default() (-want +got):\n%s", err, diff)
			}
			return
		}
		repoInvariants(t, r)
		out, err := yaml.Marshal(r)
		if err != nil {
			t.Fatalf("marshal %+v: %v", r, err)
		}
		back, err := ParseRepo(out, knownRisk)
		if err != nil {
			t.Fatalf("parse of the re-encoded policy\n%s: %v", out, err)
		}
		if diff := cmp.Diff(r, back); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

// addSeed adds a table input as a seed, except the few large ones (over
// MaxSize, or near MaxArgBytes), which TestParseRepo covers and which would
// slow the fuzzer's minimizing to a crawl.
func addSeed(f *testing.F, in string) {
	if len(in) <= 2048 {
		f.Add([]byte(in))
	}
}

func repoInvariants(t *testing.T, r Repo) {
	t.Helper()
	if !r.Mode.valid() {
		t.Fatalf("mode %v", r.Mode)
	}
	a := r.Autofix
	if !(a.MinConfidence >= 0 && a.MinConfidence <= 1) {
		t.Fatalf("minConfidence %v", a.MinConfidence)
	}
	strs := []string{r.Runner.Isolation}
	for i, c := range a.AllowedChangeRisks {
		if !knownRisk(c) || slices.Contains(a.AllowedChangeRisks[:i], c) {
			t.Fatalf("allowedChangeRisks %q", a.AllowedChangeRisks)
		}
		strs = append(strs, c)
	}
	if len(r.Checks) > MaxChecks {
		t.Fatalf("%d checks", len(r.Checks))
	}
	for _, argv := range r.Checks {
		if len(argv) == 0 || len(argv) > MaxArgs {
			t.Fatalf("check %q", argv)
		}
		for _, s := range argv {
			if len(s) == 0 || len(s) > MaxArgBytes || strings.ContainsRune(s, 0) || spawn.ShellOperator(s) != "" || plainText(s) != "" {
				t.Fatalf("check %q holds %q", argv, s)
			}
			for _, op := range []string{"&&", "||", "|", ";", "$(", "`", ">", "<", "\n"} {
				if strings.Contains(s, op) {
					t.Fatalf("check %q holds the operator %q", argv, op)
				}
			}
			if s == "&" {
				t.Fatalf("check %q holds &", argv)
			}
		}
		strs = append(strs, argv...)
	}
	if r.Runner.Isolation != Local && r.Runner.Isolation != Container {
		t.Fatalf("isolation %q", r.Runner.Isolation)
	}
	for _, s := range strs {
		if strings.Contains(s, "://") {
			t.Fatalf("value %q holds ://", s)
		}
	}
}

// FuzzParseOperator: ParseOperator never panics, returns DefaultOperator()
// with any error, and a configuration it accepts keeps every invariant and
// survives a round trip through yaml.v3.
func FuzzParseOperator(f *testing.F) {
	for _, tc := range operatorCases {
		addSeed(f, tc.in)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := ParseOperator(data)
		if err != nil {
			if diff := cmp.Diff(DefaultOperator(), o); diff != "" {
				t.Fatalf("error %v with a configuration that is not DefaultOperator() (-want +got):\n%s", err, diff)
			}
			return
		}
		operatorInvariants(t, o)
		out, err := yaml.Marshal(o)
		if err != nil {
			t.Fatalf("marshal %+v: %v", o, err)
		}
		back, err := ParseOperator(out)
		if err != nil {
			t.Fatalf("parse of the re-encoded configuration\n%s: %v", out, err)
		}
		if diff := cmp.Diff(o, back); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func operatorInvariants(t *testing.T, o Operator) {
	t.Helper()
	if !o.Ceiling.valid() {
		t.Fatalf("ceiling %v", o.Ceiling)
	}
	if len(o.Isolation) == 0 {
		t.Fatal("no isolation")
	}
	for i, iso := range o.Isolation {
		if (iso != Local && iso != Container) || slices.Contains(o.Isolation[:i], iso) {
			t.Fatalf("isolation %q", o.Isolation)
		}
	}
	if o.CheckTimeout < MinCheckTimeout || o.CheckTimeout > MaxCheckTimeout {
		t.Fatalf("checkTimeout %v", o.CheckTimeout)
	}
	for i, dir := range o.SandboxReadOnly {
		if checkAbsPath(dir) != nil || slices.Contains(o.SandboxReadOnly[:i], dir) || strings.Contains(dir, "://") {
			t.Fatalf("sandboxReadOnly %q", o.SandboxReadOnly)
		}
	}
	for kind, m := range o.EventModes {
		if !slices.Contains(eventKinds, kind) || !m.valid() || o.EventMode(kind) != m {
			t.Fatalf("eventModes %v", o.EventModes)
		}
	}
	for i, r := range o.Repositories {
		if checkRepoName(r.Name) != nil || checkRemote(r.Remote) != nil || strings.HasPrefix(r.Remote, "-") {
			t.Fatalf("repository %+v", r)
		}
		if !filepath.IsAbs(r.Path) || filepath.Clean(r.Path) != r.Path || r.Path == "/" || plainText(r.Path) != "" {
			t.Fatalf("path %q", r.Path)
		}
		for _, s := range []string{r.Name, r.Path, r.Remote} {
			if strings.Contains(s, "://") {
				t.Fatalf("value %q holds ://", s)
			}
		}
		for _, earlier := range o.Repositories[:i] {
			if strings.EqualFold(earlier.Name, r.Name) || earlier.Path == r.Path {
				t.Fatalf("repositories %+v and %+v collide", earlier, r)
			}
			for _, pair := range [][2]string{{earlier.Path, r.Path}, {r.Path, earlier.Path}} {
				if rel, err := filepath.Rel(pair[0], pair[1]); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
					t.Fatalf("path %q is inside %q", pair[1], pair[0])
				}
			}
		}
		if got, ok := o.Repository(r.Name); !ok || got != r {
			t.Fatalf("Repository(%q) = %+v, %v", r.Name, got, ok)
		}
	}
}
