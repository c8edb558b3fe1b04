package policy_test

import (
	"fmt"

	"github.com/zero-dev/zero/internal/repoagent/policy"
)

// knownRisk stands in for the risk package's list of classes.
func knownRisk(class string) bool { return class == "docs" || class == "tests" }

// The caller gathers each fact when Decide asks for it, in the chain's
// order, and calls Decide again; a person's approval is one more fact.
func ExampleDecide() {
	p, err := policy.ParseRepoOrObserve([]byte(`
mode: fix
autofix:
  enabled: true
  minConfidence: 0.8
  allowedChangeRisks: [docs]
checks:
  - [go, test, ./...]
`), knownRisk)
	if err != nil {
		fmt.Println("observe:", err)
		return
	}
	op := policy.Operator{Ceiling: policy.Fix, EventModes: map[string]policy.Mode{"pull_request": policy.Fix}}
	f := policy.Facts{
		Mode:       policy.Effective(op.Ceiling, p.Mode, op.EventMode("pull_request")),
		Work:       policy.WorkPullRequest,
		Proposed:   true,
		Confidence: 0.85,
	}
	fmt.Println(policy.Decide(p, f))
	f.Risk = &policy.Risk{Class: "ci", HighImpact: true} // Zero's class of what git applied
	fmt.Println(policy.Decide(p, f))
	f.Approved = true // a person saw the diff and typed the task id
	fmt.Println(policy.Decide(p, f))
	f.Checks = &policy.Checks{Ran: true, Passed: true, Isolation: policy.Local}
	fmt.Println(policy.Decide(p, f))

	f.Work = policy.WorkIssue // issue work needs an isolated runner by default
	f.Isolation = &policy.Isolation{Offered: false, Available: true}
	fmt.Println(policy.Decide(p, f))
	// Output:
	//  risk
	// held_high_impact decided
	//  checks
	// applied decided
	// refused_not_isolated decided
}

func ExampleParseRepo() {
	_, err := policy.ParseRepo([]byte("checks:\n  - [go, test]\n  - [make && make install]\n"), knownRisk)
	fmt.Println(err)
	_, err = policy.ParseRepo([]byte("model:\n  apiKey: sk-0000\n"), knownRisk)
	fmt.Println(err)
	r, err := policy.ParseRepo(nil, knownRisk)
	fmt.Println(r.Mode, r.Autofix.RequireIsolated, err)
	// Output:
	// line 3: checks[1] program "make && make install" is or contains the shell operator "&&": strict mode: checks run without a shell
	// line 2: key "apiKey": endpoints and credentials come only from the operator's environment (AGENT_ZERO_MODEL_BASE_URL, AGENT_ZERO_MODEL_API_KEY, AGENT_ZERO_GITHUB_TOKEN, AGENT_ZERO_GITLAB_TOKEN, AGENT_ZERO_WEBHOOK_SECRET)
	// observe true <nil>
}
