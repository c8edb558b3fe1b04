// Package benchstat reports a benchmark's latencies as Zero's performance
// notes quote them: the median and the 99th percentile. Only benchmarks
// import it.
package benchstat

import (
	"slices"
	"testing"
	"time"
)

// Report adds the median and the 99th percentile (nearest rank) of
// samples to b's results, in milliseconds, as median-ms and p99-ms.
func Report(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(samples[len(samples)/2]), "median-ms")
	b.ReportMetric(ms(samples[(len(samples)*99+99)/100-1]), "p99-ms")
}
