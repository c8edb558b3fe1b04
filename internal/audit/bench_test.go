package audit

import (
	"os"
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
			e := toolCall
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

// toolCall is a tool call's record, as the workspace's runtime writes it.
var toolCall = Event{
	Actor: "token:3", Action: "tool.call", Target: "server:12",
	Fingerprint: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	Detail:      map[string]string{"name": "files", "tool": "read_file", "outcome": "ok", "duration_ms": "3"},
}

// BenchmarkOpen opens a log of 200,000 tool calls' records, as zero serve
// does at each start, and closes it. The log was opened once without its
// checkpoint file after its first 199,001 records (so Open read it whole
// and wrote a checkpoint at the last), and 999 more were appended since:
// the checkpoint is as far behind as it can be without being moved (see
// CheckpointEvery). In "no-checkpoint", the checkpoint file is removed
// before each Open, as for a log written before checkpoints.
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.jsonl")
	appendN := func(n int) {
		l, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		l.wait = time.Hour
		for i := range n {
			if _, err := l.AppendBatched(toolCall); err != nil {
				b.Fatal(err)
			}
			if i%1000 == 999 { // the group commit
				if err := l.Flush(); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}
	appendN(199_001)
	os.Remove(path + ".checkpoint")
	appendN(999)
	for _, name := range []string{"checkpointed", "no-checkpoint"} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				if name == "no-checkpoint" {
					b.StopTimer()
					os.Remove(path + ".checkpoint")
					b.StartTimer()
				}
				l, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
