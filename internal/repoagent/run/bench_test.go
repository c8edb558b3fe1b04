package run

import (
	"context"
	"testing"

	"github.com/zero-dev/zero/internal/repoagent/policy"
)

// BenchmarkAppliedRun measures one whole applied task on a small
// repository: policy read, scratch clone, two model turns against a local
// server, risk class, apply, one check, commit, push, record.
func BenchmarkAppliedRun(b *testing.B) {
	e := setup(b, fixPolicy)
	c, _ := newModel(b, answer(fixReadme, 0.99))
	o := e.options(c, operatorWith(policy.Autonomous), prEvent, policy.Fix)
	b.ResetTimer()
	for b.Loop() {
		rep, err := Run(context.Background(), o)
		if err != nil || rep.Outcome != policy.Applied {
			b.Fatalf("%s %s %v", rep.Outcome, rep.Reason, err)
		}
	}
}
