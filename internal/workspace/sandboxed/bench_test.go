package sandboxed

import (
	"time"

	"context"
	"encoding/json"
	"github.com/zero-dev/zero/internal/benchstat"
	"testing"
)

// BenchmarkModelAuthoredCall: one call of a model-authored plugin's tool,
// from Call to its result: a scratch copy, a fresh guest, node and host.js
// starting, initialize and tools/call.
func BenchmarkModelAuthoredCall(b *testing.B) {
	node := requireNode(b)
	for _, be := range backends {
		b.Run(string(be.name), func(b *testing.B) {
			box, _ := newBox(b, be.runner(b), false, node)
			writePlugin(b, box.o.Workspace, "probe", pluginManifest, pluginJS)
			touch := tool(b, box, "probe__touch")
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				res, err := box.Call(context.Background(), touch, json.RawMessage(`{}`), "owner")
				if err != nil || res.IsError || res.Text != "absent" {
					b.Fatalf("%+v %v", res, err)
				}
				took = append(took, time.Since(start))
			}
			benchstat.Report(b, took)
		})
	}
}
