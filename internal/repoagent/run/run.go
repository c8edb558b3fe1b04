// Package run is Agent Zero's orchestrator: one task on one repository,
// from the policy to the report and the task record.
//
// It reads the repository policy from the default branch at a pinned
// commit (never from the change under review), takes the effective mode as
// the minimum of the operator's ceiling, the policy and what was asked,
// lets the model read a scratch clone through read-only tools, and sends
// any diff the model proposes through the authorization chain
// (package policy): mode, autofix, confidence, Zero's own risk class of the
// final diff, the repository's checks, and isolation. Each refusal is its
// own outcome. Only an applied change is committed, to a new agent-zero/
// branch pushed to the remote; the repository itself is never written.
package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/repoagent/policy"
	"github.com/zero-dev/zero/internal/repoagent/record"
	"github.com/zero-dev/zero/internal/repoagent/risk"
	"github.com/zero-dev/zero/internal/repoagent/runner"
	"github.com/zero-dev/zero/internal/repoagent/state"
	"github.com/zero-dev/zero/internal/repoagent/webhook"
)

// PolicyFile is the repository policy's path in the repository.
const PolicyFile = ".agent-zero.yml"

// Failed is the outcome of a run that could not finish (git, the model or
// the push failed). It is never success.
const Failed policy.Outcome = "failed"

// Options are one task's inputs.
type Options struct {
	RepoDir   string
	RepoName  string // owner/name, for the report and the record
	Remote    string // default "origin"
	Event     *webhook.Event
	Requested policy.Mode // the --mode flag, or what the operator lets the event's kind ask for
	Work      policy.Work
	Operator  policy.Operator
	Model     *model.Client // nil: no model is configured
	Secrets   []string      // values to redact from the record (model key, tokens, webhook secrets)
	PushToken string        // for an https remote
	Records   *record.Log
	State     *state.State
	Scratch   string // where scratch clones go; default the system's temporary directory
	Now       func() time.Time
}

// A Report is what a task did, for a person.
type Report struct {
	TaskID      string
	Repo        string
	Work        policy.Work
	Mode        policy.Mode
	PolicySHA   string
	PolicyError string
	HeadSHA     string
	Review      Review
	Risk        risk.Result
	Outcome     policy.Outcome
	Reason      string
	Checks      runner.Checks
	Branch      string
	Commit      string
}

// Run runs one task and records it. The error is for a record that could
// not be written; a task that failed is a report with outcome Failed.
func Run(ctx context.Context, o Options) (Report, error) {
	if o.Remote == "" {
		o.Remote = "origin"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	rep := Report{TaskID: newTaskID(o.Now()), Repo: o.RepoName, Work: o.Work}
	t := &task{o: o, rep: &rep}
	if err := t.run(ctx); err != nil {
		rep.Outcome, rep.Reason = Failed, err.Error()
	}
	return rep, t.record()
}

func newTaskID(now time.Time) string {
	b := make([]byte, 4)
	rand.Read(b)
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

type task struct {
	o      Options
	rep    *Report
	repo   *runner.Repo
	policy policy.Repo
	def    string // the default branch
	url    string // the remote's URL: fetches and the push go there
	paths  []string
}

func (t *task) run(ctx context.Context) error {
	o, rep := t.o, t.rep
	repo, err := runner.OpenRepo(o.RepoDir)
	if err != nil {
		return err
	}
	defer repo.Close()
	t.repo = repo
	t.paths = append(t.paths, repo.Dir(), o.RepoDir)

	// The default branch, and the commit it is at now on the remote (else
	// as the checkout last saw it): the policy is read there.
	t.url, _ = repo.RemoteURL(ctx, o.Remote)
	url := t.url
	if o.Event != nil && o.Event.DefaultBranch != "" && runner.ValidBranch(o.Event.DefaultBranch) {
		t.def = o.Event.DefaultBranch
	} else if t.def, err = repo.DefaultBranch(ctx, o.Remote); err != nil {
		return err
	}
	if rep.PolicySHA, err = repo.RemoteHead(ctx, url, t.def, o.PushToken); err != nil {
		if rep.PolicySHA, err = repo.BranchSHA(ctx, o.Remote, t.def); err != nil {
			return fmt.Errorf("the default branch %s: %w", t.def, err)
		}
	}

	// What to review: the event's head, else the checkout's HEAD. A head
	// the checkout lacks (a new pull request commit) is fetched into the
	// scratch clone, never into the checkout.
	rev := "HEAD"
	if o.Event != nil && o.Event.HeadSHA != "" {
		rev = o.Event.HeadSHA
	}
	if rep.HeadSHA, err = repo.Resolve(ctx, rev); err != nil {
		if o.Event == nil || !runner.ValidSHA(o.Event.HeadSHA) || url == "" {
			return err
		}
		rep.HeadSHA = o.Event.HeadSHA
	}
	scratch, err := repo.NewScratch(ctx, o.Scratch, rep.HeadSHA, url, o.PushToken)
	if err != nil {
		return err
	}
	defer scratch.Close()
	t.paths = append(t.paths, scratch.Dir)
	if err := t.readPolicy(ctx, scratch); err != nil {
		return err
	}
	rep.Mode = policy.Effective(o.Operator.Ceiling, t.policy.Mode, o.Requested)

	if o.Model == nil {
		return errors.New("no model is configured: set AGENT_ZERO_MODEL_BASE_URL and AGENT_ZERO_MODEL")
	}
	roots, err := scratch.Roots()
	if err != nil {
		return err
	}
	defer roots.Close()
	if rep.Review, err = review(ctx, o.Model, roots, o.Event, rep.Mode); err != nil {
		return err
	}
	return t.authorize(ctx, scratch, false)
}

// readPolicy reads .agent-zero.yml at the pinned commit; a policy that
// does not parse makes the run observe, and the report says why.
func (t *task) readPolicy(ctx context.Context, scratch *runner.Scratch) error {
	t.policy = policy.Default()
	if err := scratch.Ensure(ctx, t.rep.PolicySHA, t.url, t.o.PushToken); err != nil {
		return err
	}
	data, ok, err := scratch.FileAt(ctx, t.rep.PolicySHA, PolicyFile)
	if err != nil || !ok {
		return err
	}
	var perr error
	if t.policy, perr = policy.ParseRepoOrObserve(data, knownRisk); perr != nil {
		t.rep.PolicyError = perr.Error() + " (so the run observes only)"
	}
	return nil
}

// authorize sends the proposed diff through the chain, and applies it if
// every step holds. approved says a person approved it after the chain
// held it: the risk step is then theirs.
func (t *task) authorize(ctx context.Context, scratch *runner.Scratch, approved bool) error {
	o, rep := t.o, t.rep
	facts := policy.Facts{Mode: rep.Mode, Work: rep.Work, Proposed: rep.Review.Diff != "", Confidence: rep.Review.Confidence}
	if facts.Proposed {
		rep.Risk = risk.Classify(rep.Review.Diff)
		facts.RiskClass, facts.RiskHighImpact = string(rep.Risk.Class), rep.Risk.Class.HighImpact()
	}
	if !approved {
		rep.Outcome = policy.Before(t.policy, facts)
		switch rep.Outcome {
		case "":
		case policy.HeldHighImpact:
			rep.Reason = fmt.Sprintf("the change is %s, which always needs a person: zero agent approve %s", rep.Risk.Class, rep.TaskID)
			return t.hold(ctx)
		default:
			rep.Reason = reasons[rep.Outcome]
			return nil
		}
	}
	tree, err := scratch.Apply(ctx, rep.Review.Diff)
	if err != nil {
		return err
	}
	contained := policy.NeedsIsolation(t.policy, rep.Mode, rep.Work) || t.policy.Runner.Isolation == runner.Container
	if contained && !o.Operator.Provides(runner.Container) {
		rep.Outcome, rep.Reason = policy.RefusedNotIsolated, "an isolated runner is required and this deployment provides none"
		return nil
	}
	dir, err := scratch.Export(ctx)
	if err != nil {
		return err
	}
	rep.Checks, err = runner.RunChecks(ctx, dir, t.policy.Checks, contained)
	if errors.Is(err, runner.ErrIsolationUnavailable) {
		rep.Outcome, rep.Reason = policy.RefusedNotIsolated, "an isolated runner is required and bubblewrap cannot run here"
		return nil
	}
	if err != nil {
		return err
	}
	facts.ChecksRan, facts.ChecksPassed, facts.Isolation = rep.Checks.Ran, rep.Checks.Passed, rep.Checks.Isolation
	if !rep.Checks.Ran {
		facts.Isolation = "none"
	}
	if rep.Outcome = policy.After(t.policy, facts); rep.Outcome != policy.Applied {
		rep.Reason = reasons[rep.Outcome]
		return nil
	}
	if rep.Commit, err = scratch.Commit(ctx, tree, rep.HeadSHA, commitMessage(rep)); err != nil {
		return err
	}
	rep.Branch = runner.BranchPrefix + rep.TaskID
	if err := scratch.Push(ctx, t.url, rep.Commit, rep.Branch, t.def, o.PushToken); err != nil {
		rep.Branch = ""
		return err
	}
	rep.Reason = "every step of the chain held; the change is on branch " + rep.Branch
	return nil
}

// reasons explain each refusal in Zero's own words.
var reasons = map[policy.Outcome]string{
	policy.Observed:               "observe mode: the findings are the whole report",
	policy.NoChange:               "the model proposed no change",
	policy.RefusedMode:            "the effective mode is observe: changes are reported, never made",
	policy.RefusedAutofixDisabled: "autofix.enabled is not true in the repository policy",
	policy.RefusedLowConfidence:   "the model's confidence is below autofix.minConfidence",
	policy.RefusedRiskNotAllowed:  "the change's risk class is not in autofix.allowedChangeRisks",
	policy.RefusedChecksFailed:    "the repository's checks did not pass after the change",
	policy.RefusedNotIsolated:     "the checks did not run in the isolation the policy requires",
}

func commitMessage(rep *Report) string {
	return fmt.Sprintf("Agent Zero: proposed change (task %s)\n\nRisk class: %s. Checks: %s. Review it before merging.\n",
		rep.TaskID, rep.Risk.Class, checksWord(rep.Checks))
}

func checksWord(c runner.Checks) string {
	switch {
	case !c.Ran:
		return "not run"
	case c.Passed:
		return "passed"
	default:
		return "failed"
	}
}

func (t *task) hold(ctx context.Context) error {
	o, rep := t.o, t.rep
	if o.State == nil {
		return errors.New("the change needs approval, and there is no state to hold it in")
	}
	return o.State.Hold(ctx, state.Held{
		ID: rep.TaskID, CreatedAt: o.Now(), RepoName: rep.Repo, RepoDir: t.repo.Dir(), Remote: o.Remote,
		DefaultBranch: t.def, HeadSHA: rep.HeadSHA, PolicySHA: rep.PolicySHA, Work: string(rep.Work),
		Mode: rep.Mode.String(), Confidence: rep.Review.Confidence, Risk: string(rep.Risk.Class), Diff: rep.Review.Diff,
	})
}

func (t *task) record() error {
	if t.o.Records == nil {
		return nil
	}
	rep := t.rep
	return t.o.Records.Append(record.Task{
		ID: rep.TaskID, Repo: rep.Repo, Work: string(rep.Work), Mode: rep.Mode.String(), Outcome: string(rep.Outcome),
		Reason: rep.Reason, Risk: string(rep.Risk.Class), Confidence: rep.Review.Confidence, Findings: len(rep.Review.Findings),
		Checks: checksWord(rep.Checks), Isolation: rep.Checks.Isolation, HeadSHA: rep.HeadSHA, PolicySHA: rep.PolicySHA,
		Branch: rep.Branch, Commit: rep.Commit,
	}, t.o.Secrets, t.paths)
}

func knownRisk(name string) bool {
	c, ok := risk.Known(name)
	return ok && !c.HighImpact()
}

// Approve applies a change the chain held, after a person saw its diff:
// the checks and the isolation steps still apply.
func Approve(ctx context.Context, o Options, id string) (Report, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	rep := Report{TaskID: id}
	t := &task{o: o, rep: &rep}
	err := t.approve(ctx, id)
	if err != nil && rep.Outcome == "" {
		rep.Outcome, rep.Reason = Failed, err.Error()
	}
	return rep, t.record()
}

func (t *task) approve(ctx context.Context, id string) error {
	o, rep := t.o, t.rep
	h, err := o.State.Get(ctx, id)
	if err != nil {
		return err
	}
	if err := o.State.MarkApproved(ctx, id); err != nil {
		return err
	}
	t.o.Remote, t.def = h.Remote, h.DefaultBranch
	rep.Repo, rep.Work, rep.HeadSHA, rep.PolicySHA = h.RepoName, policy.Work(h.Work), h.HeadSHA, h.PolicySHA
	rep.Mode, _ = policy.ParseMode(h.Mode)
	rep.Review = Review{Diff: h.Diff, Confidence: h.Confidence}
	repo, err := runner.OpenRepo(h.RepoDir)
	if err != nil {
		return err
	}
	defer repo.Close()
	t.repo = repo
	t.paths = append(t.paths, repo.Dir(), h.RepoDir)
	t.url, _ = repo.RemoteURL(ctx, h.Remote)
	scratch, err := repo.NewScratch(ctx, o.Scratch, h.HeadSHA, t.url, o.PushToken)
	if err != nil {
		return err
	}
	defer scratch.Close()
	t.paths = append(t.paths, scratch.Dir)
	// The policy as it was pinned when the change was held.
	if err := t.readPolicy(ctx, scratch); err != nil {
		return err
	}
	return t.authorize(ctx, scratch, true)
}

// Write prints the report for a person.
func (r Report) Write(w io.Writer) {
	fmt.Fprintf(w, "Agent Zero task %s on %s\n", r.TaskID, r.Repo)
	fmt.Fprintf(w, "mode: %s (work: %s)\n", r.Mode, r.Work)
	if r.PolicySHA != "" {
		fmt.Fprintf(w, "policy: %s at %s\n", PolicyFile, r.PolicySHA)
	}
	if r.PolicyError != "" {
		fmt.Fprintf(w, "policy error: %s\n", r.PolicyError)
	}
	if r.HeadSHA != "" {
		fmt.Fprintf(w, "reviewed: %s\n", r.HeadSHA)
	}
	if r.Review.Summary != "" {
		fmt.Fprintf(w, "\nsummary (from the model, unverified):\n  %s\n", oneLine(r.Review.Summary))
	}
	if len(r.Review.Findings) > 0 {
		fmt.Fprintf(w, "\nfindings (from the model, unverified):\n")
		for _, f := range r.Review.Findings {
			fmt.Fprintf(w, "  - [%s] %s:%d %s\n", oneLine(f.Severity), oneLine(f.Path), f.Line, oneLine(f.Message))
		}
	}
	if r.Review.Diff != "" {
		fmt.Fprintf(w, "\nproposed change: risk %s (computed by Zero from the diff), model confidence %.2f\n", r.Risk.Class, r.Review.Confidence)
	}
	if r.Checks.Ran {
		fmt.Fprintf(w, "checks: %s (isolation: %s)\n", checksWord(r.Checks), r.Checks.Isolation)
	}
	fmt.Fprintf(w, "\noutcome: %s\n", r.Outcome)
	if r.Reason != "" {
		fmt.Fprintf(w, "  %s\n", r.Reason)
	}
}

// oneLine keeps untrusted text on one line, so it cannot forge report lines.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, s)
	if len(s) > 500 {
		s = s[:500] + "..."
	}
	return s
}
