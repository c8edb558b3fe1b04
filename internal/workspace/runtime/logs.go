package runtime

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/redact"
	"github.com/zero-dev/zero/internal/guard/spawn"
)

// Bounds of what the runtime keeps about each server, in memory.
const (
	// StderrRing is how much of a server's stderr is kept: the newest
	// bytes, over its runs. Of one run, spawn keeps the first 256 KiB.
	StderrRing = 64 << 10
	// DebugRing is how much of a server's debug log is kept: the newest
	// bytes. One call's entry is cut at debugEntry.
	DebugRing  = 256 << 10
	debugEntry = 16 << 10
	// MaxRuns is how many runs a server's history keeps: the newest.
	MaxRuns = 50
)

// A Run is one run of a server: a process (stdio) or a connection (http,
// sse), for calls or for a Test.
type Run struct {
	Purpose string    `json:"purpose"` // "call" or "test"
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	End     string    `json:"end,omitempty"` // why it ended: idle, replaced, stopped, closed, test, lifetime, exited, failed to start
	// ExitCode is a stdio server's process's, once it ended (-1 when a
	// signal ended it); nil when no process ran: a start that failed
	// before one did, or an HTTP or SSE connection.
	ExitCode *int   `json:"exit_code,omitempty"`
	Signal   string `json:"signal,omitempty"`
	Crashed  bool   `json:"crashed"`
	Error    string `json:"error,omitempty"` // why a start failed, redacted
}

// how says how a run's process ended, for an error or a log: "" when no
// process ran, which has no exit code to tell.
func (r *Run) how() string {
	switch {
	case r.Signal != "":
		return "ended by signal " + r.Signal
	case r.Ended.IsZero():
		return "still running"
	case r.ExitCode != nil:
		return "exit code " + strconv.Itoa(*r.ExitCode)
	}
	return ""
}

// parenHow is how in parentheses after a space, or "".
func (r *Run) parenHow() string {
	if h := r.how(); h != "" {
		return " (" + h + ")"
	}
	return ""
}

// Logs are what the runtime keeps of one server since zero serve started.
type Logs struct {
	Stderr  string // the newest StderrRing bytes of its stderr, redacted, each run headed by a line
	Debug   string // the newest DebugRing bytes of its debug log, redacted
	Runs    []Run  // the newest MaxRuns runs, newest first
	Crashes int    // runs that ended on their own
	Running bool   // a pool connection is up
}

// logs keeps one server's stderr ring, runs and debug ring.
type logs struct {
	mu      sync.Mutex
	stderr  ring
	debugs  ring
	runs    []*Run
	crashes int
	live    map[*Run]liveRun // the runs still going
}

// A liveRun is a run whose stderr is still being written.
type liveRun struct {
	stderr func() []byte
	red    *redact.Redactor
}

func newLogs() *logs {
	return &logs{stderr: ring{max: StderrRing}, debugs: ring{max: DebugRing}, live: map[*Run]liveRun{}}
}

// begin records the start of a run.
func (l *logs) begin(purpose string) *Run {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := &Run{Purpose: purpose, Started: time.Now().UTC()}
	l.runs = append(l.runs, r)
	if len(l.runs) > MaxRuns {
		l.runs = append(l.runs[:0:0], l.runs[len(l.runs)-MaxRuns:]...)
	}
	return r
}

// running notes where to read a running process's stderr so far, and
// how to redact it.
func (l *logs) running(r *Run, stderr func() []byte, red *redact.Redactor) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.live[r] = liveRun{stderr, red}
}

// failed records a start that failed before anything ran.
func (l *logs) failed(r *Run, err error) {
	l.end(r, nil, endFailed, false, nil, err)
}

// end records the end of a run and keeps its stderr, redacted. res is how
// its process ended, nil when no process ran.
func (l *logs) end(r *Run, res *spawn.Result, reason string, crash bool, red *redact.Redactor, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.live, r)
	r.Ended, r.End, r.Crashed = time.Now().UTC(), reason, crash
	if res == nil {
		res = &spawn.Result{}
	} else {
		code := res.ExitCode
		r.ExitCode, r.Signal = &code, res.Signal
	}
	if err != nil {
		r.Error = red.String(err.Error())
	}
	if crash {
		l.crashes++
	}
	if len(res.Stderr) > 0 || err != nil {
		l.stderr.write(runHeader(r))
		l.stderr.write(red.Bytes(res.Stderr))
		if len(res.Stderr) > 0 && res.Stderr[len(res.Stderr)-1] != '\n' {
			l.stderr.write([]byte("\n"))
		}
		if res.StderrTruncated {
			l.stderr.write([]byte("[the rest of this run's stderr was not kept]\n"))
		}
	}
}

func runHeader(r *Run) []byte {
	how := ""
	if h := r.how(); h != "" {
		how = ": " + h
	}
	return fmt.Appendf(nil, "--- %s run started %s, %s%s ---\n", r.Purpose, r.Started.Format(time.RFC3339), r.End, how)
}

// snapshot returns the logs as they are, the stderr of the runs still
// going included.
func (l *logs) snapshot(running bool) Logs {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := Logs{Crashes: l.crashes, Running: running, Debug: l.debugs.String()}
	stderr := ring{max: StderrRing}
	stderr.write(l.stderr.buf)
	for r, live := range l.live {
		stderr.write(fmt.Appendf(nil, "--- %s run started %s, still running ---\n", r.Purpose, r.Started.Format(time.RFC3339)))
		stderr.write(live.red.Bytes(live.stderr()))
	}
	out.Stderr = stderr.String()
	for i := len(l.runs) - 1; i >= 0; i-- {
		out.Runs = append(out.Runs, *l.runs[i])
	}
	return out
}

// debug adds a call's entry to the debug log: who called which tool, how
// it ended, its arguments and its result or error, redacted.
func (l *logs) debug(s Spec, c *conn, caller, tool string, o Outcome, d time.Duration, args json.RawMessage, res *mcp.CallToolResult, err error) {
	red := s.Redactor()
	if c != nil {
		red = c.red
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s called %s: %s in %v\narguments: %s\n", time.Now().UTC().Format(time.RFC3339), caller, tool, o, d.Round(time.Millisecond), args)
	if res != nil {
		out, _ := json.Marshal(res)
		fmt.Fprintf(&b, "result: %s\n", out)
	}
	if err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	entry := red.String(b.String())
	if len(entry) > debugEntry {
		entry = validPrefix(entry, debugEntry) + "\n[the rest of this entry was cut]\n"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.debugs.write([]byte(entry))
}

// A ring keeps the newest max bytes written to it.
type ring struct {
	max  int
	buf  []byte
	lost bool // older bytes were dropped
}

func (r *ring) write(p []byte) {
	r.buf = append(r.buf, p...)
	if len(r.buf) > r.max {
		r.buf = append(r.buf[:0:0], r.buf[len(r.buf)-r.max:]...)
		r.lost = true
	}
}

// String returns what the ring holds, from its first whole line when
// older bytes were dropped.
func (r *ring) String() string {
	s := string(r.buf)
	if r.lost {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
		s = "[earlier lines dropped]\n" + s
	}
	return s
}

// Logs returns what the runtime keeps of server id: its stderr and debug
// log, redacted, and its runs.
func (r *Runtime) Logs(id int64) Logs { return r.logsOf(key{id: id}) }

func (r *Runtime) logsOf(k key) Logs {
	r.mu.Lock()
	s := r.servers[k]
	r.mu.Unlock()
	if s == nil {
		return Logs{}
	}
	s.mu.Lock()
	running := s.cur != nil
	s.mu.Unlock()
	return s.logs.snapshot(running)
}
