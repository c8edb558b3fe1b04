package workspace

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
)

// preBlocks returns the text of each <pre> of a page with an id.
func preBlocks(t *testing.T, page string) map[string]string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode || n.Data != "pre" {
			continue
		}
		for _, a := range n.Attr {
			if a.Key == "id" {
				var sb strings.Builder
				for c := range n.Descendants() {
					if c.Type == html.TextNode {
						sb.WriteString(c.Data)
					}
				}
				out[a.Val] = sb.String()
			}
		}
	}
	return out
}

// checkMarkup requires what TestPagesHeadersAndMarkup requires of every
// page: no inline script, style or event handler, and the CSRF token in
// every form that posts.
func checkMarkup(t *testing.T, name, page, csrf string) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		attr := map[string]string{}
		for _, a := range n.Attr {
			attr[a.Key] = a.Val
			if strings.HasPrefix(a.Key, "on") || a.Key == "style" {
				t.Errorf("%s: <%s %s=...>", name, n.Data, a.Key)
			}
		}
		switch {
		case n.Data == "script" && (attr["src"] == "" || n.FirstChild != nil), n.Data == "style":
			t.Errorf("%s: an inline <%s>", name, n.Data)
		case n.Data == "form" && strings.EqualFold(attr["method"], "post") && !strings.Contains(renderNode(n), `name="csrf_token" value="`+csrf+`"`):
			t.Errorf("%s: a form posting to %s without the CSRF token", name, attr["action"])
		}
	}
}

// TestClientConfigs: each client's configuration runs the bridge by the
// zero program's absolute path, with --addr and --token-file only where
// its defaults would miss the workspace, or names the MCP endpoint with a
// bearer header that carries the token once one is made.
func TestClientConfigs(t *testing.T) {
	const defaultFile = "/home/ada/.zero/client-token"
	const program = "/home/ada/go/bin/zero"
	for _, tc := range []struct {
		addr, tokenFile, token string
		args                   []string
	}{
		{DefaultAddr, defaultFile, "", []string{"mcp", "workspace"}},
		{"127.0.0.1:8080", defaultFile, "zt_made", []string{"mcp", "workspace", "--addr", "127.0.0.1:8080"}},
		{DefaultAddr, "/srv/zero home/client-token", "", []string{"mcp", "workspace", "--token-file", "/srv/zero home/client-token"}},
	} {
		args := bridgeArgs(tc.addr, tc.tokenFile, defaultFile)
		if diff := cmp.Diff(tc.args, args); diff != "" {
			t.Errorf("%s %s: args (-want +got):\n%s", tc.addr, tc.tokenFile, diff)
		}
		base := "http://" + tc.addr
		stdio := map[string]any{"command": program, "args": toAny(tc.args)}
		vscode := map[string]any{"type": "stdio", "command": program, "args": toAny(tc.args)}
		bearer := "Bearer <token>"
		if tc.token != "" {
			bearer = "Bearer " + tc.token
		}
		headers := map[string]any{"Authorization": bearer}
		want := map[string]any{
			"config-claude-desktop": map[string]any{"mcpServers": map[string]any{"zero": stdio}},
			"config-cursor":         map[string]any{"mcpServers": map[string]any{"zero": stdio}},
			"config-vscode":         map[string]any{"servers": map[string]any{"zero": vscode}},
			"config-http":           map[string]any{"mcpServers": map[string]any{"zero": map[string]any{"url": base + "/mcp", "headers": headers}}},
			"config-vscode-http":    map[string]any{"servers": map[string]any{"zero": map[string]any{"type": "http", "url": base + "/mcp", "headers": headers}}},
		}
		got := map[string]any{}
		for _, c := range clientConfigs(base, program, args, tc.token) {
			if c.ID == "config-claude-code" {
				wantLine := "claude mcp add zero -- " + program + " " + strings.Join(tc.args, " ")
				if strings.Contains(tc.tokenFile, " ") {
					wantLine = strings.Replace(wantLine, tc.tokenFile, "'"+tc.tokenFile+"'", 1)
				}
				if c.Text != wantLine {
					t.Errorf("Claude Code: %s, want %s", c.Text, wantLine)
				}
				continue
			}
			if strings.HasSuffix(c.ID, "-http") && !strings.Contains(c.Help, "MCP Inspector's CLI") {
				t.Errorf("%s's help does not send clients without headers to the stdio entry: %q", c.ID, c.Help)
			}
			var v any
			if err := json.Unmarshal([]byte(c.Text), &v); err != nil {
				t.Fatalf("%s is not JSON: %v\n%s", c.ID, err, c.Text)
			}
			got[c.ID] = v
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: configurations (-want +got):\n%s", tc.addr, diff)
		}
	}
	// The exact text for the default workspace, as a person copies it.
	for _, c := range clientConfigs("http://"+DefaultAddr, program, bridgeArgs(DefaultAddr, defaultFile, defaultFile), "") {
		if c.ID == "config-claude-desktop" {
			want := "{\n  \"mcpServers\": {\n    \"zero\": {\n      \"command\": \"/home/ada/go/bin/zero\",\n      \"args\": [\n        \"mcp\",\n        \"workspace\"\n      ]\n    }\n  }\n}"
			if c.Text != want {
				t.Errorf("Claude Desktop's configuration:\n%s\nwant\n%s", c.Text, want)
			}
		}
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// TestConnectPage: the page shows each configuration for the workspace's
// own address and home; the token it makes is limited as asked, reaches
// the browser only on the page after the redirect (never in a URL), once,
// with a command that saves it readable by its owner only.
func TestConnectPage(t *testing.T) {
	ts := start(t, Options{})
	b := ts.browser
	gh := ts.draft("github")
	ts.draft("other")
	page := b.mustPage("GET", "/connect", nil, 200)
	checkMarkup(t, "/connect", page, b.csrf)
	blocks := preBlocks(t, page)
	addr := strings.TrimPrefix(ts.w.listenURL, "http://") // the listen address: clients need no name resolved
	tokenFile := filepath.Join(ts.home, "client-token")
	program, err := os.Executable() // the zero program the entries run: here, the test's
	if err == nil {
		program, err = filepath.EvalSymlinks(program)
	}
	if err != nil {
		t.Fatal(err)
	}
	var desktop struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(blocks["config-claude-desktop"]), &desktop); err != nil {
		t.Fatalf("config-claude-desktop: %v: %q", err, blocks["config-claude-desktop"])
	}
	wantArgs := []string{"mcp", "workspace", "--addr", addr, "--token-file", tokenFile}
	if z := desktop.MCPServers["zero"]; z.Command != program || !cmp.Equal(z.Args, wantArgs) {
		t.Errorf("Claude Desktop's configuration: %+v, want %s with args %q", z, program, wantArgs)
	}
	for _, id := range []string{"config-vscode", "config-cursor", "config-claude-code", "config-http", "config-vscode-http"} {
		if !strings.Contains(blocks[id], addr) {
			t.Errorf("%s does not name the workspace's address %s: %q", id, addr, blocks[id])
		}
	}
	if !strings.Contains(blocks["config-http"], `"url": "`+ts.w.listenURL+`/mcp"`) || !strings.Contains(page, `id="scope-server-`+itoa(gh)+`"`) {
		t.Error("the page lacks the endpoint's URL or the servers to limit a token to")
	}
	if strings.Contains(page, "zt_") {
		t.Error("the page shows a token before one is made")
	}

	_, _, loc := b.page("POST", "/connect/token", url.Values{"name": {"desktop"}, "scope": {"some"}, "server": {itoa(gh)}})
	if !strings.HasPrefix(loc, "/connect?shown=") || strings.Contains(loc, "zt_") {
		t.Fatalf("after making a token: Location %q", loc)
	}
	shown := b.mustPage("GET", loc, nil, 200)
	checkMarkup(t, "/connect?shown", shown, b.csrf)
	save := preBlocks(t, shown)["save-token"]
	var toks []struct {
		ID      int64   `json:"id"`
		Name    string  `json:"name"`
		Scoped  bool    `json:"scoped"`
		Servers []int64 `json:"servers"`
	}
	b.must("GET", "/api/tokens", nil, 200, &toks)
	if len(toks) != 1 || toks[0].Name != "desktop" || !toks[0].Scoped || !cmp.Equal(toks[0].Servers, []int64{gh}) {
		t.Fatalf("the token made: %+v", toks)
	}
	token := strings.Fields(strings.TrimPrefix(save, `umask 077; printf '%s\n' `))[0]
	if !strings.HasPrefix(token, "zt_") || save != `umask 077; printf '%s\n' `+token+` > `+tokenFile || !strings.Contains(shown, `id="new-token" class="token">`+token+`<`) {
		t.Fatalf("the save command: %q", save)
	}
	// The streamable HTTP entries carry it, on this page only.
	for _, id := range []string{"config-http", "config-vscode-http"} {
		if entry := preBlocks(t, shown)[id]; !strings.Contains(entry, `"Authorization": "Bearer `+token+`"`) || strings.Contains(entry, "<token>") {
			t.Errorf("%s after the token was made: %s", id, entry)
		}
	}
	if again := b.mustPage("GET", loc, nil, 200); strings.Contains(again, token) || !strings.Contains(again, "shown once") || !strings.Contains(again, "Bearer &lt;token&gt;") {
		t.Error("a reload shows the token again, or no placeholder")
	}
	// The command does what it says.
	if sh, err := exec.LookPath("sh"); err == nil {
		if out, err := exec.Command(sh, "-c", save).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", save, err, out)
		}
		fi, err := os.Stat(tokenFile)
		data, _ := os.ReadFile(tokenFile)
		if err != nil || fi.Mode().Perm() != 0o600 || string(data) != token+"\n" {
			t.Errorf("the saved token file: %v %v %q", fi.Mode(), err, data)
		}
	}
	// The token sees the server it was limited to, and no other.
	agent := &client{ts: ts, http: b.http, token: token}
	var list []struct {
		ID int64 `json:"id"`
	}
	agent.must("GET", "/api/servers", nil, 200, &list)
	if len(list) != 1 || list[0].ID != gh {
		t.Errorf("the connect token sees %+v", list)
	}
	// And it is told so: the session names its scope, as /api/tokens does.
	var session map[string]any
	agent.must("GET", "/api/session", nil, 200, &session)
	if session["scoped"] != true || !cmp.Equal(session["servers"], []any{float64(gh)}) {
		t.Errorf("the connect token's session: %v", session)
	}
	var all struct{ Token string }
	b.must("POST", "/api/tokens", map[string]string{"name": "cli"}, 201, &all)
	(&client{ts: ts, http: b.http, token: all.Token}).must("GET", "/api/session", nil, 200, &session)
	if v, ok := session["servers"]; session["scoped"] != false || !ok || v != nil {
		t.Errorf("an unscoped token's session: %v", session)
	}

	if page := b.mustPage("POST", "/connect/token", url.Values{"name": {""}}, 400); !strings.Contains(page, "token name") {
		t.Error("a token without a name: no explanation")
	}
	if st, _, _ := agent.page("GET", "/connect", nil); st != 403 {
		t.Errorf("a bearer caller on /connect: %d", st)
	}
	if st, _, _ := agent.page("POST", "/connect/token", url.Values{"name": {"x"}}); st != 403 {
		t.Errorf("a bearer caller made a token: %d", st)
	}
	if nav := b.mustPage("GET", "/servers", nil, 200); !strings.Contains(nav, `href="/connect"`) {
		t.Error("no link to the Connect a client page")
	}
}

// TestConnectPageOwnerOnly: in a team, a member neither sees the page nor
// makes a token with it.
func TestConnectPageOwnerOnly(t *testing.T) {
	ts := start(t, Options{Team: true})
	var member struct {
		ID int64 `json:"id"`
	}
	ts.browser.must("POST", "/api/users", map[string]string{"name": "mia", "role": "member"}, 201, &member)
	m := ts.login(member.ID)
	if st, _, _ := m.page("GET", "/connect", nil); st != 403 {
		t.Errorf("a member on /connect: %d", st)
	}
	if st, _, _ := m.page("POST", "/connect/token", url.Values{"name": {"x"}}); st != 403 {
		t.Errorf("a member made a token: %d", st)
	}
	if page := m.mustPage("GET", "/servers", nil, 200); strings.Contains(page, `href="/connect"`) || strings.Contains(page, `id="import-servers"`) {
		t.Error("a member's page links to the owner's Connect or Import page")
	}
}

// TestTokenRefused: a request whose bearer token is refused (mistyped,
// the Connect page's placeholder, revoked) is told the token was refused,
// on the API and on /mcp, with the stable code unauthenticated; one with
// no credentials is told to sign in.
func TestTokenRefused(t *testing.T) {
	ts := start(t, Options{})
	revoked := ts.bearer()
	var toks []struct {
		ID int64 `json:"id"`
	}
	ts.browser.must("GET", "/api/tokens", nil, 200, &toks)
	ts.browser.must("DELETE", "/api/tokens/"+itoa(toks[0].ID), nil, 200, nil)
	body := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "0"}}}
	accept := func(r *http.Request) { r.Header.Set("Accept", "application/json, text/event-stream") }
	message := func(data []byte) string {
		var e struct {
			Error struct{ Code, Message string }
		}
		json.Unmarshal(data, &e)
		return e.Error.Code + ": " + e.Error.Message
	}
	const refused = "unauthenticated: the bearer token was refused (revoked, or not this workspace's): create a new one on the Connect a client or Tokens page"
	for _, tc := range []struct{ name, token, want string }{
		{"no credentials", "", "unauthenticated: not signed in: open a login link, or send a bearer token"},
		{"a mistyped token", "zt_mistyped", refused},
		{"the placeholder", "<token>", refused},
		{"a revoked token", revoked.token, refused},
	} {
		c := &client{ts: ts, http: &http.Client{}, token: tc.token}
		if st, data := c.do("GET", "/api/servers", nil); st != 401 || message(data) != tc.want {
			t.Errorf("%s on the API: %d %s, want 401 %s", tc.name, st, data, tc.want)
		}
		if st, data := c.do("POST", "/mcp", body, accept); st != 401 || message(data) != tc.want {
			t.Errorf("%s on /mcp: %d %s, want 401 %s", tc.name, st, data, tc.want)
		}
	}
}
