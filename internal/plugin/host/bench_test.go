package host

import (
	"slices"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/plugin"
)

const benchPlugin = "exports.echo = async ({ text }) => text;\n"

// BenchmarkPluginCold measures a tool call on a plugin that is not running:
// the sandbox (Command), the process (spawn.Start: its cgroup, bubblewrap,
// node and host.js loading the plugin), initialize, and the call, up to its
// result. Stopping the process is not counted. It reports the median and
// the 99th percentile.
func BenchmarkPluginCold(b *testing.B) {
	w := newWorld(b)
	o := w.options(w.plugin(b, "bench", benchPlugin), plugin.Capabilities{})
	var samples []time.Duration
	for b.Loop() {
		begin := time.Now()
		r := start(b, o)
		if got := r.mustSucceed(b, "echo", map[string]any{"text": "cold"}); got != "cold" {
			b.Fatalf("echo: %q", got)
		}
		samples = append(samples, time.Since(begin))
		b.StopTimer()
		r.stop()
		b.StartTimer()
	}
	report(b, samples)
}

// BenchmarkPluginWarm measures a tool call on a running plugin, over its
// stdio with the SDK's client. It reports the median and the 99th
// percentile.
func BenchmarkPluginWarm(b *testing.B) {
	w := newWorld(b)
	r := start(b, w.options(w.plugin(b, "bench", benchPlugin), plugin.Capabilities{}))
	args := map[string]any{"text": "warm"}
	r.mustSucceed(b, "echo", args)
	var samples []time.Duration
	for b.Loop() {
		begin := time.Now()
		if _, isError, err := r.tryCall("echo", args); err != nil || isError {
			b.Fatalf("echo: %v", err)
		}
		samples = append(samples, time.Since(begin))
	}
	report(b, samples)
}

// report adds the median and 99th percentile of samples, in milliseconds.
func report(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(samples[len(samples)/2]), "median-ms")
	b.ReportMetric(ms(samples[(len(samples)*99+99)/100-1]), "p99-ms")
}
