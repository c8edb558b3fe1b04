package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/workspace/runtime/runtimetest"
	"github.com/zero-dev/zero/internal/workspace/servers"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// sse is one server-sent event.
type sse struct {
	id         int64
	kind, data string
}

// streamThread reads thread id's events from r's stream, from the first,
// handing each to got until it returns true, or ctx ends.
func streamThread(ctx context.Context, r *replica, id int64, got func(sse) bool) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", r.base+"/api/threads/"+strconv.FormatInt(id, 10)+"/events", nil)
	resp, err := r.browser.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("the stream: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var cur sse
	for sc.Scan() {
		if sc.Text() == "" && cur.kind != "" {
			if got(cur) {
				return nil
			}
			cur = sse{}
			continue
		}
		field, value, _ := strings.Cut(sc.Text(), ": ")
		switch field {
		case "id":
			cur.id, _ = strconv.ParseInt(value, 10, 64)
		case "event":
			cur.kind = value
		case "data":
			cur.data = value
		}
	}
	return fmt.Errorf("the stream ended: %v", sc.Err())
}

// threadGot is GET /api/threads/{id}: its run's status and its events.
type threadGot struct {
	Run struct {
		Status string `json:"status"`
	} `json:"run"`
	Events []struct {
		Seq  int64           `json:"seq"`
		Kind string          `json:"kind"`
		Body json.RawMessage `json:"body"`
	} `json:"events"`
}

// TestThreadRunSurvivesKill9: a thread's run started on replica A blocks
// in its second model answer; A gets SIGKILL; replica B, which saw A's
// advisory lock go, takes the run over from its stored events: the step
// A never stored is asked again, and the run completes on B. The events
// stored, and those a stream on B (opened before the kill) got, are the
// same, numbered 1 to n without a gap, each once: one prompt, one call and
// its one result, one final answer, one end.
func TestThreadRunSurvivesKill9(t *testing.T) {
	env, _ := replicaEnv(t)
	a := startReplica(t, env)
	ms := modeltest.New(t)
	block := make(chan struct{})
	ms.Push(
		modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("call_1", "nope__x", `{}`)}, Usage: model.Usage{PromptTokens: 10, CompletionTokens: 2}},
		modeltest.Reply{Text: "A never sends this.", Wait: block},
		modeltest.Reply{Text: "Answered on B.", Usage: model.Usage{PromptTokens: 20, CompletionTokens: 4}},
	)
	a.api(t, "POST", "/api/providers", map[string]string{"name": "local", "base_url": ms.BaseURL(), "default_model": "scripted-1"}, &struct{}{})
	var th struct {
		ID int64 `json:"id"`
	}
	a.api(t, "POST", "/api/threads", map[string]string{"title": "moves", "provider": "local", "model": "scripted-1"}, &th)
	a.api(t, "POST", "/api/threads/"+strconv.FormatInt(th.ID, 10)+"/runs", map[string]string{"prompt": "hello"}, &struct{}{})
	waitFor(t, 30*time.Second, "the second model request", func() bool { return len(ms.Requests()) == 2 })

	b := startReplica(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	opened := make(chan struct{}, 1)
	var streamed []sse
	done := make(chan error, 1)
	go func() {
		done <- streamThread(ctx, b, th.ID, func(e sse) bool {
			if e.kind == "delta" {
				return false // a piece of an answer: streamed, never stored
			}
			streamed = append(streamed, e)
			select {
			case opened <- struct{}{}:
			default:
			}
			return e.kind == "run" && strings.Contains(e.data, `"status":"completed"`)
		})
	}()
	select {
	case <-opened:
	case err := <-done:
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatal("B's stream got nothing")
	}
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.cmd.Wait()
	close(block) // A is gone: nobody gets this answer
	if err := <-done; err != nil {
		t.Fatalf("B's stream: %v (got %d events)", err, len(streamed))
	}

	var got threadGot
	b.api(t, "GET", "/api/threads/"+strconv.FormatInt(th.ID, 10), nil, &got)
	if got.Run.Status != "completed" {
		t.Errorf("the run is %s", got.Run.Status)
	}
	var kinds []string
	for i, e := range got.Events {
		if e.Seq != int64(i+1) {
			t.Fatalf("stored event %d has seq %d", i+1, e.Seq)
		}
		what := e.Kind
		if e.Kind == "message" {
			var m model.Message
			json.Unmarshal(e.Body, &m)
			what = m.Role + ":" + m.Content
			if len(m.ToolCalls) > 0 {
				what += "[" + m.ToolCalls[0].ID + "]"
			}
			if m.ToolCallID != "" {
				what = m.Role + "(" + m.ToolCallID + ")"
			}
		}
		kinds = append(kinds, what)
	}
	want := "user:hello assistant:[call_1] usage tool(call_1) assistant:Answered on B. usage run"
	if strings.Join(kinds, " ") != want {
		t.Errorf("the stored events:\n%s\nwant\n%s", strings.Join(kinds, " "), want)
	}
	if len(streamed) != len(got.Events) {
		t.Errorf("B streamed %d events, %d are stored", len(streamed), len(got.Events))
	}
	for i, e := range streamed {
		if e.id != int64(i+1) {
			t.Fatalf("B streamed event %d as the %dth", e.id, i+1)
		}
	}
	if reqs := ms.Requests(); len(reqs) != 3 || len(reqs[2].Messages) != 4 {
		t.Errorf("the model had %d requests, want 3, the last with system, prompt, call, result", len(reqs))
	}
	if r := ms.Refused(); len(r) > 0 {
		t.Errorf("the model refused: %v", r)
	}
}

// waitFor waits up to d for ok, and fails t saying what did not happen.
func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not come in %s", what, d)
		}
	}
}

// TestThreadTakeoverEndsApproval: a thread's run waits for the approval of
// a tool call on replica A; A gets SIGKILL; replica B takes the run over
// and cancels the approval. The thread's events (GET, on B) and a stream
// on B show the approval pending, then cancelled by zero, once; the call
// gets its placeholder, and the run completes on B.
func TestThreadTakeoverEndsApproval(t *testing.T) {
	env, _ := replicaEnv(t)
	a := startReplica(t, env)
	ms := modeltest.New(t)
	ms.Push(
		modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("call_1", "tools__echo", `{"x":1}`)}},
		modeltest.Reply{Text: "Answered on B."},
	)
	cfg := servers.Config{Name: "tools", Kind: servers.KindStdio, Command: runtimetest.Toolserver(t)}
	var p servers.Preview
	a.api(t, "POST", "/api/servers/preview", map[string]any{"config": cfg}, &p)
	var created struct {
		Server servers.Server `json:"server"`
	}
	a.api(t, "POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": p.Fingerprint, "enable": true}, &created)
	a.api(t, "POST", fmt.Sprint("/api/servers/", created.Server.ID, "/test"), nil, &struct{}{})
	a.api(t, "POST", "/api/providers", map[string]string{"name": "local", "base_url": ms.BaseURL(), "default_model": "scripted-1"}, &struct{}{})
	var th struct {
		ID int64 `json:"id"`
	}
	a.api(t, "POST", "/api/threads", map[string]string{"title": "takeover", "provider": "local"}, &th)
	path := "/api/threads/" + strconv.FormatInt(th.ID, 10)
	a.api(t, "POST", path+"/runs", map[string]string{"prompt": "Echo x=1, please."}, &struct{}{})

	// approvals are the approval events of g: "ID STATUS by WHO" each.
	approvals := func(g threadGot) []string {
		var out []string
		for _, e := range g.Events {
			var a threads.ApprovalEvent
			if e.Kind == threads.KindApproval && json.Unmarshal(e.Body, &a) == nil {
				out = append(out, fmt.Sprintf("%d %s by %s", a.Approval, a.Status, a.By))
			}
		}
		return out
	}
	var g threadGot
	waitFor(t, 30*time.Second, "the pending approval on A", func() bool {
		a.api(t, "GET", path, nil, &g)
		return g.Run.Status == threads.WaitingApproval && len(approvals(g)) == 1
	})
	pending := approvals(g)[0]

	b := startReplica(t, env)
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.cmd.Wait()
	waitFor(t, 60*time.Second, "the run's end on B", func() bool {
		b.api(t, "GET", path, nil, &g)
		return g.Run.Status != threads.Running && g.Run.Status != threads.WaitingApproval
	})
	if g.Run.Status != threads.Completed {
		t.Fatalf("the run is %s", g.Run.Status)
	}
	id := strings.Fields(pending)[0]
	want := []string{id + " pending by ", id + " cancelled by zero"}
	if got := approvals(g); !slices.Equal(got, want) {
		t.Errorf("the approval events (GET):\n%q\nwant\n%q", got, want)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var streamed []string
	err := streamThread(ctx, b, th.ID, func(e sse) bool {
		var a threads.ApprovalEvent
		if e.kind == threads.KindApproval && json.Unmarshal([]byte(e.data), &struct {
			Body *threads.ApprovalEvent `json:"body"`
		}{&a}) == nil {
			streamed = append(streamed, fmt.Sprintf("%d %s by %s", a.Approval, a.Status, a.By))
		}
		return e.kind == "run" && strings.Contains(e.data, `"status":"completed"`)
	})
	if err != nil || !slices.Equal(streamed, want) {
		t.Errorf("the approval events B streamed: %q, %v; want %q", streamed, err, want)
	}
	if r := ms.Refused(); len(r) > 0 {
		t.Errorf("the model refused: %v", r)
	}
}
