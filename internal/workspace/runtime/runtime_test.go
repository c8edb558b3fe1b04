package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/workspace/runtime/runtimetest"
)

// fixture is a runtime over a thread workspace, with an audit log and an
// events file the test servers append to.
type fixture struct {
	t      testing.TB
	rt     *Runtime
	dir    string
	events string
	audit  *audit.Log
	ctx    context.Context

	mu       sync.Mutex
	observed []Listing
}

func newFixture(t testing.TB, o Options) *fixture {
	t.Helper()
	dir := t.TempDir()
	work := filepath.Join(dir, "workspace")
	os.Mkdir(work, 0o700)
	roots, err := fsroot.Open([]string{work})
	if err != nil {
		t.Fatal(err)
	}
	log, err := audit.Open(filepath.Join(dir, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	f := &fixture{t: t, dir: dir, events: filepath.Join(dir, "events"), audit: log, ctx: ctx}
	o.Roots, o.Audit = roots, log
	o.Observe = func(_ context.Context, _ Spec, l Listing) error {
		f.mu.Lock()
		f.observed = append(f.observed, l)
		f.mu.Unlock()
		return nil
	}
	f.rt = New(o)
	t.Cleanup(func() {
		f.rt.Close()
		cancel()
		log.Close()
		roots.Close()
		if kids := runtimetest.Children(t); kids != nil {
			t.Errorf("child processes left after Close: %v", kids)
		}
	})
	return f
}

// spec returns a stdio Spec of the test server with the given id and
// arguments; its tool set is what a Probe lists, approved.
func (f *fixture) spec(id int64, args ...string) Spec {
	f.t.Helper()
	bin := runtimetest.Toolserver(f.t)
	s := Spec{ServerID: id, Name: "srv" + strconv.FormatInt(id, 10), Fingerprint: "fp1", Kind: KindStdio,
		Command: bin, Program: bin, Args: append([]string{"--events=" + f.events}, args...)}
	l, err := f.rt.Probe(f.ctx, s)
	if err != nil {
		f.t.Fatal(err)
	}
	s.ToolSet = SetOf(l.Tools)
	return s
}

// eventLines returns the events file's lines.
func (f *fixture) eventLines() []string {
	data, _ := os.ReadFile(f.events)
	return strings.Fields(strings.ReplaceAll(string(data), " ", "_"))
}

// countEvents returns how many event lines begin with prefix.
func (f *fixture) countEvents(prefix string) int {
	count := 0
	for _, l := range f.eventLines() {
		if strings.HasPrefix(l, prefix) {
			count++
		}
	}
	return count
}

// waitEvent waits for n event lines with prefix.
func (f *fixture) waitEvent(prefix string, n int) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if f.countEvents(prefix) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.t.Fatalf("no %d events %q: %v", n, prefix, f.eventLines())
}

// pids returns the pids of the test servers that started.
func (f *fixture) pids() []int {
	var out []int
	for _, l := range f.eventLines() {
		if p, ok := strings.CutPrefix(l, "start_"); ok {
			n, _ := strconv.Atoi(p)
			out = append(out, n)
		}
	}
	return out
}

func (f *fixture) records(action string) []audit.Record {
	f.t.Helper()
	all, err := f.audit.ReadAll()
	if err != nil {
		f.t.Fatal(err)
	}
	var out []audit.Record
	for _, r := range all {
		if r.Action == action {
			out = append(out, r)
		}
	}
	return out
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestCallStdio calls a tool of a real stdio server: its answer comes back
// marked as untrusted, the call is audited without its arguments, and the
// second call reuses the running process.
func TestCallStdio(t *testing.T) {
	f := newFixture(t, Options{})
	s := f.spec(1)
	res, err := f.rt.Call(f.ctx, s, "echo", json.RawMessage(`{"word":"s3cret-arg"}`), "token:7:owner")
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != `{"word":"s3cret-arg"}` {
		t.Errorf("echo answered %q", got)
	}
	if res.Meta[MetaUntrusted] != true || res.Meta[MetaServer] != "srv1" {
		t.Errorf("the result is not marked: %v", res.Meta)
	}
	if _, err := f.rt.Call(f.ctx, s, "echo", nil, "token:7:owner"); err != nil {
		t.Fatal(err)
	}
	if pids := f.pids(); len(pids) != 2 { // the Probe's and the pool's
		t.Errorf("servers started: %v, want the Probe's and one for both calls", pids)
	}
	recs := f.records("tool.call")
	if len(recs) != 2 {
		t.Fatalf("%d tool.call records, want 2", len(recs))
	}
	r := recs[0]
	if r.Actor != "token:7:owner" || r.Target != "server:1" || r.Fingerprint != "fp1" || r.Detail["tool"] != "echo" ||
		r.Detail["name"] != "srv1" || r.Detail["outcome"] != "ok" || r.Detail["duration_ms"] == "" {
		t.Errorf("record: %+v", r)
	}
	data, _ := os.ReadFile(filepath.Join(f.dir, "audit.log"))
	if strings.Contains(string(data), "s3cret-arg") {
		t.Error("the audit log holds a call's arguments")
	}
	if !f.rt.Logs(1).Running {
		t.Error("the logs do not say the server runs")
	}
}

// TestCrashMidCall: a server that exits in the middle of a call gives a
// clear error, the run history records the crash and its exit code, and
// the next call starts the server again.
func TestCrashMidCall(t *testing.T) {
	f := newFixture(t, Options{})
	s := f.spec(1)
	first, err := f.rt.Call(f.ctx, s, "pid", nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = f.rt.Call(f.ctx, s, "crash", nil, "test")
	if !errors.Is(err, ErrCrashed) || !strings.Contains(err.Error(), "exit code 2") {
		t.Fatalf("crash: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the crash took %v to report", d)
	}
	again, err := f.rt.Call(f.ctx, s, "pid", nil, "test")
	if err != nil {
		t.Fatalf("the call after a crash: %v", err)
	}
	if textOf(t, first) == textOf(t, again) {
		t.Error("the server was not started again")
	}
	if d := time.Since(start); d > 3*time.Second+MinBackoff {
		t.Errorf("the restart took %v", d)
	}
	logs := f.rt.Logs(1)
	if logs.Crashes != 1 || !strings.Contains(logs.Stderr, "crashing on purpose") {
		t.Errorf("logs: %d crashes, stderr %q", logs.Crashes, logs.Stderr)
	}
	var crashed []Run
	for _, r := range logs.Runs {
		if r.Crashed {
			crashed = append(crashed, r)
		}
	}
	if len(crashed) != 1 || crashed[0].ExitCode == nil || *crashed[0].ExitCode != 2 || crashed[0].End != endExited {
		t.Errorf("runs: %+v", logs.Runs)
	}
	outcomes := map[string]int{}
	for _, r := range f.records("tool.call") {
		outcomes[r.Detail["outcome"]]++
	}
	if outcomes["crashed"] != 1 || outcomes["ok"] != 2 {
		t.Errorf("outcomes recorded: %v", outcomes)
	}
}

// TestStartFailureHasNoExitCode: a start that fails before any process
// runs (the program is not there) is recorded as such: its run has no exit
// code, and neither its stderr heading nor its error tells one (a failed
// start once read "exit code 0", as if a program had run and succeeded). A
// process that ran and exited still tells its code.
func TestStartFailureHasNoExitCode(t *testing.T) {
	f := newFixture(t, Options{})
	missing := filepath.Join(f.dir, "no-such-program")
	s := Spec{ServerID: 1, Name: "gone", Fingerprint: "fp1", Kind: KindStdio, Command: missing, Program: missing}
	_, err := f.rt.Probe(f.ctx, s)
	if err == nil || strings.Contains(err.Error(), "exit code") {
		t.Fatalf("the probe of a missing program: %v", err)
	}
	logs := f.rt.Logs(1)
	if len(logs.Runs) != 1 || logs.Runs[0].ExitCode != nil || logs.Runs[0].End != endFailed || logs.Runs[0].Error == "" {
		t.Errorf("the run: %+v", logs.Runs)
	}
	if strings.Contains(logs.Stderr, "exit code") || !strings.Contains(logs.Stderr, "failed to start ---") {
		t.Errorf("the stderr heading: %q", logs.Stderr)
	}
	if data, _ := json.Marshal(logs.Runs[0]); strings.Contains(string(data), "exit_code") {
		t.Errorf("the run as JSON: %s", data)
	}

	bin := runtimetest.Toolserver(t)
	exits := Spec{ServerID: 2, Name: "exits", Fingerprint: "fp1", Kind: KindStdio, Command: bin, Program: bin, Args: []string{"--no-such-flag"}} // flag.Parse exits 2
	if _, err := f.rt.Probe(f.ctx, exits); err == nil {
		t.Fatal("the probe of a server that exits at start passed")
	}
	runs := f.rt.Logs(2).Runs
	if len(runs) != 1 || runs[0].ExitCode == nil || *runs[0].ExitCode != 2 || !strings.Contains(f.rt.Logs(2).Stderr, "exit code 2") {
		t.Errorf("a server that exited with 2: %+v, stderr %q", runs, f.rt.Logs(2).Stderr)
	}
}

// TestBackoffBounded: the wait before a restart doubles from MinBackoff
// and never exceeds MaxBackoff.
func TestBackoffBounded(t *testing.T) {
	prev := time.Duration(0)
	for n := 1; n < 100; n++ {
		d := backoff(n)
		if d < prev || d > MaxBackoff || n == 1 && d != MinBackoff {
			t.Fatalf("backoff(%d) = %v after %v", n, d, prev)
		}
		prev = d
	}
	if prev != MaxBackoff {
		t.Errorf("the backoff stops at %v", prev)
	}
}

// TestIdleShutdown: a server with no call for the idle timeout is stopped,
// its process gone; the next call starts it again.
func TestIdleShutdown(t *testing.T) {
	f := newFixture(t, Options{IdleTimeout: 200 * time.Millisecond})
	s := f.spec(1)
	res, err := f.rt.Call(f.ctx, s, "pid", nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(textOf(t, res))
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		t.Fatal("the idle server still runs")
	}
	logs := f.rt.Logs(1)
	for len(logs.Runs) > 0 && logs.Runs[0].End == "" && time.Now().Before(deadline) { // its end is recorded once reaped
		time.Sleep(10 * time.Millisecond)
		logs = f.rt.Logs(1)
	}
	if logs.Running || len(logs.Runs) == 0 || logs.Runs[0].End != endIdle || logs.Runs[0].Crashed {
		t.Errorf("logs after idle shutdown: %+v", logs)
	}
	res, err = f.rt.Call(f.ctx, s, "pid", nil, "test")
	if err != nil || textOf(t, res) == strconv.Itoa(pid) {
		t.Errorf("after idle shutdown: %v %v", res, err)
	}
}

// maxInFlight reads the begin and end events in order and returns the
// most slow calls in flight at once, per server and in total.
func (f *fixture) maxInFlight() (perServer, total int) {
	now := map[string]int{}
	cur := 0
	for _, l := range f.eventLines() {
		if pid, ok := strings.CutPrefix(l, "begin_"); ok {
			now[pid]++
			cur++
			perServer, total = max(perServer, now[pid]), max(total, cur)
		}
		if pid, ok := strings.CutPrefix(l, "end_"); ok {
			now[pid]--
			cur--
		}
	}
	return perServer, total
}

// TestConcurrencyBounds: calls in flight are bounded per server and in
// total, counted by the servers themselves; every call is answered.
func TestConcurrencyBounds(t *testing.T) {
	f := newFixture(t, Options{MaxPerServer: 2, MaxTotal: 3})
	specs := []Spec{f.spec(1), f.spec(2)}
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.rt.Call(f.ctx, specs[i%2], "slow", json.RawMessage(`{"ms":100}`), "test")
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	perServer, total := f.maxInFlight()
	if perServer != 2 || total != 3 {
		t.Errorf("most in flight: %d on one server (bound 2), %d in all (bound 3)", perServer, total)
	}
}

// TestMaxCallsOfASpec: a Spec's MaxCalls bounds the calls in flight to its
// server in place of the runtime's default, and a new bound applies to the
// calls that start after it.
func TestMaxCallsOfASpec(t *testing.T) {
	f := newFixture(t, Options{MaxPerServer: 2, MaxTotal: 20})
	s := f.spec(1)
	batch := func(n int) {
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if _, err := f.rt.Call(f.ctx, s, "slow", json.RawMessage(`{"ms":150}`), "test"); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	s.MaxCalls = 3
	batch(9)
	if perServer, _ := f.maxInFlight(); perServer != 3 {
		t.Errorf("most in flight under MaxCalls 3: %d", perServer)
	}
	s.MaxCalls = 6
	batch(12)
	if perServer, _ := f.maxInFlight(); perServer != 6 {
		t.Errorf("most in flight under MaxCalls 6: %d", perServer)
	}
}

// TestWaitForSlotHonoursContext: a call waiting for a slot gives up when
// its context ends, and the server never sees it.
func TestWaitForSlotHonoursContext(t *testing.T) {
	f := newFixture(t, Options{MaxPerServer: 1})
	s := f.spec(1)
	go f.rt.Call(f.ctx, s, "slow", json.RawMessage(`{"ms":3000}`), "test")
	f.waitEvent("begin_", 1)
	ctx, cancel := context.WithTimeout(f.ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := f.rt.Call(ctx, s, "slow", json.RawMessage(`{"ms":1}`), "test")
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Errorf("waiting for a slot: %v after %v", err, time.Since(start))
	}
	if _, total := f.maxInFlight(); total != 1 {
		t.Errorf("the server saw %d calls at once", total)
	}
}

// TestCancelReachesServer: when a call's context is cancelled, the server
// gets notifications/cancelled (its handler's context ends).
func TestCancelReachesServer(t *testing.T) {
	f := newFixture(t, Options{})
	s := f.spec(1)
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() {
		_, err := f.rt.Call(ctx, s, "slow", json.RawMessage(`{"ms":20000}`), "test")
		done <- err
	}()
	f.waitEvent("begin_", 1)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled call: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled call did not return")
	}
	f.waitEvent("cancelled_", 1)
	if recs := f.records("tool.call"); len(recs) != 1 || recs[0].Detail["outcome"] != "cancelled" {
		t.Errorf("records: %+v", recs)
	}
}

// TestCallTimeout: a call gets no more than the call timeout, and the
// server is told to cancel it.
func TestCallTimeout(t *testing.T) {
	f := newFixture(t, Options{CallTimeout: 300 * time.Millisecond})
	s := f.spec(1)
	start := time.Now()
	_, err := f.rt.Call(f.ctx, s, "slow", json.RawMessage(`{"ms":20000}`), "test")
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 3*time.Second {
		t.Fatalf("a slow call: %v after %v", err, time.Since(start))
	}
	f.waitEvent("cancelled_", 1)
	if recs := f.records("tool.call"); len(recs) != 1 || recs[0].Detail["outcome"] != "timeout" {
		t.Errorf("records: %+v", recs)
	}
}

// TestCloseLeavesNoChildren: after calls to several servers, one of them
// in flight on a retiring connection, Close stops every process at once
// (the fixture counts the children).
func TestCloseLeavesNoChildren(t *testing.T) {
	f := newFixture(t, Options{})
	a, b := f.spec(1), f.spec(2)
	for _, s := range []Spec{a, b} {
		if _, err := f.rt.Call(f.ctx, s, "pid", nil, "test"); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.rt.Call(f.ctx, a, "slow", json.RawMessage(`{"ms":20000}`), "test")
		done <- err
	}()
	f.waitEvent("begin_", 1)
	if runtimetest.Children(t) == nil {
		t.Fatal("no child process runs")
	}
	f.rt.Renew(1) // the busy connection retires, and Close ends it too
	start := time.Now()
	f.rt.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	if kids := runtimetest.Children(t); kids != nil {
		t.Errorf("children after Close: %v", kids)
	}
	for _, pid := range f.pids() {
		if alive(pid) {
			t.Errorf("server %d still runs", pid)
		}
	}
	if err := <-done; err == nil {
		t.Error("the call in flight succeeded after Close")
	}
	if _, err := f.rt.Call(f.ctx, a, "pid", nil, "test"); !errors.Is(err, ErrClosed) {
		t.Errorf("a call after Close: %v", err)
	}
}

// TestStderrRedacted: what a server writes to stderr is kept in its
// logs with its secrets redacted, the Test's listing too.
func TestStderrRedacted(t *testing.T) {
	f := newFixture(t, Options{})
	const canary = "canary-7f3a9c"
	s := f.spec(1)
	s.Env = map[string]string{"CANARY": canary}
	l, err := f.rt.Probe(f.ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.rt.Call(f.ctx, s, "crash", nil, "test"); err == nil {
		t.Fatal("crash did not fail")
	}
	logs := f.rt.Logs(1)
	for what, text := range map[string]string{"listing": l.Stderr, "logs": logs.Stderr} {
		if strings.Contains(text, canary) || !strings.Contains(text, "my CANARY is [redacted env CANARY]") {
			t.Errorf("%s stderr: %q", what, text)
		}
	}
}

// TestStderrRingCapped: the stderr kept is bounded, newest last.
func TestStderrRingCapped(t *testing.T) {
	r := ring{max: 100}
	for i := range 50 {
		r.write([]byte("line " + strconv.Itoa(i) + "\n"))
	}
	got := r.String()
	if len(r.buf) != 100 || !strings.HasPrefix(got, "[earlier lines dropped]\nline ") || !strings.HasSuffix(got, "line 49\n") {
		t.Errorf("ring: %d bytes, %q", len(r.buf), got)
	}
}

// TestResultSanitized: invisible characters are stripped from a result's
// text and structured content, the joiner kept, and the server cannot
// unmark its result.
func TestResultSanitized(t *testing.T) {
	f := newFixture(t, Options{})
	s := f.spec(1)
	res, err := f.rt.Call(f.ctx, s, "hidden", nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := textOf(t, res), "Do not read this 👩\u200D💻"; got != want {
		t.Errorf("text %+q, want %+q", got, want)
	}
	if note := res.StructuredContent.(map[string]any)["note"]; note != "abc" {
		t.Errorf("structured content: %+q", note)
	}
	if res.Meta[MetaUntrusted] != true {
		t.Errorf("meta: %v", res.Meta)
	}
}

// TestResultCapped: a result over MaxResultBytes is cut, marked and says
// so; under a Spec's larger MaxResult it comes whole.
func TestResultCapped(t *testing.T) {
	f := newFixture(t, Options{})
	s := f.spec(1)
	res, err := f.rt.Call(f.ctx, s, "big", json.RawMessage(`{"bytes":3000000}`), "test")
	if err != nil {
		t.Fatal(err)
	}
	first := res.Content[0].(*mcp.TextContent).Text
	last := res.Content[len(res.Content)-1].(*mcp.TextContent).Text
	if len(first) != MaxResultBytes || res.Meta[MetaTruncated] != true || !strings.Contains(last, "1951424 more bytes of it were dropped") {
		t.Errorf("a 3 MB result: %d bytes, meta %v, note %q", len(first), res.Meta, last)
	}
	s.MaxResult = 4 << 20
	whole, err := f.rt.Call(f.ctx, s, "big", json.RawMessage(`{"bytes":3000000}`), "test")
	if err != nil || len(whole.Content) != 1 || len(whole.Content[0].(*mcp.TextContent).Text) != 3000000 || whole.Meta[MetaTruncated] != nil {
		t.Errorf("a 3 MB result under a Spec's 4 MiB bound: %d items, meta %v, %v", len(whole.Content), whole.Meta, err)
	}
	s.MaxResult = 0
	small, err := f.rt.Call(f.ctx, s, "big", json.RawMessage(`{"bytes":10}`), "test")
	if err != nil || len(small.Content) != 1 || small.Meta[MetaTruncated] != nil {
		t.Errorf("a small result: %+v %v", small, err)
	}
}

// TestReplacedOnNewFingerprint: a Spec with another fingerprint (a new
// approval) or other secrets replaces the running server.
func TestReplacedOnNewFingerprint(t *testing.T) {
	f := newFixture(t, Options{})
	s := f.spec(1)
	pidOf := func(s Spec) string {
		res, err := f.rt.Call(f.ctx, s, "pid", nil, "test")
		if err != nil {
			t.Fatal(err)
		}
		return textOf(t, res)
	}
	first := pidOf(s)
	if pidOf(s) != first {
		t.Fatal("the same Spec started another server")
	}
	s.Fingerprint = "fp2"
	second := pidOf(s)
	s.Env = map[string]string{"CANARY": "new"}
	third := pidOf(s)
	if second == first || third == second {
		t.Errorf("pids %s %s %s: not replaced", first, second, third)
	}
	n, _ := strconv.Atoi(first)
	deadline := time.Now().Add(5 * time.Second)
	for alive(n) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(n) {
		t.Error("the replaced server still runs")
	}
}

// TestDebugLog: with the owner's switch on, a call's arguments and result
// are kept, redacted; with it off, nothing is.
func TestDebugLog(t *testing.T) {
	f := newFixture(t, Options{})
	s := f.spec(1)
	s.Env = map[string]string{"CANARY": "canary-debug-1"}
	if _, err := f.rt.Call(f.ctx, s, "echo", json.RawMessage(`{"quiet":"not kept"}`), "test"); err != nil {
		t.Fatal(err)
	}
	if got := f.rt.Logs(1).Debug; got != "" {
		t.Fatalf("debug log with the switch off: %q", got)
	}
	s.Debug = true
	if _, err := f.rt.Call(f.ctx, s, "echo", json.RawMessage(`{"loud":"canary-debug-1"}`), "token:1:owner"); err != nil {
		t.Fatal(err)
	}
	got := f.rt.Logs(1).Debug
	if !strings.Contains(got, "token:1:owner called echo: ok") || !strings.Contains(got, `"loud":"[redacted env CANARY]"`) ||
		strings.Contains(got, "canary-debug-1") || strings.Contains(got, "not kept") {
		t.Errorf("debug log: %q", got)
	}
}

// TestHTTPSServer calls a tool of a real https server (a loopback TLS
// test server trusted through Spec.TLS), whose secret header reaches it;
// without the allowance for its address the private-network block refuses
// it.
func TestHTTPSServer(t *testing.T) {
	f := newFixture(t, Options{})
	remote := remoteMCP(t, "Bearer h-secret")
	s := Spec{ServerID: 1, Name: "remote", Fingerprint: "fp", Kind: KindHTTP, URL: remote.url, TLS: remote.tls,
		Headers: map[string]string{"Authorization": "Bearer h-secret"}}
	if _, err := f.rt.Probe(f.ctx, s); err == nil || !strings.Contains(err.Error(), "blocked") {
		t.Fatalf("a loopback server without the allowance: %v", err)
	}
	s.Allow = remote.allow
	l, err := f.rt.Probe(f.ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	s.ToolSet = SetOf(l.Tools)
	res, err := f.rt.Call(f.ctx, s, "hello", json.RawMessage(`{"who":"zero"}`), "test")
	if err != nil || textOf(t, res) != "hello zero" || res.Meta[MetaServer] != "remote" {
		t.Fatalf("hello: %+v %v", res, err)
	}
	s.Headers = map[string]string{"Authorization": "Bearer wrong"}
	if _, err := f.rt.Call(f.ctx, s, "hello", nil, "test"); err == nil {
		t.Error("a call with the wrong header succeeded")
	}
}

// TestRenewLetsCallsFinish: after Renew the next call gets a fresh server,
// while the call in flight finishes on the old one, which then stops.
func TestRenewLetsCallsFinish(t *testing.T) {
	f := newFixture(t, Options{})
	s := f.spec(1)
	first, err := f.rt.Call(f.ctx, s, "pid", nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.rt.Call(f.ctx, s, "slow", json.RawMessage(`{"ms":500}`), "test")
		done <- err
	}()
	f.waitEvent("begin_", 1)
	f.rt.Renew(1)
	second, err := f.rt.Call(f.ctx, s, "pid", nil, "test")
	if err != nil || textOf(t, second) == textOf(t, first) {
		t.Fatalf("after Renew: %v %v", second, err)
	}
	if err := <-done; err != nil {
		t.Errorf("the call in flight: %v", err)
	}
	old, _ := strconv.Atoi(textOf(t, first))
	deadline := time.Now().Add(5 * time.Second)
	for alive(old) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(old) {
		t.Error("the renewed server still runs")
	}
}

// TestStaleSpecRefused: a Spec built before Stop or Invalidate (the server
// was disabled, or a tool switched off, meanwhile) runs nothing.
func TestStaleSpecRefused(t *testing.T) {
	f := newFixture(t, Options{})
	s := f.spec(1)
	if _, err := f.rt.Call(f.ctx, s, "pid", nil, "test"); err != nil {
		t.Fatal(err)
	}
	f.rt.Stop(1)
	started := len(f.pids())
	for _, call := range []func() error{
		func() error { _, err := f.rt.Call(f.ctx, s, "pid", nil, "test"); return err },
		func() error { _, err := f.rt.Tools(f.ctx, s); return err },
	} {
		if err := call(); !errors.Is(err, ErrStale) {
			t.Errorf("a stale Spec: %v", err)
		}
	}
	if len(f.pids()) != started {
		t.Error("a stale Spec started the server")
	}
	s.Epoch = f.rt.Epoch(1)
	f.rt.Invalidate(1)
	if _, err := f.rt.Call(f.ctx, s, "pid", nil, "test"); !errors.Is(err, ErrStale) {
		t.Errorf("a Spec older than Invalidate: %v", err)
	}
	s.Epoch = f.rt.Epoch(1)
	if _, err := f.rt.Call(f.ctx, s, "pid", nil, "test"); err != nil {
		t.Errorf("a current Spec: %v", err)
	}
	if recs := f.records("tool.call"); recs[1].Detail["outcome"] != "unavailable" {
		t.Errorf("a stale call is recorded as %+v", recs[1])
	}
}

// TestListingBounds: a listed tool over MaxToolBytes, or tools over
// MaxListingBytes together, make the listing fail whole with an error that
// names the bound; a tool just under it is listed.
func TestListingBounds(t *testing.T) {
	f := newFixture(t, Options{})
	probe := func(tools map[string]any) error {
		file := filepath.Join(t.TempDir(), "tools.json")
		data, _ := json.Marshal(tools)
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		bin := runtimetest.Toolserver(t)
		_, err := f.rt.Probe(f.ctx, Spec{ServerID: 1, Name: "big", Fingerprint: "fp", Kind: KindStdio, Command: bin, Program: bin, Args: []string{"--tools=" + file}})
		return err
	}
	// The echo tools' schema and the test server's own tools take a little
	// room of their own.
	if err := probe(map[string]any{"near": map[string]string{"description": strings.Repeat("d", MaxToolBytes-200)}}); err != nil {
		t.Errorf("a tool under the bound: %v", err)
	}
	if err := probe(map[string]any{"huge": map[string]string{"description": strings.Repeat("d", MaxToolBytes)}}); err == nil || !strings.Contains(err.Error(), "MaxToolBytes") {
		t.Errorf("a tool over the bound: %v", err)
	}
	many := map[string]any{}
	for i := range MaxListingBytes/(MaxToolBytes-200) + 1 {
		many["t"+strconv.Itoa(i)] = map[string]string{"description": strings.Repeat("d", MaxToolBytes-200)}
	}
	if err := probe(many); err == nil || !strings.Contains(err.Error(), "MaxListingBytes") {
		t.Errorf("tools over the bound together: %v", err)
	}
}

// TestStructuredResultCapped: a result whose structured content does not
// fit the bound is an error that says it was cut: without that content, a
// client would fail it against the tool's output schema.
func TestStructuredResultCapped(t *testing.T) {
	f := newFixture(t, Options{})
	tools := filepath.Join(f.dir, "tools.json")
	if err := os.WriteFile(tools, []byte(`{"echo": {"output_schema": {"type": "object"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := f.spec(1, "--tools="+tools)
	args, _ := json.Marshal(map[string]string{"x": strings.Repeat("y", MaxResultBytes/2)})
	res, err := f.rt.Call(f.ctx, s, "echo", args, "test")
	if err != nil {
		t.Fatal(err)
	}
	last := res.Content[len(res.Content)-1].(*mcp.TextContent).Text
	if !res.IsError || res.StructuredContent != nil || res.Meta[MetaTruncated] != true || !strings.Contains(last, "were dropped") {
		t.Errorf("a result cut in its structured content: error %v, meta %v, note %q", res.IsError, res.Meta, last)
	}
	small, err := f.rt.Call(f.ctx, s, "echo", json.RawMessage(`{"x":1}`), "test")
	if err != nil || small.IsError || small.StructuredContent == nil {
		t.Errorf("a small structured result: %+v %v", small, err)
	}
}
