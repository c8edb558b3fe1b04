// Package record owns Agent Zero's task records: one line per run or
// approval in a hash-chained log (internal/audit), a file under
// $ZERO_HOME or a table the workers on one PostgreSQL share, redacted
// before it is written. A record holds codes, counts, commit ids and the
// repository's name. Its reason is one of a fixed list of codes
// ([Reason]), never free text: provider errors, git's messages, paths,
// review input (issue or pull request text, review comments), model output
// and check output go only to the operator's log, if anywhere. Every field
// also passes through a redactor ([NewRedactor]) that knows the run's
// secrets and local paths.
package record

import (
	"context"
	"database/sql"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/guard/redact"
)

// A Reason is a fixed code for why a task ended as it did; [Reason.Text]
// is its fixed text.
type Reason string

// The reasons a record may hold. Runs no longer write ModeRequested: a run
// that asks for observe and proposes a change is observed (ObserveMode).
// Records written before say refused_mode with it, and read as they did.
const (
	ObserveMode         Reason = "observe_mode"
	NoChange            Reason = "no_change"
	ModeCeiling         Reason = "mode_ceiling"
	ModePolicy          Reason = "mode_policy"
	ModePolicyError     Reason = "mode_policy_error"
	ModeRequested       Reason = "mode_requested"
	AutofixDisabled     Reason = "autofix_disabled"
	LowConfidence       Reason = "low_confidence"
	RiskNotAllowed      Reason = "risk_not_allowed"
	HighImpact          Reason = "high_impact"
	IsolationNotOffered Reason = "isolation_not_offered"
	IsolationMissing    Reason = "isolation_unavailable"
	ChecksNotIsolated   Reason = "checks_not_isolated"
	ChecksFailed        Reason = "checks_failed"
	VerificationChanged Reason = "verification_changed"
	ChainHeld           Reason = "chain_held"
	Approved            Reason = "approved"

	NoModel            Reason = "no_model"
	ModelFailed        Reason = "model_failed"
	ModelAnswerInvalid Reason = "model_answer_invalid"
	RepositoryFailed   Reason = "repository_failed"
	DiffDoesNotApply   Reason = "diff_does_not_apply"
	ChecksNotStarted   Reason = "checks_not_started"
	PushFailed         Reason = "push_failed"
	BranchExists       Reason = "branch_exists"
	HoldFailed         Reason = "hold_failed"
	NotWaiting         Reason = "not_waiting"
	Internal           Reason = "internal"

	Interrupted  Reason = "interrupted"
	CheckTimeout Reason = "check_timeout"

	// Unknown is written for a reason this list lacks.
	Unknown Reason = "unknown"
)

var texts = map[Reason]string{
	ObserveMode:         "observe mode: the report holds the findings and the proposed change; nothing is written",
	NoChange:            "the model proposed no change",
	ModeCeiling:         "the operator's ceiling caps the mode at observe",
	ModePolicy:          "the repository policy's mode is observe",
	ModePolicyError:     "the repository policy has an error, so the run observes",
	ModeRequested:       "the mode asked for (--mode, or the operator's eventModes for the event) is observe",
	AutofixDisabled:     "autofix.enabled is not true in the repository policy",
	LowConfidence:       "the model's confidence is below autofix.minConfidence",
	RiskNotAllowed:      "the change's risk class is not in autofix.allowedChangeRisks",
	HighImpact:          "the change is high impact and waits for a person to approve it",
	IsolationNotOffered: "the write needs an isolated runner, and the operator's isolation does not list container",
	IsolationMissing:    "the write needs an isolated runner, and bubblewrap cannot run here",
	ChecksNotIsolated:   "the checks did not run in the isolation the write needs",
	ChecksFailed:        "the repository's checks did not pass after the change",
	VerificationChanged: "the checks pass only with the change's own edits to its tests or to what the checks run or read",
	ChainHeld:           "every step of the authorization chain held",
	Approved:            "a person approved the high-impact change (step 4), and every other step held",

	NoModel:            "no model is configured (AGENT_ZERO_MODEL_BASE_URL, AGENT_ZERO_MODEL)",
	ModelFailed:        "the model could not be reached, or answered with an error",
	ModelAnswerInvalid: "the model's answer is not the JSON object asked for, or its diff is too large",
	RepositoryFailed:   "git could not read the repository, its default branch or the reviewed commit",
	DiffDoesNotApply:   "the proposed diff does not apply to the reviewed commit",
	ChecksNotStarted:   "a check could not start: its program is missing or, in the container, not visible",
	PushFailed:         "the commit or the push to the remote failed",
	BranchExists:       "the task's branch is on the remote already, from an earlier attempt of the same task, and is left as it is",
	HoldFailed:         "the change could not be held for approval",
	NotWaiting:         "the task is not waiting for approval",
	Internal:           "the run failed",

	Interrupted:  "the run was stopped before it finished (a signal, or the task's deadline)",
	CheckTimeout: "a check ran past the operator's checkTimeout",

	Unknown: "a reason this version of Zero does not know",
}

// Text is the reason's fixed text, or Unknown's for a code not listed.
func (r Reason) Text() string {
	if t, ok := texts[r]; ok {
		return t
	}
	return texts[Unknown]
}

// Reasons returns every reason.
func Reasons() []Reason {
	out := make([]Reason, 0, len(texts))
	for r := range texts {
		out = append(out, r)
	}
	return out
}

// A Task is what a record keeps of one run.
type Task struct {
	ID           string
	Repo         string // owner/name, never a path
	Work         string
	Mode         string
	Outcome      string // a code: a policy outcome, failed or interrupted
	Reason       Reason // written as Unknown when not listed
	Approved     bool   // a person approved the change
	Risk         string
	Confidence   float64
	Findings     int
	Checks       string // passed, failed, timed out or not run
	Verification string // the second run on the head's tests: passed, failed, timed out, or "" for none
	Isolation    string
	HeadSHA      string
	PolicySHA    string
	Branch       string
	Commit       string
}

// MinRedacted is the shortest value [NewRedactor] redacts, in bytes. No
// credential a forge or a model provider issues is shorter, and a record
// holds no free text a path could hide in; a shorter value (".", "/w")
// would match inside codes, numbers and commit ids and corrupt them.
const MinRedacted = 8

// NewRedactor returns a redactor for a run's secrets and local paths. Each
// path is taken in its canonical forms (absolute, and with its links
// resolved), never as written: "." or a relative path is not what appears
// in text. Values shorter than MinRedacted are left out.
func NewRedactor(secrets, paths []string) *redact.Redactor {
	known := map[string]string{}
	add := func(name, v string) {
		if len(v) >= MinRedacted {
			known[name] = v
		}
	}
	for i, s := range secrets {
		add("secret"+strconv.Itoa(i+1), s)
	}
	n := 0
	for _, p := range paths {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		forms := []string{abs}
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			forms = append(forms, real)
		}
		for _, f := range forms {
			n++
			add("path"+strconv.Itoa(n), f)
		}
	}
	return redact.New(known)
}

// codeRE is the shape of a code in a record.
var codeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`) })

// Log appends task records, to a log file ([Open]) or to a chain in a
// database table that several workers share ([OpenTable]).
type Log struct{ log *audit.Log }

// Open opens (creating it) the record log at path.
func Open(path string) (*Log, error) {
	l, err := audit.Open(path)
	if err != nil {
		return nil, err
	}
	return &Log{log: l}, nil
}

// OpenTable returns a log that appends to the hash chain in db's
// audit_records table ([audit.Table]), making the table if need be. On
// PostgreSQL the appends of every worker on the database make one chain.
// The database is Agent Zero's own: the workspace's audit table has the
// same name.
func OpenTable(ctx context.Context, db *sql.DB) (*Log, error) {
	l, err := audit.OpenInTable(ctx, db)
	if err != nil {
		return nil, err
	}
	return &Log{log: l}, nil
}

// Close closes the log; a table's database is the caller's to close.
func (l *Log) Close() error { return l.log.Close() }

func (l *Log) append(e audit.Event) error {
	_, err := l.log.Append(e)
	return err
}

// Append writes t, with every secret and every local path it is told of
// replaced by a marker (see NewRedactor). The reason is written as its
// code, Unknown when it is not one of [Reasons]; an outcome that is not a
// code is written as "unknown".
func (l *Log) Append(t Task, secrets, paths []string) error {
	r := NewRedactor(secrets, paths)
	if _, ok := texts[t.Reason]; !ok {
		t.Reason = Unknown
	}
	if !codeRE().MatchString(t.Outcome) {
		t.Outcome = string(Unknown)
	}
	detail := map[string]string{
		"task": t.ID, "work": t.Work, "mode": t.Mode, "outcome": t.Outcome, "reason": string(t.Reason),
		"risk": t.Risk, "confidence": strconv.FormatFloat(t.Confidence, 'f', 2, 64), "findings": strconv.Itoa(t.Findings),
		"checks": t.Checks, "verification": t.Verification, "isolation": t.Isolation, "head": t.HeadSHA, "policy": t.PolicySHA,
		"branch": t.Branch, "commit": t.Commit,
	}
	if t.Approved {
		detail["approved"] = "true"
	}
	for k, v := range detail {
		if v == "" {
			delete(detail, k)
			continue
		}
		detail[k] = r.String(v)
	}
	return l.append(audit.Event{Actor: "agent-zero", Action: "task." + t.Outcome, Target: "repo:" + r.String(t.Repo), Detail: detail})
}

// Read returns the records of the log at path, after verifying its chain.
func Read(path string) ([]audit.Record, error) { return audit.ReadAll(path) }

// Verify verifies the chain of the log at path and returns how many
// records it holds.
func Verify(path string) (int, error) { return audit.Verify(path) }

// ReadTable returns the records of the chain in db's audit_records table,
// after verifying it.
func ReadTable(ctx context.Context, db audit.Querier) ([]audit.Record, error) {
	return audit.ReadTable(ctx, db)
}

// VerifyTable verifies the chain in db's audit_records table and returns
// how many records it holds.
func VerifyTable(ctx context.Context, db audit.Querier) (int, error) {
	return audit.VerifyTable(ctx, db)
}
