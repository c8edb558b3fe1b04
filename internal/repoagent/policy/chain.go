package policy

import (
	"slices"
	"strconv"
)

// Outcome is what the authorization chain decided for a run: one distinct,
// reportable code for every way a change is not written, and Applied.
type Outcome string

const (
	// Observed: a run in observe mode that asked for no more than observe:
	// it reports its findings, and the change it proposes if any, and
	// writes nothing.
	Observed Outcome = "observed"
	// NoChange: a fix or autonomous run that proposed nothing.
	NoChange Outcome = "no_change"
	// RefusedMode: a change was proposed by a run that asked for fix or
	// autonomous, but the operator's ceiling or the repository's policy
	// capped the effective mode at observe.
	RefusedMode Outcome = "refused_mode"
	// RefusedAutofixDisabled: the repository's autofix.enabled is false.
	RefusedAutofixDisabled Outcome = "refused_autofix_disabled"
	// RefusedLowConfidence: the model's confidence is below
	// autofix.minConfidence, or is not a number in [0, 1].
	RefusedLowConfidence Outcome = "refused_low_confidence"
	// RefusedRiskNotAllowed: the change's risk class is not in
	// autofix.allowedChangeRisks.
	RefusedRiskNotAllowed Outcome = "refused_risk_not_allowed"
	// HeldHighImpact: the change is high impact, or has no risk class; it
	// waits for a person whatever the policy lists.
	HeldHighImpact Outcome = "held_high_impact"
	// RefusedNotIsolated: the write needs an isolated runner, and the
	// operator does not offer one, bubblewrap cannot run here, or the checks
	// did not run in it.
	RefusedNotIsolated Outcome = "refused_not_isolated"
	// RefusedChecksFailed: the repository's checks did not run, or failed.
	RefusedChecksFailed Outcome = "refused_checks_failed"
	// RefusedVerificationChanged: the checks pass on the change, but fail
	// when the change's own edits to test files and to what the checks run
	// or read are taken back: the change passes only by changing what
	// judges it.
	RefusedVerificationChanged Outcome = "refused_verification_changed"
	// Applied: every step of the chain holds; the change may be written.
	Applied Outcome = "applied"
)

// Outcomes returns every outcome, in the order the chain can reach them.
func Outcomes() []Outcome {
	return []Outcome{
		Observed, NoChange, RefusedMode, RefusedAutofixDisabled, RefusedLowConfidence,
		HeldHighImpact, RefusedRiskNotAllowed, RefusedNotIsolated, RefusedChecksFailed,
		RefusedVerificationChanged, Applied,
	}
}

// Refused reports whether o stopped a proposed change from being written:
// true for every refusal and for HeldHighImpact, false for Observed,
// NoChange and Applied. A string that is no outcome counts as refused.
func (o Outcome) Refused() bool {
	return o != Observed && o != NoChange && o != Applied
}

// Work is the kind of work a run does.
type Work string

const (
	WorkPullRequest Work = "pull_request" // review or fix a pull request
	WorkPush        Work = "push"         // react to a push
	WorkIssue       Work = "issue"        // act on an issue
	WorkProactive   Work = "proactive"    // work Agent Zero started on its own
)

// Facts are what the chain decides on. The first ones are known when the
// model has answered; the pointers are gathered by the caller when
// [Decide] asks for them (nil: not gathered yet).
type Facts struct {
	Mode       Mode    // the effective mode (see Effective)
	Requested  Mode    // the mode the run asked for (--mode, the operator's eventModes, a held change's), before any cap
	Work       Work    // WorkPullRequest, WorkPush, WorkIssue or WorkProactive
	Proposed   bool    // the model proposed a diff
	Confidence float64 // the model's confidence in it, in [0, 1]
	// Approved: a person approved this change after the chain held it. It
	// lifts the high-impact hold of step 4, and nothing else.
	Approved bool

	Risk         *Risk      // NeedRisk: Zero's class of what git applied
	Isolation    *Isolation // NeedIsolation: asked only when the write needs isolation
	Checks       *Checks    // NeedChecks: the repository's checks on the change
	Verification *Checks    // NeedVerification: the checks again, on the reviewed head's tests
}

// Risk is Zero's own classification of the change git applied, never the
// model's. An empty Class is held like a high-impact change; a class
// ParseRepo did not know cannot be in AllowedChangeRisks, so a change of
// that class is never applied.
type Risk struct {
	Class      string
	HighImpact bool
	// Verification: the change touches a test file or what the checks run
	// or read, so the checks must also pass with those files as the
	// reviewed head has them.
	Verification bool
}

// Isolation is what the deployment can do for a write that needs an
// isolated runner.
type Isolation struct {
	Offered   bool // the operator's configuration lists Container
	Available bool // bubblewrap runs on this machine
}

// Checks is what one run of the repository's checks established.
type Checks struct {
	Ran       bool   // at least one check ran
	Passed    bool   // every check that ran passed
	Isolation string // what the runner reports actually ran: Local or Container
}

// A Need is a fact [Decide] asks for before it can go on. The caller
// gathers it and calls Decide again with it set.
type Need int

const (
	// Decided: the outcome is final.
	Decided Need = iota
	// NeedRisk: apply the change in a scratch clone and classify what git
	// applied (Facts.Risk).
	NeedRisk
	// NeedIsolation: whether the operator offers Container and bubblewrap
	// runs here (Facts.Isolation).
	NeedIsolation
	// NeedChecks: run the repository's checks on the change, in the
	// container when [NeedsIsolation] (Facts.Checks).
	NeedChecks
	// NeedVerification: run the checks again on the change with every test
	// and verification-surface file it touched taken back as the reviewed
	// head has it (Facts.Verification).
	NeedVerification
)

var needNames = [...]string{Decided: "decided", NeedRisk: "risk", NeedIsolation: "isolation", NeedChecks: "checks", NeedVerification: "verification"}

// String names n: "decided", "risk", "isolation", "checks" or
// "verification".
func (n Need) String() string {
	if n >= 0 && int(n) < len(needNames) {
		return needNames[n]
	}
	return "Need(" + strconv.Itoa(int(n)) + ")"
}

// NeedsIsolation reports whether a write needs an isolated runner, and its
// checks must run in one: when autofix.requireIsolated is set (the default)
// and the work is issue work, proactive work or of a kind it does not know
// (anything but a pull request or a push); when the mode is autonomous,
// whatever requireIsolated says; and when the repository asks for
// runner.isolation: container.
func NeedsIsolation(p Repo, mode Mode, work Work) bool {
	switch {
	case mode == Autonomous, p.Runner.Isolation == Container:
		return true
	case !p.Autofix.RequireIsolated:
		return false
	}
	return work != WorkPullRequest && work != WorkPush
}

// Decide is the authorization chain: the one place its order lives, for a
// run and for an approval alike. It returns the outcome, with Decided; or,
// when the next step needs a fact f does not hold yet, "" and that Need.
// It asks in the chain's order, so the caller never does a step's work
// (applying the change, running the checks) for a change an earlier step
// refused:
//
//  0. nothing proposed: Observed in observe mode, NoChange otherwise;
//  1. the mode must be Fix or Autonomous: a run that asked for observe
//     reports the change it proposes (Observed); one that asked for more,
//     capped at observe, is refused (RefusedMode);
//  2. autofix.enabled (RefusedAutofixDisabled);
//  3. a confidence in [0, 1] at or above autofix.minConfidence
//     (RefusedLowConfidence; NaN never passes);
//  4. [NeedRisk] a change that is high impact or has no risk class is held
//     (HeldHighImpact), even when allowedChangeRisks lists its class,
//     unless a person approved it; any other class must be listed
//     (RefusedRiskNotAllowed), approved or not;
//  5. [NeedIsolation] when NeedsIsolation, the operator must offer the
//     container and bubblewrap must run here (RefusedNotIsolated), before
//     any check runs: checks that need isolation never run without it;
//  6. [NeedChecks] with checks configured, they must have run and passed
//     (RefusedChecksFailed); with none the step holds (the repository's
//     own checks are what it declares); checks reported run and failed
//     always refuse. When NeedsIsolation, they must have run in a
//     Container (RefusedNotIsolated);
//  7. [NeedVerification] when checks ran and the change touches a test or
//     verification-surface file, the checks must pass again with those
//     files as the reviewed head has them (RefusedVerificationChanged),
//     in the same isolation.
func Decide(p Repo, f Facts) (Outcome, Need) {
	writes := f.Mode == Fix || f.Mode == Autonomous
	c := f.Confidence
	switch {
	case !f.Proposed && writes:
		return NoChange, Decided
	case !f.Proposed, !writes && f.Requested == Observe:
		return Observed, Decided
	case !writes:
		return RefusedMode, Decided
	case !p.Autofix.Enabled:
		return RefusedAutofixDisabled, Decided
	case !(c >= 0 && c <= 1 && c >= p.Autofix.MinConfidence):
		return RefusedLowConfidence, Decided
	case f.Risk == nil:
		return "", NeedRisk
	}
	r := f.Risk
	high := r.HighImpact || r.Class == ""
	switch {
	case high && !f.Approved:
		return HeldHighImpact, Decided
	case !high && !slices.Contains(p.Autofix.AllowedChangeRisks, r.Class):
		return RefusedRiskNotAllowed, Decided
	}
	contained := NeedsIsolation(p, f.Mode, f.Work)
	if contained {
		switch {
		case f.Isolation == nil:
			return "", NeedIsolation
		case !f.Isolation.Offered || !f.Isolation.Available:
			return RefusedNotIsolated, Decided
		}
	}
	if f.Checks == nil {
		return "", NeedChecks
	}
	if o := judgeChecks(p, *f.Checks, contained, RefusedChecksFailed); o != "" {
		return o, Decided
	}
	if r.Verification && f.Checks.Ran {
		if f.Verification == nil {
			return "", NeedVerification
		}
		if o := judgeChecks(p, *f.Verification, contained, RefusedVerificationChanged); o != "" {
			return o, Decided
		}
	}
	return Applied, Decided
}

// judgeChecks returns failed for checks that did not run or did not pass,
// RefusedNotIsolated for checks that ran outside the container they
// needed, and "" when they hold.
func judgeChecks(p Repo, c Checks, contained bool, failed Outcome) Outcome {
	switch {
	case len(p.Checks) > 0 && !(c.Ran && c.Passed), c.Ran && !c.Passed:
		return failed
	case contained && c.Isolation != Container:
		return RefusedNotIsolated
	}
	return ""
}
