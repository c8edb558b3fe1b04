package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerTransport adds headers to every request, as a client configured
// with an entry's "headers" does.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestBrowserConnect makes a token on the Connect a client page in
// Chromium and uses the entries it shows, as they are: the stdio entry
// runs the zero program by its absolute path, so a client whose PATH has
// no zero starts it, and reads the token the page's command saved; the
// streamable HTTP entry carries the new token itself. The page sends
// clients with no header option to the stdio entry.
func TestBrowserConnect(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	seen := record(t, tab)
	program, err := filepath.EvalSymlinks(zeroBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")),
		chromedp.Navigate(srv.base+"/connect"), chromedp.WaitVisible(chromedp.ID("connect-token-name")))
	if help := run(t, tab, chromedp.Text(chromedp.CSS("#config-http + p.help"))); !strings.Contains(help, "MCP Inspector's CLI") || !strings.Contains(help, "stdio entry") {
		t.Errorf("the HTTP entry's help: %q", help)
	}
	do(t, tab, chromedp.SendKeys(chromedp.ID("connect-token-name"), "desktop"),
		chromedp.Click(chromedp.ID("connect-create-token")), chromedp.WaitVisible(chromedp.ID("new-token")))
	screenshot(t, tab, "connect-token")
	token := run(t, tab, chromedp.Text(chromedp.ID("new-token")))
	save := run(t, tab, chromedp.Text(chromedp.ID("save-token")))
	entry := func(id string) (e struct {
		Command string
		Args    []string
		URL     string
		Headers map[string]string
	}) {
		text := run(t, tab, chromedp.Text(chromedp.ID(id)))
		var cfg map[string]map[string]json.RawMessage
		if err := json.Unmarshal([]byte(text), &cfg); err != nil {
			t.Fatalf("%s: %v\n%s", id, err, text)
		}
		for _, list := range cfg {
			if err := json.Unmarshal(list["zero"], &e); err != nil {
				t.Fatalf("%s: %v\n%s", id, err, text)
			}
		}
		return e
	}
	desktop, remote := entry("config-claude-desktop"), entry("config-http")
	if desktop.Command != program {
		t.Errorf("Claude Desktop's entry runs %q, want %q", desktop.Command, program)
	}
	if got := run(t, tab, chromedp.Evaluate[string](`document.getElementById("program")?.textContent ?? ""`)); got != program {
		t.Errorf("the page names the program %q, want %q", got, program)
	}
	for _, id := range []string{"config-vscode", "config-cursor"} {
		if e := entry(id); e.Command != program {
			t.Errorf("%s runs %q, want %q", id, e.Command, program)
		}
	}
	if cc := run(t, tab, chromedp.Text(chromedp.ID("config-claude-code"))); !strings.HasPrefix(cc, "claude mcp add zero -- "+program+" mcp workspace ") {
		t.Errorf("Claude Code's command: %q", cc)
	}
	for _, id := range []string{"config-http", "config-vscode-http"} {
		if e := entry(id); e.Headers["Authorization"] != "Bearer "+token {
			t.Errorf("%s's header after the token was made: %q", id, e.Headers["Authorization"])
		}
	}
	if foreign := seen.foreign(srv.base); len(foreign) > 0 {
		t.Errorf("the pages requested other origins: %q", foreign)
	}

	// The entries work as shown: the token saved by the page's command, the
	// stdio entry started with a PATH that has no zero on it.
	if out, err := exec.Command("sh", "-c", save).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v %s", save, err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(desktop.Command, desktop.Args...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/nonexistent"}
	for how, tr := range map[string]mcp.Transport{
		"the stdio entry": &mcp.CommandTransport{Command: cmd},
		"the HTTP entry":  &mcp.StreamableClientTransport{Endpoint: remote.URL, HTTPClient: &http.Client{Transport: headerTransport(remote.Headers)}},
	} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "connect-browser", Version: "0"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			t.Errorf("%s: %v", how, err)
			continue
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Errorf("%s: tools/list: %v", how, err)
		}
		cs.Close()
	}
	if _, err := os.Stat(filepath.Join(srv.home, "cli-token")); !os.IsNotExist(err) {
		t.Errorf("the Connect page's command wrote the CLI's token file (%v)", err)
	}
}
