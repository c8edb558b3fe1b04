package threads

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"github.com/zero-dev/zero/internal/model/modeltest"
)

// The loop's own cost per step, for issue 15's target of under 1 ms: a
// model and a tool that answer at once (fakeModel, fakeTools' echo, an
// allowed tool), so what is timed is the loop: listing the tools, building
// the request, storing the answer, its usage and the result in SQLite (a
// real file), the rules, the argument check, Keep and Wrap.
//
//	go test -run '^$' -bench 'BenchmarkLoopStep' -count 5 ./internal/workspace/threads
//
// Each run is stepsPerRun steps on a thread of its own, so the history a
// step reads stays the size of a real run's.
const stepsPerRun = 50

// On this machine's disk each step's two commits wait for the disk
// (synchronous=FULL: every step is on disk before the next); the "memory"
// variant puts the database on /dev/shm, where they do not, to show what
// the loop's own code costs.
func BenchmarkLoopStep(b *testing.B) {
	b.Run("disk", func(b *testing.B) { benchLoopStep(b, newStore(b)) })
	b.Run("memory", func(b *testing.B) {
		if _, err := os.Stat("/dev/shm"); err != nil {
			b.Skip("no /dev/shm")
		}
		dir, err := os.MkdirTemp("/dev/shm", "zero-bench-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		benchLoopStep(b, storeIn(b, dir))
	})
}

func benchLoopStep(b *testing.B, s *Store) {
	addServer(b, s, 1)
	r := NewRunner(s)
	b.Cleanup(r.Close)
	ctx := context.Background()
	tools := &fakeTools{}
	list, _ := tools.Tools(ctx)
	if err := s.SetRule(ctx, "owner", list[0].Ref, Allow); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for done := 0; done < b.N; {
		steps := min(stepsPerRun, b.N-done)
		b.StopTimer()
		th, err := s.Create(ctx, Thread{Title: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		m := &fakeModel{}
		for i := range steps - 1 {
			m.script = append(m.script, calls(modeltest.Call("c"+strconv.Itoa(i), "srv__echo", `{"x":`+strconv.Itoa(i)+`}`)))
		}
		events := s.hub.subscribe(th.ID)
		b.StartTimer()
		if _, err := r.Start(ctx, Start{Thread: th.ID, Prompt: "go", Actor: "bench", Model: m, Tools: tools}); err != nil {
			b.Fatal(err)
		}
		if status := runEnd(b, events); status != Completed {
			b.Fatalf("the run ended %s", status)
		}
		b.StopTimer()
		s.hub.unsubscribe(th.ID, events)
		b.StartTimer()
		done += steps
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/step")
}

// runEnd waits for the status a run ends with, from its thread's events.
func runEnd(b *testing.B, events chan update) string {
	for u := range events {
		if u.event == nil || u.event.Kind != KindRun {
			continue
		}
		var e RunEvent
		json.Unmarshal(u.event.Body, &e)
		if ended(e.Status) {
			return e.Status
		}
	}
	b.Fatal("the stream ended before the run did")
	return ""
}
