package shell

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/fsroot/escapetest"
	"github.com/zero-dev/zero/internal/mcpserver"
	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
)

func start(t *testing.T, o Options) *mcp.ClientSession {
	t.Helper()
	if o.DefaultTimeout == 0 {
		o.DefaultTimeout = 10 * time.Second
	}
	if o.MaxTimeout == 0 {
		o.MaxTimeout = 20 * time.Second
	}
	return mcptest.Connect(t, New(o, io.Discard), nil)
}

func roots(t *testing.T, dirs ...string) *fsroot.Set {
	t.Helper()
	s, err := fsroot.Open(dirs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// call runs execute_command and decodes its structured output.
func call(t *testing.T, cs *mcp.ClientSession, args map[string]any) (output, string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "execute_command", Arguments: args})
	if err != nil {
		t.Fatalf("execute_command(%v): %v", args, err)
	}
	text := mcptest.Text(res)
	var out output
	if !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("structured output: %v", err)
		}
		if !strings.HasPrefix(text, fmt.Sprintf("exit code: %d\n", out.ExitCode)) && !strings.HasPrefix(text, fmt.Sprintf("exit code: %d (", out.ExitCode)) {
			t.Errorf("text content %.200q does not begin with the exit code %d", text, out.ExitCode)
		}
	}
	return out, text, res.IsError
}

func TestExecuteCommand(t *testing.T) {
	tr := escapetest.New(t)
	cs := start(t, Options{Roots: roots(t, tr.Allowed)})

	out, _, isError := call(t, cs, map[string]any{"program": "pwd"})
	if isError || out.ExitCode != 0 || strings.TrimSpace(out.Stdout) != tr.Allowed {
		t.Errorf("pwd in the default cwd: %+v", out)
	}
	out, _, _ = call(t, cs, map[string]any{"program": "pwd", "cwd": tr.In("link_in_dir")})
	if strings.TrimSpace(out.Stdout) != tr.In("sub") {
		t.Errorf("pwd through an inside link = %q, want the canonical directory", out.Stdout)
	}
	out, _, isError = call(t, cs, map[string]any{"program": "sh", "args": []string{"-c", "echo oops >&2; exit 3"}})
	if isError || out.ExitCode != 3 || out.Stderr != "oops\n" {
		t.Errorf("non-zero exit: isError=%v %+v", isError, out)
	}
	out, _, _ = call(t, cs, map[string]any{"program": "cat", "stdin": "from stdin"})
	if out.Stdout != "from stdin" {
		t.Errorf("stdin: %+v", out)
	}
	// Metacharacters are inert: no shell reads them.
	out, _, _ = call(t, cs, map[string]any{"program": "echo", "args": []string{"a && touch pwned; $(touch pwned2) > x"}})
	if out.Stdout != "a && touch pwned; $(touch pwned2) > x\n" {
		t.Errorf("echo with metacharacters = %q", out.Stdout)
	}
	for _, name := range []string{"pwned", "pwned2", "x"} {
		if _, err := os.Stat(tr.In(name)); err == nil {
			t.Errorf("a shell operator took effect: %s exists", name)
		}
	}
}

func TestTimeout(t *testing.T) {
	tr := escapetest.New(t)
	cs := start(t, Options{Roots: roots(t, tr.Allowed), MaxTimeout: 5 * time.Second})
	began := time.Now()
	out, _, isError := call(t, cs, map[string]any{"program": "sleep", "args": []string{"30"}, "timeout_ms": 300})
	if isError || !out.TimedOut || out.ExitCode != -1 {
		t.Errorf("timeout: isError=%v %+v", isError, out)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("a 300 ms timeout took %v", took)
	}
	_, text, isError := call(t, cs, map[string]any{"program": "true", "timeout_ms": 60000})
	if !isError || !strings.Contains(text, "maximum") {
		t.Errorf("timeout over the maximum: %q %v", text, isError)
	}
	_, text, isError = call(t, cs, map[string]any{"program": "true", "timeout_ms": 0})
	if !isError || !strings.Contains(text, "timeout_ms") {
		t.Errorf("zero timeout: %q %v", text, isError)
	}
}

// TestOneMillisecondTimeout: timeout_ms 1, the smallest a call may ask
// for, times the command out: the result says timed_out, never a tool
// error, 200 times in a row, also with every core busy and with many
// descriptors open, which slow the launch. The timeout counts the command
// from its start, not the launch before it.
func TestOneMillisecondTimeout(t *testing.T) {
	tr := escapetest.New(t)
	cs := start(t, Options{Roots: roots(t, tr.Allowed)})
	for _, load := range []struct {
		name  string
		setup func(t *testing.T)
	}{
		{"idle", func(*testing.T) {}},
		{"busy", busy},
		{"descriptors", descriptors},
	} {
		t.Run(load.name, func(t *testing.T) {
			load.setup(t)
			for i := range 200 {
				out, text, isError := call(t, cs, map[string]any{"program": "/bin/sleep", "args": []string{"1"}, "timeout_ms": 1})
				if isError || !out.TimedOut || out.ExitCode != -1 || out.Signal != "killed" {
					t.Fatalf("call %d: isError=%v %+v %q; want timed_out", i, isError, out, text)
				}
			}
		})
	}
}

// busy keeps every core busy until the test ends.
func busy(t *testing.T) {
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for !stop.Load() {
			}
		})
	}
	t.Cleanup(func() { stop.Store(true); wg.Wait() })
}

// descriptors opens 2,000 descriptors without close-on-exec, as inherited
// ones would be, until the test ends: each launch looks at every one.
func descriptors(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var fds []int
	t.Cleanup(func() {
		for _, fd := range fds {
			syscall.Close(fd)
		}
	})
	for range 2000 {
		fd, err := syscall.Dup(int(f.Fd())) // dup clears close-on-exec
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
}

// TestCwdEscapesRefused checks that the working directory cannot leave the
// allowed directories, and that nothing runs when it tries.
func TestCwdEscapesRefused(t *testing.T) {
	tr := escapetest.New(t)
	cs := start(t, Options{Roots: roots(t, tr.Allowed)})
	marker := filepath.Join(tr.Base, "ran")
	for name, cwd := range map[string]string{
		"dot-dot":          tr.In(".."),
		"dot-dot relative": "../outside",
		"symlink":          tr.In("link_out_dir"),
		"symlink middle":   tr.In("link_out_dir/../outside"),
		"prefix collision": tr.Evil,
		"absolute outside": "/etc",
		"home":             "~",
		"missing":          tr.In("nope"),
		"a file":           tr.In("file.txt"),
	} {
		_, text, isError := call(t, cs, map[string]any{"program": "touch", "args": []string{marker}, "cwd": cwd})
		if !isError {
			t.Errorf("%s: cwd %q accepted", name, cwd)
		}
		if strings.Contains(text, tr.Outside) && !strings.Contains(cwd, tr.Outside) {
			t.Errorf("%s: error reveals where a link leads: %q", name, text)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a command ran from a refused cwd")
	}
}

func TestArgumentsChecked(t *testing.T) {
	tr := escapetest.New(t)
	cs := start(t, Options{Roots: roots(t, tr.Allowed)})
	for name, args := range map[string]map[string]any{
		"no program":      {},
		"empty program":   {"program": ""},
		"unknown field":   {"program": "true", "command": "rm -rf /"},
		"args not a list": {"program": "true", "args": "-la"},
		"missing program": {"program": "no-such-program-zero"},
	} {
		if _, text, isError := call(t, cs, args); !isError {
			t.Errorf("%s: accepted: %q", name, text)
		}
	}
}

func TestToolDescription(t *testing.T) {
	cs := start(t, Options{Roots: roots(t, t.TempDir())})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 1 {
		t.Fatalf("tools/list: %v %v", res, err)
	}
	tool := res.Tools[0]
	a := tool.Annotations
	if a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint || a.IdempotentHint || a.OpenWorldHint == nil || !*a.OpenWorldHint {
		t.Errorf("execute_command annotations must say destructive, not idempotent, open world: %+v", a)
	}
	if !strings.Contains(tool.Description, "not a sandbox") {
		t.Errorf("description does not say it is not a sandbox: %q", tool.Description)
	}
	var schema struct {
		Properties map[string]any `json:"properties"`
		Additional bool           `json:"additionalProperties"`
	}
	b, _ := json.Marshal(tool.InputSchema)
	json.Unmarshal(b, &schema)
	for _, p := range []string{"program", "args", "cwd", "timeout_ms", "stdin"} {
		if _, ok := schema.Properties[p]; !ok {
			t.Errorf("input schema lacks %s", p)
		}
	}
	if len(schema.Properties) != 5 || schema.Additional {
		t.Errorf("input schema: %s", b)
	}
}

// TestReadableText checks the text block: the exit code, then each stream
// under its label, as text, terminal escapes left out; the structured
// output keeps the bytes.
func TestReadableText(t *testing.T) {
	cs := start(t, Options{Roots: roots(t, t.TempDir())})
	out, text, isError := call(t, cs, map[string]any{"program": "sh", "args": []string{"-c", `printf '\033[1;31mred\033[0m "q" <&>\n'; printf 'oops' >&2; exit 3`}})
	want := "exit code: 3\n--- stdout: 23 bytes ---\n(terminal escape sequences are left out here; the structured output keeps them)\n" +
		"red \"q\" <&>\n--- stderr: 4 bytes ---\noops"
	if isError || text != want {
		t.Errorf("text:\n%s\nwant:\n%s", text, want)
	}
	if out.Stdout != "\x1b[1;31mred\x1b[0m \"q\" <&>\n" || out.Stderr != "oops" || out.StdoutBase64 != "" {
		t.Errorf("structured: %+v", out)
	}
	_, text, _ = call(t, cs, map[string]any{"program": "true"})
	if text != "exit code: 0\n--- stdout: empty ---\n--- stderr: empty ---" {
		t.Errorf("no output: %q", text)
	}
}

// TestBinaryOutput checks the rule for base64: more than one byte in ten a
// control byte (not tab, newline or carriage return) or invalid UTF-8.
func TestBinaryOutput(t *testing.T) {
	cs := start(t, Options{Roots: roots(t, t.TempDir())})
	for name, tc := range map[string]struct {
		printf string
		binary bool
	}{
		"control bytes":    {`\001\002\003abc`, true},
		"invalid UTF-8":    {`\377\376\375abc`, true},
		"a few invalid":    {`caf\351 au lait, s'il vous plait`, false},
		"tabs and newline": {`a\tb\r\nc\n`, false},
		"one in ten":       {`\001bcdefghij`, false},
		"just over":        {`\001\002bcdefghijklmnopqr`, true},
		"short colours":    {`\033[31mred\033[0m \033]8;;http://x\033\\link\033]8;;\033\\`, false},
	} {
		out, text, isError := call(t, cs, map[string]any{"program": "printf", "args": []string{tc.printf}})
		raw, _ := exec.Command("printf", tc.printf).Output()
		if isError {
			t.Fatalf("%s: %s", name, text)
		}
		if tc.binary {
			b, err := base64.StdEncoding.DecodeString(out.StdoutBase64)
			if err != nil || string(b) != string(raw) || out.Stdout != "" || !strings.Contains(text, "not text, as base64 in the structured output's stdout_base64") {
				t.Errorf("%s: %+v %q", name, out, text)
			}
			continue
		}
		if out.StdoutBase64 != "" || out.Stdout != strings.ToValidUTF8(string(raw), "\uFFFD") || !strings.Contains(text, ansi().ReplaceAllString(out.Stdout, "")) {
			t.Errorf("%s: %+v %q", name, out, text)
		}
	}
}

// TestOutputFitsBudget runs commands whose output would pass the reply
// budget, the default or a lowered one: each stream keeps what fits of its
// beginning, marked truncated and said so in the text; a small stream is
// kept whole; the reply fits and uses most of the budget. Output that fits
// is not cut.
func TestOutputFitsBudget(t *testing.T) {
	o := Options{Roots: roots(t, t.TempDir()), DefaultTimeout: 10 * time.Second, MaxTimeout: 20 * time.Second}
	const (
		quotes  = `head -c 1048576 /dev/zero | tr '\0' '"'; head -c 1048576 /dev/zero | tr '\0' '\\' >&2`
		control = `head -c 1048576 /dev/zero | tr '\0' '\1'; head -c 1048576 /dev/zero | tr '\0' '\2' >&2`
		lines   = `head -c 1048576 /dev/zero | tr '\0' '\n'; echo err >&2`
	)
	for _, tc := range []struct {
		budget         int
		script         string
		stdout, stderr bool // cut
	}{
		{0, quotes, true, true},
		{0, control, false, false},
		{0, lines, false, false},
		{100_000, quotes, true, true},
		{100_000, control, true, true},
		{100_000, lines, true, false},
	} {
		cs, wire := mcptest.ServeWire(t, New(o, io.Discard), tc.budget)
		limit := mcpserver.ReplyBudget(mcpserver.WithReplyBudget(context.Background(), tc.budget))
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"program": "sh", "args": []string{"-c", tc.script}}})
		if err != nil {
			t.Fatalf("%d %s: %v", tc.budget, tc.script, err)
		}
		var out output
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
		size, text := wire.Last(), mcptest.Text(res)
		if res.IsError || size > limit {
			t.Errorf("%d %s: isError %v, %d bytes: %.300q", tc.budget, tc.script, res.IsError, size, text)
		}
		if out.StdoutTruncated != tc.stdout || out.StderrTruncated != tc.stderr {
			t.Errorf("%d %s: truncated %v %v, want %v %v", tc.budget, tc.script, out.StdoutTruncated, out.StderrTruncated, tc.stdout, tc.stderr)
		}
		if cut := strings.Count(text, "to fit this server's reply budget of "+strconv.Itoa(limit)+" bytes"); cut != btoi(tc.stdout)+btoi(tc.stderr) {
			t.Errorf("%d %s: %d streams said to be cut: %.300q", tc.budget, tc.script, cut, text)
		}
		if tc.script == lines && out.Stderr != "err\n" {
			t.Errorf("%d: the small stream was cut: %q", tc.budget, out.Stderr)
		}
		if tc.stdout && size < limit*3/4 {
			t.Errorf("%d %s: the reply uses %d bytes of a budget of %d", tc.budget, tc.script, size, limit)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
