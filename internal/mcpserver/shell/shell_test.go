package shell

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/fsroot/escapetest"
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
		var fromText output
		if err := json.Unmarshal([]byte(text), &fromText); err != nil || fromText != out {
			t.Errorf("text content %q does not carry the structured output", text)
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
