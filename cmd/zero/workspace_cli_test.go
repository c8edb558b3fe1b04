package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/testnet"
)

// zeroIn runs the real binary with ZERO_HOME=home and returns its stdout,
// stderr and exit code.
func zeroIn(t *testing.T, home string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, zeroBinary(t), args...)
	cmd.Env = append(os.Environ(), "ZERO_HOME="+home)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("zero %q: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// owner signs in to p with its login link and returns the browser and the
// headers a browser's unsafe request carries.
func owner(t *testing.T, p *serveProcess, link string) (*http.Client, map[string]string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(link)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("login link %s: %v %v", link, resp, err)
	}
	resp.Body.Close()
	var session struct {
		CSRF string `json:"csrf_token"`
	}
	getJSON(t, browser, "GET", p.base+"/api/session", nil, nil, &session)
	return browser, map[string]string{"X-CSRF-Token": session.CSRF, "Sec-Fetch-Site": "same-origin", "Origin": p.base}
}

// saveToken creates a token in the owner's browser session and saves it,
// mode 0600, in $ZERO_HOME/cli-token.
func saveToken(t *testing.T, p *serveProcess, browser *http.Client, headers map[string]string) (id int64) {
	t.Helper()
	var tok struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	getJSON(t, browser, "POST", p.base+"/api/tokens", map[string]string{"name": "cli"}, headers, &tok)
	if err := os.WriteFile(filepath.Join(p.home, "cli-token"), []byte(tok.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return tok.ID
}

// TestServersChecksBeforeSending runs zero servers add and preview with
// flags missing against a listener that is not a workspace: each names
// what is missing, exit code 2, before reading the token (there is none)
// or connecting.
func TestServersChecksBeforeSending(t *testing.T) {
	l := testnet.Listen(t)
	home := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"servers", "add"}, "zero servers add: missing --name and --command (the program to run); for an http or sse server, give --kind and --url instead"},
		{[]string{"servers", "preview"}, "zero servers preview: missing --name and --command"},
		{[]string{"servers", "add", "--name", "files"}, "missing --command (the program to run)"},
		{[]string{"servers", "add", "--command", "/bin/true"}, "missing --name\n"},
		{[]string{"servers", "add", "--name", "docs", "--kind", "http"}, "missing --url (the server's https URL)"},
	}
	for _, tt := range tests {
		stdout, stderr, code := zeroIn(t, home, append(tt.args, "--addr", l.Addr)...)
		if code != 2 || !strings.Contains(stderr, tt.want) || strings.Contains(stderr, "token") || stdout != "" {
			t.Errorf("zero %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
	if n := l.WaitAccepted(1, 300*time.Millisecond); n != 0 {
		t.Errorf("%d connections reached the listener; nothing should have been sent", n)
	}
	// The listener does see a command that goes as far as sending.
	file := filepath.Join(home, "token")
	os.WriteFile(file, []byte("zt_x\n"), 0o600)
	zeroIn(t, home, "servers", "add", "--name", "files", "--command", "/bin/true", "--addr", l.Addr, "--token-file", file)
	if n := l.WaitAccepted(1, 5*time.Second); n == 0 {
		t.Error("a complete zero servers add never reached the listener")
	}
}

// TestServersTokens checks what zero servers says when the token file is
// missing, and when the workspace refuses a token that was revoked.
func TestServersTokens(t *testing.T) {
	p := startServe(t, nil)
	addr := strings.TrimPrefix(p.base, "http://")
	file := filepath.Join(p.home, "cli-token")

	_, stderr, code := zeroIn(t, p.home, "servers", "list", "--addr", addr)
	if code != 2 || !strings.Contains(stderr, "no token file "+file) || !strings.Contains(stderr, p.base+"/tokens") || !strings.Contains(stderr, "mode 0600") {
		t.Errorf("no token file: exit %d, stderr %q", code, stderr)
	}

	browser, headers := owner(t, p, p.link)
	id := saveToken(t, p, browser, headers)
	if stdout, stderr, code := zeroIn(t, p.home, "servers", "list", "--addr", addr); code != 0 || !strings.Contains(stdout, "NAME") {
		t.Fatalf("zero servers list with a good token: exit %d, %q %q", code, stdout, stderr)
	}
	var revoked any
	getJSON(t, browser, "DELETE", p.base+"/api/tokens/"+strconv.FormatInt(id, 10), nil, headers, &revoked)
	_, stderr, code = zeroIn(t, p.home, "servers", "list", "--addr", addr)
	want := "the token in " + file + " was refused (revoked, or from another workspace): create a new one on the Tokens page, " + p.base + "/tokens"
	if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "not signed in") {
		t.Errorf("a revoked token: exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}
}

// TestServersErrors checks that an error answer shows the API's code and
// message, and that an answer from something else says so.
func TestServersErrors(t *testing.T) {
	p := startServe(t, nil)
	addr := strings.TrimPrefix(p.base, "http://")
	browser, headers := owner(t, p, p.link)
	saveToken(t, p, browser, headers)

	_, stderr, code := zeroIn(t, p.home, "servers", "add", "--addr", addr, "--name", "bad name", "--command", "/bin/true")
	if code != 1 || !strings.Contains(stderr, "POST /api/servers: 400 invalid_config: invalid configuration: ") || !strings.Contains(stderr, "name") {
		t.Errorf("an invalid configuration: exit %d, stderr %q", code, stderr)
	}

	other := httptest.NewServer(http.NotFoundHandler()) // on 127.0.0.1
	t.Cleanup(other.Close)
	_, stderr, code = zeroIn(t, p.home, "servers", "list", "--addr", strings.TrimPrefix(other.URL, "http://"))
	if code != 1 || !strings.Contains(stderr, "GET /api/servers: 404 Not Found, with no error code: is "+other.URL+" a zero workspace?") {
		t.Errorf("not a workspace: exit %d, stderr %q", code, stderr)
	}
}

// TestSecondServe starts a second zero serve on the same $ZERO_HOME: it
// names the one running and where, and exits 1 without serving.
func TestSecondServe(t *testing.T) {
	p := startServe(t, nil)
	stdout, stderr, code := zeroIn(t, p.home, "serve", "--addr", "127.0.0.1:0")
	want := fmt.Sprintf("zero serve: a zero serve is already running on %s at %s (pid %d): use it, or stop it first; 'zero login' prints a new login link",
		p.home, p.base, p.cmd.Process.Pid)
	if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "login?token=") || stdout != "" {
		t.Errorf("second zero serve: exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, want)
	}
	// The first one still serves.
	resp, err := http.Get(p.link)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the first server's login link after the second start: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestLogin gets a new login link from zero login while zero serve runs:
// it signs the owner in, without the audit log being touched, and works
// once.
func TestLogin(t *testing.T) {
	p := startServe(t, nil)
	auditLog := filepath.Join(p.home, "audit.log")
	before, err := os.ReadFile(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := zeroIn(t, p.home, "login")
	link := strings.TrimSpace(stdout)
	if code != 0 || !strings.HasPrefix(link, p.base+"/login?token=") || link == p.link || !strings.Contains(stderr, "valid 15m0s, once") {
		t.Fatalf("zero login: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if after, _ := os.ReadFile(auditLog); !bytes.Equal(before, after) {
		t.Error("zero login changed the audit log")
	}
	if again, _, _ := zeroIn(t, p.home, "login"); strings.TrimSpace(again) == link {
		t.Error("zero login printed the same link twice")
	}
	if _, headers := owner(t, p, link); headers["X-CSRF-Token"] == "" {
		t.Error("the new link gave no session")
	}
	once := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := once.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "zero_session" && c.Value != "" {
			t.Error("the link from zero login worked twice")
		}
	}
}

// TestLoginWithoutServer runs zero login where no server runs: on a fresh
// home, and on one whose server died, leaving its lock file. Each says so
// and how to start one, exit 1; and zero serve starts again on the second.
func TestLoginWithoutServer(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	stdout, stderr, code := zeroIn(t, home, "login")
	want := "no zero serve is running on " + home + ": start one with 'zero serve', which prints a login link"
	if code != 1 || !strings.Contains(stderr, want) || stdout != "" {
		t.Errorf("zero login on a fresh home: exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, want)
	}

	p := startServe(t, nil)
	p.cmd.Process.Kill()
	p.cmd.Wait()
	if data, err := os.ReadFile(filepath.Join(p.home, "serve.lock")); err != nil || !strings.Contains(string(data), p.base) {
		t.Fatalf("the killed server left no lock file naming it: %q %v", data, err)
	}
	stdout, stderr, code = zeroIn(t, p.home, "login")
	if code != 1 || !strings.Contains(stderr, "no zero serve is running on "+p.home) || stdout != "" {
		t.Errorf("zero login after the server died: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	again := startServeIn(t, p.home, nil)
	if stdout, _, code := zeroIn(t, p.home, "login"); code != 0 || !strings.HasPrefix(stdout, again.base+"/login?token=") {
		t.Errorf("zero login once zero serve runs again: exit %d, %q", code, stdout)
	}
}

// TestServeLockStates holds $ZERO_HOME/serve.lock from the test, as a
// server would, and checks what zero serve and zero login make of it: a
// server still starting (no URL yet), and one that keeps another database
// schema, whose database zero login must not migrate.
func TestServeLockStates(t *testing.T) {
	home := t.TempDir()
	f, err := os.OpenFile(filepath.Join(home, "serve.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	f.WriteString("pid 4242\n")
	_, stderr, code := zeroIn(t, home, "serve", "--addr", "127.0.0.1:0")
	if code != 1 || !strings.Contains(stderr, "another zero serve is starting on "+home+" (pid 4242)") {
		t.Errorf("zero serve beside one starting: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code := zeroIn(t, home, "login"); code != 1 || !strings.Contains(stderr, "zero serve on "+home+" is still starting") {
		t.Errorf("zero login beside a server starting: exit %d, stderr %q", code, stderr)
	}

	f.Truncate(0)
	f.WriteAt([]byte("url http://127.0.0.1:1\npid 4242\nschema 999\n"), 0)
	_, stderr, code = zeroIn(t, home, "login")
	if code != 1 || !strings.Contains(stderr, "the zero serve at http://127.0.0.1:1 uses database schema 999") {
		t.Errorf("zero login beside another schema: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(home, "zero.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("zero login opened the database of a server with another schema: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, "audit.log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused zero serve or zero login touched the audit log: %v", err)
	}
}
