package workspace

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// TestOpenEndsRunsOfLastStart: on SQLite, a run that was waiting for an
// approval when the workspace died (its database closed under it, so it
// wrote nothing more) is interrupted when it opens again, with a reason.
// An API client reads, in the thread's events (GET) and its stream, the
// approval cancelled by zero, then the run interrupted, right after the
// pending approval; the next run gives the call its placeholder, and the
// provider takes the history. Threads' folders are under the thread
// workspace ($ZERO_HOME/workspace/threads/ID).
func TestOpenEndsRunsOfLastStart(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	ctx := context.Background()
	f := threadFixtureOn(startOn(t, Options{Home: home}), false)
	th, err := f.ts.w.threads.Get(ctx, must(json.Number(f.thread).Int64()))
	if want := filepath.Join(home, "workspace", "threads", f.thread); err != nil || th.Dir != want {
		t.Errorf("the thread's folder is %s (%v), want %s", th.Dir, err, want)
	}
	if fi, err := os.Stat(th.Dir); err != nil || !fi.IsDir() {
		t.Errorf("the thread's folder: %v", err)
	}
	f.ms.Push(modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("call_1", "drifter__echo", `{"x":1}`)}}, modeltest.Reply{Text: "Done."})
	run := f.run("Echo x=1, please.")
	pending := f.pending(0)
	seq := lastSeq(f.get())
	f.ts.w.db.Close() // the crash: nothing more is written
	f.ts.w.Close()

	f.ts = startOn(t, Options{Home: home})
	api := f.ts.bearer()
	var g threadGot
	api.must("GET", "/api/threads/"+f.thread, nil, 200, &g)
	if g.Run == nil || g.Run.ID != run.ID || g.Run.Status != threads.Interrupted || g.Run.Error == "" {
		t.Fatalf("the run after the restart: %+v, want interrupted with a reason", g.Run)
	}
	cancelled := pending
	cancelled.Status, cancelled.By = threads.AnswerCancel, "zero"
	cancelled.Arguments = json.RawMessage(compact(pending.Arguments)) // the API indents its JSON
	interrupted := threads.RunEvent{Run: run.ID, Status: threads.Interrupted, Error: g.Run.Error}
	// ends checks that events are the approval's end, then the run's.
	ends := func(how string, events []threads.Event) {
		t.Helper()
		var (
			a threads.ApprovalEvent
			r threads.RunEvent
		)
		if len(events) != 2 || events[0].Kind != threads.KindApproval || events[1].Kind != threads.KindRun ||
			json.Unmarshal(events[0].Body, &a) != nil || json.Unmarshal(events[1].Body, &r) != nil {
			t.Fatalf("the events after the pending approval (%s): %+v, want its end and the run's", how, events)
		}
		a.Arguments = json.RawMessage(compact(a.Arguments))
		if diff := cmp.Diff(cancelled, a); diff != "" {
			t.Errorf("the approval's end (%s) (-want +got):\n%s", how, diff)
		}
		if r != interrupted {
			t.Errorf("the run's end (%s): %+v, want %+v", how, r, interrupted)
		}
	}
	ends("GET", g.Events[seq:])
	ends("stream", streamAfter(t, api, f.thread, seq, 2))

	f.run("And now?")
	if g := f.ended(); g.Run.Status != threads.Completed {
		t.Fatalf("the run after the restart: %+v", g.Run)
	}
	if refused := f.ms.Refused(); len(refused) > 0 {
		t.Errorf("the provider refused: %v", refused)
	}
	var results int
	for _, m := range messagesOf(f.get()) {
		if m.ToolCallID == "call_1" {
			results++
		}
	}
	if results != 1 {
		t.Errorf("call_1 has %d results, want its placeholder", results)
	}
}

// streamAfter reads thread id's stream through c, after event after,
// until it has sent n events, and returns them.
func streamAfter(t *testing.T, c *client, id string, after int64, n int) []threads.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", c.ts.base+"/api/threads/"+id+"/events?after="+itoa(after), nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []threads.Event
	sc := bufio.NewScanner(resp.Body)
	for len(out) < n && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var e threads.Event
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				t.Fatalf("a streamed event: %v: %s", err, data)
			}
			out = append(out, e)
		}
	}
	return out
}
