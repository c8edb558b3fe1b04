// Package run is Agent Zero's orchestrator: one task on one repository,
// from the policy to the report and the task record.
//
// It reads the repository policy from the default branch at a pinned
// commit (never from the change under review), takes the effective mode as
// the minimum of the operator's ceiling, the policy and what was asked,
// lets the model read a scratch clone through read-only tools, and sends
// any diff the model proposes through the authorization chain,
// [policy.Decide]: it gathers each fact the chain asks for (applying the
// change and classifying what git applied, the isolation, the checks, the
// checks again on the reviewed head's tests) and nothing the chain has not
// asked for. A run and an approval go through the same chain; a person's
// approval is one more fact. Each refusal is its own outcome. Only an
// applied change is committed, to a new agent-zero/ branch pushed to the
// remote; the repository itself is never written.
package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/zero-dev/zero/internal/gitref"
	"github.com/zero-dev/zero/internal/guard/redact"
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

// Outcomes of a run that did not reach the chain's decision. Neither is
// ever success, and neither blames the change.
const (
	// Failed: the run could not finish (git, the model, the push failed).
	Failed policy.Outcome = "failed"
	// Interrupted: the run was stopped (a signal, the task's deadline) or a
	// check ran past the operator's checkTimeout.
	Interrupted policy.Outcome = "interrupted"
)

// Options are one task's inputs.
type Options struct {
	// TaskID, if set, is the task's id (the shape newTaskID makes); else a
	// new one. A queued job's attempts share one (repoagent.JobTaskID), so
	// that a retry pushes to the branch the attempt before may have pushed,
	// which the push never overwrites: a retry records BranchExists.
	TaskID      string
	RepoDir     string
	RepoName    string // owner/name, for the report and the record
	Remote      string // default "origin"
	Event       *webhook.Event
	Requested   policy.Mode // the --mode flag, or what the operator lets the event's kind ask for
	RequestedBy string      // what asked for Requested, for the report: "--mode" (the default) or "eventModes.KIND"
	Work        policy.Work
	Operator    policy.Operator
	Model       *model.Client // nil: no model is configured
	Secrets     []string      // values to redact from the record and the log (model key, tokens, webhook secrets)
	PushToken   string        // for an https remote
	Records     *record.Log
	State       *state.State
	Scratch     string       // where scratch clones go; default the system's temporary directory
	Log         *slog.Logger // the operator's log, where free text (errors) goes, redacted; nil discards it
	Now         func() time.Time
}

// A Report is what a task did, for a person.
type Report struct {
	TaskID      string
	Repo        string
	Work        policy.Work
	Mode        policy.Mode
	ModeCap     []string // what capped the mode below autonomous, each with how to raise it
	PolicySHA   string
	NoPolicy    bool // the default branch has no PolicyFile at PolicySHA: the defaults apply
	PolicyError string
	HeadSHA     string
	Review      Review
	Risk        risk.Result // Zero's class of the change git applied; empty when the chain stopped before step 4
	Approved    bool        // a person approved the change
	Outcome     policy.Outcome
	Code        record.Reason // the record's fixed code for the outcome
	Reason      []string      // Zero's words for a person: the facts behind the outcome, one a line
	Checks      runner.Checks
	// Verification is the second run of the checks, with the change's test
	// and verification-surface files as the reviewed head has them; nil
	// when it did not run.
	Verification *runner.Checks
	Branch       string
	Commit       string
}

// Run runs one task and records it. The error is for a record that could
// not be written; a task that failed is a report with outcome Failed or
// Interrupted.
func Run(ctx context.Context, o Options) (Report, error) {
	t := newTask(o)
	t.rep.TaskID = o.TaskID
	if !taskIDRE().MatchString(o.TaskID) {
		t.rep.TaskID = newTaskID(t.o.Now())
	}
	t.rep.Repo, t.rep.Work = o.RepoName, o.Work
	if err := t.run(ctx); err != nil {
		t.failed(ctx, err)
	}
	return *t.rep, t.record()
}

// Approve applies a change the chain held, after a person saw its diff. It
// goes through the same chain as a run, with the approval as one more
// fact: the mode and isolation come from the operator's configuration as
// it is now and the policy at the remote's current default branch, the
// change is applied and classified again, and the checks run again.
func Approve(ctx context.Context, o Options, id string) (Report, error) {
	t := newTask(o)
	t.rep.Approved = true
	err := fail(record.NotWaiting, fmt.Errorf("%q is not a task id", id))
	if taskIDRE().MatchString(id) {
		t.rep.TaskID = id
		err = t.approve(ctx, id)
	}
	if err != nil {
		t.failed(ctx, err)
	}
	return *t.rep, t.record()
}

// taskIDRE is the shape of the ids newTaskID makes.
var taskIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{8}-[0-9]{6}-[0-9a-f]{8}$`) })

func newTaskID(now time.Time) string {
	b := make([]byte, 4)
	rand.Read(b)
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

type task struct {
	o           Options
	rep         *Report
	repo        *runner.Repo
	policy      policy.Repo
	policyErr   bool
	requested   policy.Mode
	requestedBy string
	def         string // the default branch
	url         string // the remote's URL: fetches and the push go there
	paths       []string
	probe       error           // why bubblewrap cannot run here, once asked
	reverts     []runner.Revert // the change's test and verification-surface files, to take back for the second run
}

func newTask(o Options) *task {
	if o.Remote == "" {
		o.Remote = "origin"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.RequestedBy == "" {
		o.RequestedBy = "--mode"
	}
	return &task{o: o, rep: &Report{}, requested: o.Requested, requestedBy: o.RequestedBy}
}

// A failure is an error with the record's code for it; its text goes only
// to the operator's log.
type failure struct {
	code record.Reason
	err  error
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

func fail(code record.Reason, err error) error {
	if err == nil {
		return nil
	}
	return &failure{code, err}
}

// failed makes the report of a run that did not finish: Interrupted when
// ctx ended or a check ran past its timeout, else Failed. The error's text
// goes to the operator's log, redacted, never to the record.
func (t *task) failed(ctx context.Context, err error) {
	rep := t.rep
	code := record.Internal
	var f *failure
	if errors.As(err, &f) {
		code = f.code
	}
	rep.Outcome = Failed
	switch {
	case code == record.CheckTimeout:
		rep.Outcome = Interrupted
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		rep.Outcome, code = Interrupted, record.Interrupted
	}
	rep.Code, rep.Reason = code, append([]string{code.Text()}, t.failureHints(code, err)...)
	t.o.Log.Warn("agent zero task "+string(rep.Outcome), "task", rep.TaskID, "repository", rep.Repo,
		"reason", string(code), "error", t.redactor().String(err.Error()))
}

func (t *task) redactor() *redact.Redactor { return record.NewRedactor(t.o.Secrets, t.paths) }

func (t *task) run(ctx context.Context) error {
	o, rep := t.o, t.rep
	repo, err := runner.OpenRepo(o.RepoDir)
	if err != nil {
		return fail(record.RepositoryFailed, err)
	}
	defer repo.Close()
	t.repo = repo
	t.paths = append(t.paths, repo.Dir(), o.RepoDir)

	// The default branch, and the commit it is at now on the remote.
	t.url, _ = repo.RemoteURL(ctx, o.Remote)
	if o.Event != nil && o.Event.DefaultBranch != "" && gitref.ValidBranch(o.Event.DefaultBranch) {
		t.def = o.Event.DefaultBranch
	} else if t.def, err = repo.DefaultBranch(ctx, o.Remote); err != nil {
		return fail(record.RepositoryFailed, err)
	}
	if err := t.pinPolicy(ctx); err != nil {
		return err
	}

	// What to review: the event's head, else the checkout's HEAD. A head
	// the checkout lacks (a new pull request commit) is fetched into the
	// scratch clone, never into the checkout.
	rev := "HEAD"
	if o.Event != nil && o.Event.HeadSHA != "" {
		rev = o.Event.HeadSHA
	}
	if rep.HeadSHA, err = repo.Resolve(ctx, rev); err != nil {
		if o.Event == nil || !gitref.ValidSHA(o.Event.HeadSHA) || t.url == "" {
			return fail(record.RepositoryFailed, err)
		}
		rep.HeadSHA = o.Event.HeadSHA
	}
	scratch, err := t.scratch(ctx)
	if err != nil {
		return err
	}
	defer scratch.Close()

	if o.Model == nil {
		return fail(record.NoModel, errors.New("no model is configured: set AGENT_ZERO_MODEL_BASE_URL and AGENT_ZERO_MODEL"))
	}
	roots, err := scratch.Roots()
	if err != nil {
		return fail(record.RepositoryFailed, err)
	}
	defer roots.Close()
	if rep.Review, err = review(ctx, o.Model, roots, o.Event, rep.Mode); err != nil {
		return err
	}
	return t.authorize(ctx, scratch)
}

// pinPolicy pins the commit the policy is read at: the default branch as
// the remote has it now, else as the checkout last saw it.
func (t *task) pinPolicy(ctx context.Context) error {
	var err error
	if t.rep.PolicySHA, err = t.repo.RemoteHead(ctx, t.url, t.def, t.o.PushToken); err != nil {
		if t.rep.PolicySHA, err = t.repo.BranchSHA(ctx, t.o.Remote, t.def); err != nil {
			return fail(record.RepositoryFailed, fmt.Errorf("the default branch %s: %w", t.def, err))
		}
	}
	return nil
}

// scratch makes the scratch clone at the reviewed head, reads the policy
// there at the pinned commit, and sets the effective mode.
func (t *task) scratch(ctx context.Context) (*runner.Scratch, error) {
	scratch, err := t.repo.NewScratch(ctx, t.o.Scratch, t.rep.HeadSHA, t.url, t.o.PushToken)
	if err != nil {
		return nil, fail(record.RepositoryFailed, err)
	}
	t.paths = append(t.paths, scratch.Dir)
	if err := t.readPolicy(ctx, scratch); err != nil {
		scratch.Close()
		return nil, err
	}
	t.rep.Mode = policy.Effective(t.o.Operator.Ceiling, t.policy.Mode, t.requested)
	t.rep.ModeCap = t.modeCap()
	return scratch, nil
}

// readPolicy reads .agent-zero.yml at the pinned commit; a policy that
// does not parse makes the run observe, and the report says why.
func (t *task) readPolicy(ctx context.Context, scratch *runner.Scratch) error {
	t.policy = policy.Default()
	if err := scratch.Ensure(ctx, t.rep.PolicySHA, t.url, t.o.PushToken); err != nil {
		return fail(record.RepositoryFailed, err)
	}
	data, ok, err := scratch.FileAt(ctx, t.rep.PolicySHA, PolicyFile)
	if err != nil || !ok {
		t.rep.NoPolicy = err == nil
		return fail(record.RepositoryFailed, err)
	}
	var perr error
	if t.policy, perr = policy.ParseRepoOrObserve(data, knownRisk); perr != nil {
		t.policyErr = true
		t.rep.PolicyError = perr.Error() + " (so the run observes only)"
	}
	return nil
}

func knownRisk(name string) bool {
	c, ok := risk.Known(name)
	return ok && !c.HighImpact()
}

func (t *task) approve(ctx context.Context, id string) error {
	o, rep := t.o, t.rep
	if o.State == nil {
		return fail(record.NotWaiting, errors.New("no state holds changes for approval"))
	}
	h, err := o.State.Get(ctx, id)
	if err != nil {
		return fail(record.NotWaiting, err)
	}
	if err := o.State.MarkApproved(ctx, id); err != nil {
		return fail(record.NotWaiting, err)
	}
	t.o.Remote, t.def = h.Remote, h.DefaultBranch
	rep.Repo, rep.Work, rep.HeadSHA = h.RepoName, policy.Work(h.Work), h.HeadSHA
	rep.Review = Review{Diff: h.Diff, Confidence: h.Confidence}
	// An approval never asks for more than the run that held the change.
	if t.requested, err = policy.ParseMode(h.Mode); err != nil {
		t.requested = policy.Observe
	}
	t.requestedBy = "the run that held the change"
	repo, err := runner.OpenRepo(h.RepoDir)
	if err != nil {
		return fail(record.RepositoryFailed, err)
	}
	defer repo.Close()
	t.repo = repo
	t.paths = append(t.paths, repo.Dir(), h.RepoDir)
	t.url, _ = repo.RemoteURL(ctx, h.Remote)
	if err := t.pinPolicy(ctx); err != nil {
		return err
	}
	scratch, err := t.scratch(ctx)
	if err != nil {
		return err
	}
	defer scratch.Close()
	return t.authorize(ctx, scratch)
}

func (t *task) hold(ctx context.Context) error {
	o, rep := t.o, t.rep
	if o.State == nil {
		return fail(record.HoldFailed, errors.New("the change needs approval, and there is no state to hold it in"))
	}
	return fail(record.HoldFailed, o.State.Hold(ctx, state.Held{
		ID: rep.TaskID, CreatedAt: o.Now(), RepoName: rep.Repo, RepoDir: t.repo.Dir(), Remote: o.Remote,
		DefaultBranch: t.def, HeadSHA: rep.HeadSHA, PolicySHA: rep.PolicySHA, Work: string(rep.Work),
		Mode: rep.Mode.String(), Confidence: rep.Review.Confidence, Risk: string(rep.Risk.Class), Diff: rep.Review.Diff,
	}))
}

func (t *task) record() error {
	if t.o.Records == nil {
		return nil
	}
	rep := t.rep
	verification := ""
	if rep.Verification != nil {
		verification = checksWord(*rep.Verification)
	}
	return t.o.Records.Append(record.Task{
		ID: rep.TaskID, Repo: rep.Repo, Work: string(rep.Work), Mode: rep.Mode.String(), Outcome: string(rep.Outcome),
		Reason: rep.Code, Approved: rep.Approved, Risk: string(rep.Risk.Class), Confidence: rep.Review.Confidence,
		Findings: len(rep.Review.Findings), Checks: checksWord(rep.Checks), Verification: verification,
		Isolation: rep.Checks.Isolation, HeadSHA: rep.HeadSHA, PolicySHA: rep.PolicySHA, Branch: rep.Branch, Commit: rep.Commit,
	}, t.o.Secrets, t.paths)
}

func checksWord(c runner.Checks) string {
	switch {
	case c.TimedOut:
		return "timed out"
	case !c.Ran:
		return "not run"
	case c.Passed:
		return "passed"
	default:
		return "failed"
	}
}
