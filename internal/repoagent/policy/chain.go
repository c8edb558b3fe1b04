package policy

import "slices"

// Outcome is what the authorization chain decided for a run: one distinct,
// reportable code for every way a change is not written, and Applied.
type Outcome string

const (
	// Observed: an observe-mode run that proposed nothing; it reports only.
	Observed Outcome = "observed"
	// NoChange: a fix or autonomous run that proposed nothing.
	NoChange Outcome = "no_change"
	// RefusedMode: a change was proposed, but the effective mode is not fix
	// or autonomous.
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
	// waits for a human whatever the policy lists.
	HeldHighImpact Outcome = "held_high_impact"
	// RefusedChecksFailed: the repository's checks did not run, or failed.
	RefusedChecksFailed Outcome = "refused_checks_failed"
	// RefusedNotIsolated: the write needs an isolated runner and the checks
	// did not run in one.
	RefusedNotIsolated Outcome = "refused_not_isolated"
	// Applied: every step of the chain holds; the change may be written.
	Applied Outcome = "applied"
)

// Outcomes returns every outcome, in the order the chain can reach them.
func Outcomes() []Outcome {
	return []Outcome{
		Observed, NoChange, RefusedMode, RefusedAutofixDisabled, RefusedLowConfidence,
		HeldHighImpact, RefusedRiskNotAllowed, RefusedChecksFailed, RefusedNotIsolated, Applied,
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

// Facts are what the chain decides on. Risk comes from Zero's own
// classifier over the final diff, never from the model. An empty RiskClass
// is held like a high-impact change; a class ParseRepo did not know cannot
// be in AllowedChangeRisks, so a change of that class is never applied (it
// is refused as not allowed unless the classifier also marks it high
// impact, which it should for a diff it cannot place).
type Facts struct {
	Mode           Mode    // the effective mode (see Effective)
	Work           Work    // WorkPullRequest, WorkPush, WorkIssue or WorkProactive
	Proposed       bool    // the model proposed a diff
	Confidence     float64 // the model's confidence in it, in [0, 1]
	RiskClass      string  // the classifier's class for the final diff
	RiskHighImpact bool    // the classifier found the diff high impact
	ChecksRan      bool    // set by the caller after running the repository's checks
	ChecksPassed   bool    // every check ran to success
	Isolation      string  // the isolation the runner reports actually ran: "none", Local or Container
}

// NeedsIsolation reports whether a write needs an isolated runner: when
// autofix.requireIsolated is set (the default) and the work is issue work,
// proactive work or of a kind it does not know (anything but a pull request
// or a push); when the mode is autonomous, whatever requireIsolated says;
// and when the repository asks for runner.isolation: container.
func NeedsIsolation(p Repo, mode Mode, work Work) bool {
	switch {
	case mode == Autonomous, p.Runner.Isolation == Container:
		return true
	case !p.Autofix.RequireIsolated:
		return false
	}
	return work != WorkPullRequest && work != WorkPush
}

// Before decides the chain's steps 1-4 and returns "" when the change may
// proceed to the repository's checks:
//
//  0. nothing proposed: Observed in observe mode, NoChange otherwise;
//  1. the mode must be Fix or Autonomous (RefusedMode);
//  2. autofix.enabled (RefusedAutofixDisabled);
//  3. a confidence in [0, 1] at or above autofix.minConfidence
//     (RefusedLowConfidence; NaN never passes);
//  4. a change that is high impact or has no risk class is held
//     (HeldHighImpact), even when allowedChangeRisks lists its class;
//     otherwise the class must be listed (RefusedRiskNotAllowed).
func Before(p Repo, f Facts) Outcome {
	writes := f.Mode == Fix || f.Mode == Autonomous
	c := f.Confidence
	switch {
	case !f.Proposed && writes:
		return NoChange
	case !f.Proposed:
		return Observed
	case !writes:
		return RefusedMode
	case !p.Autofix.Enabled:
		return RefusedAutofixDisabled
	case !(c >= 0 && c <= 1 && c >= p.Autofix.MinConfidence):
		return RefusedLowConfidence
	case f.RiskHighImpact || f.RiskClass == "":
		return HeldHighImpact
	case !slices.Contains(p.Autofix.AllowedChangeRisks, f.RiskClass):
		return RefusedRiskNotAllowed
	}
	return ""
}

// After decides the chain's steps 5 and 6, for a change Before let
// through, and returns Applied only if both hold:
//
//  5. with checks configured, they must have run and passed
//     (RefusedChecksFailed). With none configured the step holds: the
//     repository's own checks are what it declares. Checks reported run
//     and failed always refuse.
//  6. when NeedsIsolation, the checks must have run in a Container
//     (RefusedNotIsolated); Local and "none" are not isolated.
//
// After does not repeat steps 1-4: call Decide, which runs both in order.
func After(p Repo, f Facts) Outcome {
	if (len(p.Checks) > 0 && !(f.ChecksRan && f.ChecksPassed)) || (f.ChecksRan && !f.ChecksPassed) {
		return RefusedChecksFailed
	}
	if NeedsIsolation(p, f.Mode, f.Work) && f.Isolation != Container {
		return RefusedNotIsolated
	}
	return Applied
}

// Decide runs the whole chain in order, Before then After: the one place
// the order lives. Call it again with the final facts after running the
// checks, rather than carrying Before's answer forward.
func Decide(p Repo, f Facts) Outcome {
	if o := Before(p, f); o != "" {
		return o
	}
	return After(p, f)
}
