package workspace

import (
	"encoding/json"
	"html"
	"net/url"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/workspace/servers"
)

// TestEditsDoNotUndoEachOther: edit A is reviewed against configuration X;
// edit B is saved meanwhile; approving A then is refused with 409
// approval_required showing the configuration as it is now (B), and B
// stays. The same holds through the pages, whose re-review's "Before"
// column is B. An edit without its base is refused.
func TestEditsDoNotUndoEachOther(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	x := stdioConfig(t, "shared")
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": x, "fingerprint": ts.fingerprint(0, x)}, 201, &c)
	id := itoa(c.Server.ID)
	base := b.current(id)

	editA, editB := x, x
	editA.Args = []string{"--edit-a"}
	editB.Args = []string{"--edit-b"}
	fpA := ts.fingerprint(c.Server.ID, editA)
	b.must("PUT", "/api/servers/"+id, map[string]any{"config": editB, "fingerprint": ts.fingerprint(c.Server.ID, editB), "base_fingerprint": base}, 200, nil)

	st, data := b.do("PUT", "/api/servers/"+id, map[string]any{"config": editA, "fingerprint": fpA, "base_fingerprint": base})
	var e struct {
		Error struct {
			Code    string          `json:"code"`
			Current *servers.Server `json:"current"`
		} `json:"error"`
	}
	json.Unmarshal(data, &e)
	if st != 409 || e.Error.Code != "approval_required" || e.Error.Current == nil || strings.Join(e.Error.Current.Config.Args, " ") != "--edit-b" {
		t.Fatalf("a stale edit: %d %s", st, data)
	}
	var s servers.Server
	b.must("GET", "/api/servers/"+id, nil, 200, &s)
	if strings.Join(s.Config.Args, " ") != "--edit-b" {
		t.Fatalf("the stale edit overwrote the other: %v", s.Config.Args)
	}
	if st, data := b.do("PUT", "/api/servers/"+id, map[string]any{"config": editA, "fingerprint": fpA}); st != 400 || !strings.Contains(string(data), "base_fingerprint") {
		t.Errorf("an edit without its base: %d %s", st, data)
	}

	// Through the pages: review edit C, meanwhile B2 is saved, approve C.
	review := b.mustPage("POST", "/servers/"+id+"/edit", url.Values{"name": {x.Name}, "kind": {"stdio"}, "command": {x.Command}, "args": {"--edit-c"}}, 200)
	editB2 := x
	editB2.Args = []string{"--edit-b2"}
	b.must("PUT", "/api/servers/"+id, map[string]any{"config": editB2, "fingerprint": ts.fingerprint(c.Server.ID, editB2), "base_fingerprint": b.current(id)}, 200, nil)
	form := url.Values{"config": {hidden(t, review, "config")}, "fingerprint": {hidden(t, review, "fingerprint")}, "base": {hidden(t, review, "base")}}
	page := b.mustPage("POST", "/servers/"+id+"/update", form, 409)
	if !strings.Contains(page, `id="stale"`) || !strings.Contains(page, "--edit-b2") || hidden(t, page, "base") != b.current(id) {
		t.Errorf("the re-review of a stale edit:\n%s", page)
	}
	b.must("GET", "/api/servers/"+id, nil, 200, &s)
	if strings.Join(s.Config.Args, " ") != "--edit-b2" {
		t.Errorf("the stale page edit overwrote the other: %v", s.Config.Args)
	}
}

// TestServerNamesAreUnique: a name another server has is refused at
// review time with 409 name_taken, in a preview, a create (with or
// without a fingerprint) and a rename; the form shows the problem and
// keeps what was typed. Nothing answers 500.
func TestServerNamesAreUnique(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	first := stdioConfig(t, "taken")
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": first, "fingerprint": ts.fingerprint(0, first)}, 201, &c)
	second := stdioConfig(t, "other")
	var c2 created
	b.must("POST", "/api/servers", map[string]any{"config": second}, 201, &c2)

	dup := stdioConfig(t, "taken")
	dup.Args = []string{"--typed-argument"}
	for _, req := range []struct {
		who          *client
		method, path string
		body         map[string]any
	}{
		{b, "POST", "/api/servers/preview", map[string]any{"config": dup}},
		{b, "POST", "/api/servers", map[string]any{"config": dup, "fingerprint": "sha256:00"}},
		{ts.bearer(), "POST", "/api/servers", map[string]any{"config": dup}},
		{b, "PUT", "/api/servers/" + itoa(c2.Server.ID), map[string]any{"config": dup, "fingerprint": "sha256:00", "base_fingerprint": c2.Server.Fingerprint}},
	} {
		st, data := req.who.do(req.method, req.path, req.body)
		if st != 409 || errorCode(data) != "name_taken" || !strings.Contains(string(data), `\"taken\"`) {
			t.Errorf("%s %s with a taken name: %d %s", req.method, req.path, st, data)
		}
	}
	// Its own name is not taken: an edit of the first server previews.
	b.must("POST", "/api/servers/preview", map[string]any{"config": first, "id": c.Server.ID}, 200, nil)

	page := b.mustPage("POST", "/servers/new", url.Values{"name": {"taken"}, "kind": {"stdio"}, "command": {dup.Command}, "args": {"--typed-argument"}}, 409)
	if !strings.Contains(page, `id="problems"`) || !strings.Contains(page, html.EscapeString(`"taken" exists already`)) || !strings.Contains(page, "--typed-argument") {
		t.Errorf("the form after a taken name:\n%s", page)
	}
	var list []servers.Server
	b.must("GET", "/api/servers", nil, 200, &list)
	if len(list) != 2 {
		t.Errorf("%d servers, want 2", len(list))
	}
	if strings.Contains(ts.log.String(), "request failed") {
		t.Errorf("a taken name reached the log as an internal error:\n%s", ts.log)
	}
}
