package workspace

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/workspace/servers"
)

// rawBody makes a request's body text, JSON or not.
func rawBody(text string) func(*http.Request) {
	return func(r *http.Request) {
		r.Body, r.ContentLength = io.NopCloser(strings.NewReader(text)), int64(len(text))
	}
}

type importAnswer struct {
	Created []struct {
		Server     servers.Server `json:"server"`
		ApproveURL string         `json:"approve_url"`
	} `json:"created"`
	Notes []servers.ImportMessage `json:"notes"`
}

// claudeDesktop is a claude_desktop_config.json with a program and a remote
// server, each with a secret value.
func claudeDesktop(t *testing.T, envValue, headerValue string) string {
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"local":  map[string]any{"command": envserver(t), "args": []string{"--flag"}, "env": map[string]string{"API_KEY": envValue}},
		"remote": map[string]any{"url": "https://example.com/mcp", "headers": map[string]string{"Authorization": "Bearer " + headerValue}},
	}})
	return string(data)
}

// TestImportAPI: each entry becomes a draft, approved by nobody, with its
// values stored as secrets set by the owner; the values reach the server
// once the owner approves it. Only the owner in a browser may import.
func TestImportAPI(t *testing.T) {
	const envSecret, headerSecret = "imported-env-canary-7c1", "imported-header-canary-2d9"
	ts := start(t, Options{})
	b := ts.browser
	var res importAnswer
	b.must("POST", "/api/servers/import", json.RawMessage(claudeDesktop(t, envSecret, headerSecret)), 201, &res)
	if len(res.Created) != 2 {
		t.Fatalf("created %+v", res.Created)
	}
	type draft struct {
		Name, Kind        string
		Approved, Enabled bool
		Secrets           []servers.StoredSecret
		ApproveURL        string
	}
	var got []draft
	for _, c := range res.Created {
		s := c.Server
		got = append(got, draft{s.Config.Name, s.Config.Kind, s.Approved, s.Enabled, s.Secrets, c.ApproveURL})
	}
	want := []draft{
		{"local", "stdio", false, false, []servers.StoredSecret{{Kind: "env", Name: "API_KEY", SetBy: "user:owner"}}, ts.base + "/servers/1"},
		{"remote", "http", false, false, []servers.StoredSecret{{Kind: "header", Name: "Authorization", SetBy: "user:owner"}}, ts.base + "/servers/2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("drafts (-want +got):\n%s", diff)
	}
	if len(res.Notes) != 1 || res.Notes[0].Entry != "remote" {
		t.Errorf("notes: %+v", res.Notes)
	}
	records, _ := ts.w.audit.ReadAll()
	var actions []string
	for _, r := range records[1:] { // after the sign-in
		actions = append(actions, r.Action+" "+r.Detail["name"])
	}
	if diff := cmp.Diff([]string{"server.draft local", "server.draft remote"}, actions); diff != "" {
		t.Errorf("audit records (-want +got):\n%s", diff)
	}
	// Approved and tested, the imported value reaches the server.
	local := res.Created[0].Server
	var s servers.Server
	b.must("POST", "/api/servers/1/approve", map[string]any{"fingerprint": local.Fingerprint}, 200, nil)
	b.must("POST", "/api/servers/1/test", nil, 200, &s)
	if envOf(t, s)["API_KEY"] != shortHash(envSecret) {
		t.Error("the imported env value did not reach the server")
	}

	agent := ts.bearer()
	if st, data := agent.do("POST", "/api/servers/import", json.RawMessage(claudeDesktop(t, "x", "y"))); st != 403 || errorCode(data) != "browser_only" {
		t.Errorf("a bearer caller imported: %d %s", st, data)
	}
	if st, data := b.do("POST", "/api/servers/import", json.RawMessage(`{"pad": "`+strings.Repeat("x", maxBody)+`"}`)); st != 413 || errorCode(data) != "too_large" {
		t.Errorf("an import over 1 MiB: %d %.200s", st, data)
	}
	ts.seenMu.Lock()
	defer ts.seenMu.Unlock()
	if seen := ts.seen.String(); strings.Contains(seen, envSecret) || strings.Contains(seen, headerSecret) {
		t.Error("an answer holds an imported value")
	}
}

// TestImportEachEntry: each entry that can be a draft is saved, on its own;
// the others, refused by the parser, the policy or a name taken, are listed
// with why, each with its entry, and nothing of them is saved. A VS Code
// placeholder in an env value declares the name without a value, with a
// note. Nothing saved at all is a 400 listing every problem.
func TestImportEachEntry(t *testing.T) {
	const secret = "refused-import-canary-44e"
	ts := start(t, Options{})
	b := ts.browser
	ts.draft("taken")
	text := fmt.Sprintf(`{"servers": {
		"fine": {"type": "stdio", "command": %q},
		"taken": {"type": "stdio", "command": "x"},
		"loader": {"type": "stdio", "command": "x", "env": {"LD_PRELOAD": %q}},
		"local": {"type": "http", "url": "https://127.0.0.1/mcp"},
		"typed": {"type": "stdio", "command": %q, "env": {"KEY": "${input:key}", "REGION": "eu"}},
		"odd": {"type": "stdio", "command": "x", "autoApprove": []}},
		"inputs": []}`, envserver(t), secret, envserver(t))
	var res struct {
		importAnswer
		Problems []servers.ImportMessage `json:"problems"`
	}
	b.must("POST", "/api/servers/import", json.RawMessage(text), 201, &res)
	var created []string
	for _, c := range res.Created {
		created = append(created, c.Server.Config.Name)
	}
	if diff := cmp.Diff([]string{"fine", "typed"}, created); diff != "" {
		t.Errorf("drafts saved (-want +got):\n%s", diff)
	}
	got := map[string]string{}
	for _, p := range res.Problems {
		got[p.Entry] += p.Message
	}
	for entry, says := range map[string]string{
		"taken": "exists already", "loader": "LD_PRELOAD", "local": "loopback", "odd": `"autoApprove"`,
	} {
		if !strings.Contains(got[entry], says) {
			t.Errorf("%s: %q, want it to say %s", entry, got[entry], says)
		}
	}
	if len(got) != 4 {
		t.Errorf("problems: %+v", res.Problems)
	}
	typed := res.Created[1].Server
	if !slices.Equal(typed.Config.Env, []string{"KEY", "REGION"}) || len(typed.Secrets) != 1 || typed.Secrets[0].Name != "REGION" {
		t.Errorf("the entry with a placeholder: env %v, secrets %+v", typed.Config.Env, typed.Secrets)
	}
	if !slices.ContainsFunc(res.Notes, func(n servers.ImportMessage) bool {
		return n.Entry == "typed" && strings.Contains(n.Message, "KEY is declared without a value; set its whole value on the server's Edit page")
	}) {
		t.Errorf("no note for the placeholder: %+v", res.Notes)
	}
	var list []servers.Server
	b.must("GET", "/api/servers", nil, 200, &list)
	if diff := cmp.Diff([]string{"fine", "taken", "typed"}, names(list)); diff != "" {
		t.Errorf("servers after the import (-want +got):\n%s", diff)
	}

	// Nothing saved: every problem, 400.
	st, data := b.do("POST", "/api/servers/import", json.RawMessage(text))
	var e struct {
		Error struct {
			Code     string                  `json:"code"`
			Message  string                  `json:"message"`
			Problems []servers.ImportMessage `json:"problems"`
		} `json:"error"`
	}
	json.Unmarshal(data, &e)
	if st != 400 || e.Error.Code != "invalid_import" || len(e.Error.Problems) != 6 || !strings.HasPrefix(e.Error.Message, "nothing was imported: ") {
		t.Errorf("an import of names all taken or refused: %d %s", st, data)
	}
	if strings.Contains(string(data), secret) {
		t.Error("the answer holds a value")
	}
	if st, data := b.do("POST", "/api/servers/import", nil, rawBody(`{"mcpServers": {"a": {"command": "x",}}}`)); st != 400 ||
		!strings.Contains(string(data), "not JSON") || !strings.Contains(string(data), "line 1, column 38") {
		t.Errorf("bad JSON: %d %s", st, data)
	}
}

// TestImportPage: the page takes the pasted text and lists the drafts it
// saved, linked to their review pages; the entries it refused are listed
// with why, and the text stays in the box, as sent, to be fixed; a form
// over 1 MiB says so.
func TestImportPage(t *testing.T) {
	const secret = "import-page-canary-a01"
	ts := start(t, Options{})
	b := ts.browser
	if page := b.mustPage("GET", "/servers", nil, 200); !strings.Contains(page, `href="/servers/import"`) {
		t.Error("the servers page does not link to the import")
	}
	form := b.mustPage("GET", "/servers/import", nil, 200)
	checkMarkup(t, "/servers/import", form, b.csrf)
	if !strings.Contains(form, `name="json"`) {
		t.Error("no textarea")
	}
	done := b.mustPage("POST", "/servers/import", url.Values{"json": {claudeDesktop(t, secret, secret)}}, 200)
	checkMarkup(t, "import done", done, b.csrf)
	for _, want := range []string{`<a href="/servers/1">local</a>`, `<a href="/servers/2">remote</a>`, "2 servers were saved as drafts", `id="import-notes"`} {
		if !strings.Contains(done, want) {
			t.Errorf("the result lacks %s", want)
		}
	}
	if strings.Contains(done, secret) || strings.Contains(done, `id="import-json"`) {
		t.Error("an import that refused nothing shows the text again")
	}
	review := b.mustPage("GET", "/servers/1", nil, 200)
	if !strings.Contains(review, `id="approve"`) || !strings.Contains(review, `class="warnings"`) && !strings.Contains(review, "nowarnings") {
		t.Error("an imported draft's page is not its review")
	}

	// Some refused: the others are saved, and the text is kept to fix.
	mixed := `{"mcpServers": {"new": {"command": "/nonexistent/srv", "env": {"K": "` + secret + `"}}, "local": {"command": "x"}, "bad name": {"command": "x"}}}`
	partly := b.mustPage("POST", "/servers/import", url.Values{"json": {mixed}}, 200)
	checkMarkup(t, "import partly refused", partly, b.csrf)
	for _, want := range []string{`<a href="/servers/3">new</a>`, `class="badge failed">cannot run`, `id="refused"`, "<code>local</code>: a server with this name exists already",
		"<code>bad name</code>: the name is not one a server may have", "the others were imported", html.EscapeString(mixed) + "</textarea>"} {
		if !strings.Contains(partly, want) {
			t.Errorf("a partly refused import's page lacks %s", want)
		}
	}
	refused := b.mustPage("POST", "/servers/import", url.Values{"json": {claudeDesktop(t, secret, secret)}}, 400)
	checkMarkup(t, "import refused", refused, b.csrf)
	if !strings.Contains(refused, `id="problems"`) || strings.Count(refused, "exists already") != 2 || !strings.Contains(refused, "Nothing was imported") ||
		!strings.Contains(refused, html.EscapeString(claudeDesktop(t, secret, secret))+"</textarea>") {
		t.Error("importing the same servers again does not list both names as taken, with the text kept")
	}
	if page := b.mustPage("POST", "/servers/import", url.Values{"json": {"{"}}, 400); !strings.Contains(page, "not JSON") || !strings.Contains(page, "{</textarea>") {
		t.Error("bad JSON: no explanation, or the text is not kept")
	}
	if st, page, _ := b.page("POST", "/servers/import", url.Values{"json": {strings.Repeat("{", maxBody)}}); st != 413 || !strings.Contains(page, "over 1048576 bytes") {
		t.Errorf("a form over 1 MiB: %d", st)
	}
	agent := ts.bearer()
	if st, _, _ := agent.page("POST", "/servers/import", url.Values{"json": {claudeDesktop(t, "x", "y")}}); st != 403 {
		t.Errorf("a bearer caller on the import page: %d", st)
	}
}
