package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestServersPreviewAndListSayWhatRuns: zero servers preview prints the
// program a command resolves to, as the review page does, or that nothing
// would run; zero servers list flags the draft whose command resolves to
// no program, and only it.
func TestServersPreviewAndListSayWhatRuns(t *testing.T) {
	p := startServe(t, nil)
	addr := strings.TrimPrefix(p.base, "http://")
	browser, headers := owner(t, p, p.link)
	saveToken(t, p, browser, headers)
	program, err := filepath.EvalSymlinks("/bin/true")
	if err != nil {
		t.Fatal(err)
	}

	stdout, stderr, code := zeroIn(t, p.home, "servers", "preview", "--addr", addr, "--name", "truth", "--command", "/bin/true")
	if want := "runs:        " + strconv.Quote(program) + " (the program the command resolves to in zero serve's PATH, links resolved)\n"; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("zero servers preview: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
	stdout, stderr, code = zeroIn(t, p.home, "servers", "preview", "--addr", addr, "--name", "ghost", "--command", "no-such-program-7f3a")
	if want := "runs:        nothing: the command resolves to no executable file\n"; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("zero servers preview of a command that resolves to nothing: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}

	for _, args := range [][]string{{"--name", "truth", "--command", "/bin/true"}, {"--name", "ghost", "--command", "no-such-program-7f3a"}} {
		if _, stderr, code := zeroIn(t, p.home, append([]string{"servers", "add", "--addr", addr}, args...)...); code != 0 {
			t.Fatalf("zero servers add %q: exit %d, %s", args, code, stderr)
		}
	}
	stdout, stderr, code = zeroIn(t, p.home, "servers", "list", "--addr", addr)
	if code != 0 {
		t.Fatalf("zero servers list: exit %d, %s", code, stderr)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(stdout, "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			lines[f[1]] = l
		}
	}
	if !strings.HasSuffix(lines["NAME"], "NOTE") {
		t.Errorf("zero servers list has no NOTE column:\n%s", stdout)
	}
	if !strings.HasSuffix(lines["ghost"], `cannot run: "no-such-program-7f3a" resolves to no executable file`) {
		t.Errorf("zero servers list does not flag the draft that cannot run:\n%s", stdout)
	}
	if strings.Contains(lines["truth"], "cannot run") || lines["truth"] == "" {
		t.Errorf("zero servers list flags a draft that can run:\n%s", stdout)
	}
}
