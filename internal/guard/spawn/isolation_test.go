package spawn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/testnet"
)

// requireIsolation skips a test when bubblewrap does not work here, unless
// ZERO_REQUIRE_BWRAP is set (as in CI), where it fails instead.
func requireIsolation(t testing.TB) {
	t.Helper()
	if err := IsolationAvailable(); err != nil {
		if os.Getenv("ZERO_REQUIRE_BWRAP") != "" {
			t.Fatalf("ZERO_REQUIRE_BWRAP is set but isolation is unavailable: %v", err)
		}
		t.Skipf("isolation unavailable: %v", err)
	}
}

func runIsolated(t *testing.T, c Cmd) Result {
	t.Helper()
	c.Isolation = Bubblewrap
	res := run(t, c)
	if res.Isolation != Bubblewrap {
		t.Fatalf("Result.Isolation = %q, want %q", res.Isolation, Bubblewrap)
	}
	return res
}

// TestIsolationNoNetwork checks that a sandboxed process cannot reach a TCP
// server on the host's loopback, which the same command reaches without the
// sandbox.
func TestIsolationNoNetwork(t *testing.T) {
	requireIsolation(t)
	ln := testnet.Listen(t)
	port := ln.Port
	connect := Cmd{Program: "bash", Args: []string{"-c", "echo hi > /dev/tcp/127.0.0.1/" + port}}

	res := runIsolated(t, connect)
	if res.ExitCode == 0 {
		t.Errorf("sandboxed connect to 127.0.0.1:%s succeeded", port)
	}
	time.Sleep(100 * time.Millisecond)
	if n := ln.Accepted(); n != 0 {
		t.Fatalf("the server accepted %d connections from the sandbox", n)
	}

	// The same command without the sandbox does connect: the probe works.
	res = run(t, connect)
	if res.ExitCode != 0 {
		t.Fatalf("unsandboxed connect failed: %s", res.Stderr)
	}
	if ln.WaitAccepted(1, 5*time.Second) != 1 {
		t.Errorf("unsandboxed connect was not accepted")
	}
}

// TestIsolationFilesystem checks the sandbox's view of the filesystem: the
// work directory is writable, other directories are invisible, and the
// system is read-only.
func TestIsolationFilesystem(t *testing.T) {
	requireIsolation(t)
	roots, dir := workspace(t)
	outside := outsideDir(t)
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cr3t"), 0o644); err != nil {
		t.Fatal(err)
	}
	sandboxed := func(script string) Result {
		return runIsolated(t, Cmd{Program: "sh", Args: []string{"-c", script}, Roots: roots, Dir: dir})
	}

	if res := sandboxed("touch inside && echo written > " + filepath.Join(dir, "inside2")); res.ExitCode != 0 {
		t.Errorf("writing in the work directory failed: %s", res.Stderr)
	}
	for _, f := range []string{"inside", "inside2"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("file written in the sandbox is not in the work directory: %v", err)
		}
	}

	for _, target := range []string{filepath.Join(outside, "outside"), "/etc/zero-spawn-test", "/usr/zero-spawn-test", "/zero-spawn-test"} {
		res := sandboxed("touch " + target)
		if res.ExitCode == 0 {
			t.Errorf("touch %s succeeded in the sandbox", target)
		}
		if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
			os.Remove(target)
			t.Errorf("%s was created on the host", target)
		}
	}

	res := sandboxed("cat " + filepath.Join(outside, "secret"))
	if res.ExitCode == 0 || strings.Contains(string(res.Stdout), "s3cr3t") {
		t.Errorf("the sandbox read a file outside its work directory: %q", res.Stdout)
	}

	res = sandboxed(`echo "$HOME"; pwd`)
	if got, want := string(res.Stdout), dir+"\n"+dir+"\n"; got != want {
		t.Errorf("HOME and working directory = %q, want %q", got, want)
	}
}

// TestIsolationHidesPrivateEtc checks that what of /etc not every user may
// read is hidden in the sandbox, even from a process that runs as root
// (as Zero does in CI), while the rest of /etc stays readable.
func TestIsolationHidesPrivateEtc(t *testing.T) {
	requireIsolation(t)
	roots, dir := workspace(t)
	var private []string
	for _, p := range []string{"/etc/shadow", "/etc/gshadow", "/etc/ssl/private"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o004 == 0 {
			private = append(private, p)
		}
	}
	if len(private) == 0 {
		t.Skip("no private file in /etc here")
	}
	for _, p := range private {
		res := runIsolated(t, Cmd{Program: "sh", Args: []string{"-c", "cat " + p + "; ls -A " + p}, Roots: roots, Dir: dir})
		if out := strings.TrimSpace(string(res.Stdout)); out != "" && out != p {
			t.Errorf("the sandbox read %s: %q", p, out)
		}
	}
	res := runIsolated(t, Cmd{Program: "sh", Args: []string{"-c", "cat /etc/passwd"}, Roots: roots, Dir: dir})
	if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "root:") {
		t.Errorf("/etc/passwd is not readable in the sandbox: %q %q", res.Stdout, res.Stderr)
	}
}

// TestIsolationPIDNamespace checks that the sandbox sees only its own
// processes.
func TestIsolationPIDNamespace(t *testing.T) {
	requireIsolation(t)
	res := runIsolated(t, Cmd{Program: "ls", Args: []string{"/proc"}})
	var seen []int
	for _, f := range strings.Fields(string(res.Stdout)) {
		if pid, err := strconv.Atoi(f); err == nil {
			seen = append(seen, pid)
		}
	}
	if len(seen) == 0 || len(seen) > 4 {
		t.Errorf("sandbox sees processes %v, want only its own few", seen)
	}
	for _, pid := range seen {
		if pid == os.Getpid() && pid > 4 {
			t.Errorf("sandbox sees the test process %d", pid)
		}
	}
}

// TestIsolationNoCapabilities checks that the sandboxed process holds no
// capability, even when Zero runs as root.
func TestIsolationNoCapabilities(t *testing.T) {
	requireIsolation(t)
	res := runIsolated(t, Cmd{Program: "grep", Args: []string{"^Cap", "/proc/self/status"}})
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	if len(lines) < 4 {
		t.Fatalf("stdout = %q", res.Stdout)
	}
	for _, line := range lines {
		if f := strings.Fields(line); len(f) != 2 || strings.Trim(f[1], "0") != "" {
			t.Errorf("sandbox has %q", line)
		}
	}
}

// TestIsolationStdioAndExitCodes checks that stdin, stdout, stderr and exit
// codes pass through the sandbox. A signal that kills the sandboxed program
// arrives as bubblewrap's exit code 128+N, not as a Signal.
func TestIsolationStdioAndExitCodes(t *testing.T) {
	requireIsolation(t)
	res := runIsolated(t, Cmd{Program: "sh", Args: []string{"-c", "cat; echo err >&2; exit 3"}, Stdin: []byte("in")})
	if string(res.Stdout) != "in" || string(res.Stderr) != "err\n" || res.ExitCode != 3 {
		t.Errorf("stdout=%q stderr=%q ExitCode=%d; want in, err, 3", res.Stdout, res.Stderr, res.ExitCode)
	}
	res = runIsolated(t, Cmd{Program: "sh", Args: []string{"-c", "kill -KILL $$"}})
	if res.ExitCode != 128+9 || res.Signal != "" {
		t.Errorf("killed in the sandbox: ExitCode=%d Signal=%q; want 137, none", res.ExitCode, res.Signal)
	}
}

// sandboxedSleeps lists host processes whose command line holds tag.
func sandboxedSleeps(tag string) []int {
	var found []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.Contains(string(b), tag) && !processGone(pid) {
			found = append(found, pid)
		}
	}
	return found
}

// TestIsolationKillsWholeSandbox checks that, with isolation, nothing the
// child started survives it, not even a process that called setsid: the
// sandbox's PID namespace dies with it.
func TestIsolationKillsWholeSandbox(t *testing.T) {
	requireIsolation(t)
	// The grandchild marks when it runs; the child waits for the mark, so that
	// the grandchild is there (with its own session, under setsid) before the
	// child exits or times out.
	const grandchild = `sh -c 'echo > ready; exec sleep %[1]s'`
	const ready = `while [ ! -e ready ]; do sleep 0.01; done`
	for i, tt := range []struct {
		name    string
		script  string
		timeout time.Duration
	}{
		{"timeout", grandchild + " & " + ready + "; echo started; wait", 3 * time.Second},
		{"exit", grandchild + " >/dev/null 2>&1 & " + ready + "; echo started", 20 * time.Second},
		{"setsid on exit", "setsid " + grandchild + " & " + ready + "; echo started", 20 * time.Second},
		{"setsid on timeout", "setsid " + grandchild + " & " + ready + "; echo started; sleep 60", 3 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tag := fmt.Sprintf("61.%d%d", os.Getpid(), i) // a sleep no one else runs
			res := runIsolated(t, Cmd{Program: "sh", Args: []string{"-c", fmt.Sprintf(tt.script, tag)}, Timeout: tt.timeout})
			if string(res.Stdout) != "started\n" {
				t.Fatalf("stdout = %q; the grandchild did not start", res.Stdout)
			}
			if wantTimeout := tt.timeout < 20*time.Second; res.TimedOut != wantTimeout {
				t.Errorf("TimedOut = %v, want %v", res.TimedOut, wantTimeout)
			}
			var left []int
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if left = sandboxedSleeps(tag); len(left) == 0 {
					return
				}
			}
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Errorf("processes %v survived the sandbox", left)
		})
	}
}

// TestIsolationRefusesSystemWorkDir checks that a work directory holding
// /usr or /etc, which would be bound writable over the read-only system, is
// refused.
func TestIsolationRefusesSystemWorkDir(t *testing.T) {
	requireIsolation(t)
	roots, err := fsroot.Open([]string{"/"})
	if err != nil {
		t.Fatal(err)
	}
	defer roots.Close()
	for _, dir := range []string{"/", "/usr", "/etc"} {
		_, err := tryRun(t, Cmd{Program: "true", Roots: roots, Dir: dir, Isolation: Bubblewrap})
		if err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("isolated Run in %s = %v, want a refusal", dir, err)
		}
	}
}

// TestIsolationProgramMustBeVisible checks that a program the sandbox cannot
// see is refused as not found, instead of failing inside the sandbox.
func TestIsolationProgramMustBeVisible(t *testing.T) {
	requireIsolation(t)
	roots, dir := workspace(t)
	bin := outsideDir(t)
	script := []byte("#!/bin/sh\necho ran\n")
	for _, d := range []string{bin, dir} {
		if err := os.WriteFile(filepath.Join(d, "zero-test-tool"), script, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(bin, "zero-test-tool"), filepath.Join(dir, "link-out")); err != nil {
		t.Fatal(err)
	}
	env := envscrub.Spec{Set: map[string]string{"PATH": bin + ":/usr/bin"}}
	for _, program := range []string{"zero-test-tool", "./link-out"} {
		_, err := tryRun(t, Cmd{Program: program, Roots: roots, Dir: dir, Env: env, Isolation: Bubblewrap})
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("isolated Run(%q) = %v, want ErrNotFound", program, err)
		}
	}
	res := runIsolated(t, Cmd{Program: "./zero-test-tool", Roots: roots, Dir: dir, Env: env})
	if string(res.Stdout) != "ran\n" {
		t.Errorf("a program in the work directory: stdout %q, stderr %q", res.Stdout, res.Stderr)
	}
	res = run(t, Cmd{Program: "zero-test-tool", Roots: roots, Dir: dir, Env: env})
	if string(res.Stdout) != "ran\n" {
		t.Errorf("without isolation: stdout %q", res.Stdout)
	}
}

// TestIsolationReadOnlyDirs: a program outside /usr is not found in the
// sandbox until its directory is given in ReadOnly; then it runs, sees the
// directory read-only, and the work directory stays writable. The root,
// the kernel's directories, a missing one and one the work directory holds
// are refused.
func TestIsolationReadOnlyDirs(t *testing.T) {
	requireIsolation(t)
	roots, dir := workspace(t)
	tools := outsideDir(t)
	script := []byte("#!/bin/sh\necho ran\ntouch \"$0.new\" 2>/dev/null && echo wrote-tools\ntouch here && echo wrote-work\n")
	if err := os.WriteFile(filepath.Join(tools, "zero-test-tool"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(outsideDir(t), "tools")
	if err := os.Symlink(tools, link); err != nil {
		t.Fatal(err)
	}
	env := envscrub.Spec{Set: map[string]string{"PATH": tools + ":/usr/bin"}}
	if _, err := tryRun(t, Cmd{Program: "zero-test-tool", Roots: roots, Dir: dir, Env: env, Isolation: Bubblewrap}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("without ReadOnly: %v, want ErrNotFound", err)
	}
	res := runIsolated(t, Cmd{Program: "zero-test-tool", Roots: roots, Dir: dir, Env: env, ReadOnly: []string{link}})
	if string(res.Stdout) != "ran\nwrote-work\n" {
		t.Errorf("with ReadOnly: stdout %q, stderr %q", res.Stdout, res.Stderr)
	}
	mustNotExist(t, filepath.Join(tools, "zero-test-tool.new"))
	for _, bad := range []string{"/", "/proc", "/dev/shm", "/sys/kernel", filepath.Join(tools, "missing"), "relative", dir, filepath.Join(tools, "zero-test-tool")} {
		if _, err := tryRun(t, Cmd{Program: "/usr/bin/true", Roots: roots, Dir: dir, Isolation: Bubblewrap, ReadOnly: []string{bad}}); err == nil {
			t.Errorf("ReadOnly %q was accepted", bad)
		}
	}
	inside := filepath.Join(dir, "sub")
	os.Mkdir(inside, 0o755)
	if _, err := tryRun(t, Cmd{Program: "/usr/bin/true", Roots: roots, Dir: dir, Isolation: Bubblewrap, ReadOnly: []string{inside}}); err == nil {
		t.Error("a read-only directory inside the work directory was accepted")
	}
}

// TestIsolationUnavailable checks, with a bubblewrap that does not exist,
// that isolation is refused rather than silently dropped, and that
// AllowFallback runs the command unisolated and says so.
func TestIsolationUnavailable(t *testing.T) {
	saved := isolation
	isolation = &prober{bwrap: "/nonexistent/bwrap"}
	defer func() { isolation = saved }()

	if err := IsolationAvailable(); !errors.Is(err, ErrIsolationUnavailable) {
		t.Fatalf("IsolationAvailable() = %v, want ErrIsolationUnavailable", err)
	}
	roots, dir := workspace(t)
	marker := filepath.Join(dir, "ran")
	c := Cmd{Program: "touch", Args: []string{marker}, Roots: roots, Dir: dir, Isolation: Bubblewrap}
	if _, err := tryRun(t, c); !errors.Is(err, ErrIsolationUnavailable) {
		t.Fatalf("Run = %v, want ErrIsolationUnavailable", err)
	}
	mustNotExist(t, marker)

	c.AllowFallback = true
	res := run(t, c)
	if res.Isolation != None || res.ExitCode != 0 {
		t.Errorf("fallback: Isolation=%q ExitCode=%d; want none, 0", res.Isolation, res.ExitCode)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("fallback did not run: %v", err)
	}
}
