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
		Mode: Fix, Work: WorkPullRequest, Proposed: true, Confidence: 0.9, RiskClass: "docs",
		ChecksRan: true, ChecksPassed: true, Isolation: Local,
	}
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
		{HeldHighImpact, func(_ *Repo, f *Facts) { f.RiskHighImpact = true }},
		{RefusedRiskNotAllowed, func(_ *Repo, f *Facts) { f.RiskClass = "tests" }},
		{RefusedChecksFailed, func(_ *Repo, f *Facts) { f.ChecksPassed = false }},
		{RefusedNotIsolated, func(_ *Repo, f *Facts) { f.Work = WorkIssue }},
	}
	var seen []Outcome
	for _, tc := range cases {
		p, f := permissive(), baseFacts()
		tc.change(&p, &f)
		if got := Decide(p, f); got != tc.want {
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
	if len(all) != 10 {
		t.Errorf("%d outcomes, want 10", len(all))
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
	f.RiskClass, f.RiskHighImpact = "security", true
	if got := Decide(p, f); got != HeldHighImpact {
		t.Errorf("high-impact class listed in allowedChangeRisks: %q, want held", got)
	}
	f.RiskClass, f.RiskHighImpact = "docs", true
	if got := Decide(p, f); got != HeldHighImpact {
		t.Errorf("allowed class marked high impact: %q, want held", got)
	}
	f.RiskClass, f.RiskHighImpact = "", false
	p.Autofix.AllowedChangeRisks = append(p.Autofix.AllowedChangeRisks, "")
	if got := Decide(p, f); got != HeldHighImpact {
		t.Errorf("no risk class, even listed: %q, want held", got)
	}
}

func TestConfidenceMustBeANumberInRange(t *testing.T) {
	for _, c := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -0.1, 1.0001, 0.79} {
		f := baseFacts()
		f.Confidence = c
		if got := Decide(permissive(), f); got != RefusedLowConfidence {
			t.Errorf("confidence %v: %q, want refused_low_confidence", c, got)
		}
	}
	for _, c := range []float64{0.8, 0.95, 1} {
		f := baseFacts()
		f.Confidence = c
		if got := Decide(permissive(), f); got != Applied {
			t.Errorf("confidence %v: %q, want applied", c, got)
		}
	}
	// A policy built by hand with a NaN threshold lets nothing through.
	p := permissive()
	p.Autofix.MinConfidence = math.NaN()
	if got := Decide(p, baseFacts()); got != RefusedLowConfidence {
		t.Errorf("NaN minConfidence: %q, want refused_low_confidence", got)
	}
}

func TestIsolation(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mode      Mode
		work      Work
		require   bool
		runner    string
		isolation string
		want      Outcome
	}{
		{"pull request, local", Fix, WorkPullRequest, true, Local, Local, Applied},
		{"push, none", Fix, WorkPush, true, Local, "none", Applied},
		{"issue, local", Fix, WorkIssue, true, Local, Local, RefusedNotIsolated},
		{"issue, none", Fix, WorkIssue, true, Local, "none", RefusedNotIsolated},
		{"issue, nothing reported", Fix, WorkIssue, true, Local, "", RefusedNotIsolated},
		{"issue, container", Fix, WorkIssue, true, Local, Container, Applied},
		{"proactive, local", Fix, WorkProactive, true, Local, Local, RefusedNotIsolated},
		{"proactive, container", Fix, WorkProactive, true, Local, Container, Applied},
		{"unknown work, local", Fix, Work("cron"), true, Local, Local, RefusedNotIsolated},
		{"issue, not required", Fix, WorkIssue, false, Local, Local, Applied},
		{"autonomous pull request, local", Autonomous, WorkPullRequest, true, Local, Local, RefusedNotIsolated},
		{"autonomous, not required, local", Autonomous, WorkPullRequest, false, Local, Local, RefusedNotIsolated},
		{"autonomous, container", Autonomous, WorkIssue, false, Local, Container, Applied},
		{"repository asks for container, ran local", Fix, WorkPullRequest, false, Container, Local, RefusedNotIsolated},
		{"repository asks for container, ran in one", Fix, WorkPullRequest, false, Container, Container, Applied},
		{"capitalised container is not container", Fix, WorkIssue, true, Local, "Container", RefusedNotIsolated},
	} {
		p := permissive()
		p.Autofix.RequireIsolated, p.Runner.Isolation = tc.require, tc.runner
		f := baseFacts()
		f.Mode, f.Work, f.Isolation = tc.mode, tc.work, tc.isolation
		if got := Decide(p, f); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
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
		f.ChecksRan, f.ChecksPassed = tc.ran, tc.passed
		if got := Decide(p, f); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestDefaultPolicyAppliesNothing(t *testing.T) {
	f := baseFacts()
	f.Mode, f.Isolation, f.RiskClass = Autonomous, Container, "docs"
	if got := Decide(Default(), f); got != RefusedAutofixDisabled {
		t.Errorf("Default() with a proposed change: %q, want refused_autofix_disabled", got)
	}
	if got := Decide(Repo{}, Facts{}); got != Observed {
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
	f := Facts{
		Mode: modes[pick(len(modes))], Work: works[pick(len(works))], Proposed: pick(4) != 0,
		Confidence: confs[pick(len(confs))], RiskClass: classes[pick(len(classes))], RiskHighImpact: pick(3) == 0,
		ChecksRan: pick(3) != 0, ChecksPassed: pick(3) != 0, Isolation: isos[pick(len(isos))],
	}
	return reflect.ValueOf(chainInput{p, f})
}

var quickConfig = &quick.Config{MaxCount: 20000}

func TestDecideIsBeforeThenAfter(t *testing.T) {
	prop := func(in chainInput) bool {
		want := Before(in.P, in.F)
		if want == "" {
			want = After(in.P, in.F)
		}
		return Decide(in.P, in.F) == want
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
		c := f.Confidence
		needs := f.Mode == Autonomous || p.Runner.Isolation == Container ||
			(p.Autofix.RequireIsolated && f.Work != WorkPullRequest && f.Work != WorkPush)
		want := f.Proposed &&
			(f.Mode == Fix || f.Mode == Autonomous) &&
			p.Autofix.Enabled &&
			!math.IsNaN(c) && c >= 0 && c <= 1 && c >= p.Autofix.MinConfidence &&
			!f.RiskHighImpact && f.RiskClass != "" && slices.Contains(p.Autofix.AllowedChangeRisks, f.RiskClass) &&
			(f.ChecksPassed || !f.ChecksRan) && (len(p.Checks) == 0 || f.ChecksRan) &&
			(!needs || f.Isolation == Container)
		got := Decide(p, f)
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
