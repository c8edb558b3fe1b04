package workspace

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// forked is what a regenerate or an edit answers.
type forked struct {
	Thread threads.Thread `json:"thread"`
	Run    threads.Run    `json:"run"`
}

func contentsOf(msgs []model.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role+": "+m.Content)
	}
	return out
}

// TestThreadRetryRegenerateEdit: a run that failed (the provider down) is
// retried by a bearer caller from where it ended, with no new prompt and
// the question once; a thread that ends with the answer has nothing to
// retry. Regenerating the answer makes a fork that ends with the question
// and runs it; editing the question makes a fork before it with the new
// text as the prompt; the thread forked keeps everything. Each history
// the provider got was valid; each is audited as forks and runs are;
// refusals say why.
func TestThreadRetryRegenerateEdit(t *testing.T) {
	f := newThreadFixture(t, false)
	bearer := f.ts.bearer()
	a := f.thread
	f.ms.Push(modeltest.Reply{Error: "overloaded"})
	f.run("What is one?")
	if g := f.ended(); g.Run.Status != threads.Failed {
		t.Fatalf("the run: %+v", g.Run)
	}
	f.ms.Push(modeltest.Reply{Text: "One is one."})
	var run threads.Run
	bearer.must("POST", "/api/threads/"+a+"/retry", nil, 201, &run)
	g := f.ended()
	if g.Run.ID != run.ID || g.Run.Status != threads.Completed {
		t.Fatalf("the retry: %+v", g.Run)
	}
	if got := contentsOf(messagesOf(g)); !cmp.Equal(got, []string{"user: What is one?", "assistant: One is one."}) {
		t.Errorf("after the retry: %q", got)
	}
	reqs := f.ms.Requests()
	if last := reqs[len(reqs)-1].Messages; len(last) != 2 || last[1].Content != "What is one?" {
		t.Errorf("the retry asked the model with %q", contentsOf(last))
	}
	if recs := f.ts.records("thread.run"); len(recs) != 2 || recs[1].Detail["retry"] != "true" || recs[1].Detail["run"] != itoa(run.ID) ||
		recs[1].Target != "thread:"+a || recs[1].Actor == "user:owner" {
		t.Errorf("the retry's record: %+v", recs)
	}
	if st, data := bearer.do("POST", "/api/threads/"+a+"/retry", nil); st != 409 || errorCode(data) != "nothing_to_retry" {
		t.Errorf("a retry of a thread that ends with the answer: %d %s", st, data)
	}
	var answer, question int64
	for _, e := range g.Events {
		var m model.Message
		if e.Kind == threads.KindMessage && json.Unmarshal(e.Body, &m) == nil {
			switch m.Role {
			case model.RoleAssistant:
				answer = e.Seq
			case model.RoleUser:
				question = e.Seq
			}
		}
	}

	// Regenerate the answer: a fork ending with the question, run.
	f.ms.Push(modeltest.Reply{Text: "One, again."})
	var re forked
	bearer.must("POST", "/api/threads/"+a+"/regenerate", map[string]int64{"seq": answer}, 201, &re)
	if itoa(re.Thread.ForkedFrom) != a || re.Thread.ForkedAt >= answer || re.Run.Thread != re.Thread.ID {
		t.Errorf("the regenerate: %+v", re)
	}
	f.thread = itoa(re.Thread.ID)
	if g := f.ended(); g.Run.Status != threads.Completed || !cmp.Equal(contentsOf(messagesOf(g)), []string{"user: What is one?", "assistant: One, again."}) {
		t.Errorf("the regenerated fork: %+v %q", g.Run, contentsOf(messagesOf(g)))
	}

	// Edit the question: a fork before it, the new text its prompt.
	f.ms.Push(modeltest.Reply{Text: "Two is two."})
	var ed forked
	f.ts.browser.must("POST", "/api/threads/"+a+"/edit", map[string]any{"seq": question, "prompt": "What is two?"}, 201, &ed)
	if itoa(ed.Thread.ForkedFrom) != a || ed.Thread.ForkedAt != 0 {
		t.Errorf("the edit's fork: %+v", ed.Thread)
	}
	f.thread = itoa(ed.Thread.ID)
	if g := f.ended(); g.Run.Status != threads.Completed || !cmp.Equal(contentsOf(messagesOf(g)), []string{"user: What is two?", "assistant: Two is two."}) {
		t.Errorf("the edited fork: %+v %q", g.Run, contentsOf(messagesOf(g)))
	}
	f.thread = a
	if got := contentsOf(messagesOf(f.get())); !cmp.Equal(got, []string{"user: What is one?", "assistant: One is one."}) {
		t.Errorf("the thread forked changed: %q", got)
	}
	forks := f.ts.records("thread.fork")
	if len(forks) != 2 || forks[0].Detail["regenerate"] != itoa(answer) || forks[0].Target != "thread:"+itoa(re.Thread.ID) ||
		forks[1].Detail["edit"] != itoa(question) || forks[1].Detail["from"] != "thread:"+a || forks[1].Detail["seq"] != "0" {
		t.Errorf("the forks' records: %+v", forks)
	}
	if runs := f.ts.records("thread.run"); len(runs) != 4 || runs[2].Target != "thread:"+itoa(re.Thread.ID) || runs[3].Target != "thread:"+itoa(ed.Thread.ID) {
		t.Errorf("the runs' records: %+v", runs)
	}
	if refused := f.ms.Refused(); len(refused) > 0 {
		t.Errorf("the provider refused: %v", refused)
	}

	threadsBefore := len(must(f.ts.w.threads.List(t.Context())))
	var tok struct {
		Token string `json:"token"`
	}
	f.ts.browser.must("POST", "/api/tokens", map[string]any{"name": "scoped", "servers": []int64{must(json.Number(f.server).Int64())}}, 201, &tok)
	scoped := &client{ts: f.ts, http: bearer.http, token: tok.Token}
	for _, c := range []struct {
		who    *client
		path   string
		body   any
		status int
		code   string
	}{
		{bearer, "/regenerate", map[string]int64{"seq": question}, 400, "invalid_thread"},
		{bearer, "/edit", map[string]any{"seq": answer, "prompt": "x"}, 400, "invalid_thread"},
		{bearer, "/edit", map[string]any{"seq": question, "prompt": "  "}, 400, "invalid_thread"},
		{bearer, "/regenerate", map[string]int64{"seq": 999}, 400, "invalid_thread"},
		{bearer, "/regenerate", map[string]any{"seq": answer, "prompt": "x"}, 400, "invalid_thread"},
		{bearer, "/edit", map[string]int64{"seq": question}, 400, "invalid_thread"},
		{scoped, "/retry", nil, 403, "scoped_token"},
		{scoped, "/regenerate", map[string]int64{"seq": answer}, 403, "scoped_token"},
		{scoped, "/edit", map[string]any{"seq": question, "prompt": "x"}, 403, "scoped_token"},
	} {
		if st, data := c.who.do("POST", "/api/threads/"+a+c.path, c.body); st != c.status || errorCode(data) != c.code {
			t.Errorf("%s %v: %d %s, want %d %s", c.path, c.body, st, data, c.status, c.code)
		}
	}
	if n := len(must(f.ts.w.threads.List(t.Context()))); n != threadsBefore {
		t.Errorf("the refusals made %d forks", n-threadsBefore)
	}
}
