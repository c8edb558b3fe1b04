package policy

import (
	"math"
	"math/rand"
	"reflect"
	"slices"
	"testing"
	"testing/quick"
)

// permissive is a policy under which baseFacts are applied.
func permissive() Repo {
	return Repo{
		Mode:    Fix,
		Autofix: Autofix{Enabled: true, MinConfidence: 0.8, AllowedChangeRisks: []string{"docs"}, RequireIsolated: true},
		Checks:  [][]string{{"go", "test", "./..."}},
		Runner:  Runner{Isolation: Local},
	}
}

// baseFacts pass every step of the chain under permissive().
func baseFacts() Facts {
	return Facts{
		Mode: Fix, Requested: Fix, Work: WorkPullRequest, Proposed: true, Confidence: 0.9,
		Risk:      &Risk{Class: "docs"},
		Isolation: &Isolation{Offered: true, Available: true},
		Checks:    &Checks{Ran: true, Passed: true, Isolation: Local},
	}
}

// decide runs the chain the way a caller does: it starts from what is
// known once the model answered, and hands over each fact of world only
// when Decide asks for it. It returns the outcome and the needs asked, in
// order.
func decide(t testing.TB, p Repo, world Facts) (Outcome, []Need) {
	t.Helper()
	f := world
	f.Risk, f.Isolation, f.Checks, f.Verification = nil, nil, nil, nil
	var asked []Need
	for {
		o, need := Decide(p, f)
		if need == Decided {
			if o == "" {
				t.Fatalf("Decide decided nothing for %+v", f)
			}
			return o, asked
		}
		if o != "" || slices.Contains(asked, need) {
			t.Fatalf("Decide returned %q with need %d, asked before: %v", o, need, asked)
		}
		asked = append(asked, need)
		switch need {
		case NeedRisk:
			f.Risk = world.Risk
		case NeedIsolation:
			f.Isolation = world.Isolation
		case NeedChecks:
			f.Checks = world.Checks
		case NeedVerification:
			f.Verification = world.Verification
		}
		// A world without the fact asked for: the caller could not gather it.
		if reflect.DeepEqual(f, decideWithout(f, need)) {
			return "", asked
		}
	}
}

// decideWithout returns f with the fact need names cleared.
func decideWithout(f Facts, need Need) Facts {
	switch need {
	case NeedRisk:
		f.Risk = nil
	case NeedIsolation:
		f.Isolation = nil
	case NeedChecks:
		f.Checks = nil
	case NeedVerification:
		f.Verification = nil
	}
	return f
}

// TestEachOutcomeHasOneMinimalFactSet reaches every outcome from the
// applied case by the smallest change that reaches it: one fact or one
// policy field, except Observed, which is the zero Facts.
func TestEachOutcomeHasOneMinimalFactSet(t *testing.T) {
	cases := []struct {
		want   Outcome
		change func(*Repo, *Facts)
	}{
		{Applied, func(*Repo, *Facts) {}},
		{Observed, func(_ *Repo, f *Facts) { *f = Facts{} }},
		{NoChange, func(_ *Repo, f *Facts) { f.Proposed = false }},
		{RefusedMode, func(_ *Repo, f *Facts) { f.Mode = Observe }},
		{RefusedAutofixDisabled, func(p *Repo, _ *Facts) { p.Autofix.Enabled = false }},
		{RefusedLowConfidence, func(_ *Repo, f *Facts) { f.Confidence = 0.79 }},
		{HeldHighImpact, func(_ *Repo, f *Facts) { f.Risk.HighImpact = true }},
		{RefusedRiskNotAllowed, func(_ *Repo, f *Facts) { f.Risk.Class = "tests" }},
		{RefusedChecksFailed, func(_ *Repo, f *Facts) { f.Checks.Passed = false }},
		{RefusedNotIsolated, func(_ *Repo, f *Facts) { f.Work = WorkIssue }},
		{RefusedVerificationChanged, func(_ *Repo, f *Facts) {
			f.Risk.Verification, f.Verification = true, &Checks{Ran: true, Passed: false, Isolation: Local}
		}},
	}
	var seen []Outcome
	for _, tc := range cases {
		p, f := permissive(), baseFacts()
		tc.change(&p, &f)
		if got, _ := decide(t, p, f); got != tc.want {
			t.Errorf("%s: Decide = %q", tc.want, got)
		}
		if slices.Contains(seen, tc.want) {
			t.Errorf("%s reached by two fact sets", tc.want)
		}
		seen = append(seen, tc.want)
	}
	all := Outcomes()
	slices.Sort(all)
	slices.Sort(seen)
	if !slices.Equal(all, seen) {
		t.Errorf("table covers %v, Outcomes() is %v", seen, all)
	}
}

func TestOutcomes(t *testing.T) {
	all := Outcomes()
	if len(all) != 11 {
		t.Errorf("%d outcomes, want 11", len(all))
	}
	seen := map[Outcome]bool{}
	for _, o := range all {
		if o == "" || seen[o] {
			t.Errorf("outcome %q empty or repeated", o)
		}
		seen[o] = true
		want := o != Observed && o != NoChange && o != Applied
		if o.Refused() != want {
			t.Errorf("%s.Refused() = %v, want %v", o, o.Refused(), want)
		}
	}
	if !HeldHighImpact.Refused() || !Outcome("bogus").Refused() || !Outcome("").Refused() {
		t.Error("held, unknown and empty outcomes must count as refused")
	}
}

func TestHighImpactListedStillHeld(t *testing.T) {
	p := permissive()
	p.Autofix.AllowedChangeRisks = []string{"docs", "security"}
	f := baseFacts()
	f.Risk = &Risk{Class: "security", HighImpact: true}
	if got, _ := decide(t, p, f); got != HeldHighImpact {
		t.Errorf("high-impact class listed in allowedChangeRisks: %q, want held", got)
	}
	f.Risk = &Risk{Class: "docs", HighImpact: true}
	if got, _ := decide(t, p, f); got != HeldHighImpact {
		t.Errorf("allowed class marked high impact: %q, want held", got)
	}
	f.Risk = &Risk{}
	p.Autofix.AllowedChangeRisks = append(p.Autofix.AllowedChangeRisks, "")
	if got, _ := decide(t, p, f); got != HeldHighImpact {
		t.Errorf("no risk class, even listed: %q, want held", got)
	}
}

// TestApprovalLiftsOnlyTheHold: with Approved set, the chain decides as
// without it, except that a change it held goes on to the later steps;
// approval never lifts the mode, autofix, confidence, an unlisted low
// class, isolation, the checks or the verification.
func TestApprovalLiftsOnlyTheHold(t *testing.T) {
	p, f := permissive(), baseFacts()
	f.Risk, f.Approved = &Risk{Class: "ci", HighImpact: true}, true
	if got, _ := decide(t, p, f); got != Applied {
		t.Errorf("an approved high-impact change under a permissive policy: %q", got)
	}
	for name, change := range map[string]func(*Repo, *Facts){
		"observe":      func(_ *Repo, f *Facts) { f.Mode = Observe },
		"autofix off":  func(p *Repo, _ *Facts) { p.Autofix.Enabled = false },
		"confidence":   func(_ *Repo, f *Facts) { f.Confidence = 0.5 },
		"low unlisted": func(_ *Repo, f *Facts) { f.Risk = &Risk{Class: "tests"} },
		"not offered":  func(_ *Repo, f *Facts) { f.Work, f.Isolation = WorkIssue, &Isolation{Available: true} },
		"checks fail":  func(_ *Repo, f *Facts) { f.Checks = &Checks{Ran: true, Isolation: Local} },
		"verification": func(_ *Repo, f *Facts) {
			f.Risk.Verification, f.Verification = true, &Checks{Ran: true, Isolation: Local}
		},
	} {
		p, f := permissive(), baseFacts()
		f.Risk, f.Approved = &Risk{Class: "ci", HighImpact: true}, true
		change(&p, &f)
		if got, _ := decide(t, p, f); !got.Refused() {
			t.Errorf("%s, approved: %q", name, got)
		}
	}
	prop := func(in chainInput) bool {
		held, approved := in.F, in.F
		held.Approved, approved.Approved = false, true
		h, _ := decide(t, in.P, held)
		a, _ := decide(t, in.P, approved)
		return h == a || h == HeldHighImpact
	}
	if err := quick.Check(prop, quickConfig); err != nil {
		t.Error(err)
	}
}

func TestConfidenceMustBeANumberInRange(t *testing.T) {
	for _, c := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -0.1, 1.0001, 0.79} {
		f := baseFacts()
		f.Confidence = c
		if got, _ := decide(t, permissive(), f); got != RefusedLowConfidence {
			t.Errorf("confidence %v: %q, want refused_low_confidence", c, got)
		}
	}
	for _, c := range []float64{0.8, 0.95, 1} {
		f := baseFacts()
		f.Confidence = c
		if got, _ := decide(t, permissive(), f); got != Applied {
			t.Errorf("confidence %v: %q, want applied", c, got)
		}
	}
	// A policy built by hand with a NaN threshold lets nothing through.
	p := permissive()
	p.Autofix.MinConfidence = math.NaN()
	if got, _ := decide(t, p, baseFacts()); got != RefusedLowConfidence {
		t.Errorf("NaN minConfidence: %q, want refused_low_confidence", got)
	}
}

func TestIsolation(t *testing.T) {
	ready := &Isolation{Offered: true, Available: true}
	for _, tc := range []struct {
		name      string
		mode      Mode
		work      Work
		require   bool
		runner    string
		offer     *Isolation
		isolation string
		want      Outcome
	}{
		{"pull request, local", Fix, WorkPullRequest, true, Local, nil, Local, Applied},
		{"push, none", Fix, WorkPush, true, Local, nil, "none", Applied},
		{"issue, local", Fix, WorkIssue, true, Local, ready, Local, RefusedNotIsolated},
		{"issue, none", Fix, WorkIssue, true, Local, ready, "none", RefusedNotIsolated},
		{"issue, nothing reported", Fix, WorkIssue, true, Local, ready, "", RefusedNotIsolated},
		{"issue, container", Fix, WorkIssue, true, Local, ready, Container, Applied},
		{"issue, container not offered", Fix, WorkIssue, true, Local, &Isolation{Available: true}, Container, RefusedNotIsolated},
		{"issue, bubblewrap unavailable", Fix, WorkIssue, true, Local, &Isolation{Offered: true}, Container, RefusedNotIsolated},
		{"proactive, local", Fix, WorkProactive, true, Local, ready, Local, RefusedNotIsolated},
		{"proactive, container", Fix, WorkProactive, true, Local, ready, Container, Applied},
		{"unknown work, local", Fix, Work("cron"), true, Local, ready, Local, RefusedNotIsolated},
		{"issue, not required", Fix, WorkIssue, false, Local, nil, Local, Applied},
		{"autonomous pull request, local", Autonomous, WorkPullRequest, true, Local, ready, Local, RefusedNotIsolated},
		{"autonomous, not required, local", Autonomous, WorkPullRequest, false, Local, ready, Local, RefusedNotIsolated},
		{"autonomous, container", Autonomous, WorkIssue, false, Local, ready, Container, Applied},
		{"repository asks for container, ran local", Fix, WorkPullRequest, false, Container, ready, Local, RefusedNotIsolated},
		{"repository asks for container, ran in one", Fix, WorkPullRequest, false, Container, ready, Container, Applied},
		{"capitalised container is not container", Fix, WorkIssue, true, Local, ready, "Container", RefusedNotIsolated},
	} {
		p := permissive()
		p.Autofix.RequireIsolated, p.Runner.Isolation = tc.require, tc.runner
		f := baseFacts()
		f.Mode, f.Work, f.Isolation, f.Checks.Isolation = tc.mode, tc.work, tc.offer, tc.isolation
		got, asked := decide(t, p, f)
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		needs := NeedsIsolation(p, tc.mode, tc.work)
		if slices.Contains(asked, NeedIsolation) != needs {
			t.Errorf("%s: asked %v; needs isolation %v", tc.name, asked, needs)
		}
		// Without the isolation a write needs, no check runs.
		if tc.offer != nil && !(tc.offer.Offered && tc.offer.Available) && slices.Contains(asked, NeedChecks) {
			t.Errorf("%s: the checks were asked for without isolation", tc.name)
		}
	}
}

func TestChecksStep(t *testing.T) {
	for _, tc := range []struct {
		name        string
		checks      [][]string
		ran, passed bool
		want        Outcome
	}{
		{"configured, passed", [][]string{{"make"}}, true, true, Applied},
		{"configured, failed", [][]string{{"make"}}, true, false, RefusedChecksFailed},
		{"configured, not run", [][]string{{"make"}}, false, false, RefusedChecksFailed},
		{"configured, passed but not run", [][]string{{"make"}}, false, true, RefusedChecksFailed},
		{"none configured, not run", nil, false, false, Applied},
		{"none configured, reported failed", nil, true, false, RefusedChecksFailed},
	} {
		p := permissive()
		p.Checks = tc.checks
		f := baseFacts()
		f.Checks.Ran, f.Checks.Passed = tc.ran, tc.passed
		if got, _ := decide(t, p, f); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestVerificationStep: a change that touches its tests or check harness
// must pass the checks a second time with them taken back; the second run
// is asked for only then, and only after the first passed.
func TestVerificationStep(t *testing.T) {
	local := func(passed bool) *Checks { return &Checks{Ran: true, Passed: passed, Isolation: Local} }
	for _, tc := range []struct {
		name         string
		touches      bool
		checks       *Checks
		verification *Checks
		want         Outcome
		asked        bool
	}{
		{"untouched", false, local(true), nil, Applied, false},
		{"touched, both pass", true, local(true), local(true), Applied, true},
		{"touched, second fails", true, local(true), local(false), RefusedVerificationChanged, true},
		{"touched, second did not run", true, local(true), &Checks{Isolation: Local}, RefusedVerificationChanged, true},
		{"touched, first fails", true, local(false), local(true), RefusedChecksFailed, false},
		{"touched, no checks ran", true, &Checks{Passed: true, Isolation: Local}, nil, RefusedChecksFailed, false},
	} {
		p, f := permissive(), baseFacts()
		f.Risk.Verification, f.Checks, f.Verification = tc.touches, tc.checks, tc.verification
		got, asked := decide(t, p, f)
		if got != tc.want || slices.Contains(asked, NeedVerification) != tc.asked {
			t.Errorf("%s: %q, asked %v", tc.name, got, asked)
		}
	}
	p := permissive()
	p.Checks = nil
	f := baseFacts()
	f.Risk.Verification, f.Checks = true, &Checks{Passed: true, Isolation: Local}
	if got, asked := decide(t, p, f); got != Applied || slices.Contains(asked, NeedVerification) {
		t.Errorf("no checks configured: %q, asked %v", got, asked)
	}
	// The second run needs the same isolation as the first.
	f = baseFacts()
	f.Work, f.Isolation = WorkIssue, &Isolation{Offered: true, Available: true}
	f.Checks = &Checks{Ran: true, Passed: true, Isolation: Container}
	f.Risk.Verification, f.Verification = true, local(true)
	if got, _ := decide(t, permissive(), f); got != RefusedNotIsolated {
		t.Errorf("a second run outside the container: %q", got)
	}
}

// TestObserveRunReportsItsChange: a run in observe mode that asked for
// observe and proposes a change is observed, not refused; one that asked
// for fix or autonomous and was capped at observe is refused_mode.
func TestObserveRunReportsItsChange(t *testing.T) {
	for requested, want := range map[Mode]Outcome{Observe: Observed, Fix: RefusedMode, Autonomous: RefusedMode, 3: RefusedMode} {
		f := baseFacts()
		f.Mode, f.Requested = Observe, requested
		got, asked := decide(t, permissive(), f)
		if got != want || len(asked) != 0 {
			t.Errorf("observe, asked for %s, a change proposed: %q, asked %v; want %q", requested, got, asked, want)
		}
	}
	if Observed.Refused() {
		t.Error("observed counts as a refusal")
	}
}

func TestDefaultPolicyAppliesNothing(t *testing.T) {
	f := baseFacts()
	f.Mode, f.Checks.Isolation = Autonomous, Container
	if got, _ := decide(t, Default(), f); got != RefusedAutofixDisabled {
		t.Errorf("Default() with a proposed change: %q, want refused_autofix_disabled", got)
	}
	if got, _ := decide(t, Repo{}, Facts{}); got != Observed {
		t.Errorf("zero policy and facts: %q, want observed", got)
	}
}

// chainInput is a random policy and facts, drawn from small sets of
// values that matter to the chain.
type chainInput struct {
	P Repo
	F Facts
}

func (chainInput) Generate(r *rand.Rand, _ int) reflect.Value {
	pick := func(n int) int { return r.Intn(n) }
	modes := []Mode{-1, Observe, Fix, Autonomous, 3}
	confs := []float64{math.NaN(), math.Inf(1), -1, 0, 0.5, 0.8, 0.9, 1, 1.5}
	classes := []string{"", "docs", "tests", "security"}
	works := []Work{WorkPullRequest, WorkPush, WorkIssue, WorkProactive, "", "cron"}
	isos := []string{"", "none", Local, Container}
	var p Repo
	p.Mode = modes[pick(len(modes))]
	p.Autofix.Enabled = pick(2) == 0
	p.Autofix.MinConfidence = confs[pick(len(confs))]
	for _, c := range classes {
		if pick(2) == 0 {
			p.Autofix.AllowedChangeRisks = append(p.Autofix.AllowedChangeRisks, c)
		}
	}
	p.Autofix.RequireIsolated = pick(2) == 0
	if pick(2) == 0 {
		p.Checks = [][]string{{"make", "test"}}
	}
	p.Runner.Isolation = []string{Local, Container}[pick(2)]
	checks := func() *Checks {
		if pick(8) == 0 {
			return nil // the caller could not gather it
		}
		return &Checks{Ran: pick(3) != 0, Passed: pick(3) != 0, Isolation: isos[pick(len(isos))]}
	}
	f := Facts{
		Mode: modes[pick(len(modes))], Requested: modes[pick(len(modes))], Work: works[pick(len(works))], Proposed: pick(4) != 0,
		Confidence: confs[pick(len(confs))], Approved: pick(3) == 0,
		Risk:         &Risk{Class: classes[pick(len(classes))], HighImpact: pick(3) == 0, Verification: pick(2) == 0},
		Isolation:    &Isolation{Offered: pick(4) != 0, Available: pick(4) != 0},
		Checks:       checks(),
		Verification: checks(),
	}
	return reflect.ValueOf(chainInput{p, f})
}

var quickConfig = &quick.Config{MaxCount: 20000}

// TestNeedsComeInChainOrder: Decide asks for each fact at most once, in
// the chain's order, never for a later step's fact once a step refused,
// and decides the same with every fact given up front as when each is
// handed over on demand.
func TestNeedsComeInChainOrder(t *testing.T) {
	prop := func(in chainInput) bool {
		got, asked := decide(t, in.P, in.F)
		if !slices.IsSorted(asked) {
			return false
		}
		if got == "" { // a fact was missing: Decide asked for it and stopped
			return true
		}
		upFront, need := Decide(in.P, in.F)
		if need != Decided || upFront != got {
			return false
		}
		switch got {
		case Observed, NoChange, RefusedMode, RefusedAutofixDisabled, RefusedLowConfidence:
			return len(asked) == 0
		case HeldHighImpact, RefusedRiskNotAllowed:
			return slices.Equal(asked, []Need{NeedRisk})
		}
		return true
	}
	if err := quick.Check(prop, quickConfig); err != nil {
		t.Error(err)
	}
}

// TestAppliedOnlyWhenEveryStepHolds states the chain once more, as one
// conjunction, and checks Decide against it; and that Decide always
// returns one of Outcomes().
func TestAppliedOnlyWhenEveryStepHolds(t *testing.T) {
	all := Outcomes()
	applied := 0
	prop := func(in chainInput) bool {
		p, f := in.P, in.F
		if f.Checks == nil || f.Verification == nil {
			return true
		}
		c := f.Confidence
		needs := f.Mode == Autonomous || p.Runner.Isolation == Container ||
			(p.Autofix.RequireIsolated && f.Work != WorkPullRequest && f.Work != WorkPush)
		high := f.Risk.HighImpact || f.Risk.Class == ""
		checksHold := func(k *Checks) bool {
			return (k.Passed || !k.Ran) && (len(p.Checks) == 0 || k.Ran) && (!needs || k.Isolation == Container)
		}
		want := f.Proposed &&
			(f.Mode == Fix || f.Mode == Autonomous) &&
			p.Autofix.Enabled &&
			!math.IsNaN(c) && c >= 0 && c <= 1 && c >= p.Autofix.MinConfidence &&
			((high && f.Approved) || (!high && slices.Contains(p.Autofix.AllowedChangeRisks, f.Risk.Class))) &&
			(!needs || (f.Isolation.Offered && f.Isolation.Available)) &&
			checksHold(f.Checks) &&
			(!f.Risk.Verification || !f.Checks.Ran || checksHold(f.Verification))
		got, _ := decide(t, p, f)
		if got == Applied {
			applied++
		}
		return slices.Contains(all, got) && (got == Applied) == want &&
			(f.Proposed || !got.Refused())
	}
	if err := quick.Check(prop, quickConfig); err != nil {
		t.Error(err)
	}
	if applied == 0 {
		t.Error("no random input was applied; the generator misses the interesting case")
	}
}
