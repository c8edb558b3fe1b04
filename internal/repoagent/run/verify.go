package run

import (
	"context"

	"github.com/zero-dev/zero/internal/repoagent/risk"
	"github.com/zero-dev/zero/internal/repoagent/runner"
)

// classify judges the change applied in scratch from git's own record of
// it against head, never from the model's diff text, and returns the
// changed files the second run of the checks takes back as head has them:
// every test file and every file of the verification surface (what the
// checks run or read). A record that does not parse is Unclassified.
func classify(ctx context.Context, scratch *runner.Scratch, head string, checks [][]string) (risk.Result, []runner.Revert, error) {
	raw, err := scratch.Record(ctx, head)
	if err != nil {
		return risk.Result{}, nil, err
	}
	changes, err := risk.ParseRecord(raw)
	if err != nil {
		return risk.Result{Class: risk.Unclassified, Reasons: []string{"git's record of the change does not parse"}}, nil, nil
	}
	res := risk.Classify(changes, trees{ctx, scratch, head}, checks)
	var reverts []runner.Revert
	for _, f := range res.Files {
		if !f.Test && !f.Surface {
			continue
		}
		r := runner.Revert{OldPath: f.OldPath, NewPath: f.Path}
		if f.Status == 'D' {
			r.NewPath = ""
		}
		reverts = append(reverts, r)
	}
	return res, reverts, nil
}

// trees reads the reviewed head (Old) and the index after the apply (New).
type trees struct {
	ctx     context.Context
	scratch *runner.Scratch
	head    string
}

func (t trees) Old(path string) ([]byte, bool, error) { return t.scratch.FileAt(t.ctx, t.head, path) }
func (t trees) New(path string) ([]byte, bool, error) { return t.scratch.IndexFile(t.ctx, path) }

// revertedPaths names the files the second run took back.
func (t *task) revertedPaths() []string {
	var out []string
	for i, r := range t.reverts {
		if i == 10 {
			out = append(out, "...")
			break
		}
		p := r.NewPath
		if p == "" {
			p = r.OldPath
		}
		out = append(out, oneLine(p))
	}
	return out
}
