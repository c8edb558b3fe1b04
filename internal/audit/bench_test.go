package audit

import (
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The benchmarks append a tool call's record, as the workspace's runtime
// does, one at a time and 8 in flight, to a log in b.TempDir (run them
// where TMPDIR is a real disk: on tmpfs a sync costs nothing). Besides
// ns/op they report the median and 99th percentile time of one call and
// the calls a second.

func BenchmarkAppend(b *testing.B) {
	benchAppend(b, (*Log).Append)
}

func BenchmarkAppendBatched(b *testing.B) {
	benchAppend(b, (*Log).AppendBatched)
}

func benchAppend(b *testing.B, appendFn func(*Log, Event) (Record, error)) {
	for _, inFlight := range []int{1, 8} {
		b.Run(map[int]string{1: "serial", 8: "8-in-flight"}[inFlight], func(b *testing.B) {
			l, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			e := Event{
				Actor: "token:3", Action: "tool.call", Target: "server:12",
				Fingerprint: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
				Detail:      map[string]string{"name": "files", "tool": "read_file", "outcome": "ok", "duration_ms": "3"},
			}
			lat := make([]time.Duration, b.N)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for range inFlight {
				wg.Go(func() {
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						t0 := time.Now()
						if _, err := appendFn(l, e); err != nil {
							b.Error(err)
							return
						}
						lat[i] = time.Since(t0)
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2])/1e3, "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100])/1e3, "p99-µs")
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
		})
	}
}
