package sandbox

import (
	"context"
	"github.com/zero-dev/zero/internal/benchstat"
	"testing"
	"time"
)

// BenchmarkBubblewrapGuest measures the start-up of one bubblewrap guest
// running /bin/true, start to end, with its limits: median and p99.
func BenchmarkBubblewrapGuest(b *testing.B) {
	requireBubblewrap(b)
	ws := newWorkspace(b)
	ctx := context.Background()
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		res, err := BubblewrapRunner{}.Run(ctx, Guest{Argv: []string{"/bin/true"}, Workspace: ws})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%+v, %v", res, err)
		}
		took = append(took, time.Since(start))
	}
	benchstat.Report(b, took)
}
