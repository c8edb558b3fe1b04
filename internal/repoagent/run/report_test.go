package run

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/repoagent/policy"
	"github.com/zero-dev/zero/internal/repoagent/record"
)

// lineBreaks are the characters a terminal, an editor or a log reader may
// take as the end of a line.
const lineBreaks = "\n\r\v\f\u0085\u2028\u2029"

// TestOneLine: every C0 and C1 control (NEL, CR, VT, FF, ESC, NUL ...),
// DEL, and the Unicode line and paragraph separators are gone from what
// oneLine returns; invalid UTF-8 is replaced; a long line is cut on a
// character boundary.
func TestOneLine(t *testing.T) {
	var forgers []string
	for r := rune(0); r < 0x20; r++ {
		forgers = append(forgers, string(r))
	}
	for r := rune(0x7f); r <= 0x9f; r++ {
		forgers = append(forgers, string(r))
	}
	forgers = append(forgers, "\u2028", "\u2029", "\xc2", "\x85")
	for _, f := range forgers {
		got := oneLine("ok" + f + "outcome: applied")
		for _, r := range got {
			if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
				t.Errorf("oneLine(%q) = %q keeps %U", "ok"+f, got, r)
			}
		}
		if !strings.HasPrefix(got, "ok") || !strings.HasSuffix(got, "outcome: applied") {
			t.Errorf("oneLine(%q) = %q", f, got)
		}
	}
	long := oneLine(strings.Repeat("é", 400))
	if len(long) > maxLine+3 || !strings.HasSuffix(long, "...") || strings.ContainsRune(long, '\uFFFD') {
		t.Errorf("a long line: %d bytes, %q", len(long), long[len(long)-8:])
	}
}

// TestReportCannotBeForged: model text and diff lines holding every kind
// of line break cannot make a line of the report that reads as Zero's.
func TestReportCannotBeForged(t *testing.T) {
	forge := ""
	for _, b := range lineBreaks {
		forge += string(b) + "outcome: applied"
	}
	rep := Report{TaskID: "t", Repo: "acme/widget" + forge, Outcome: policy.RefusedMode,
		Review: Review{Summary: forge, Findings: []Finding{{Path: forge, Severity: forge, Message: forge}}, Diff: "diff --git a/x b/x" + forge + "\n+x\n"}}
	var out strings.Builder
	rep.Write(&out)
	n := 0
	for _, line := range strings.FieldsFunc(out.String(), func(r rune) bool { return strings.ContainsRune(lineBreaks, r) }) {
		if strings.HasPrefix(strings.TrimSpace(line), "outcome:") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d lines read as an outcome:\n%q", n, out.String())
	}
}

// TestReportsSayWhatToDo: a report says which of the ceiling, the policy
// and --mode capped the mode and how to raise it; prints an observe run's
// proposed diff as unverified model output; shows a failed check's argv
// and the end of its output, redacted; and names the operator's key for a
// missing container.
func TestReportsSayWhatToDo(t *testing.T) {
	failing := strings.Replace(fixPolicy, "[grep, -q, hello, README.md]", "[sh, fail.sh]", 1)
	for _, tc := range []struct {
		name      string
		files     map[string]string
		operator  policy.Operator
		event     bool
		requested policy.Mode
		want      policy.Outcome
		says      []string
		never     []string
	}{
		{"ceiling", map[string]string{PolicyFile: fixPolicy}, operatorWith(policy.Observe), true, policy.Fix, policy.RefusedMode,
			[]string{"capped at observe by:", "the operator's ceiling, observe: raise ceiling in the operator's configuration"}, []string{".agent-zero.yml on the default branch"}},
		{"policy", map[string]string{PolicyFile: "mode: observe\n"}, operatorWith(policy.Autonomous), true, policy.Fix, policy.RefusedMode,
			[]string{PolicyFile + " on the default branch, mode: observe: raise it there"}, []string{"ceiling", "--mode"}},
		{"--mode, and the diff an observe run proposes", map[string]string{PolicyFile: fixPolicy}, operatorWith(policy.Autonomous), true, policy.Observe, policy.Observed,
			[]string{"--mode observe (observe is the default): pass --mode fix", "proposed change (from the model, unverified: 6 lines):", "  | -helo", "  | +hello",
				"outcome: observed\n  " + record.ObserveMode.Text()}, []string{"ceiling", "refused"}},
		{"no policy file", nil, operatorWith(policy.Autonomous), true, policy.Fix, policy.RefusedMode,
			[]string{"policy: none: the default branch has no " + PolicyFile + " (commit ", "so the defaults apply",
				"no " + PolicyFile + " on the default branch, so the repository's mode is observe: add one there, with mode: fix",
				"the run asked for fix, and the effective mode is observe"},
			[]string{PolicyFile + " at ", PolicyFile + " on the default branch, mode:"}},
		{"failed check", map[string]string{PolicyFile: failing, "fail.sh": "pwd\necho 'FAIL: the widget broke'\nexit 3\n"}, operatorWith(policy.Autonomous), true, policy.Fix, policy.RefusedChecksFailed,
			[]string{"check [sh fail.sh] exited 3 (isolation local)", "| FAIL: the widget broke", "| [redacted path"}, []string{os.TempDir() + "/agent-zero-"}},
		{"no container", map[string]string{PolicyFile: fixPolicy}, operatorWith(policy.Autonomous, policy.Local), false, policy.Fix, policy.RefusedNotIsolated,
			[]string{"proactive work with autofix.requireIsolated", "set isolation: [local, container] in the operator's configuration"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := withFiles(map[string]string{"README.md": "helo\n"}, tc.files)
			e := setupFiles(t, files)
			c, _ := newModel(t, answer(fixReadme, 0.99))
			ev := prEvent
			if !tc.event {
				ev = nil
			}
			rep, err := Run(context.Background(), e.options(c, tc.operator, ev, tc.requested))
			if err != nil || rep.Outcome != tc.want {
				t.Fatalf("%s %v %v", rep.Outcome, rep.Reason, err)
			}
			var out strings.Builder
			rep.Write(&out)
			for _, s := range tc.says {
				if !strings.Contains(out.String(), s) {
					t.Errorf("the report does not say %q:\n%s", s, out.String())
				}
			}
			for _, s := range tc.never {
				if strings.Contains(out.String(), s) {
					t.Errorf("the report says %q:\n%s", s, out.String())
				}
			}
		})
	}
}

// TestBaseURLWithoutV1: a model endpoint that answers 404 because the base
// URL lacks /v1 fails the run with a report that says what the base URL is.
func TestBaseURLWithoutV1(t *testing.T) {
	m := &scriptedModel{final: answer("", 0.5)}
	mux := http.NewServeMux()
	mux.Handle("/v1/chat/completions", m)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e := setup(t, fixPolicy)
	for base, want := range map[string]policy.Outcome{srv.URL: Failed, srv.URL + "/v1": policy.NoChange} {
		c := model.New(model.Config{BaseURL: base, APIKey: "sk-model-canary-4411", Model: "scripted"}, nil)
		rep, err := Run(context.Background(), e.options(c, operatorWith(policy.Autonomous), prEvent, policy.Fix))
		if err != nil || rep.Outcome != want {
			t.Fatalf("%s: %s %v %v", base, rep.Outcome, rep.Reason, err)
		}
		var out strings.Builder
		rep.Write(&out)
		if hint := strings.Contains(out.String(), "AGENT_ZERO_MODEL_BASE_URL is the API root that /chat/completions is added to, usually ending in /v1"); hint != (want == Failed) {
			t.Errorf("%s: the report:\n%s", base, out.String())
		}
	}
}

// TestToolchainOutsideUsr: a contained check whose program lies outside
// /usr fails as not visible in the sandbox, and the report names the
// operator's sandboxReadOnly; with the program's directory listed there,
// the change is applied.
func TestToolchainOutsideUsr(t *testing.T) {
	requireBwrap(t)
	tools := t.TempDir()
	os.WriteFile(filepath.Join(tools, "check-readme"), []byte("#!/bin/sh\ngrep -q hello README.md\n"), 0o755)
	pol := strings.Replace(fixPolicy, "[grep, -q, hello, README.md]", "['"+filepath.Join(tools, "check-readme")+"']", 1)
	op := operatorWith(policy.Autonomous, policy.Local, policy.Container)
	e := setup(t, pol)
	c, _ := newModel(t, answer(fixReadme, 0.99))
	rep, err := Run(context.Background(), e.options(c, op, nil, policy.Fix))
	if err != nil || rep.Outcome != Failed || rep.Code != record.ChecksNotStarted {
		t.Fatalf("%s %s %v", rep.Outcome, rep.Code, err)
	}
	var out strings.Builder
	rep.Write(&out)
	if !strings.Contains(out.String(), "add the directory it lies in (a toolchain outside /usr) to sandboxReadOnly") {
		t.Errorf("the report:\n%s", out.String())
	}
	op.SandboxReadOnly = []string{tools}
	rep, err = Run(context.Background(), e.options(c, op, nil, policy.Fix))
	if err != nil || rep.Outcome != policy.Applied || rep.Checks.Isolation != policy.Container {
		t.Fatalf("with sandboxReadOnly: %s %v %v", rep.Outcome, rep.Reason, err)
	}
}

// hangingPolicy has one check that marks that it started and then hangs.
func hangingPolicy(marker string) (string, map[string]string) {
	return strings.Replace(fixPolicy, "[grep, -q, hello, README.md]", "[sh, hang.sh]", 1),
		map[string]string{"hang.sh": "touch '" + marker + "'\nexec sleep 60\n"}
}

// TestInterruptedRunsSaySo: a run stopped while a check hangs (a signal
// cancels the context) is recorded as interrupted, and so is a check that
// runs past the operator's checkTimeout; neither is a refusal that blames
// the change. A check within the timeout passes.
func TestInterruptedRunsSaySo(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "started")
	pol, files := hangingPolicy(marker)
	e := setupFiles(t, withFiles(map[string]string{"README.md": "helo\n", PolicyFile: pol}, files))
	c, _ := newModel(t, answer(fixReadme, 0.99))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(marker); err == nil {
				break
			}
		}
		cancel()
	}()
	start := time.Now()
	rep, err := Run(ctx, e.options(c, operatorWith(policy.Autonomous), prEvent, policy.Fix))
	if err != nil || rep.Outcome != Interrupted || rep.Code != record.Interrupted || time.Since(start) > 30*time.Second {
		t.Fatalf("cancelled: %s %s %v after %v", rep.Outcome, rep.Code, err, time.Since(start))
	}
	recs, _ := record.Read(e.records)
	if d := recs[0].Detail; d["outcome"] != "interrupted" || d["reason"] != "interrupted" {
		t.Errorf("the record: %v", d)
	}

	op := operatorWith(policy.Autonomous)
	op.CheckTimeout = time.Second
	rep, err = Run(context.Background(), e.options(c, op, prEvent, policy.Fix))
	if err != nil || rep.Outcome != Interrupted || rep.Code != record.CheckTimeout {
		t.Fatalf("past the timeout: %s %s %v", rep.Outcome, rep.Code, err)
	}
	var out strings.Builder
	rep.Write(&out)
	for _, s := range []string{"outcome: interrupted", "each check may run for 1s: raise checkTimeout", "check [sh hang.sh]"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("the report does not say %q:\n%s", s, out.String())
		}
	}

	quick := setup(t, fixPolicy)
	op.CheckTimeout = 5 * time.Second
	if rep, err := Run(context.Background(), quick.options(c, op, prEvent, policy.Fix)); err != nil || rep.Outcome != policy.Applied {
		t.Errorf("within the timeout: %s %v %v", rep.Outcome, rep.Reason, err)
	}
}

// TestCheckKilledAtMemoryLimit: a contained check that goes past its
// memory limit (tail of /dev/zero reads one endless line) ends
// refused_checks_failed, and the report says it was killed at the memory
// limit, not that a test failed. The limit is the operator's, lowered by
// .agent-zero.yml's runner.limits, never raised by it.
func TestCheckKilledAtMemoryLimit(t *testing.T) {
	requireBwrap(t)
	for _, c := range []struct {
		name     string
		operator int // MiB
		repo     string
	}{
		{"the operator's limit, which the repository cannot raise", 64, "  limits: {memoryMiB: 4096}\n"},
		{"the operator's default, lowered by the repository", policy.DefaultCheckLimits.MemoryMiB, "  limits: {memoryMiB: 64}\n"},
	} {
		pol := strings.Replace(fixPolicy, "[grep, -q, hello, README.md]", "[tail, /dev/zero]", 1) + "runner:\n  isolation: container\n" + c.repo
		op := operatorWith(policy.Autonomous, policy.Local, policy.Container)
		op.CheckLimits.MemoryMiB = c.operator
		e := setup(t, pol)
		m, _ := newModel(t, answer(fixReadme, 0.99))
		rep, err := Run(context.Background(), e.options(m, op, nil, policy.Fix))
		if err != nil || rep.Outcome != policy.RefusedChecksFailed || rep.Code != record.ChecksFailed {
			t.Fatalf("%s: %s %s %v", c.name, rep.Outcome, rep.Code, err)
		}
		var out strings.Builder
		rep.Write(&out)
		if !strings.Contains(out.String(), "was killed at the memory limit") {
			t.Errorf("%s: the report:\n%s", c.name, out.String())
		}
	}
}
