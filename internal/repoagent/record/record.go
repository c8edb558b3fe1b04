// Package record owns Agent Zero's task records: one line per run or
// approval in a hash-chained log (internal/audit), redacted before it is
// written. A record holds codes, counts, commit ids and the repository's
// name; it never holds review input (issue or pull request text, review
// comments), model output, check output or a checkout path, and every field
// passes through a redactor that knows the run's secrets and local paths.
package record

import (
	"strconv"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/guard/redact"
)

// A Task is what a record keeps of one run.
type Task struct {
	ID         string
	Repo       string // owner/name, never a path
	Work       string
	Mode       string
	Outcome    string
	Reason     string // Zero's own words about the outcome
	Risk       string
	Confidence float64
	Findings   int
	Checks     string // passed, failed or not run
	Isolation  string
	HeadSHA    string
	PolicySHA  string
	Branch     string
	Commit     string
}

// Log appends task records.
type Log struct{ log *audit.Log }

// Open opens (creating it) the record log at path.
func Open(path string) (*Log, error) {
	l, err := audit.Open(path)
	if err != nil {
		return nil, err
	}
	return &Log{log: l}, nil
}

// Close closes the log.
func (l *Log) Close() error { return l.log.Close() }

// Append writes t, with every secret and every local path it is told of
// replaced by a marker.
func (l *Log) Append(t Task, secrets, paths []string) error {
	known := map[string]string{}
	for i, s := range secrets {
		if s != "" {
			known["secret"+strconv.Itoa(i+1)] = s
		}
	}
	for i, p := range paths {
		if p != "" {
			known["path"+strconv.Itoa(i+1)] = p
		}
	}
	r := redact.New(known)
	detail := map[string]string{
		"task": t.ID, "work": t.Work, "mode": t.Mode, "outcome": t.Outcome, "reason": t.Reason,
		"risk": t.Risk, "confidence": strconv.FormatFloat(t.Confidence, 'f', 2, 64), "findings": strconv.Itoa(t.Findings),
		"checks": t.Checks, "isolation": t.Isolation, "head": t.HeadSHA, "policy": t.PolicySHA,
		"branch": t.Branch, "commit": t.Commit,
	}
	for k, v := range detail {
		if v == "" {
			delete(detail, k)
			continue
		}
		detail[k] = r.String(v)
	}
	_, err := l.log.Append(audit.Event{Actor: "agent-zero", Action: "task." + r.String(t.Outcome), Target: "repo:" + r.String(t.Repo), Detail: detail})
	return err
}

// Read returns the records of the log at path, after verifying its chain.
func Read(path string) ([]audit.Record, error) { return audit.ReadAll(path) }

// Verify verifies the chain of the log at path and returns how many
// records it holds.
func Verify(path string) (int, error) { return audit.Verify(path) }
