package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// readmeFirstScreen returns the commands of the README's first block:
// each line without its comment.
func readmeFirstScreen(t *testing.T, readme string) []string {
	t.Helper()
	_, block, ok := strings.Cut(readme, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok || strings.Contains(readme[:strings.Index(readme, "```sh\n")], "\n## ") {
		t.Fatal("the README's first screen has no ```sh block before its first section")
	}
	var commands []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		line, _, _ = strings.Cut(line, " #")
		commands = append(commands, strings.TrimSpace(line))
	}
	return commands
}

// preText returns the text of the <pre> with the given id in page.
func preText(t *testing.T, page, id string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "pre" && hasAttr(n, "id", id) {
			var sb strings.Builder
			for c := range n.Descendants() {
				if c.Type == html.TextNode {
					sb.WriteString(c.Data)
				}
			}
			return sb.String()
		}
	}
	t.Fatalf("no <pre id=%q> on the page:\n%s", id, page)
	return ""
}

func hasAttr(n *html.Node, key, val string) bool {
	for _, a := range n.Attr {
		if a.Key == key && a.Val == val {
			return true
		}
	}
	return false
}

// TestREADMEFirstScreen follows the README's first screen as a newcomer
// does, and connects a client as the Connect page says: on a fresh clone
// of this repository's HEAD, in a fresh $HOME with no zero on the PATH,
// it runs the first command exactly as the README writes it (plus --addr
// 127.0.0.1:0, as the README says a taken port needs), which must build
// zero where the README says, name the packages as it builds them, and
// serve; signs in with the link it prints; approves zero mcp filesystem
// on a folder; makes a token for that server on the Connect page, saves it
// with the page's command, and starts the TypeScript SDK's client with
// exactly the Claude Desktop entry the page shows, which lists and calls
// the server's tool.
//
// Caches: $HOME is fresh, so is GOPATH (where go install puts zero), but
// the Go build cache (GOCACHE) and module cache (GOMODCACHE, GOPROXY=off:
// no network) are the machine's. An empty build cache changes how long
// the build takes, not what it builds, and costs minutes on a small
// machine; the README gives that time.
func TestREADMEFirstScreen(t *testing.T) {
	script, _ := filepath.Abs("../../node/tsentry.mjs")
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules/@modelcontextprotocol/sdk")); err != nil {
		if os.Getenv("ZERO_REQUIRE_NODE") != "" {
			t.Fatalf("ZERO_REQUIRE_NODE is set but the npm packages are missing: %v", err)
		}
		t.Skip("npm packages not installed; run: npm ci --prefix node")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git checkout, nothing to clone: %v", err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	commands := readmeFirstScreen(t, string(readme))
	if len(commands) != 2 || commands[1] != "scripts/test" {
		t.Fatalf("the README's first screen is %q: want two commands, zero serve's and then scripts/test", commands)
	}

	dir := t.TempDir()
	clone, home, files := filepath.Join(dir, "zero"), filepath.Join(dir, "home"), filepath.Join(dir, "files")
	for _, d := range []string{home, files} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "clone", "--quiet", strings.TrimSpace(string(top)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(files, "note.txt"), []byte("read through the entry\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	goEnv, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	caches := strings.Split(strings.TrimSpace(string(goEnv)), "\n")
	if err != nil || len(caches) != 2 {
		t.Fatalf("go env: %v %q", err, goEnv)
	}
	// PATH holds go, git, node and the system's programs, and no zero.
	var path []string
	for _, program := range []string{"go", "git", "node", "sh"} {
		p, err := exec.LookPath(program)
		if err != nil {
			t.Fatal(err)
		}
		path = append(path, filepath.Dir(p))
	}
	env := []string{"HOME=" + home, "PATH=" + strings.Join(path, ":"), "GOCACHE=" + caches[0], "GOMODCACHE=" + caches[1],
		"GOPROXY=off", "GOTOOLCHAIN=local"}
	if p, err := lookPathIn("zero", path); err == nil {
		t.Fatalf("%s is on the PATH the test gives", p)
	}

	// The first command, as written; then the link it prints.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	serve := exec.CommandContext(ctx, "sh", "-c", commands[0]+" --addr 127.0.0.1:0")
	serve.Dir, serve.Env = clone, env
	serve.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	serve.Cancel = func() error { return syscall.Kill(-serve.Process.Pid, syscall.SIGKILL) }
	pipe, _ := serve.StderrPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-serve.Process.Pid, syscall.SIGINT)
		serve.Wait()
	})
	var printed []string
	var base, link string
	lines := bufio.NewScanner(pipe)
	for link == "" && lines.Scan() {
		l := lines.Text()
		printed = append(printed, l)
		if i := strings.Index(l, " at http://"); i >= 0 {
			base = strings.TrimSpace(l[i+4:])
		}
		if strings.Contains(l, "/login?token=") {
			link = strings.TrimSpace(l)
		}
	}
	if base == "" || !strings.HasPrefix(link, base+"/login?token=") {
		t.Fatalf("%s: no URL or login link (%v); it printed:\n%s", commands[0], ctx.Err(), strings.Join(printed, "\n"))
	}
	go io.Copy(io.Discard, pipe)
	zero := filepath.Join(home, "go", "bin", "zero")
	if _, err := os.Stat(zero); err != nil {
		t.Fatalf("zero is not where the README says go install puts it: %v", err)
	}
	if !slices.Contains(printed, "github.com/zero-dev/zero/cmd/zero") {
		t.Errorf("the build did not name the packages it built; it printed:\n%s", strings.Join(printed, "\n"))
	}

	// Sign in, and approve zero mcp filesystem on files.
	p := &serveProcess{base: base, home: filepath.Join(home, ".zero")}
	browser, headers := owner(t, p, link)
	server := wsAdd(t, p, browser, headers, map[string]any{"name": "files", "kind": "stdio", "command": zero,
		"args": []string{"mcp", "filesystem", files}}, nil)

	// A token for that server on the Connect page, saved with its command.
	form := url.Values{"csrf_token": {headers["X-CSRF-Token"]}, "name": {"desktop"}, "scope": {"some"}, "server": {strconv.FormatInt(server.ID, 10)}}
	req, _ := http.NewRequest("POST", base+"/connect/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Request.URL.Path, "/connect") {
		t.Fatalf("POST /connect/token led to %s: %d\n%s", resp.Request.URL, resp.StatusCode, page)
	}
	save := exec.Command("sh", "-c", preText(t, string(page), "save-token"))
	save.Env = env
	if out, err := save.CombinedOutput(); err != nil {
		t.Fatalf("the page's save command: %v\n%s", err, out)
	}

	// The TypeScript SDK's client, started with Claude Desktop's entry.
	var desktop struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(preText(t, string(page), "config-claude-desktop")), &desktop); err != nil {
		t.Fatal(err)
	}
	node := exec.CommandContext(ctx, "node", script, string(desktop.MCPServers["zero"]), "files__read_text_file",
		`{"path": `+strconv.Quote(filepath.Join(files, "note.txt"))+`}`)
	node.Env = env
	out, err := node.Output()
	var result struct {
		OK    bool
		Text  string
		Error string
	}
	json.Unmarshal(out, &result)
	if err != nil || !result.OK || result.Text != "read through the entry\n" {
		t.Fatalf("the TypeScript client with the entry %s: %v %s", desktop.MCPServers["zero"], err, out)
	}
}

// lookPathIn finds program in the directories of path, as a shell would.
func lookPathIn(program string, path []string) (string, error) {
	for _, dir := range path {
		p := filepath.Join(dir, program)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}
