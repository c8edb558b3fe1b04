package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/testnet"
)

// requireBubblewrap skips a test where the bubblewrap probe fails, unless
// ZERO_REQUIRE_BWRAP is set, where it fails instead.
func requireBubblewrap(t testing.TB) {
	t.Helper()
	if err := (BubblewrapRunner{}).Probe(context.Background()); err != nil {
		if os.Getenv("ZERO_REQUIRE_BWRAP") != "" {
			t.Fatalf("ZERO_REQUIRE_BWRAP is set but bubblewrap is unusable: %v", err)
		}
		t.Skipf("bubblewrap unusable: %v", err)
	}
}

// newWorkspace makes an empty canonical folder.
func newWorkspace(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// runBubblewrap runs g, with a fresh workspace unless g has one, and checks
// that the Result names bubblewrap.
func runBubblewrap(t testing.TB, g Guest) Result {
	t.Helper()
	if g.Workspace == "" {
		g.Workspace = newWorkspace(t)
	}
	if g.Limits.Wall == 0 {
		g.Limits.Wall = 20 * time.Second
	}
	res, err := BubblewrapRunner{}.Run(context.Background(), g)
	if err != nil {
		t.Fatalf("Run(%q) = %v", g.Argv, err)
	}
	if res.Backend != Bubblewrap {
		t.Fatalf("Result.Backend = %q, want %q", res.Backend, Bubblewrap)
	}
	return res
}

func sh(script string) []string { return []string{"/bin/sh", "-c", script} }

// TestBubblewrapNoNetwork: a guest cannot reach a server on the host's
// loopback.
func TestBubblewrapNoNetwork(t *testing.T) {
	requireBubblewrap(t)
	ln := testnet.Listen(t)
	res := runBubblewrap(t, Guest{Argv: []string{"/bin/bash", "-c", "echo hi > /dev/tcp/127.0.0.1/" + ln.Port + " && echo connected"}})
	if res.ExitCode == 0 || strings.Contains(string(res.Stdout), "connected") {
		t.Errorf("the guest connected to 127.0.0.1:%s: exit %d, %q", ln.Port, res.ExitCode, res.Stdout)
	}
	if n := ln.WaitAccepted(1, time.Second); n != 0 {
		t.Errorf("the server accepted %d connections from the guest", n)
	}
}

// TestBubblewrapHostFilesHidden: a guest cannot read a file next to its
// workspace (a canary in a fake ZERO_HOME), nor list the folder they share.
func TestBubblewrapHostFilesHidden(t *testing.T) {
	requireBubblewrap(t)
	parent := newWorkspace(t)
	home, ws := filepath.Join(parent, "zero-home"), filepath.Join(parent, "ws")
	for _, d := range []string{home, ws} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	canary := "canary-" + randomHex(t)
	if err := os.WriteFile(filepath.Join(home, "secrets.db"), []byte(canary), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runBubblewrap(t, Guest{Workspace: ws, Argv: sh("cat " + filepath.Join(home, "secrets.db") + " /work/../zero-home/secrets.db; ls " + parent + " " + home)})
	if bytes.Contains(res.Stdout, []byte(canary)) || bytes.Contains(res.Stdout, []byte("secrets.db")) {
		t.Errorf("the guest read outside its workspace: %q", res.Stdout)
	}
	if res.ExitCode == 0 {
		t.Errorf("reading outside the workspace succeeded: %q", res.Stdout)
	}
}

// TestBubblewrapEnvironment: a guest's environment is exactly guestEnv;
// nothing of Zero's reaches it, neither a secret nor a default envscrub
// would copy (LANG), not even through bubblewrap's own process, pid 1.
func TestBubblewrapEnvironment(t *testing.T) {
	requireBubblewrap(t)
	canary := "canary-" + randomHex(t)
	t.Setenv("ZERO_TEST_SECRET", canary)
	t.Setenv("LANG", canary)
	res := runBubblewrap(t, Guest{Argv: []string{"/usr/bin/env"}})
	got := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	want := []string{"PWD=/work"} // bubblewrap's --chdir sets it
	for name, v := range guestEnv() {
		want = append(want, name+"="+v)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("guest environment = %q, want %q", got, want)
	}
	res = runBubblewrap(t, Guest{Argv: sh("tr '\\0' '\\n' < /proc/1/environ; tr '\\0' '\\n' < /proc/self/environ")})
	if bytes.Contains(res.Stdout, []byte(canary)) || !bytes.Contains(res.Stdout, []byte("PATH=/usr/bin:/bin")) {
		t.Errorf("environments in the guest: %q %q", res.Stdout, res.Stderr)
	}
}

// TestBubblewrapMemoryLimit: a guest that keeps allocating is killed at its
// memory limit, and the Result says so; one that does not is not.
func TestBubblewrapMemoryLimit(t *testing.T) {
	requireBubblewrap(t)
	lim := Limits{MemoryBytes: 32 << 20}
	res := runBubblewrap(t, Guest{Argv: []string{"/usr/bin/tail", "/dev/zero"}, Limits: lim})
	if !res.MemoryKilled || res.TimedOut || res.ExitCode == 0 {
		t.Errorf("memory hog: MemoryKilled %v, TimedOut %v, exit %d, %q", res.MemoryKilled, res.TimedOut, res.ExitCode, res.Stderr)
	}
	if res := runBubblewrap(t, Guest{Argv: []string{"/bin/true"}, Limits: lim}); res.MemoryKilled || res.ExitCode != 0 {
		t.Errorf("true: MemoryKilled %v, exit %d", res.MemoryKilled, res.ExitCode)
	}
}

// TestBubblewrapPidsLimit: a guest that starts 200 processes at once never
// has more than Limits.Pids (counted on the host, bubblewrap's own
// included, while it runs), it ends on its own or at its wall time, and
// none of its processes is left once Run returns.
func TestBubblewrapPidsLimit(t *testing.T) {
	requireBubblewrap(t)
	const pids = 16
	marker := "30." + strconv.Itoa(int(time.Now().UnixNano()%1e9))
	script := "i=0; while [ $i -lt 200 ]; do /bin/sleep " + marker + " & i=$((i+1)); done; wait"
	done := make(chan struct{})
	most := make(chan int, 1)
	go func() {
		n := 0
		for {
			n = max(n, countProcesses(marker))
			select {
			case <-done:
				most <- n
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	res := runBubblewrap(t, Guest{Argv: sh(script), Limits: Limits{Pids: pids, Wall: 3 * time.Second}})
	close(done)
	seen := <-most
	if seen > pids {
		t.Errorf("%d processes of the guest at once, over its limit of %d", seen, pids)
	}
	if !bytes.Contains(res.Stderr, []byte("fork")) {
		t.Errorf("no fork failed in the guest: exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
	if n := countProcesses(marker); n != 0 {
		t.Errorf("%d processes of the guest left after Run", n)
	}
	t.Logf("at most %d processes seen; exit %d, timed out %v", seen, res.ExitCode, res.TimedOut)
}

// countProcesses counts the host's processes whose command line holds s.
func countProcesses(s string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.Contains(cmdline, []byte(s)) {
			n++
		}
	}
	return n
}

// TestBubblewrapNonRoot: a guest runs as user and group 65534, with no
// capabilities, though Zero runs as root here.
func TestBubblewrapNonRoot(t *testing.T) {
	requireBubblewrap(t)
	res := runBubblewrap(t, Guest{Argv: sh("id -u; id -g; grep CapEff /proc/self/status")})
	if got, want := string(res.Stdout), "65534\n65534\nCapEff:\t0000000000000000\n"; got != want {
		t.Errorf("guest identity = %q, want %q (stderr %q)", got, want, res.Stderr)
	}
}

// TestBubblewrapWritesOnlyWork: a guest can write in /work, which is its
// workspace, and nowhere else that outlives it: the root, /usr and /etc
// are read-only.
func TestBubblewrapWritesOnlyWork(t *testing.T) {
	requireBubblewrap(t)
	ws := newWorkspace(t)
	name := "zero-sandbox-test-" + randomHex(t)
	var script []string
	for _, d := range []string{"/", "/usr/", "/etc/", "/bin/", "/work/../"} {
		script = append(script, "touch "+d+name+" && echo wrote "+d)
	}
	script = append(script, "touch /work/"+name+" && echo wrote /work/")
	res := runBubblewrap(t, Guest{Workspace: ws, Argv: sh(strings.Join(script, "; "))})
	if got, want := string(res.Stdout), "wrote /work/\n"; got != want {
		t.Errorf("guest wrote %q, want %q (stderr %q)", got, want, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, name)); err != nil {
		t.Errorf("the file written in /work is not in the workspace: %v", err)
	}
	for _, d := range []string{"/", "/usr/", "/etc/", "/usr/bin/"} {
		if _, err := os.Lstat(d + name); !errors.Is(err, os.ErrNotExist) {
			os.Remove(d + name)
			t.Errorf("%s%s was written on the host", d, name)
		}
	}
}

// TestBubblewrapCopyAndBind: in Copy mode the guest sees a copy of the
// workspace and its changes are thrown away, with the copy; in bind mode
// they stay.
func TestBubblewrapCopyAndBind(t *testing.T) {
	requireBubblewrap(t)
	tmp := newWorkspace(t)
	t.Setenv("TMPDIR", tmp) // where the scratch copy is made
	ws := newWorkspace(t)
	if err := os.WriteFile(filepath.Join(ws, "f"), []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	change := sh("cat /work/f; echo after > /work/f; echo new > /work/new; mkdir /work/d")

	res := runBubblewrap(t, Guest{Workspace: ws, Copy: true, Argv: change})
	if string(res.Stdout) != "before\n" || res.ExitCode != 0 {
		t.Errorf("copy: the guest read %q (exit %d, %q)", res.Stdout, res.ExitCode, res.Stderr)
	}
	if got := workspaceFiles(t, ws); !slices.Equal(got, []string{"f=before\n"}) {
		t.Errorf("copy: the workspace became %q", got)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("copy: %d entries left in the temporary folder", len(left))
	}

	runBubblewrap(t, Guest{Workspace: ws, Argv: change})
	if got, want := workspaceFiles(t, ws), []string{"d/", "f=after\n", "new=new\n"}; !slices.Equal(got, want) {
		t.Errorf("bind: the workspace became %q, want %q", got, want)
	}
}

// workspaceFiles lists ws's entries with their contents, sorted.
func workspaceFiles(t *testing.T, ws string) []string {
	t.Helper()
	entries, err := os.ReadDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name()+"/")
			continue
		}
		data, err := os.ReadFile(filepath.Join(ws, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Name()+"="+string(data))
	}
	return out
}

// TestBubblewrapProgramInWorkspace: a program in the workspace runs from
// /work, with its arguments and standard input.
func TestBubblewrapProgramInWorkspace(t *testing.T) {
	requireBubblewrap(t)
	ws := newWorkspace(t)
	if err := os.WriteFile(filepath.Join(ws, "tool"), []byte("#!/bin/sh\necho \"$0 $1 $(cat)\"; pwd\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := runBubblewrap(t, Guest{Workspace: ws, Argv: []string{"/work/tool", "arg"}, Stdin: []byte("input")})
	if got, want := string(res.Stdout), "/work/tool arg input\n/work\n"; got != want {
		t.Errorf("stdout = %q, want %q (stderr %q)", got, want, res.Stderr)
	}
}

// TestBubblewrapWallAndOutput: a guest is killed at its wall time, and its
// output is cut at MaxOutput.
func TestBubblewrapWallAndOutput(t *testing.T) {
	requireBubblewrap(t)
	res := runBubblewrap(t, Guest{Argv: []string{"/bin/sleep", "30"}, Limits: Limits{Wall: 200 * time.Millisecond}})
	if !res.TimedOut || res.ExitCode != -1 {
		t.Errorf("sleep: TimedOut %v, exit %d", res.TimedOut, res.ExitCode)
	}
	res = runBubblewrap(t, Guest{Argv: sh("head -c " + strconv.Itoa(MaxOutput+10) + " /dev/zero")})
	if len(res.Stdout) != MaxOutput || !res.OutputCut || res.ExitCode != 0 {
		t.Errorf("output: %d bytes, cut %v, exit %d", len(res.Stdout), res.OutputCut, res.ExitCode)
	}
}

// TestBubblewrapRefusesBadGuests: nothing runs for a guest without a
// program, with a relative one, or with a workspace that is not canonical.
func TestBubblewrapRefusesBadGuests(t *testing.T) {
	ws := newWorkspace(t)
	link := filepath.Join(newWorkspace(t), "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	for _, g := range []Guest{
		{Workspace: ws},
		{Workspace: ws, Argv: []string{"sh", "-c", "true"}},
		{Workspace: ws, Argv: []string{"/work/../bin/true"}},
		{Workspace: link, Argv: []string{"/bin/true"}},
		{Workspace: "relative", Argv: []string{"/bin/true"}},
	} {
		if res, err := (BubblewrapRunner{}).Run(context.Background(), g); err == nil || res.Backend != Bubblewrap {
			t.Errorf("%+v: %+v, %v; want a refusal", g, res, err)
		}
	}
}

func randomHex(t testing.TB) string {
	t.Helper()
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// TestBubblewrapReadOnly: host paths given as ReadOnly are seen, read-only
// (the static payload of the runsc tests, run from the workspace); one the
// guest has of its own is refused.
func TestBubblewrapReadOnly(t *testing.T) {
	requireBubblewrap(t)
	checkReadOnlyPaths(t, func(t *testing.T, ws string, g Guest, args ...string) Result {
		t.Helper()
		g.Argv = append([]string{"/work/payload"}, args...)
		g.Workspace = ws
		res, err := BubblewrapRunner{}.Run(context.Background(), g)
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		return res
	}, runscWorkspace(t))
	ws := newWorkspace(t)
	for _, p := range []string{"/", "/proc/self", "/dev", "/work", "relative", "/usr/../etc"} {
		if _, err := (BubblewrapRunner{}).Run(context.Background(), Guest{Argv: []string{"/bin/true"}, Workspace: ws, ReadOnly: []string{p}}); err == nil {
			t.Errorf("read-only path %q: ran", p)
		}
	}
}
