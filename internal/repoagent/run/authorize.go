package run

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/repoagent/policy"
	"github.com/zero-dev/zero/internal/repoagent/record"
	"github.com/zero-dev/zero/internal/repoagent/runner"
)

// authorize sends the proposed change through the chain, gathering each
// fact policy.Decide asks for when it asks, and acts on its decision.
func (t *task) authorize(ctx context.Context, scratch *runner.Scratch) error {
	rep := t.rep
	f := policy.Facts{
		Mode: rep.Mode, Requested: t.requested, Work: rep.Work, Proposed: rep.Review.Diff != "", Confidence: rep.Review.Confidence,
		Approved: rep.Approved,
	}
	var tree string
	asked := map[policy.Need]bool{}
	for {
		out, need := policy.Decide(t.policy, f)
		if need == policy.Decided {
			return t.conclude(ctx, scratch, out, f, tree)
		}
		if asked[need] {
			return fail(record.Internal, fmt.Errorf("the chain asked twice for %s", need))
		}
		asked[need] = true
		switch need {
		case policy.NeedRisk:
			var err error
			if tree, err = scratch.Apply(ctx, rep.Review.Diff); err != nil {
				return fail(record.DiffDoesNotApply, err)
			}
			if rep.Risk, t.reverts, err = classify(ctx, scratch, rep.HeadSHA, t.policy.Checks); err != nil {
				return fail(record.RepositoryFailed, err)
			}
			f.Risk = &policy.Risk{Class: string(rep.Risk.Class), HighImpact: rep.Risk.Class.HighImpact(), Verification: len(t.reverts) > 0}
		case policy.NeedIsolation:
			t.probe = runner.IsolationAvailable()
			f.Isolation = &policy.Isolation{Offered: t.o.Operator.Provides(policy.Container), Available: t.probe == nil}
		case policy.NeedChecks:
			dir, err := scratch.Export(ctx)
			if err != nil {
				return fail(record.RepositoryFailed, err)
			}
			if rep.Checks, f.Checks, err = t.runChecks(ctx, dir, &f); err != nil {
				return err
			}
		case policy.NeedVerification:
			dir, err := scratch.ExportReverted(ctx, tree, rep.HeadSHA, t.reverts)
			if err != nil {
				return fail(record.RepositoryFailed, err)
			}
			c, fc, err := t.runChecks(ctx, dir, &f)
			rep.Verification = &c
			if err != nil {
				return err
			}
			f.Verification = fc
		default:
			return fail(record.Internal, fmt.Errorf("the chain asked for %s, which this run cannot gather", need))
		}
	}
}

// runChecks runs the policy's checks in dir, contained when the write
// needs isolation, and returns what they established for the report and
// for the chain. Checks that could not run in the container make the
// isolation unavailable (f.Isolation), with no verdict on the checks. A
// check past its timeout, or a run stopped while a check ran, is no
// verdict either: it is an error, the run is interrupted.
func (t *task) runChecks(ctx context.Context, dir string, f *policy.Facts) (runner.Checks, *policy.Checks, error) {
	t.paths = append(t.paths, dir)
	o := t.o.Operator
	contained := policy.NeedsIsolation(t.policy, f.Mode, f.Work)
	c, err := runner.RunChecks(ctx, dir, t.policy.Checks, runner.CheckOptions{Contained: contained, Timeout: o.CheckTimeout, ReadOnly: o.SandboxReadOnly,
		Limits: o.LimitsFor(t.policy)})
	red := t.redactor()
	for i := range c.Results {
		c.Results[i].Output = red.String(c.Results[i].Output)
	}
	switch {
	case ctx.Err() != nil:
		return c, nil, fail(record.Interrupted, fmt.Errorf("the checks: %w", ctx.Err()))
	case errors.Is(err, runner.ErrIsolationUnavailable):
		t.probe = err
		f.Isolation = &policy.Isolation{Offered: o.Provides(policy.Container)}
		return c, nil, nil
	case err != nil:
		return c, nil, fail(record.ChecksNotStarted, err)
	case c.TimedOut:
		return c, nil, fail(record.CheckTimeout, fmt.Errorf("a check ran past the check timeout (%v)", o.CheckTimeout))
	}
	iso := c.Isolation
	if !c.Ran {
		iso = "none"
	}
	return c, &policy.Checks{Ran: c.Ran, Passed: c.Passed, Isolation: iso}, nil
}

// conclude records the chain's decision and acts on it: a held change is
// saved for approval, an applied one committed and pushed. Once decided,
// the act is not cut short by a cancelled ctx (a signal arriving while the
// push lands would leave a pushed branch recorded as interrupted); git's
// own timeout still bounds it.
func (t *task) conclude(ctx context.Context, scratch *runner.Scratch, out policy.Outcome, f policy.Facts, tree string) error {
	ctx = context.WithoutCancel(ctx)
	rep := t.rep
	rep.Outcome = out
	rep.Code, rep.Reason = t.explain(out, f)
	switch out {
	case policy.HeldHighImpact:
		return t.hold(ctx)
	case policy.Applied:
		var err error
		if rep.Commit, err = scratch.Commit(ctx, tree, rep.HeadSHA, commitMessage(rep)); err != nil {
			return fail(record.PushFailed, err)
		}
		rep.Branch = runner.BranchPrefix + rep.TaskID
		if err := scratch.Push(ctx, t.url, rep.Commit, rep.Branch, t.def, t.o.PushToken); err != nil {
			branch := rep.Branch
			rep.Branch = ""
			// The push never forces: a branch of this task's name on the
			// remote is an earlier attempt's (a retry after its worker was
			// killed), and stays as it is.
			sha, herr := t.repo.RemoteHead(ctx, t.url, branch, t.o.PushToken)
			switch {
			case herr != nil:
				return fail(record.PushFailed, err)
			case sha != rep.Commit:
				return fail(record.BranchExists, fmt.Errorf("push %s: the remote has it already, at %s: %w", branch, sha, err))
			}
			rep.Branch = branch // git failed after the remote took this very commit
		}
		rep.Reason = append(rep.Reason, "the change is on branch "+rep.Branch+", pushed to the remote")
	}
	return nil
}

func commitMessage(rep *Report) string {
	approved := ""
	if rep.Approved {
		approved = " A person approved it."
	}
	return fmt.Sprintf("Agent Zero: proposed change (task %s)\n\nRisk class: %s. Checks: %s.%s Review it before merging.\n",
		rep.TaskID, rep.Risk.Class, checksWord(rep.Checks), approved)
}

// explain gives the record's code for the chain's decision and, for a
// person, the facts behind it and what would change it.
func (t *task) explain(out policy.Outcome, f policy.Facts) (record.Reason, []string) {
	rep, p := t.rep, t.policy
	switch out {
	case policy.Observed:
		return record.ObserveMode, []string{record.ObserveMode.Text()}
	case policy.NoChange:
		return record.NoChange, []string{record.NoChange.Text()}
	case policy.RefusedMode:
		code := record.ModeRequested // not reached: a run that asked for observe is Observed
		switch {
		case t.o.Operator.Ceiling < policy.Fix:
			code = record.ModeCeiling
		case t.policyErr:
			code = record.ModePolicyError
		case p.Mode < policy.Fix:
			code = record.ModePolicy
		}
		return code, []string{fmt.Sprintf("the run asked for %s, and the effective mode is observe: the change is reported, never made (what capped it is under mode: above)",
			f.Requested)}
	case policy.RefusedAutofixDisabled:
		return record.AutofixDisabled, []string{record.AutofixDisabled.Text() + ": set autofix.enabled: true in " + PolicyFile + " on the default branch"}
	case policy.RefusedLowConfidence:
		return record.LowConfidence, []string{fmt.Sprintf("the model's confidence %.2f is below autofix.minConfidence %.2f", f.Confidence, p.Autofix.MinConfidence)}
	case policy.RefusedRiskNotAllowed:
		return record.RiskNotAllowed, append([]string{fmt.Sprintf("the change is %s, which autofix.allowedChangeRisks %v does not list", rep.Risk.Class, p.Autofix.AllowedChangeRisks)}, t.riskReasons()...)
	case policy.HeldHighImpact:
		return record.HighImpact, append([]string{fmt.Sprintf("the change is %s, which always needs a person: zero agent approve %s", rep.Risk.Class, rep.TaskID)}, t.riskReasons()...)
	case policy.RefusedNotIsolated:
		return t.explainIsolation(f)
	case policy.RefusedChecksFailed:
		return record.ChecksFailed, append([]string{record.ChecksFailed.Text()}, checkLines(rep.Checks)...)
	case policy.RefusedVerificationChanged:
		lines := []string{"the checks pass on the change, but fail with its test and check-harness files as the reviewed head has them: " +
			"the change passes only with its own edits to what judges it (" + strings.Join(t.revertedPaths(), ", ") + ")"}
		if rep.Verification != nil {
			lines = append(lines, checkLines(*rep.Verification)...)
		}
		return record.VerificationChanged, lines
	case policy.Applied:
		return t.explainApplied(f)
	}
	return record.Unknown, []string{"the chain decided " + string(out)}
}

func (t *task) explainIsolation(f policy.Facts) (record.Reason, []string) {
	why := t.isolationWhy(f)
	switch {
	case f.Isolation != nil && !f.Isolation.Offered:
		return record.IsolationNotOffered, []string{
			"the write needs an isolated runner (" + why + "), and operator.yml's isolation does not list container",
			"to offer it, set isolation: [local, container] in the operator's configuration (bubblewrap at /usr/bin/bwrap)",
		}
	case f.Isolation != nil && !f.Isolation.Available:
		lines := []string{"the write needs an isolated runner (" + why + "), and bubblewrap cannot run on this machine"}
		if t.probe != nil {
			lines = append(lines, oneLine(t.redactor().String(t.probe.Error())))
		}
		return record.IsolationMissing, append(lines, "install bubblewrap at /usr/bin/bwrap and allow unprivileged user namespaces")
	}
	ran := "none"
	if f.Checks != nil && f.Checks.Isolation != "" {
		ran = f.Checks.Isolation
	}
	return record.ChecksNotIsolated, []string{"the write needs an isolated runner (" + why + "), and the checks ran with isolation " + ran}
}

// isolationWhy says why a write needs the isolated runner.
func (t *task) isolationWhy(f policy.Facts) string {
	switch {
	case f.Mode == policy.Autonomous:
		return "autonomous mode"
	case t.policy.Runner.Isolation == policy.Container:
		return "runner.isolation: container"
	}
	return fmt.Sprintf("%s work with autofix.requireIsolated", f.Work)
}

func (t *task) explainApplied(f policy.Facts) (record.Reason, []string) {
	rep, p := t.rep, t.policy
	code := record.ChainHeld
	risk := fmt.Sprintf("risk %s, which autofix.allowedChangeRisks lists", rep.Risk.Class)
	if f.Risk.HighImpact || f.Risk.Class == "" {
		code = record.Approved
		risk = fmt.Sprintf("risk %s is high impact, and the approval lifted its hold", rep.Risk.Class)
	}
	facts := []string{
		"mode " + f.Mode.String(), "autofix enabled",
		fmt.Sprintf("confidence %.2f at or above %.2f", f.Confidence, p.Autofix.MinConfidence), risk,
	}
	if f.Isolation != nil {
		facts = append(facts, "the container offered and running")
	}
	facts = append(facts, checksFact("checks", rep.Checks, len(p.Checks)))
	if rep.Verification != nil {
		facts = append(facts, checksFact("checks on the reviewed head's tests", *rep.Verification, len(p.Checks)))
	}
	return code, []string{code.Text() + ": " + strings.Join(facts, "; ")}
}

func checksFact(what string, c runner.Checks, configured int) string {
	if !c.Ran {
		return "no checks configured"
	}
	return fmt.Sprintf("%s passed (%d of %d, isolation %s)", what, len(c.Results), configured, c.Isolation)
}

// riskReasons are the classifier's reasons, for a person.
func (t *task) riskReasons() []string {
	var out []string
	for i, r := range t.rep.Risk.Reasons {
		if i == 10 {
			out = append(out, fmt.Sprintf("and %d more", len(t.rep.Risk.Reasons)-i))
			break
		}
		out = append(out, "risk: "+oneLine(r))
	}
	return out
}

// checkLines names the check that failed, its argv and the end of its
// output, redacted (see runChecks), each line sanitized.
func checkLines(c runner.Checks) []string {
	if len(c.Results) == 0 {
		return []string{"no check ran"}
	}
	r := c.Results[len(c.Results)-1]
	lines := []string{fmt.Sprintf("check %s exited %d (isolation %s); the end of its output:", argvString(r.Argv), r.ExitCode, c.Isolation)}
	if r.MemoryKilled {
		lines[0] = fmt.Sprintf("check %s was killed at the memory limit (isolation %s), which is not a failing test; the end of its output:", argvString(r.Argv), c.Isolation)
	}
	out := strings.Split(strings.TrimRight(r.Output, "\n"), "\n")
	if len(out) > maxOutputLines {
		out = out[len(out)-maxOutputLines:]
	}
	for _, l := range out {
		lines = append(lines, "| "+oneLine(l))
	}
	return lines
}

// maxOutputLines is how much of a failed check's output a report shows.
const maxOutputLines = 20

func argvString(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = oneLine(a)
		if strings.ContainsAny(a, " \t'\"") || a == "" {
			q[i] = fmt.Sprintf("%q", oneLine(a))
		}
	}
	return "[" + strings.Join(q, " ") + "]"
}

// failureHints are what a person can do about a failure, in Zero's words.
func (t *task) failureHints(code record.Reason, err error) []string {
	var hints []string
	switch code {
	case record.ModelFailed:
		var se *model.StatusError
		if errors.As(err, &se) && se.StatusCode == 404 {
			hints = append(hints, "the model's endpoint answered 404: AGENT_ZERO_MODEL_BASE_URL is the API root that /chat/completions is added to, "+
				"usually ending in /v1 (https://api.openai.com/v1, http://127.0.0.1:11434/v1)")
		}
	case record.ChecksNotStarted:
		if errors.Is(err, runner.ErrNotFound) && policy.NeedsIsolation(t.policy, t.rep.Mode, t.rep.Work) {
			hints = append(hints, "a check's program is not visible inside the sandbox, which shows only /usr, /etc and the checkout: "+
				"add the directory it lies in (a toolchain outside /usr) to sandboxReadOnly in the operator's configuration")
		}
	case record.CheckTimeout:
		hints = append(hints, fmt.Sprintf("each check may run for %v: raise checkTimeout in the operator's configuration if a check needs longer", t.o.Operator.CheckTimeout))
		c := t.rep.Checks
		if t.rep.Verification != nil {
			c = *t.rep.Verification
		}
		hints = append(hints, checkLines(c)...)
	case record.Interrupted, record.Internal, record.RepositoryFailed, record.DiffDoesNotApply, record.PushFailed, record.BranchExists:
	}
	if code != record.CheckTimeout {
		line := fmt.Sprintf("msg=\"agent zero task %s\"", t.rep.Outcome)
		if t.rep.TaskID != "" {
			line += " task=" + t.rep.TaskID
		}
		hints = append(hints, "the details are in the operator's log: the standard error of the zero agent command that ran the task "+
			"(run, serve or approve), or the file it was sent to, on the line "+line)
	}
	return hints
}
