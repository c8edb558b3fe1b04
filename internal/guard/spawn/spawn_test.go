package spawn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"golang.org/x/sys/unix"
)

// workspace makes a canonical temporary directory and a root set holding it.
func workspace(t testing.TB) (*fsroot.Set, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	roots, err := fsroot.Open([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { roots.Close() })
	return roots, dir
}

// outsideDir makes a canonical temporary directory outside every root.
func outsideDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// run runs c with the workspace's roots and directory unless c sets them,
// and a 20 s timeout unless c sets one. It fails the test if Run fails.
func run(t testing.TB, c Cmd) Result {
	t.Helper()
	res, err := tryRun(t, c)
	if err != nil {
		t.Fatalf("Run(%q %q) = %v", c.Program, c.Args, err)
	}
	return res
}

func tryRun(t testing.TB, c Cmd) (Result, error) {
	t.Helper()
	c = withTestDefaults(t, c)
	return Run(context.Background(), c)
}

func mustNotExist(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists (or cannot be checked: %v); something ran that should not have", path, err)
	}
}

// processGone reports whether pid is dead: absent from /proc, or a zombie
// waiting for a parent that does not reap (pid 1 in some containers).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, after, _ := bytes.Cut(b, []byte(") ")) // the state follows the command name
	return len(after) > 0 && (after[0] == 'Z' || after[0] == 'X')
}

// waitGone waits up to 5 s for pid to die: a SIGKILL is sent at once but
// takes effect asynchronously.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if processGone(pid) {
			return
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("process %d survived", pid)
}

// pids parses whitespace-separated PIDs a child printed.
func pids(t *testing.T, out []byte, want int) []int {
	t.Helper()
	var ps []int
	for _, f := range strings.Fields(string(out)) {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("child printed %q, want PIDs", out)
		}
		ps = append(ps, p)
	}
	if len(ps) != want {
		t.Fatalf("child printed %q, want %d PIDs", out, want)
	}
	return ps
}

// TestArgvIsNotAShell runs every shell operator through /bin/echo in normal
// mode: it must come back as literal text and do nothing.
func TestArgvIsNotAShell(t *testing.T) {
	roots, dir := workspace(t)
	marker := filepath.Join(dir, "X")
	for _, arg := range []string{
		"a && touch X", "a || touch X", "a | touch X", "a; touch X", "$(touch X)", "`touch X`",
		"a > X", "a < X", "&&", ";", "|", ">X", "a\ntouch X", "*", "~", "$HOME", "'quoted' \"double\"",
	} {
		t.Run(arg, func(t *testing.T) {
			res := run(t, Cmd{Program: "/bin/echo", Args: []string{arg}, Roots: roots, Dir: dir})
			if got, want := string(res.Stdout), arg+"\n"; got != want {
				t.Errorf("stdout = %q, want %q", got, want)
			}
			if res.ExitCode != 0 {
				t.Errorf("exit code %d", res.ExitCode)
			}
			mustNotExist(t, marker)
		})
	}
}

// TestStrictRefusesShellOperators checks strict mode: an operator anywhere in
// the program or an argument is refused, naming both, and nothing runs.
func TestStrictRefusesShellOperators(t *testing.T) {
	roots, dir := workspace(t)
	marker := filepath.Join(dir, "ran")
	tests := []struct {
		program string
		args    []string
		op      string
	}{
		{"touch", []string{marker, "&&"}, "&&"},
		{"touch", []string{marker, "a&&b"}, "&&"},
		{"touch", []string{marker, "||"}, "||"},
		{"touch", []string{marker, "a|b"}, "|"},
		{"touch", []string{marker, "a;b"}, ";"},
		{"touch", []string{marker, "$(id)"}, "$("},
		{"touch", []string{marker, "`id`"}, "`"},
		{"touch", []string{marker, ">out"}, ">"},
		{"touch", []string{marker, "<in"}, "<"},
		{"touch", []string{marker, "fine", "x|y"}, "|"},
		{"touch", []string{marker, "&"}, "&"},
		{"touch", []string{marker, "line\nbreak"}, "\n"},
		{"touch;id", []string{marker}, ";"},
		{"/bin/touch|id", []string{marker}, "|"},
	}
	for _, tt := range tests {
		t.Run(tt.program+" "+strings.Join(tt.args[1:], " "), func(t *testing.T) {
			_, err := tryRun(t, Cmd{Program: tt.program, Args: tt.args, Roots: roots, Dir: dir, Strict: true})
			if !errors.Is(err, ErrStrict) {
				t.Fatalf("Run = %v, want ErrStrict", err)
			}
			if !strings.Contains(err.Error(), strconv.Quote(tt.op)) {
				t.Errorf("error %q does not name the operator %q", err, tt.op)
			}
			offending := tt.program
			if i := slices.IndexFunc(tt.args, func(a string) bool { return strings.Contains(a, tt.op) }); i >= 0 {
				offending = tt.args[i]
			}
			if !strings.Contains(err.Error(), strconv.Quote(offending)) {
				t.Errorf("error %q does not name the argument %q", err, offending)
			}
			mustNotExist(t, marker)
		})
	}
	t.Run("clean arguments run", func(t *testing.T) {
		res := run(t, Cmd{Program: "touch", Args: []string{marker}, Roots: roots, Dir: dir, Strict: true})
		if res.ExitCode != 0 {
			t.Fatalf("exit code %d: %s", res.ExitCode, res.Stderr)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Error(err)
		}
	})
}

// TestEnvRejectedThroughRun checks that a refused variable stops Run before
// anything starts.
func TestEnvRejectedThroughRun(t *testing.T) {
	t.Setenv("LD_PRELOAD", "/nonexistent/evil.so")
	roots, dir := workspace(t)
	marker := filepath.Join(dir, "ran")
	for _, tt := range []struct {
		name string
		spec envscrub.Spec
	}{
		{"set LD_PRELOAD", envscrub.Spec{Set: map[string]string{"LD_PRELOAD": "/tmp/x.so"}}},
		{"pass LD_PRELOAD", envscrub.Spec{Pass: []string{"LD_PRELOAD"}}},
		{"set LD_LIBRARY_PATH", envscrub.Spec{Set: map[string]string{"LD_LIBRARY_PATH": "/tmp"}}},
		{"set DYLD_INSERT_LIBRARIES", envscrub.Spec{Set: map[string]string{"DYLD_INSERT_LIBRARIES": "x"}}},
		{"set NODE_OPTIONS", envscrub.Spec{Set: map[string]string{"NODE_OPTIONS": "--require /tmp/x.js"}}},
		{"set BASH_ENV", envscrub.Spec{Set: map[string]string{"BASH_ENV": "/tmp/x.sh"}}},
		{"pass ENV", envscrub.Spec{Pass: []string{"ENV"}}},
		{"invalid name", envscrub.Spec{Set: map[string]string{"A-B": "x"}}},
		{"name with =", envscrub.Spec{Set: map[string]string{"A=B": "x"}}},
		{"NUL in value", envscrub.Spec{Set: map[string]string{"OK": "a\x00b"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tryRun(t, Cmd{Program: "touch", Args: []string{marker}, Roots: roots, Dir: dir, Env: tt.spec})
			if !errors.Is(err, envscrub.ErrRejected) {
				t.Fatalf("Run = %v, want envscrub.ErrRejected", err)
			}
			mustNotExist(t, marker)
		})
	}
}

// TestChildEnvironmentIsScrubbed checks that the child sees the defaults and
// what was declared, and nothing else of the parent's environment.
func TestChildEnvironmentIsScrubbed(t *testing.T) {
	t.Setenv("ZERO_TEST_SECRET", "s3cr3t")
	t.Setenv("ZERO_TEST_PASSED", "passed")
	res := run(t, Cmd{Program: "/usr/bin/env", Env: envscrub.Spec{
		Pass: []string{"ZERO_TEST_PASSED", "ZERO_TEST_UNSET"},
		Set:  map[string]string{"ZERO_TEST_SET": "set"},
	}})
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
		name, value, _ := strings.Cut(line, "=")
		got[name] = value
	}
	if got["ZERO_TEST_PASSED"] != "passed" || got["ZERO_TEST_SET"] != "set" {
		t.Errorf("declared variables missing: %v", got)
	}
	allowed := append(slices.Clone(envscrub.Defaults), "ZERO_TEST_PASSED", "ZERO_TEST_SET")
	for name := range got {
		if !slices.Contains(allowed, name) {
			t.Errorf("child sees %s, which was not declared", name)
		}
	}
	if strings.Contains(string(res.Stdout), "s3cr3t") {
		t.Error("the parent's secret reached the child")
	}
}

// TestProgramFromChildPATH checks that a bare program name is looked up in
// the child's PATH, not the parent's, skipping relative entries.
func TestProgramFromChildPATH(t *testing.T) {
	roots, dir := workspace(t)
	bin := outsideDir(t)
	script := "#!/bin/sh\necho from-child-path\n"
	if err := os.WriteFile(filepath.Join(bin, "zero-test-tool"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "zero-test-local"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	childPATH := func(p string) envscrub.Spec { return envscrub.Spec{Set: map[string]string{"PATH": p}} }

	res := run(t, Cmd{Program: "zero-test-tool", Roots: roots, Dir: dir, Env: childPATH(bin + ":/usr/bin")})
	if string(res.Stdout) != "from-child-path\n" {
		t.Errorf("stdout = %q", res.Stdout)
	}
	res = run(t, Cmd{Program: "./zero-test-local", Roots: roots, Dir: dir, Env: childPATH("/nonexistent")})
	if string(res.Stdout) != "from-child-path\n" {
		t.Errorf("relative path with a slash: stdout = %q", res.Stdout)
	}
	for _, tt := range []struct{ program, path string }{
		{"echo", "/nonexistent"},         // in the parent's PATH, not the child's
		{"zero-test-tool", ""},           // no PATH at all
		{"zero-test-local", "."},         // relative entries are skipped
		{"zero-test-local", ":/usr/bin"}, // so is the empty one
		{"./missing", "/usr/bin"},
	} {
		if _, err := tryRun(t, Cmd{Program: tt.program, Roots: roots, Dir: dir, Env: childPATH(tt.path)}); !errors.Is(err, ErrNotFound) {
			t.Errorf("Run(%q) with PATH=%q = %v, want ErrNotFound", tt.program, tt.path, err)
		}
	}
}

// TestTimeoutKillsProcessTree checks that a timeout kills the child and the
// grandchild it forked, and reaps the child.
func TestTimeoutKillsProcessTree(t *testing.T) {
	start := time.Now()
	res := run(t, Cmd{Program: "sh", Args: []string{"-c", "sleep 60 & echo $$ $!; wait"}, Timeout: time.Second})
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("Run took %v after a 1 s timeout", elapsed)
	}
	if !res.TimedOut || res.ExitCode != -1 || res.Signal != "killed" {
		t.Errorf("TimedOut=%v ExitCode=%d Signal=%q; want true, -1, killed", res.TimedOut, res.ExitCode, res.Signal)
	}
	ps := pids(t, res.Stdout, 2)
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", ps[0])); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("child %d was not reaped: %v", ps[0], err)
	}
	waitGone(t, ps[1])
}

// TestExitKillsBackgroundProcesses checks that a process a child leaves
// behind in its group is killed once the child exits, whether or not it
// holds the output pipes, and that Run does not wait for it.
func TestExitKillsBackgroundProcesses(t *testing.T) {
	for _, script := range []string{
		"sleep 60 >/dev/null 2>&1 & echo $!", // detached from the pipes
		"sleep 60 & echo $!",                 // holding stdout and stderr open
		"(trap '' TERM HUP; exec sleep 60) & echo $!",
	} {
		t.Run(script, func(t *testing.T) {
			start := time.Now()
			res := run(t, Cmd{Program: "sh", Args: []string{"-c", script}})
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Errorf("Run took %v: it waited for the background process", elapsed)
			}
			if res.ExitCode != 0 || res.TimedOut {
				t.Errorf("ExitCode=%d TimedOut=%v", res.ExitCode, res.TimedOut)
			}
			waitGone(t, pids(t, res.Stdout, 1)[0])
		})
	}
}

// TestChildHasOwnSessionAndGroup checks that the child leads its own
// process group (what the group kill aims at) and its own session (so it has
// no controlling terminal).
func TestChildHasOwnSessionAndGroup(t *testing.T) {
	res := run(t, Cmd{Program: "sh", Args: []string{"-c", "echo $$; cat /proc/$$/stat"}})
	pidLine, stat, _ := strings.Cut(string(res.Stdout), "\n")
	_, after, _ := strings.Cut(stat, ") ")
	f := strings.Fields(after) // state, ppid, pgrp, session, tty_nr, ...
	if len(f) < 5 {
		t.Fatalf("stdout = %q", res.Stdout)
	}
	if f[2] != pidLine || f[3] != pidLine || f[4] != "0" {
		t.Errorf("child %s has process group %s, session %s, terminal %s; want %s, %s, 0", pidLine, f[2], f[3], f[4], pidLine, pidLine)
	}
	if own, err := unix.Getsid(0); err != nil || f[3] == strconv.Itoa(own) {
		t.Errorf("child shares the test's session %d (%v)", own, err)
	}
}

// TestEscapedProcessCannotHangRun: a process that leaves the group (setsid)
// escapes the kill, a documented limit, but holding the output pipes open
// cannot keep Run from returning.
func TestEscapedProcessCannotHangRun(t *testing.T) {
	// The child waits until the escaper has its own session before exiting.
	script := `setsid sh -c 'echo $$ > pid; exec sleep 60' & while [ ! -s pid ]; do sleep 0.01; done; cat pid`
	start := time.Now()
	res := run(t, Cmd{Program: "sh", Args: []string{"-c", script}})
	elapsed := time.Since(start)
	pid := pids(t, res.Stdout, 1)[0]
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if elapsed > waitDelay+3*time.Second {
		t.Errorf("Run took %v with an escaped process holding its pipes", elapsed)
	}
	if res.ExitCode != 0 || res.TimedOut {
		t.Errorf("ExitCode=%d TimedOut=%v", res.ExitCode, res.TimedOut)
	}
	if processGone(pid) {
		t.Errorf("process %d did not escape: this test no longer exercises the limit it documents", pid)
	}
}

// TestCancelReapsChild checks that cancelling the context kills and reaps
// the child promptly.
func TestCancelReapsChild(t *testing.T) {
	roots, dir := workspace(t)
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelledAt := make(chan time.Time, 1)
	go func() {
		for ctx.Err() == nil {
			if b, err := os.ReadFile(pidFile); err == nil && bytes.HasSuffix(b, []byte("\n")) {
				cancelledAt <- time.Now()
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	res, err := Run(ctx, Cmd{Program: "sh", Args: []string{"-c", "echo $$ > pid; exec sleep 60"}, Roots: roots, Dir: dir, Timeout: time.Minute})
	returned := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	var cancelled time.Time
	select {
	case cancelled = <-cancelledAt:
	default:
		t.Fatal("Run returned before the test cancelled it")
	}
	if d := returned.Sub(cancelled); d > 2*time.Second {
		t.Errorf("Run returned %v after the cancellation", d)
	}
	if res.Signal != "killed" || res.ExitCode != -1 || res.TimedOut {
		t.Errorf("Signal=%q ExitCode=%d TimedOut=%v; want killed, -1, false", res.Signal, res.ExitCode, res.TimedOut)
	}
	b, _ := os.ReadFile(pidFile)
	pid := pids(t, b, 1)[0]
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("child %d is still there (a zombie?): %v", pid, err)
	}
}

// TestOutputCapped checks the per-stream cap and the truncation marks.
func TestOutputCapped(t *testing.T) {
	tests := []struct {
		script             string
		stdout, stderr     string
		outTrunc, errTrunc bool
	}{
		{"printf 0123456789abc; printf xyz >&2", "0123456789", "xyz", true, false},
		{"printf 0123456789; printf 0123456789X >&2", "0123456789", "0123456789", false, true},
		{"printf ''", "", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			res := run(t, Cmd{Program: "sh", Args: []string{"-c", tt.script}, OutputLimit: 10})
			got := []any{string(res.Stdout), string(res.Stderr), res.StdoutTruncated, res.StderrTruncated}
			want := []any{tt.stdout, tt.stderr, tt.outTrunc, tt.errTrunc}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("stdout, stderr, truncated (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLargeOutputDoesNotHang runs a child writing 100 MiB to stdout and
// 10 MiB to stderr: it must finish on its own, with each stream capped.
func TestLargeOutputDoesNotHang(t *testing.T) {
	res := run(t, Cmd{
		Program: "sh",
		Args:    []string{"-c", "head -c 104857600 /dev/zero; head -c 10485760 /dev/zero >&2"},
		Timeout: 2 * time.Minute,
	})
	if res.TimedOut || res.ExitCode != 0 {
		t.Fatalf("TimedOut=%v ExitCode=%d Signal=%q", res.TimedOut, res.ExitCode, res.Signal)
	}
	if len(res.Stdout) != DefaultOutputLimit || !res.StdoutTruncated {
		t.Errorf("stdout: %d bytes, truncated=%v; want %d, true", len(res.Stdout), res.StdoutTruncated, DefaultOutputLimit)
	}
	if len(res.Stderr) != DefaultOutputLimit || !res.StderrTruncated {
		t.Errorf("stderr: %d bytes, truncated=%v; want %d, true", len(res.Stderr), res.StderrTruncated, DefaultOutputLimit)
	}
	t.Logf("110 MiB drained in %v", res.Duration)
}

// TestStdin checks that stdin is delivered, and that a nil Stdin gives end
// of file at once.
func TestStdin(t *testing.T) {
	res := run(t, Cmd{Program: "cat", Stdin: []byte("hello\nworld")})
	if string(res.Stdout) != "hello\nworld" {
		t.Errorf("stdout = %q", res.Stdout)
	}
	res = run(t, Cmd{Program: "cat", Timeout: 5 * time.Second})
	if res.TimedOut || res.ExitCode != 0 || len(res.Stdout) != 0 {
		t.Errorf("cat with nil stdin: TimedOut=%v ExitCode=%d stdout=%q", res.TimedOut, res.ExitCode, res.Stdout)
	}
}

func TestExitCodesAndSignals(t *testing.T) {
	tests := []struct {
		script string
		code   int
		signal string
	}{
		{"exit 0", 0, ""},
		{"exit 3", 3, ""},
		{"exit 255", 255, ""},
		{"kill -TERM $$", -1, "terminated"},
		{"kill -KILL $$", -1, "killed"},
		{"kill -SEGV $$", -1, "segmentation fault"},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			res := run(t, Cmd{Program: "sh", Args: []string{"-c", tt.script}})
			if res.ExitCode != tt.code || res.Signal != tt.signal || res.TimedOut {
				t.Errorf("ExitCode=%d Signal=%q TimedOut=%v; want %d %q false", res.ExitCode, res.Signal, res.TimedOut, tt.code, tt.signal)
			}
			if res.Isolation != None {
				t.Errorf("Isolation = %q, want %q", res.Isolation, None)
			}
		})
	}
}

// TestWorkDirOutsideRootsRefused checks that a working directory outside the
// roots, by .. or through a symbolic link, is refused and nothing runs.
func TestWorkDirOutsideRootsRefused(t *testing.T) {
	roots, dir := workspace(t)
	outside := outsideDir(t)
	marker := filepath.Join(outsideDir(t), "ran")
	if err := os.Symlink(outside, filepath.Join(dir, "link_out")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, outside)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, dir string
		outside   bool
	}{
		{"dot dot", filepath.Join(dir, rel), true},
		{"dot dot unclean", dir + "/../" + filepath.Base(outside), true},
		{"relative dot dot", rel, true},
		{"symlink", filepath.Join(dir, "link_out"), true},
		{"absolute", outside, true},
		{"root", "/", true},
		{"missing", filepath.Join(dir, "missing"), false},
		{"a file", filepath.Join(dir, "file"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tryRun(t, Cmd{Program: "touch", Args: []string{marker}, Roots: roots, Dir: tt.dir})
			if err == nil {
				t.Fatalf("Run in %s succeeded", tt.dir)
			}
			if tt.outside && !errors.Is(err, fsroot.ErrOutside) {
				t.Errorf("Run in %s = %v, want fsroot.ErrOutside", tt.dir, err)
			}
			mustNotExist(t, marker)
		})
	}
}

// TestWorkDirIsCanonical checks that the child runs in the canonical path of
// its working directory, reached through a link inside the roots or relative
// to the first root.
func TestWorkDirIsCanonical(t *testing.T) {
	roots, dir := workspace(t)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "link_in")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(dir, "link_in"), "sub", "link_in/."} {
		res := run(t, Cmd{Program: "pwd", Args: []string{"-P"}, Roots: roots, Dir: d})
		if got, want := strings.TrimSpace(string(res.Stdout)), filepath.Join(dir, "sub"); got != want {
			t.Errorf("Dir %q: child runs in %q, want %q", d, got, want)
		}
	}
}

// TestBadInputRefused checks that malformed commands are refused before
// anything runs.
func TestBadInputRefused(t *testing.T) {
	roots, dir := workspace(t)
	marker := filepath.Join(dir, "ran")
	ok := Cmd{Program: "touch", Args: []string{marker}, Roots: roots, Dir: dir, Timeout: time.Second}
	for _, tt := range []struct {
		name   string
		change func(*Cmd)
	}{
		{"no program", func(c *Cmd) { c.Program = "" }},
		{"NUL in program", func(c *Cmd) { c.Program = "touch\x00" }},
		{"NUL in argument", func(c *Cmd) { c.Args = append(c.Args, "a\x00b") }},
		{"nil roots", func(c *Cmd) { c.Roots = nil }},
		{"no dir", func(c *Cmd) { c.Dir = "" }},
		{"zero timeout", func(c *Cmd) { c.Timeout = 0 }},
		{"negative timeout", func(c *Cmd) { c.Timeout = -time.Second }},
		{"negative output limit", func(c *Cmd) { c.OutputLimit = -1 }},
		{"unknown isolation", func(c *Cmd) { c.Isolation = "docker" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			c.Args = slices.Clone(ok.Args)
			tt.change(&c)
			if _, err := Run(context.Background(), c); err == nil {
				t.Fatal("Run succeeded")
			}
			mustNotExist(t, marker)
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, ok); err == nil {
		t.Error("Run with a cancelled context succeeded")
	}
	mustNotExist(t, marker)
	if _, err := Run(context.Background(), ok); err != nil {
		t.Errorf("the unchanged command fails: %v", err)
	}
}

func TestCappedWriter(t *testing.T) {
	w := &capped{limit: 5}
	for _, s := range []string{"ab", "cd", "efg", "", "h"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if string(w.buf) != "abcde" || !w.truncated {
		t.Errorf("kept %q truncated=%v", w.buf, w.truncated)
	}
}

// TestInheritedDescriptorsNotPassed checks that a descriptor open in Zero
// without close-on-exec (as one inherited from Zero's own parent would be)
// does not reach a child, with or without the sandbox.
func TestInheritedDescriptorsNotPassed(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "inherited-marker")
	f, err := os.Create(marker)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, iso := range []Isolation{None, Bubblewrap} {
		t.Run(string(iso), func(t *testing.T) {
			if iso == Bubblewrap {
				requireIsolation(t)
			}
			fd, err := syscall.Dup(int(f.Fd())) // dup clears close-on-exec
			if err != nil {
				t.Fatal(err)
			}
			flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
			if err != nil || flags&unix.FD_CLOEXEC != 0 {
				t.Fatalf("setup: dup'd descriptor flags %v, %v", flags, err)
			}
			res := run(t, Cmd{Program: "/bin/ls", Args: []string{"-l", "/proc/self/fd/"}, Isolation: iso})
			syscall.Close(fd)
			if strings.Contains(string(res.Stdout), "inherited-marker") {
				t.Errorf("isolation %q: child holds the inherited descriptor:\n%s", iso, res.Stdout)
			}
			if !strings.Contains(string(res.Stdout), "0 ->") {
				t.Errorf("isolation %q: listing has no stdin, so it proves nothing:\n%s", iso, res.Stdout)
			}
		})
	}
}

// withTestDefaults gives c a fresh workspace as its roots and working
// directory, and a 20 s timeout, where it sets none.
func withTestDefaults(t testing.TB, c Cmd) Cmd {
	t.Helper()
	if c.Roots == nil {
		roots, dir := workspace(t)
		c.Roots = roots
		if c.Dir == "" {
			c.Dir = dir
		}
	}
	if c.Timeout == 0 {
		c.Timeout = 20 * time.Second
	}
	return c
}
