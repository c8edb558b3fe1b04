package spawn

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/testnet"
)

// mcpServerEnv, set in the environment of this test binary, makes it an MCP
// server on stdio (see TestMain), for TestStartMCPServer.
const mcpServerEnv = "ZERO_SPAWN_TEST_MCP_SERVER"

func TestMain(m *testing.M) {
	switch {
	case os.Getenv(hogEnv) == "1":
		hog()
	case os.Getenv(forksEnv) == "1":
		forks()
	case os.Getenv(dialEnv) != "":
		dialSocket()
	}
	if os.Getenv(mcpServerEnv) == "1" {
		if err := echoServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type echoArgs struct {
	Text string `json:"text"`
}

func echoServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	return s
}

// start starts c as tryStart does and fails the test if Start fails.
func start(t testing.TB, c Cmd) *Process {
	t.Helper()
	p, err := tryStart(t, context.Background(), c)
	if err != nil {
		t.Fatalf("Start(%q %q) = %v", c.Program, c.Args, err)
	}
	return p
}

// tryStart starts c with the workspace's roots and directory unless c sets
// them, and a 20 s timeout unless c sets one. The process is stopped when
// the test ends.
func tryStart(t testing.TB, ctx context.Context, c Cmd) (*Process, error) {
	t.Helper()
	c = withTestDefaults(t, c)
	p, err := Start(ctx, c)
	if err == nil {
		t.Cleanup(func() { p.Stop() })
	}
	return p, err
}

// within runs f and returns its result, failing the test if f takes longer
// than d. f goes on in the background after a failure; the Stop that
// tryStart registered unblocks it.
func within[T any](t testing.TB, d time.Duration, what string, f func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s: still blocked after %v", what, d)
		panic("unreachable")
	}
}

// readLine reads one line of the child's stdout.
func readLine(t testing.TB, r *bufio.Reader) string {
	t.Helper()
	type line struct {
		s   string
		err error
	}
	l := within(t, 10*time.Second, "reading a line of stdout", func() line {
		s, err := r.ReadString('\n')
		return line{s, err}
	})
	if l.err != nil {
		t.Fatalf("reading a line of stdout: got %q, %v", l.s, l.err)
	}
	return l.s
}

// readToEOF reads stdout to its end, which must come within 10 s.
func readToEOF(t testing.TB, r io.Reader) {
	t.Helper()
	type rest struct {
		b   []byte
		err error
	}
	got := within(t, 10*time.Second, "reading stdout to end of file", func() rest {
		b, err := io.ReadAll(r)
		return rest{b, err}
	})
	if got.err != nil || len(got.b) != 0 {
		t.Errorf("stdout after the end: %q, %v; want end of file", got.b, got.err)
	}
}

func waitDone(t testing.TB, p *Process) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed 10 s after the child was killed")
	}
}

func reaped(t *testing.T, pid int) {
	t.Helper()
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("child %d was not reaped: %v", pid, err)
	}
}

// TestStartEcho talks to cat over the pipes, then stops it: cat exits on
// its own at end of file, within Stop's grace.
func TestStartEcho(t *testing.T) {
	p := start(t, Cmd{Program: "cat"})
	if p.Isolation != None {
		t.Errorf("Isolation = %q, want %q", p.Isolation, None)
	}
	r := bufio.NewReader(p.Stdout)
	for _, line := range []string{"hello\n", "a && b | c $(id)\n", strings.Repeat("x", 100_000) + "\n"} {
		go io.WriteString(p.Stdin, line) // a long line fills the pipe before cat echoes it
		if got := readLine(t, r); got != line {
			t.Errorf("echoed %.40q..., want %.40q...", got, line)
		}
	}
	res, err := p.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Signal != "" || res.TimedOut || len(res.Stdout) != 0 || res.Isolation != None {
		t.Errorf("Stop = %+v; want exit code 0, no signal, no stdout, isolation none", res)
	}
	again, err := p.Stop()
	if diff := cmp.Diff(res, again); diff != "" || err != nil {
		t.Errorf("a second Stop differs (-first +second):\n%s%v", diff, err)
	}
	if _, err := p.Stdout.Read(make([]byte, 1)); err == nil {
		t.Error("Stdout still reads after Stop")
	}
}

// TestStartMCPServer runs an MCP server (this test binary, see TestMain)
// and calls a tool over mcp.IOTransport, as the workspace does.
func TestStartMCPServer(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Under -race the child would sleep a second at exit without GORACE.
	env := envscrub.Spec{Set: map[string]string{mcpServerEnv: "1", "GORACE": "atexit_sleep_ms=0"}}
	p := start(t, Cmd{Program: exe, Env: env})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "spawn-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: p.Stdout, Writer: p.Stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v; stderr: %s", err, p.Stderr())
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over the pipes"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "over the pipes" {
		t.Errorf("echo returned %+v", res.Content)
	}
	cs.Close() // closes Stdin: the server exits at end of file
	waitDone(t, p)
	if r, err := p.Stop(); err != nil || r.ExitCode != 0 || r.Signal != "" {
		t.Errorf("Stop = %+v, %v; want exit code 0", r, err)
	}
}

// stop calls p.Stop, failing the test if it takes longer than d or fails.
func stop(t testing.TB, p *Process, d time.Duration) Result {
	t.Helper()
	type stopped struct {
		res Result
		err error
	}
	s := within(t, d, "Stop", func() stopped {
		res, err := p.Stop()
		return stopped{res, err}
	})
	if s.err != nil {
		t.Fatalf("Stop = %v", s.err)
	}
	return s.res
}

// write writes b to the child's stdin and returns the error, failing the
// test if the write is still blocked after 10 s.
func write(t testing.TB, p *Process, b []byte) error {
	t.Helper()
	return within(t, 10*time.Second, fmt.Sprintf("writing %d bytes to stdin", len(b)), func() error {
		_, err := p.Stdin.Write(b)
		return err
	})
}

// TestStopKillsProcessTree stops a child that ignores end of file on stdin
// and SIGTERM, and has a grandchild in its group: Stop kills both after its
// grace, reaps the child and returns promptly.
func TestStopKillsProcessTree(t *testing.T) {
	p := start(t, Cmd{Program: "sh", Args: []string{"-c", "trap '' TERM HUP; sleep 60 & echo $$ $!; cat >/dev/null; wait"}})
	ps := pids(t, []byte(readLine(t, bufio.NewReader(p.Stdout))), 2)
	begin := time.Now()
	res := stop(t, p, 10*time.Second)
	if elapsed := time.Since(begin); elapsed < stopGrace || elapsed > stopGrace+2*time.Second {
		t.Errorf("Stop took %v; want its grace of %v and little more", elapsed, stopGrace)
	}
	if res.Signal != "killed" || res.ExitCode != -1 || res.TimedOut {
		t.Errorf("Signal=%q ExitCode=%d TimedOut=%v; want killed, -1, false", res.Signal, res.ExitCode, res.TimedOut)
	}
	select {
	case <-p.Done():
	default:
		t.Error("Done is open after Stop")
	}
	reaped(t, ps[0])
	waitGone(t, ps[1])
}

// TestStartLifetime checks how a started child ends: on its own, on the
// timeout, or when the context given to Start is cancelled. Each time the
// grandchild it left in its group is killed too (on exit, although it holds
// stdout), the child is reaped, Stdout reads end of file, Done is closed, and
// a write to Stdin fails.
func TestStartLifetime(t *testing.T) {
	for _, tt := range []struct {
		name     string
		script   string
		timeout  time.Duration
		cancel   bool
		signal   string
		timedOut bool
	}{
		{"exit", "sleep 60 & echo $$ $!", time.Minute, false, "", false},
		{"timeout", "sleep 60 & echo $$ $!; wait", time.Second, false, "killed", true},
		{"cancel", "sleep 60 & echo $$ $!; wait", time.Minute, true, "killed", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			begin := time.Now()
			p, err := tryStart(t, ctx, Cmd{Program: "sh", Args: []string{"-c", tt.script}, Timeout: tt.timeout})
			if err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(p.Stdout)
			ps := pids(t, []byte(readLine(t, r)), 2)
			if tt.cancel {
				cancel()
			}
			readToEOF(t, r)
			waitDone(t, p)
			if elapsed := time.Since(begin); elapsed > 10*time.Second {
				t.Errorf("the child lived %v", elapsed)
			}
			if err := write(t, p, []byte("x\n")); err == nil {
				t.Error("writing to the stdin of a dead child succeeded")
			}
			reaped(t, ps[0])
			waitGone(t, ps[1])
			res := stop(t, p, time.Second) // the child is gone: no grace to wait
			wantCode := 0
			if tt.signal != "" {
				wantCode = -1
			}
			if res.Signal != tt.signal || res.ExitCode != wantCode || res.TimedOut != tt.timedOut {
				t.Errorf("Signal=%q ExitCode=%d TimedOut=%v; want %q, %d, %v", res.Signal, res.ExitCode, res.TimedOut, tt.signal, wantCode, tt.timedOut)
			}
		})
	}
}

// TestStartStdinNeverBlocks writes more than a pipe holds to a child that
// never reads: the write blocks until the timeout kills the child, then
// fails; so does every later write.
func TestStartStdinNeverBlocks(t *testing.T) {
	p := start(t, Cmd{Program: "sleep", Args: []string{"60"}, Timeout: time.Second})
	if err := write(t, p, make([]byte, 1<<20)); err == nil {
		t.Error("writing 1 MiB to a child that never reads succeeded")
	}
	waitDone(t, p)
	if err := write(t, p, []byte("x")); err == nil {
		t.Error("writing to the stdin of a dead child succeeded")
	}
}

// TestEscapedProcessCannotHangStart: a process that leaves the group
// (setsid) escapes the kill, a documented limit, and holds the child's
// stdin and stdout. Still, once the child is gone a write to Stdin fails
// (one already blocked included), Stop returns promptly, and a read of
// Stdout blocked on the escaped process returns when Stop closes it.
func TestEscapedProcessCannotHangStart(t *testing.T) {
	// The child waits until the escaper has its own session, then lives on
	// for a second, during which the test's write fills the pipe.
	// (Through fd 3: a background job's stdin is /dev/null.)
	script := `exec 3<&0; setsid sh -c 'echo $$ > pid; exec sleep 60 <&3 3<&-' & while [ ! -s pid ]; do sleep 0.01; done; cat pid; sleep 1`
	p := start(t, Cmd{Program: "sh", Args: []string{"-c", script}})
	r := bufio.NewReader(p.Stdout)
	pid := pids(t, []byte(readLine(t, r)), 1)[0]
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })

	if err := write(t, p, make([]byte, 1<<20)); err == nil {
		t.Error("writing 1 MiB to stdin held by a process that never reads succeeded")
	}
	waitDone(t, p)
	read := make(chan error, 1)
	go func() {
		_, err := r.ReadByte()
		read <- err
	}()
	select {
	case err := <-read:
		t.Fatalf("Stdout read returned %v before Stop, yet the escaped process holds it: this test no longer exercises the limit", err)
	case <-time.After(100 * time.Millisecond):
	}
	begin := time.Now()
	if res := stop(t, p, 5*time.Second); res.ExitCode != 0 {
		t.Errorf("ExitCode = %d, want 0", res.ExitCode)
	}
	if elapsed := time.Since(begin); elapsed > time.Second {
		t.Errorf("Stop took %v", elapsed)
	}
	select {
	case err := <-read:
		if err == nil {
			t.Error("a read of Stdout succeeded after Stop")
		}
	case <-time.After(5 * time.Second):
		t.Error("a read of Stdout is still blocked after Stop")
	}
	if processGone(pid) {
		t.Errorf("process %d did not escape: this test no longer exercises the limit it documents", pid)
	}
}

// TestStartStderr checks that stderr is kept while the child runs, capped,
// and drained beyond the cap so that the child is never blocked on it.
func TestStartStderr(t *testing.T) {
	t.Run("so far", func(t *testing.T) {
		p := start(t, Cmd{Program: "sh", Args: []string{"-c", "echo err >&2; echo ready; cat"}})
		readLine(t, bufio.NewReader(p.Stdout))
		for deadline := time.Now().Add(5 * time.Second); string(p.Stderr()) != "err\n" && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		if got := string(p.Stderr()); got != "err\n" {
			t.Errorf("Stderr() while running = %q, want %q", got, "err\n")
		}
		res := stop(t, p, 5*time.Second)
		if string(res.Stderr) != "err\n" || res.StderrTruncated || res.ExitCode != 0 {
			t.Errorf("Stderr=%q truncated=%v ExitCode=%d; want err, false, 0", res.Stderr, res.StderrTruncated, res.ExitCode)
		}
	})
	t.Run("capped", func(t *testing.T) {
		// 10 MiB to stderr, then a line to stdout: the line comes only if
		// stderr was drained.
		p := start(t, Cmd{Program: "sh", Args: []string{"-c", "head -c 10485760 /dev/zero >&2; echo done; cat"}, OutputLimit: 1000})
		if got := readLine(t, bufio.NewReader(p.Stdout)); got != "done\n" {
			t.Fatalf("stdout = %q", got)
		}
		if n := len(p.Stderr()); n != 1000 {
			t.Errorf("Stderr() holds %d bytes, want 1000", n)
		}
		res := stop(t, p, 5*time.Second)
		if len(res.Stderr) != 1000 || !res.StderrTruncated || res.ExitCode != 0 {
			t.Errorf("Stderr: %d bytes, truncated=%v, ExitCode=%d; want 1000, true, 0", len(res.Stderr), res.StderrTruncated, res.ExitCode)
		}
	})
}

// TestStartRefusesWhatRunRefuses puts each of Run's refusals through Start:
// Start refuses it too, with the same error, and starts nothing.
func TestStartRefusesWhatRunRefuses(t *testing.T) {
	t.Setenv("LD_PRELOAD", "/nonexistent/evil.so")
	roots, dir := workspace(t)
	outside := outsideDir(t)
	if err := os.Symlink(outside, filepath.Join(dir, "link_out")); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "ran")
	ok := Cmd{Program: "touch", Args: []string{marker}, Roots: roots, Dir: dir, Timeout: 10 * time.Second}
	set := func(name, value string) envscrub.Spec { return envscrub.Spec{Set: map[string]string{name: value}} }
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name    string
		change  func(*Cmd)
		ctx     context.Context
		noBwrap bool
		want    error // nil: any error
	}{
		{name: "set LD_PRELOAD", change: func(c *Cmd) { c.Env = set("LD_PRELOAD", "/tmp/x.so") }, want: envscrub.ErrRejected},
		{name: "pass LD_PRELOAD", change: func(c *Cmd) { c.Env = envscrub.Spec{Pass: []string{"LD_PRELOAD"}} }, want: envscrub.ErrRejected},
		{name: "set NODE_OPTIONS", change: func(c *Cmd) { c.Env = set("NODE_OPTIONS", "--require /tmp/x.js") }, want: envscrub.ErrRejected},
		{name: "set BASH_ENV", change: func(c *Cmd) { c.Env = set("BASH_ENV", "/tmp/x.sh") }, want: envscrub.ErrRejected},
		{name: "invalid name", change: func(c *Cmd) { c.Env = set("A-B", "x") }, want: envscrub.ErrRejected},
		{name: "NUL in value", change: func(c *Cmd) { c.Env = set("OK", "a\x00b") }, want: envscrub.ErrRejected},
		{name: "strict argument", change: func(c *Cmd) { c.Strict = true; c.Args = append(c.Args, "a&&b") }, want: ErrStrict},
		{name: "strict program", change: func(c *Cmd) { c.Strict = true; c.Program = "touch;id" }, want: ErrStrict},
		{name: "dir outside", change: func(c *Cmd) { c.Dir = outside }, want: fsroot.ErrOutside},
		{name: "dir dot dot", change: func(c *Cmd) { c.Dir = dir + "/.." }, want: fsroot.ErrOutside},
		{name: "dir through a link", change: func(c *Cmd) { c.Dir = filepath.Join(dir, "link_out") }, want: fsroot.ErrOutside},
		{name: "dir missing", change: func(c *Cmd) { c.Dir = filepath.Join(dir, "missing") }},
		{name: "not in the child's PATH", change: func(c *Cmd) { c.Env = set("PATH", "/nonexistent") }, want: ErrNotFound},
		{name: "isolation unavailable", change: func(c *Cmd) { c.Isolation = Bubblewrap }, noBwrap: true, want: ErrIsolationUnavailable},
		{name: "unknown isolation", change: func(c *Cmd) { c.Isolation = "docker" }},
		{name: "no program", change: func(c *Cmd) { c.Program = "" }},
		{name: "NUL in argument", change: func(c *Cmd) { c.Args = append(c.Args, "a\x00b") }},
		{name: "nil roots", change: func(c *Cmd) { c.Roots = nil }},
		{name: "no dir", change: func(c *Cmd) { c.Dir = "" }},
		{name: "zero timeout", change: func(c *Cmd) { c.Timeout = 0 }},
		{name: "negative output limit", change: func(c *Cmd) { c.OutputLimit = -1 }},
		{name: "cancelled context", change: func(*Cmd) {}, ctx: cancelled, want: context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.noBwrap {
				saved := isolation
				isolation = &prober{bwrap: "/nonexistent/bwrap"}
				t.Cleanup(func() { isolation = saved })
			}
			c := ok
			c.Args = append([]string(nil), ok.Args...)
			tt.change(&c)
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			p, err := Start(ctx, c)
			if err == nil {
				p.Stop()
				t.Fatal("Start succeeded")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Start = %v, want %v", err, tt.want)
			}
			if _, runErr := Run(ctx, c); runErr == nil || (tt.want != nil && !errors.Is(runErr, tt.want)) {
				t.Errorf("Run = %v, want the same refusal as Start", runErr)
			}
			mustNotExist(t, marker)
		})
	}
	t.Run("Stdin set", func(t *testing.T) {
		c := ok
		c.Stdin = []byte("x")
		if p, err := Start(context.Background(), c); err == nil {
			p.Stop()
			t.Error("Start with Cmd.Stdin set succeeded")
		}
		mustNotExist(t, marker)
	})
	t.Run("fallback", func(t *testing.T) {
		saved := isolation
		isolation = &prober{bwrap: "/nonexistent/bwrap"}
		t.Cleanup(func() { isolation = saved })
		c := ok
		c.Isolation, c.AllowFallback = Bubblewrap, true
		p, err := tryStart(t, context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if p.Isolation != None {
			t.Errorf("Isolation = %q, want %q", p.Isolation, None)
		}
		waitDone(t, p)
		if res := stop(t, p, time.Second); res.ExitCode != 0 || res.Isolation != None {
			t.Errorf("ExitCode=%d Isolation=%q; want 0, none", res.ExitCode, res.Isolation)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Errorf("fallback did not run: %v", err)
		}
	})
	t.Run("unchanged", func(t *testing.T) {
		os.Remove(marker)
		p, err := tryStart(t, context.Background(), ok)
		if err != nil {
			t.Fatalf("the unchanged command fails: %v", err)
		}
		waitDone(t, p)
		if _, err := os.Stat(marker); err != nil {
			t.Errorf("the unchanged command did not run: %v", err)
		}
	})
}

// fdCount counts this process's open descriptors.
func fdCount(t testing.TB) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// TestStartStopNoLeak runs 50 Start and Stop cycles: no descriptor and no
// goroutine is left behind.
func TestStartStopNoLeak(t *testing.T) {
	roots, dir := workspace(t)
	cycle := func() {
		p, err := Start(context.Background(), Cmd{Program: "cat", Roots: roots, Dir: dir, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(p.Stdin, "ping\n"); err != nil {
			t.Fatal(err)
		}
		if line := readLine(t, bufio.NewReader(p.Stdout)); line != "ping\n" {
			t.Fatalf("echoed %q", line)
		}
		if res, err := p.Stop(); err != nil || res.ExitCode != 0 {
			t.Fatalf("Stop = %+v, %v", res, err)
		}
	}
	cycle() // warm up: the runtime's poller, for one, opens descriptors once
	fds, goroutines := fdCount(t), runtime.NumGoroutine()
	for range 50 {
		cycle()
	}
	if n := fdCount(t); n != fds {
		t.Errorf("%d descriptors open after 50 cycles, %d before", n, fds)
	}
	// Goroutines that delivered a result may take a moment to end.
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); n > goroutines && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	if n > goroutines {
		t.Errorf("%d goroutines after 50 cycles, %d before", n, goroutines)
	}
}

// TestIsolationStartEcho talks to cat in the sandbox over the pipes.
func TestIsolationStartEcho(t *testing.T) {
	requireIsolation(t)
	p := start(t, Cmd{Program: "cat", Isolation: Bubblewrap})
	if p.Isolation != Bubblewrap {
		t.Fatalf("Isolation = %q, want %q", p.Isolation, Bubblewrap)
	}
	r := bufio.NewReader(p.Stdout)
	for _, line := range []string{"hello\n", "sandboxed\n"} {
		if err := write(t, p, []byte(line)); err != nil {
			t.Fatal(err)
		}
		if got := readLine(t, r); got != line {
			t.Errorf("echoed %q, want %q", got, line)
		}
	}
	res := stop(t, p, 5*time.Second)
	if res.ExitCode != 0 || res.Signal != "" || res.Isolation != Bubblewrap {
		t.Errorf("ExitCode=%d Signal=%q Isolation=%q; want 0, none, bubblewrap; stderr %s", res.ExitCode, res.Signal, res.Isolation, res.Stderr)
	}
}

// TestIsolationStartNoNetwork checks that a sandboxed process started with
// Start cannot reach a TCP server on the host's loopback, which the same
// command reaches without the sandbox.
func TestIsolationStartNoNetwork(t *testing.T) {
	requireIsolation(t)
	ln := testnet.Listen(t)
	port := ln.Port
	// The child connects when told to on stdin, and says how it went.
	script := `read go; if echo hi 2>/dev/null > /dev/tcp/127.0.0.1/` + port + `; then echo connected; else echo refused; fi; cat`
	connect := func(iso Isolation) string {
		p := start(t, Cmd{Program: "bash", Args: []string{"-c", script}, Isolation: iso})
		if err := write(t, p, []byte("go\n")); err != nil {
			t.Fatal(err)
		}
		got := readLine(t, bufio.NewReader(p.Stdout))
		stop(t, p, 5*time.Second)
		return got
	}

	if got := connect(Bubblewrap); got != "refused\n" {
		t.Errorf("sandboxed connect to 127.0.0.1:%s: %q", port, got)
	}
	time.Sleep(100 * time.Millisecond)
	if n := ln.Accepted(); n != 0 {
		t.Fatalf("the server accepted %d connections from the sandbox", n)
	}
	// The same command without the sandbox does connect: the probe works.
	if got := connect(None); got != "connected\n" {
		t.Fatalf("unsandboxed connect: %q", got)
	}
	if ln.WaitAccepted(1, 5*time.Second) != 1 {
		t.Errorf("unsandboxed connect was not accepted")
	}
}

// TestIsolationStopKillsSandbox checks that Stop, and the timeout, leave
// nothing of the sandbox behind, not even a process that called setsid.
func TestIsolationStopKillsSandbox(t *testing.T) {
	requireIsolation(t)
	const script = `setsid sh -c 'echo > ready; exec sleep %s' & while [ ! -e ready ]; do sleep 0.01; done; echo started; cat >/dev/null; sleep 60`
	for i, tt := range []struct {
		name    string
		timeout time.Duration
	}{
		{"stop", 20 * time.Second},
		{"timeout", 2 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tag := fmt.Sprintf("62.%d%d", os.Getpid(), i) // a sleep no one else runs
			p := start(t, Cmd{Program: "sh", Args: []string{"-c", fmt.Sprintf(script, tag)}, Isolation: Bubblewrap, Timeout: tt.timeout})
			r := bufio.NewReader(p.Stdout)
			if got := readLine(t, r); got != "started\n" {
				t.Fatalf("stdout = %q", got)
			}
			if len(sandboxedSleeps(tag)) == 0 {
				t.Fatal("the sandboxed sleep is not visible from the host: this test cannot see what survives")
			}
			if tt.name == "timeout" {
				readToEOF(t, r)
				waitDone(t, p)
			}
			begin := time.Now()
			res := stop(t, p, 5*time.Second)
			if elapsed := time.Since(begin); elapsed > stopGrace+2*time.Second {
				t.Errorf("Stop took %v", elapsed)
			}
			if res.Signal != "killed" || res.TimedOut != (tt.name == "timeout") {
				t.Errorf("Signal=%q TimedOut=%v", res.Signal, res.TimedOut)
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
