package run

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/repoagent/policy"
	"github.com/zero-dev/zero/internal/testgit"
)

// goModule is a tiny Go module whose test checks Add.
var goModule = map[string]string{
	"go.mod": "module example.com/adder\n\ngo 1.22\n",
	"add.go": "package adder\n\n// Add returns a + b.\nfunc Add(a, b int) int { return a + b }\n",
	"add_test.go": "package adder\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n" +
		"\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d\", got)\n\t}\n}\n",
}

// lowRisks allow-lists every low class, so that only the checks decide.
const lowRisks = "[docs, tests, code, config, dependencies]"

func checksPolicy(checks string) string {
	return "mode: fix\nautofix:\n  enabled: true\n  minConfidence: 0.8\n  allowedChangeRisks: " + lowRisks + "\nchecks:\n  - " + checks + "\n"
}

var goPolicy = checksPolicy("[go, test, ./...]")

// The changes the model proposes, as the files they change ("" deletes).
var (
	// Breaks Add and edits its test to expect the broken answer.
	goEditedTest = map[string]string{
		"add.go":      strings.Replace(goModule["add.go"], "a + b }", "a - b }", 1),
		"add_test.go": strings.Replace(goModule["add_test.go"], "got != 5", "got != -1", 1),
	}
	// Breaks Add and adds a TestMain that exits 0 before any test runs.
	goTestMain = map[string]string{
		"add.go":       strings.Replace(goModule["add.go"], "a + b }", "a - b }", 1),
		"main_test.go": "package adder\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n",
	}
	// Adds Sub with a test of its own: the old tests still pass.
	goNewTest = map[string]string{
		"add.go": goModule["add.go"] + "\n// Sub returns a - b.\nfunc Sub(a, b int) int { return a - b }\n",
		"sub_test.go": "package adder\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n" +
			"\tif Sub(3, 2) != 1 {\n\t\tt.Fatal(\"Sub\")\n\t}\n}\n",
	}
)

// diffOf returns the diff, in git's format, that turns files into files
// with changes made ("" deletes a file), renames detected.
func diffOf(t testing.TB, files, changes map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	testgit.Run(t, dir, "init", "--quiet")
	write := func(m map[string]string) {
		for name, content := range m {
			p := filepath.Join(dir, name)
			if content == "" {
				os.Remove(p)
				continue
			}
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(files)
	testgit.Run(t, dir, "add", "-A")
	testgit.Run(t, dir, "commit", "--quiet", "-m", "before")
	write(changes)
	testgit.Run(t, dir, "add", "-A")
	return testgit.Run(t, dir, "diff", "--cached", "-M", "HEAD") + "\n"
}

func withPolicy(files map[string]string, policyYAML string) map[string]string {
	out := maps.Clone(files)
	out[PolicyFile] = policyYAML
	return out
}

// runOrApprove runs a task; when the chain holds the change, a person
// approves it, and the approval's report is returned.
func runOrApprove(t *testing.T, o Options) Report {
	t.Helper()
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != policy.HeldHighImpact {
		return rep
	}
	approved, err := Approve(context.Background(), o, rep.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	return approved
}

// TestOldTestsOnNewCode: a change that breaks the code and switches off,
// or bends, the checks that judge it passes its own checks, and is refused
// because the reviewed head's tests and harness fail on its code: an
// edited test, a new TestMain that exits 0, a check script rewritten to
// exit 0, a Makefile's test target made to echo, package.json's test
// script rewritten. When the chain holds such a change as high impact, a
// person's approval does not get it past this step either. Nothing is
// pushed.
func TestOldTestsOnNewCode(t *testing.T) {
	value := map[string]string{"value.txt": "42\n"}
	shFiles := withFiles(value, map[string]string{"check.sh": "grep -qx 42 value.txt\n"})
	makeFiles := withFiles(value, map[string]string{"Makefile": "test:\n\tgrep -qx 42 value.txt\n"})
	npmFiles := map[string]string{
		"package.json": `{"name": "w", "version": "1.0.0", "private": true, "scripts": {"test": "node test.js"}}` + "\n",
		"test.js":      "if (require('./value.js') !== 42) { process.exit(1) }\n",
		"value.js":     "module.exports = 42\n",
		".npmrc":       "update-notifier=false\nfund=false\naudit=false\n",
	}
	for _, tc := range []struct {
		name    string
		files   map[string]string
		checks  string
		changes map[string]string
		needs   string // a program the case needs
	}{
		{"edited test", goModule, "[go, test, ./...]", goEditedTest, "go"},
		{"TestMain exits 0", goModule, "[go, test, ./...]", goTestMain, "go"},
		{"check script exits 0", shFiles, "[sh, check.sh]", map[string]string{"value.txt": "41\n", "check.sh": "exit 0\n"}, "sh"},
		{"Makefile target echoes", makeFiles, "[make, test]", map[string]string{"value.txt": "41\n", "Makefile": "test:\n\t@echo skipped\n"}, "make"},
		{"package.json script rewritten", npmFiles, "[npm, test]", map[string]string{
			"value.js":     "module.exports = 41\n",
			"package.json": `{"name": "w", "version": "1.0.0", "private": true, "scripts": {"test": "echo skipped"}}` + "\n",
		}, "npm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := exec.LookPath(tc.needs); err != nil {
				if tc.needs == "npm" && os.Getenv("ZERO_REQUIRE_NODE") != "" {
					t.Fatalf("ZERO_REQUIRE_NODE is set and npm is missing: %v", err)
				}
				t.Skipf("%s is not installed, so this case cannot run its check: %v", tc.needs, err)
			}
			e := setupFiles(t, withPolicy(tc.files, checksPolicy(tc.checks)))
			c, _ := newModel(t, answer(diffOf(t, tc.files, tc.changes), 0.99))
			rep := runOrApprove(t, e.options(c, operatorWith(policy.Autonomous), prEvent, policy.Fix))
			if rep.Outcome != policy.RefusedVerificationChanged || rep.Code != "verification_changed" {
				t.Fatalf("outcome %s (%s), want refused_verification_changed; checks %+v", rep.Outcome, rep.Reason, rep.Checks)
			}
			if !rep.Checks.Passed || rep.Verification == nil || rep.Verification.Passed {
				t.Errorf("first run %+v, second %+v", rep.Checks, rep.Verification)
			}
			var out strings.Builder
			rep.Write(&out)
			if !strings.Contains(out.String(), "outcome: refused_verification_changed") || !strings.Contains(out.String(), "checks on the reviewed head's tests: failed") {
				t.Errorf("the report:\n%s", out.String())
			}
			if branches := testgit.Run(t, e.remote, "for-each-ref", "--format=%(refname)", "refs/heads/"); branches != "refs/heads/main" {
				t.Errorf("branches on the remote: %q", branches)
			}
		})
	}
}

func withFiles(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}
