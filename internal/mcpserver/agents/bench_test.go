package agents

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
)

// BenchmarkSpawnAgent measures spawn_agent through the SDK client over
// stdio pipes: it returns before the toolbox starts or the provider is
// asked. Each spawned agent is waited for outside the timing.
func BenchmarkSpawnAgent(b *testing.B) {
	m := modeltest.New(b)
	h := start(b, m, Options{}, agent(m, "worker"))
	var times []time.Duration
	for b.Loop() {
		t0 := time.Now()
		id := h.spawn("worker", "task")
		times = append(times, time.Since(t0))
		b.StopTimer()
		h.finished(id)
		b.StartTimer()
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
}

// timed is a RoundTripper that adds up the time the provider takes.
type timed struct {
	base http.RoundTripper
	ns   atomic.Int64
}

func (t *timed) RoundTrip(r *http.Request) (*http.Response, error) {
	t0 := time.Now()
	res, err := t.base.RoundTrip(r)
	t.ns.Add(int64(time.Since(t0)))
	return res, err
}

// BenchmarkAgentTurn measures one agent turn with one tool call (spawn,
// the model's call, the tool, the model's answer, wait), and reports the
// overhead beyond the provider's own time (its round trips, as the client
// sees them).
func BenchmarkAgentTurn(b *testing.B) {
	m := modeltest.New(b)
	m.Respond = func(r model.Request) modeltest.Reply {
		if last := r.Messages[len(r.Messages)-1]; last.Role == model.RoleTool {
			return modeltest.Reply{Text: "done"}
		}
		return modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("c1", "echo__say", `{"x":1}`)}}
	}
	pc := providerClient()
	tr := &timed{base: pc.Transport}
	pc.Transport = tr
	a := agent(m, "worker")
	a.Tools = func(context.Context) (Toolbox, error) { return newToolbox("output"), nil }
	h := start(b, m, Options{httpClient: pc}, a)
	t0 := time.Now()
	for b.Loop() {
		if st := h.finished(h.spawn("worker", "task")); st.Status != StatusCompleted {
			b.Fatalf("%+v", st)
		}
	}
	overhead := time.Since(t0) - time.Duration(tr.ns.Load())
	b.ReportMetric(float64(overhead.Microseconds())/1000/float64(b.N), "ms-overhead/op")
}
