package workspace

import (
	"encoding/json"
	"html"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/workspace/servers"
	"github.com/zero-dev/zero/internal/workspace/web"
)

// TestCommandLineSplitOffered: a whole command line typed into Command
// resolves to no program; its review says it cannot run, offers no
// approval, and lists the words a shell would split it into, one by one.
// Splitting is the person's choice (a button), and leads to a new review of
// the split configuration, which carries the secret typed in the form and
// can be approved. A line a shell would do more with (a pipe) is not split,
// and the review says why. A draft saved with a command line offers the
// split on its page, through an edit's review.
func TestCommandLineSplitOffered(t *testing.T) {
	const secret = "split-secret-canary-3a9"
	ts := start(t, Options{})
	b := ts.browser
	command := envserver(t)
	line := command + ` --flag 'two words'`
	review := b.mustPage("POST", "/servers/new", url.Values{"name": {"split"}, "kind": {"stdio"}, "command": {line},
		"env": {"API_KEY=" + secret}}, 200)
	for _, want := range []string{`id="cannot-run"`, `id="split-offer"`, `id="split"`, `id="save-draft"`,
		"<li>program <code>" + html.EscapeString(command) + "</code></li>", "<li><code>--flag</code></li>",
		"<li><code>&#39;two words&#39;</code></li>", "(not-runnable)", "(command-line)"} {
		if !strings.Contains(review, want) {
			t.Errorf("the review of a command line lacks %s", want)
		}
	}
	for _, absent := range []string{`id="approve"`, `id="approve-enable"`, `name="fingerprint"`} {
		if strings.Contains(review, absent) {
			t.Errorf("the review of a configuration that cannot run has %s", absent)
		}
	}

	split := b.mustPage("POST", "/servers/new", url.Values{"split": {"1"}, "config": {hidden(t, review, "config")},
		"pending": {hidden(t, review, "pending")}}, 200)
	want := servers.Config{Name: "split", Kind: servers.KindStdio, Command: command, Args: []string{"--flag", "two words"}, Env: []string{"API_KEY"}}
	if !strings.Contains(split, html.EscapeString(web.CommandLine(command, want.Args))) || strings.Contains(split, `id="cannot-run"`) ||
		!strings.Contains(split, `id="approve-enable"`) {
		t.Fatal("the review after the split does not show the split configuration, ready to approve")
	}
	fp := hidden(t, split, "fingerprint")
	if fp != ts.fingerprint(0, want) {
		t.Fatal("the split review's fingerprint is not the split configuration's")
	}
	form := url.Values{"config": {hidden(t, split, "config")}, "pending": {hidden(t, split, "pending")}, "fingerprint": {fp}}
	if _, _, loc := b.page("POST", "/servers/create", form); loc != "/servers/1?done=created" {
		t.Fatalf("after approving the split: Location %q", loc)
	}
	var s servers.Server
	b.must("POST", "/api/servers/1/test", nil, 200, &s)
	if s.Status != servers.StatusOK || envOf(t, s)["API_KEY"] != shortHash(secret) {
		t.Errorf("the split server after its test: %s, env %v", s.Status, envOf(t, s))
	}

	piped := b.mustPage("POST", "/servers/new", url.Values{"name": {"piped"}, "kind": {"stdio"}, "command": {"npx server | tee log"}}, 200)
	if !strings.Contains(piped, `id="split-refused"`) || !strings.Contains(piped, "&#34;|&#34;") || strings.Contains(piped, `id="split"`) ||
		strings.Contains(piped, `id="approve"`) {
		t.Error("the review of a piped command line does not say why it cannot be split, or offers to approve it")
	}

	// A draft with a command line, from the API: its page offers the split.
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": servers.Config{Name: "drafted", Kind: servers.KindStdio, Command: line}}, 201, &c)
	id := itoa(c.Server.ID)
	page := b.mustPage("GET", "/servers/"+id, nil, 200)
	if !strings.Contains(page, `id="cannot-run"`) || !strings.Contains(page, `id="split"`) || strings.Contains(page, `id="approve-enable"`) {
		t.Fatal("a draft's page does not offer the split, or offers to approve what cannot run")
	}
	edit := b.mustPage("POST", "/servers/"+id+"/edit", url.Values{"split": {"1"}, "config": {hidden(t, page, "config")}}, 200)
	if !strings.Contains(edit, "What changed") || !strings.Contains(edit, `id="approve"`) {
		t.Fatal("the draft's split is not an edit to review")
	}
	form = url.Values{"config": {hidden(t, edit, "config")}, "fingerprint": {hidden(t, edit, "fingerprint")}, "base": {hidden(t, edit, "base")}}
	b.mustPage("POST", "/servers/"+id+"/update", form, 303)
	b.must("GET", "/api/servers/"+id, nil, 200, &s)
	if !s.Approved || s.Config.Command != command || !slices.Equal(s.Config.Args, want.Args) {
		t.Errorf("the draft after its split was approved: %+v", s.Config)
	}
}

// TestCommandLineWarning: the API's preview of a command line typed as the
// command says what the split would be (and does not take the slashes of
// its arguments for a relative path), and a line that cannot be split says
// why.
func TestCommandLineWarning(t *testing.T) {
	ts := start(t, Options{})
	warning := func(command string) string {
		var p servers.Preview
		ts.browser.must("POST", "/api/servers/preview", map[string]any{"config": servers.Config{Name: "x", Kind: servers.KindStdio, Command: command}}, 200, &p)
		if slices.Contains(warningCodes(p.Warnings), "relative-command") {
			t.Errorf("%q: a command line's slashes are taken for a relative path", command)
		}
		for _, w := range p.Warnings {
			if w.Code == "command-line" {
				return w.Message
			}
		}
		return ""
	}
	if got := warning(`npx -y "@scope/server" /tmp`); !strings.Contains(got, `the program "npx" with the arguments "-y", "@scope/server", "/tmp"`) {
		t.Errorf("a command line's warning: %q", got)
	}
	if got := warning("npx server && rm -rf /"); !strings.Contains(got, `"&&"`) || !strings.Contains(got, "no shell") {
		t.Errorf("a list's warning: %q", got)
	}
	if got := warning("no-such-program-here"); got != "" {
		t.Errorf("a single word that resolves to nothing: %q", got)
	}
}

// TestNotRunnableNotApproved: a configuration whose command resolves to no
// program cannot be approved, whichever way: created with a fingerprint,
// a draft approved, an edit approved, or enabled (a server approved before
// this rule): 409 not_runnable, with the preview. It can be saved as a
// draft, whose page says it cannot run and offers no approval. A Test of
// one approved before the rule fails, and neither its error nor its page
// tells an exit code, since no process ran.
func TestNotRunnableNotApproved(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	missing := servers.Config{Name: "missing", Kind: servers.KindStdio, Command: "/nonexistent/zero-test-server"}
	notRunnable := func(what string, st int, data []byte) {
		t.Helper()
		var e struct {
			Error struct {
				Code    string           `json:"code"`
				Message string           `json:"message"`
				Preview *servers.Preview `json:"preview"`
			} `json:"error"`
		}
		json.Unmarshal(data, &e)
		if st != 409 || e.Error.Code != "not_runnable" || e.Error.Preview == nil || !strings.Contains(e.Error.Message, "program not found") {
			t.Errorf("%s: %d %s", what, st, data)
		}
	}
	st, data := b.do("POST", "/api/servers", map[string]any{"config": missing, "fingerprint": ts.fingerprint(0, missing), "enable": true})
	notRunnable("a create with the fingerprint", st, data)
	var list []servers.Server
	b.must("GET", "/api/servers", nil, 200, &list)
	if len(list) != 0 {
		t.Fatalf("a refused create saved %v", names(list))
	}

	var c created
	b.must("POST", "/api/servers", map[string]any{"config": missing}, 201, &c)
	st, data = b.do("POST", "/api/servers/1/approve", map[string]any{"fingerprint": c.Server.Fingerprint, "enable": true})
	notRunnable("the approval of a draft", st, data)
	page := b.mustPage("GET", "/servers/1", nil, 200)
	if !strings.Contains(page, `id="cannot-run"`) || !strings.Contains(page, "program not found") || strings.Contains(page, `id="approve"`) ||
		strings.Contains(page, `id="approve-enable"`) || !strings.Contains(page, `class="button primary" href="/servers/1/edit"`) {
		t.Error("the draft's page does not say it cannot run, or offers to approve it")
	}
	refused := b.mustPage("POST", "/servers/1/approve", url.Values{"fingerprint": {c.Server.Fingerprint}, "enable": {"1"}}, 409)
	if !strings.Contains(refused, `id="cannot-run"`) {
		t.Error("an approval posted from a stale page is not answered with why it cannot run")
	}
	if len(ts.records("server.approve")) != 0 {
		t.Error("a refused approval was recorded as one")
	}

	good := stdioConfig(t, "good")
	b.must("POST", "/api/servers", map[string]any{"config": good, "fingerprint": ts.fingerprint(0, good)}, 201, &c)
	id := itoa(c.Server.ID)
	edited := missing
	edited.Name = "good"
	st, data = b.do("PUT", "/api/servers/"+id, map[string]any{"config": edited, "fingerprint": ts.fingerprint(c.Server.ID, edited),
		"base_fingerprint": c.Server.Fingerprint})
	notRunnable("an edit's approval", st, data)

	// Approved before this rule (written here straight into the database).
	var s servers.Server
	b.must("GET", "/api/servers/1", nil, 200, &s)
	ts.w.db.Exec(`UPDATE servers SET approved_fingerprint = ? WHERE id = 1`, s.Fingerprint)
	st, data = b.do("POST", "/api/servers/1/enable", map[string]any{"fingerprint": s.Fingerprint})
	notRunnable("an enable", st, data)
	b.must("POST", "/api/servers/1/test", nil, 200, &s)
	if s.Status != servers.StatusFailed || !strings.Contains(s.LastError, "no executable file") || strings.Contains(s.LastError, "exit code") {
		t.Errorf("the test of a missing program: %s %q", s.Status, s.LastError)
	}
	page = b.mustPage("GET", "/servers/1", nil, 200)
	if strings.Contains(page, "exit code") || !strings.Contains(page, "no process ran") {
		t.Error("the page of a server whose program is missing tells an exit code after its test")
	}
}
