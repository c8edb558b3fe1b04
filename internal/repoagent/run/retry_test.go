package run

import (
	"context"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/repoagent/policy"
	"github.com/zero-dev/zero/internal/repoagent/record"
	"github.com/zero-dev/zero/internal/testgit"
)

// TestRetryOfAPushedTask: a second attempt of a task that pushed its
// branch (River's retry after the worker was killed between the push and
// the job's completion), whose model now proposes another change, pushes
// nothing: the task's branch is one, still at the first commit, and the
// retry is recorded as failed with branch_exists, not as a second push.
// A task id that is not one Run makes is replaced with a new one.
func TestRetryOfAPushedTask(t *testing.T) {
	e := setup(t, fixPolicy)
	const id = "20261203-120000-0badc0de"
	c, _ := newModel(t, answer(fixReadme, 0.95))
	o := e.options(c, operatorWith(policy.Fix), prEvent, policy.Fix)
	o.TaskID = id
	first, err := Run(context.Background(), o)
	if err != nil || first.Outcome != policy.Applied || first.Branch != "agent-zero/"+id {
		t.Fatalf("the first attempt: %s %s %v %v", first.Outcome, first.Branch, first.Reason, err)
	}
	other := strings.Replace(fixReadme, "+hello", "+hello, world", 1)
	c2, _ := newModel(t, answer(other, 0.95))
	o.Model = c2
	retry, err := Run(context.Background(), o)
	if err != nil || retry.Outcome != Failed || retry.Code != record.BranchExists || retry.Branch != "" {
		t.Fatalf("the retry: %s %s %s %v %v", retry.Outcome, retry.Code, retry.Branch, retry.Reason, err)
	}
	if refs := testgit.Run(t, e.remote, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/agent-zero/"); refs != "refs/heads/agent-zero/"+id+" "+first.Commit {
		t.Errorf("the remote's agent-zero branches: %q, want the first attempt's only", refs)
	}
	recs, _ := record.Read(e.records)
	if len(recs) != 2 || recs[1].Detail["reason"] != string(record.BranchExists) || recs[1].Detail["task"] != id {
		t.Errorf("records: %+v", recs)
	}

	o.TaskID = "../main"
	rep, _ := Run(context.Background(), o)
	if rep.TaskID == o.TaskID || !taskIDRE().MatchString(rep.TaskID) {
		t.Errorf("a task id not of Run's shape was kept: %q", rep.TaskID)
	}
}
