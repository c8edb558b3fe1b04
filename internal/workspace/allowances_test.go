package workspace

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// allowanceOf returns the allowance event of the thread's last run, if a
// call ran under one.
func allowanceOf(g threadGot) *threads.AllowanceEvent {
	for i := len(g.Events) - 1; i >= 0; i-- {
		e := g.Events[i]
		if e.Kind == threads.KindAllowance {
			var a threads.AllowanceEvent
			json.Unmarshal(e.Body, &a)
			if a.Run == g.Run.ID {
				return &a
			}
		}
	}
	return nil
}

// TestThreadAllowances: an "in this thread" and an "always" answer are
// listed, to a person in a browser only, with the tool, its server, the
// scope, who gave each and when, and the hash and fingerprint each is
// bound to. A call that runs without asking has an event naming the
// allowance it ran under. The owner in a browser revokes each (a bearer
// caller cannot), each revocation is audited with the tool, server, scope
// and hash, and the tool's next call asks again.
func TestThreadAllowances(t *testing.T) {
	f := newThreadFixture(t, false)
	echo := modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("", "drifter__echo", `{"n":1}`)}}
	a := f.thread
	answered := func(answer string) threadGot {
		t.Helper()
		f.ms.Push(echo)
		f.run("echo")
		f.ts.browser.must("POST", "/api/approvals/"+itoa(f.pending(0).Approval), map[string]string{"answer": answer}, 200, nil)
		return f.ended()
	}
	answered("thread")
	var b threads.Thread
	f.ts.browser.must("POST", "/api/threads", map[string]string{"title": "another", "provider": "local"}, 201, &b)
	f.thread = itoa(b.ID)
	answered("always")

	ref := f.toolNamed("drifter__echo").Ref
	server := must(json.Number(f.server).Int64())
	var list struct {
		Allowances []threads.Allowance `json:"allowances"`
		Total      int                 `json:"total"`
	}
	f.ts.browser.must("GET", "/api/allowances", nil, 200, &list)
	if len(list.Allowances) != 2 || list.Total != 2 {
		t.Fatalf("the allowances: %+v", list)
	}
	for i, scope := range []string{"always", "thread"} {
		got := list.Allowances[i]
		if got.Scope != scope || got.Tool != "echo" || got.Server != "drifter" || got.ServerID != server || got.Hash != ref.Hash ||
			got.Fingerprint != ref.Fingerprint || got.SetBy != "user:owner" || got.SetAt.IsZero() {
			t.Errorf("allowance %d: %+v, want %s of echo", i, got, scope)
		}
	}
	if got := list.Allowances[1]; itoa(got.Thread) != a || got.ThreadTitle != "end to end" {
		t.Errorf("the thread's allowance names thread %d %q, want %s", got.Thread, got.ThreadTitle, a)
	}
	bearer := f.ts.bearer()
	if st, data := bearer.do("GET", "/api/allowances", nil); st != 403 || errorCode(data) != "browser_only" {
		t.Errorf("a bearer's list: %d %s", st, data)
	}

	// In thread a, the owner's rule lets the call run, and then, once it
	// is revoked, the thread's.
	f.thread = a
	for _, c := range []struct{ scope, target string }{{"always", "threads"}, {"thread", "thread:" + a}} {
		f.ms.Push(echo)
		f.run("echo")
		g := f.ended()
		got := allowanceOf(g)
		if g.Run.Status != threads.Completed || got == nil || got.Scope != c.scope || got.Tool != "echo" || got.Server != "drifter" ||
			got.Hash != ref.Hash || got.Fingerprint != ref.Fingerprint || got.SetBy != "user:owner" || got.Name != "drifter__echo" {
			t.Fatalf("the call under the %s allowance: %+v, %+v", c.scope, g.Run, got)
		}
		key := map[string]any{"scope": c.scope, "server_id": server, "tool": "echo"}
		if c.scope == "thread" {
			key["thread"] = g.Thread.ID
		}
		if st, data := bearer.do("POST", "/api/allowances/revoke", key); st != 403 || errorCode(data) != "browser_only" {
			t.Errorf("a bearer's revocation: %d %s", st, data)
		}
		var revoked threads.Allowance
		f.ts.browser.must("POST", "/api/allowances/revoke", key, 200, &revoked)
		if revoked.Hash != ref.Hash || revoked.Scope != c.scope {
			t.Errorf("revoked %+v", revoked)
		}
		recs := f.ts.records("allowance.revoke")
		if r := recs[len(recs)-1]; r.Target != c.target || r.Actor != "user:owner" || r.Detail["scope"] != c.scope || r.Detail["tool"] != "echo" ||
			r.Detail["server"] != f.server || r.Detail["server_name"] != "drifter" || r.Detail["tool_hash"] != ref.Hash || r.Detail["fingerprint"] != ref.Fingerprint {
			t.Errorf("the revocation's record: %+v", r)
		}
		if st, data := f.ts.browser.do("POST", "/api/allowances/revoke", key); st != 404 || errorCode(data) != "not_found" {
			t.Errorf("revoked twice: %d %s", st, data)
		}
	}
	if n := len(f.ts.records("allowance.revoke")); n != 2 {
		t.Errorf("%d revocations recorded, want 2", n)
	}
	f.ms.Push(echo)
	before := lastSeq(f.get())
	g := f.run("echo")
	p := f.pending(before)
	if p.Run != g.ID || !strings.Contains(p.Reason, "not allowed") {
		t.Errorf("after the revocations the call asks: %+v", p)
	}
	f.ts.browser.must("POST", "/api/approvals/"+itoa(p.Approval), map[string]string{"answer": "declined"}, 200, nil)
	if got := allowanceOf(f.ended()); got != nil {
		t.Errorf("a call that asked has an allowance: %+v", got)
	}
	if st, data := f.ts.browser.do("POST", "/api/allowances/revoke", map[string]any{"scope": "sometimes", "server_id": server, "tool": "echo"}); st != 400 {
		t.Errorf("a scope that is none: %d %s", st, data)
	}
}

// TestAllowancesPage: the page lists each allowance with its tool, server,
// scope, who gave it and when, and the hash and fingerprint; the owner's
// Revoke revokes it and says so; a viewer reads the list, has no Revoke,
// and a revocation it (or a member) posts is refused. The navigation and the threads
// page link to it.
func TestAllowancesPage(t *testing.T) {
	ts := start(t, Options{Team: true})
	ctx := context.Background()
	server := ts.draft("files")
	th, err := ts.w.threads.Create(ctx, threads.Thread{Title: "Allowed thread", Provider: "p", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	write := threads.ToolRef{ServerID: server, Tool: "write_file", Hash: "sha256:1111", Fingerprint: "sha256:aaaa"}
	read := threads.ToolRef{ServerID: server, Tool: "read_file", Hash: "sha256:2222", Fingerprint: "sha256:aaaa"}
	if err := ts.w.threads.SetRule(ctx, "user:owner", write, threads.Allow); err != nil {
		t.Fatal(err)
	}
	if err := ts.w.threads.AllowInThread(ctx, "user:owner", th.ID, read); err != nil {
		t.Fatal(err)
	}
	b := ts.browser
	page := b.mustPage("GET", "/allowances", nil, 200)
	for _, want := range []string{`<a href="/allowances">Allowances</a>`, `data-scope="always" data-tool="write_file"`, "Every thread",
		`data-scope="thread" data-tool="read_file"`, `The thread <a href="/threads/` + itoa(th.ID) + `">Allowed thread</a>`,
		"sha256:1111", "sha256:2222", "sha256:aaaa", "by user:owner, 20", `>files</a>`, `data-revoke="0"`, `data-revoke="1"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the allowances page lacks %q:\n%s", want, page)
		}
	}
	if page := b.mustPage("GET", "/threads", nil, 200); !strings.Contains(page, `id="allowances-link"`) {
		t.Error("the threads page does not link to the allowances")
	}

	var viewer struct {
		ID int64 `json:"id"`
	}
	b.must("POST", "/api/users", map[string]string{"name": "vic", "role": "viewer"}, 201, &viewer)
	v := ts.login(viewer.ID)
	if page := v.mustPage("GET", "/allowances", nil, 200); !strings.Contains(page, "write_file") || strings.Contains(page, "data-revoke") {
		t.Errorf("the viewer's page:\n%s", page)
	}
	var member struct {
		ID int64 `json:"id"`
	}
	b.must("POST", "/api/users", map[string]string{"name": "mel", "role": "member"}, 201, &member)
	key := map[string]any{"scope": "always", "server_id": server, "tool": "write_file"}
	if st, data := ts.login(member.ID).do("POST", "/api/allowances/revoke", key); st != 403 || errorCode(data) != "owner_required" {
		t.Errorf("a member's revocation: %d %s", st, data)
	}
	form := url.Values{"scope": {"always"}, "server_id": {itoa(server)}, "tool": {"write_file"}}
	if code, body, _ := v.page("POST", "/allowances/revoke", form); code != 403 || !strings.Contains(body, "Only the owner") {
		t.Errorf("a viewer's revocation: %d\n%s", code, body)
	}
	if code, _, _ := ts.bearer().page("GET", "/allowances", nil); code != 403 {
		t.Errorf("a bearer caller got the allowances page: %d", code)
	}
	if _, _, loc := b.page("POST", "/allowances/revoke", form); loc != "/allowances?done=allow_revoked" {
		t.Fatalf("the owner's revocation went to %q", loc)
	}
	page = b.mustPage("GET", "/allowances?done=allow_revoked", nil, 200)
	if !strings.Contains(page, "The allowance is revoked") || strings.Contains(page, "write_file") || !strings.Contains(page, "read_file") {
		t.Errorf("after the revocation:\n%s", page)
	}
	if recs := ts.records("allowance.revoke"); len(recs) != 1 || recs[0].Detail["tool_hash"] != "sha256:1111" {
		t.Errorf("the revocation's records: %+v", recs)
	}
	b.page("POST", "/allowances/revoke", url.Values{"scope": {"thread"}, "thread": {itoa(th.ID)}, "server_id": {itoa(server)}, "tool": {"read_file"}})
	if page := b.mustPage("GET", "/allowances", nil, 200); !strings.Contains(page, `id="no-allowances"`) {
		t.Errorf("with none left:\n%s", page)
	}
}
