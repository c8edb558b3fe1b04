package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/testnet"
)

// TestServePortInUse runs zero serve on an address another program holds:
// it exits 1 saying so and naming a free port to pass to --addr, before
// it makes anything, so a new $ZERO_HOME is not created and an existing
// one is left exactly as it was. The port it names then serves.
func TestServePortInUse(t *testing.T) {
	held := testnet.Listen(t)
	fresh := filepath.Join(t.TempDir(), "home")
	existing := t.TempDir()
	if err := os.WriteFile(filepath.Join(existing, "note"), []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	suggest := regexp.MustCompile(`such as zero serve --addr (127\.0\.0\.1:[0-9]+)\n`)
	var suggested string
	for _, home := range []string{fresh, existing} {
		stdout, stderr, code := zeroIn(t, home, "serve", "--addr", held.Addr)
		want := "zero serve: " + held.Addr + " is in use by another program: pick another port with --addr, such as zero serve --addr 127.0.0.1:"
		m := suggest.FindStringSubmatch(stderr)
		if code != 1 || !strings.Contains(stderr, want) || m == nil || m[1] == held.Addr || stdout != "" {
			t.Fatalf("zero serve on a port in use: exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, want)
		}
		suggested = m[1]
	}
	if _, err := os.Lstat(fresh); !os.IsNotExist(err) {
		t.Errorf("a port in use left %s made (%v)", fresh, err)
	}
	names, note := dirNames(t, existing), readFile(t, filepath.Join(existing, "note"))
	if !slices.Equal(names, []string{"note"}) || note != "mine\n" {
		t.Errorf("a port in use changed the existing home: %v, %q", names, note)
	}
	// On loopback it names itself localhost, where passkeys work.
	if p := startServeIn(t, fresh, nil, "--addr", suggested); p.base != "http://localhost:"+strings.TrimPrefix(suggested, "127.0.0.1:") {
		t.Errorf("zero serve --addr %s serves at %s", suggested, p.base)
	}
}

// dirNames lists a directory's names, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestServersListScoped lists the servers with a token limited to one of
// two: zero servers list shows that one and says the list is limited; with
// a token for every server it shows both and says nothing of a limit.
func TestServersListScoped(t *testing.T) {
	p := startServe(t, nil)
	addr := strings.TrimPrefix(p.base, "http://")
	browser, headers := owner(t, p, p.link)
	var ids []int64
	for _, name := range []string{"alpha", "beta"} {
		var c struct {
			Server struct{ ID int64 } `json:"server"`
		}
		getJSON(t, browser, "POST", p.base+"/api/servers", map[string]any{"config": map[string]any{"name": name, "kind": "stdio", "command": "/bin/true"}}, headers, &c)
		ids = append(ids, c.Server.ID)
	}
	for _, tc := range []struct {
		name    string
		servers []int64
		listed  []string
		note    string
	}{
		{"desktop", ids[1:], []string{"beta"}, "is limited to 1 server: only those are listed, and the workspace may have more"},
		{"cli", nil, []string{"alpha", "beta"}, ""},
	} {
		var tok struct{ Token string }
		getJSON(t, browser, "POST", p.base+"/api/tokens", map[string]any{"name": tc.name, "servers": tc.servers}, headers, &tok)
		file := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(file, []byte(tok.Token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := zeroIn(t, p.home, "servers", "list", "--addr", addr, "--token-file", file)
		var listed []string
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
			listed = append(listed, strings.Fields(line)[1])
		}
		if code != 0 || !slices.Equal(listed, tc.listed) {
			t.Errorf("%s: exit %d, listed %q, stdout %q, stderr %q", tc.name, code, listed, stdout, stderr)
		}
		if tc.note == "" && strings.Contains(stderr, "limited") || tc.note != "" && !strings.Contains(stderr, "The token in "+file+" "+tc.note) {
			t.Errorf("%s: stderr %q, want %q", tc.name, stderr, tc.note)
		}
	}
}
