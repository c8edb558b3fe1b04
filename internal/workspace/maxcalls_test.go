package workspace

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/workspace/runtime"
	"github.com/zero-dev/zero/internal/workspace/servers"
)

// TestMaxCalls: the owner sets, in a browser, the most calls the workspace
// makes to a server at once, through the API and the server's page; the
// runtime's Spec carries it, the change is audited, a value out of range
// is refused saying the range, 0 goes back to the default, and neither a
// bearer caller nor a member can set it.
func TestMaxCalls(t *testing.T) {
	ts := start(t, Options{Team: true})
	b := ts.browser
	id, _ := ts.driftServer(`{"echo": {}}`)
	n := must(json.Number(id).Int64())
	spec := func() runtime.Spec {
		t.Helper()
		return must(ts.w.servers.Runnable(context.Background(), n))
	}
	if got := spec().MaxCalls; got != runtime.DefaultMaxPerServer {
		t.Errorf("a new server's most calls at once: %d, want the default %d", got, runtime.DefaultMaxPerServer)
	}

	var s servers.Server
	b.must("POST", "/api/servers/"+id+"/max-calls", map[string]int{"max_calls": 3}, 200, &s)
	if s.MaxCalls != 3 || spec().MaxCalls != 3 {
		t.Errorf("after setting 3: the server says %d, its Spec %d", s.MaxCalls, spec().MaxCalls)
	}
	if recs := ts.records("server.max_calls"); len(recs) != 1 || recs[0].Detail["max_calls"] != "3" || recs[0].Actor != "user:owner" {
		t.Errorf("the audit records: %+v", recs)
	}
	for _, bad := range []int{-1, runtime.MaxPerServerLimit + 1} {
		st, data := b.do("POST", "/api/servers/"+id+"/max-calls", map[string]int{"max_calls": bad})
		if st != 400 || errorCode(data) != "bad_request" || !strings.Contains(string(data), "from 1 to "+strconv.Itoa(runtime.MaxPerServerLimit)) {
			t.Errorf("max_calls %d: %d %s", bad, st, data)
		}
	}
	if st, data := ts.bearer().do("POST", "/api/servers/"+id+"/max-calls", map[string]int{"max_calls": 8}); st != 403 || errorCode(data) != "browser_only" {
		t.Errorf("a bearer caller: %d %s", st, data)
	}
	b.must("POST", "/api/servers/"+id+"/max-calls", map[string]int{"max_calls": 0}, 200, &s)
	if s.MaxCalls != runtime.DefaultMaxPerServer {
		t.Errorf("after setting 0: %d, want the default", s.MaxCalls)
	}

	page := b.mustPage("GET", "/servers/"+id, nil, 200)
	if !strings.Contains(page, `max="`+strconv.Itoa(runtime.MaxPerServerLimit)+`"`) || !strings.Contains(page, `id="max-calls"`) {
		t.Fatalf("the owner's page has no form for the most calls at once")
	}
	b.mustPage("POST", "/servers/"+id+"/max-calls", url.Values{"max_calls": {"7"}}, 303)
	if got := spec().MaxCalls; got != 7 {
		t.Errorf("after the page's form: %d", got)
	}
	if bad := b.mustPage("POST", "/servers/"+id+"/max-calls", url.Values{"max_calls": {"many"}}, 400); !strings.Contains(bad, "from 1 to") {
		t.Errorf("the page's answer to a bad number says nothing of the range")
	}

	var member struct {
		ID int64 `json:"id"`
	}
	b.must("POST", "/api/users", map[string]string{"name": "mia", "role": "member"}, 201, &member)
	asMember := ts.login(member.ID)
	if mp := asMember.mustPage("GET", "/servers/"+id, nil, 200); strings.Contains(mp, `id="max-calls"`) {
		t.Error("a member's page offers the form")
	}
	asMember.mustPage("POST", "/servers/"+id+"/max-calls", url.Values{"max_calls": {"2"}}, 403)
	if got := spec().MaxCalls; got != 7 {
		t.Errorf("after a member's post: %d", got)
	}
}
