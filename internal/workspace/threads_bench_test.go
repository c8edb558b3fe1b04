package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// Issue 15's thread benchmarks, on a real workspace, the runtime's
// toolserver and the scripted model server:
//
//	go test -run '^$' -bench 'BenchmarkThread' -count 5 ./internal/workspace
//
// BenchmarkThreadRuns20 starts 20 runs at once, on 20 threads, through
// the API; each calls the toolserver's echo (allowed by the owner) and
// then answers; an op is the whole batch, every run completed.
func BenchmarkThreadRuns20(b *testing.B) {
	const runs = 20
	f := newThreadFixture(b, true)
	f.ms.Respond = func(r model.Request) modeltest.Reply {
		if last := r.Messages[len(r.Messages)-1]; last.Role == model.RoleTool {
			return modeltest.Reply{Text: "done"}
		}
		return modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("c", "drifter__echo", `{"n":1}`)}}
	}
	ctx := context.Background()
	tools, err := f.ts.w.endpoint.Threads().Tools(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range tools {
		if t.Name == "drifter__echo" {
			if err := f.ts.w.threads.SetRule(ctx, "owner", t.Ref, threads.Allow); err != nil {
				b.Fatal(err)
			}
		}
	}
	ids := make([]string, runs)
	for i := range ids {
		var th threads.Thread
		f.ts.browser.must("POST", "/api/threads", map[string]string{"title": fmt.Sprint("bench ", i), "provider": "local"}, 201, &th)
		ids[i] = itoa(th.ID)
	}
	b.ResetTimer()
	for b.Loop() {
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Go(func() {
				f.ts.browser.must("POST", "/api/threads/"+id+"/runs", map[string]string{"prompt": "echo"}, 201, nil)
			})
		}
		wg.Wait()
		for _, id := range ids {
			for {
				r, ok, err := f.ts.w.threads.LastRun(ctx, must(json.Number(id).Int64()))
				if err != nil || !ok {
					b.Fatal(err)
				}
				if r.Status == threads.Completed {
					break
				}
				if r.Status == threads.Failed || r.Status == threads.Interrupted {
					b.Fatalf("run: %+v", r)
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	b.ReportMetric(float64(runs*b.N)/b.Elapsed().Seconds(), "runs/s")
	if refused := f.ms.Refused(); len(refused) > 0 {
		b.Fatalf("the provider refused: %v", refused[0])
	}
}

// BenchmarkThreadOpen10k opens a thread of 10,000 events: GET
// /api/threads/{id} (every event, as JSON) and the thread's page (its
// last 500), each a whole HTTP exchange of a browser session.
func BenchmarkThreadOpen10k(b *testing.B) {
	ts := start(b, Options{})
	addProvider(b, ts, "local", "m1")
	ctx := context.Background()
	th, err := ts.w.threads.Create(ctx, threads.Thread{Title: "long", Provider: "local", Model: "m1"})
	if err != nil {
		b.Fatal(err)
	}
	var drafts []threads.Draft
	for i := range 10_000 {
		role := []string{"user", "assistant"}[i%2]
		body, _ := json.Marshal(model.Message{Role: role, Content: fmt.Sprintf("message %d: some words of a conversation, about as long as a short answer is.", i)})
		drafts = append(drafts, threads.Draft{Kind: threads.KindMessage, Body: body})
	}
	if _, err := ts.w.threads.AppendStep(ctx, th.ID, 0, 0, drafts...); err != nil {
		b.Fatal(err)
	}
	id := itoa(th.ID)
	b.Run("api", func(b *testing.B) {
		for b.Loop() {
			if st, data := ts.browser.do("GET", "/api/threads/"+id, nil); st != 200 || len(data) < 10_000*100 {
				b.Fatalf("%d, %d bytes", st, len(data))
			}
		}
	})
	b.Run("page", func(b *testing.B) {
		for b.Loop() {
			if st, data := ts.browser.do("GET", "/threads/"+id, nil); st != 200 || len(data) < 500*80 {
				b.Fatalf("%d, %d bytes", st, len(data))
			}
		}
	})
}
