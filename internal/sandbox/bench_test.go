package sandbox

import (
	"context"
	"slices"
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
	reportQuantiles(b, took)
}

// reportQuantiles reports the median and the 99th percentile of took, in
// milliseconds.
func reportQuantiles(b *testing.B, took []time.Duration) {
	slices.Sort(took)
	ms := func(q float64) float64 {
		return float64(took[int(q*float64(len(took)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(ms(0.5), "median-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}
