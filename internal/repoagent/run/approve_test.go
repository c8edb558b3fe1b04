package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/repoagent/policy"
	"github.com/zero-dev/zero/internal/repoagent/record"
	"github.com/zero-dev/zero/internal/repoagent/runner"
	"github.com/zero-dev/zero/internal/testgit"
)

// pushPolicy commits a new .agent-zero.yml to the remote's main, from
// another clone: the checkout does not see it.
func pushPolicy(t *testing.T, e *env, policyYAML string) string {
	t.Helper()
	other := filepath.Join(t.TempDir(), "other")
	testgit.Run(t, filepath.Dir(other), "clone", "--quiet", e.remote, other)
	os.WriteFile(filepath.Join(other, PolicyFile), []byte(policyYAML), 0o644)
	testgit.Run(t, other, "commit", "--quiet", "-am", "policy")
	testgit.Run(t, other, "push", "--quiet", "origin", "main")
	return testgit.Run(t, other, "rev-parse", "HEAD")
}

// TestApproveRecomputesTheChain: an approval goes through the same chain
// as a run, with the operator's configuration as it is now and the policy
// at the remote's current default branch, and runs the checks again; the
// approval lifts only the high-impact hold. A change held under a ceiling
// of fix is not pushed once the operator lowers the ceiling to observe, nor
// once the policy is tightened on the remote, nor once the operator stops
// offering the container its work needs, nor when its checks now fail.
func TestApproveRecomputesTheChain(t *testing.T) {
	isolatedOp := operatorWith(policy.Fix, policy.Local, policy.Container)
	for _, tc := range []struct {
		name     string
		event    bool // pull request work; else proactive work, which needs the container
		operator policy.Operator
		then     func(t *testing.T, e *env) policy.Operator // what changes before the approval
		want     policy.Outcome
		code     record.Reason
		says     string
	}{
		{"ceiling lowered", true, operatorWith(policy.Fix), func(*testing.T, *env) policy.Operator { return operatorWith(policy.Observe) },
			policy.RefusedMode, record.ModeCeiling, "the operator's ceiling, observe: raise ceiling"},
		{"policy tightened", true, operatorWith(policy.Fix), func(t *testing.T, e *env) policy.Operator {
			pushPolicy(t, e, strings.Replace(fixPolicy, "mode: fix", "mode: observe", 1))
			return operatorWith(policy.Fix)
		}, policy.RefusedMode, record.ModePolicy, PolicyFile + " on the default branch, mode: observe"},
		{"autofix disabled", true, operatorWith(policy.Fix), func(t *testing.T, e *env) policy.Operator {
			pushPolicy(t, e, strings.Replace(fixPolicy, "enabled: true", "enabled: false", 1))
			return operatorWith(policy.Fix)
		}, policy.RefusedAutofixDisabled, record.AutofixDisabled, "autofix.enabled"},
		{"container withdrawn", false, isolatedOp, func(*testing.T, *env) policy.Operator { return operatorWith(policy.Fix, policy.Local) },
			policy.RefusedNotIsolated, record.IsolationNotOffered, "isolation: [local, container]"},
		{"checks now fail", true, operatorWith(policy.Fix), func(t *testing.T, e *env) policy.Operator {
			pushPolicy(t, e, strings.Replace(fixPolicy, "[grep, -q, hello, README.md]", "[grep, -q, goodbye, README.md]", 1))
			return operatorWith(policy.Fix)
		}, policy.RefusedChecksFailed, record.ChecksFailed, "[grep -q goodbye README.md] exited 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.event {
				requireBwrap(t)
			}
			e := setup(t, fixPolicy)
			c, _ := newModel(t, answer(touchWorkflow, 0.99))
			ev := prEvent
			if !tc.event {
				ev = nil
			}
			o := e.options(c, tc.operator, ev, policy.Fix)
			rep, err := Run(context.Background(), o)
			if err != nil || rep.Outcome != policy.HeldHighImpact {
				t.Fatalf("%s %v %v", rep.Outcome, rep.Reason, err)
			}
			o.Operator = tc.then(t, e)
			approved, err := Approve(context.Background(), o, rep.TaskID)
			if err != nil {
				t.Fatal(err)
			}
			if approved.Outcome != tc.want || approved.Code != tc.code || approved.Branch != "" {
				t.Fatalf("approved: %s %s %v", approved.Outcome, approved.Code, approved.Reason)
			}
			var out strings.Builder
			approved.Write(&out)
			if !strings.Contains(out.String(), tc.says) || strings.Contains(out.String(), "every step") {
				t.Errorf("the report does not say %q:\n%s", tc.says, out.String())
			}
			if refs := testgit.Run(t, e.remote, "for-each-ref", "--format=%(refname)", "refs/heads/agent-zero/"); refs != "" {
				t.Errorf("pushed after a refused approval: %s", refs)
			}
			recs, _ := record.Read(e.records)
			if last := recs[len(recs)-1].Detail; last["outcome"] != string(tc.want) || last["reason"] != string(tc.code) || last["approved"] != "true" {
				t.Errorf("the approval's record: %v", last)
			}
		})
	}
}

func requireBwrap(t *testing.T) {
	t.Helper()
	if err := runner.IsolationAvailable(); err != nil {
		if os.Getenv("ZERO_REQUIRE_BWRAP") != "" {
			t.Fatalf("container isolation (bubblewrap, and cgroups for its limits) is required: %v", err)
		}
		t.Skip(err)
	}
}
