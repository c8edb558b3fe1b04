package sandboxed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zero-dev/zero/internal/pin"
	"github.com/zero-dev/zero/internal/sandbox"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// MaxStream bounds each of a run's stdout and stderr in its result.
const MaxStream = 64 << 10

// A builtin is one of the tools every sandboxed thread has.
type builtin struct {
	name, description, schema string
	hints                     threads.Hints
}

// builtins are the built-in tools, in the order they are listed.
var builtins = []builtin{
	{
		name: "run",
		description: "Run a program in a fresh sandbox guest (no network, no secrets), with the workspace at /work " +
			"(its working directory). argv[0] is an absolute path in the guest (/usr/bin/python3, /work/build/app) or a " +
			"bare name looked up in /usr/bin and /bin; no shell reads argv. A bubblewrap or runsc guest sees the host's /usr " +
			"read-only; a Docker guest's root holds only node and Zero's guest helper. Returns the exit code, stdout and stderr " +
			"(each cut at 64 KiB), and whether the guest was stopped at its time or memory limit.",
		schema: `{"type":"object","properties":{"argv":{"type":"array","items":{"type":"string"},"minItems":1,` +
			`"description":"The program and its arguments."},"stdin":{"type":"string","description":"The program's standard input."}},` +
			`"required":["argv"],"additionalProperties":false}`,
		hints: threads.Hints{Destructive: true},
	},
	{
		name:        "read_file",
		description: "Read a file of the workspace (a path absolute under /work or relative to it). Returns its content (cut at 256 KiB) as JSON.",
		schema:      `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`,
		hints:       threads.Hints{ReadOnly: true},
	},
	{
		name:        "write_file",
		description: "Write a file of the workspace (a path under /work), replacing it, and making its folders. At most 1 MiB.",
		schema: `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},` +
			`"required":["path","content"],"additionalProperties":false}`,
		hints: threads.Hints{Destructive: true},
	},
	{
		name:        "list_files",
		description: "List one folder of the workspace (default /work): each entry's name, kind and size, at most 1000.",
		schema:      `{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}`,
		hints:       threads.Hints{ReadOnly: true},
	},
	{
		name:        "search_files",
		description: "Find the lines holding a text in the files at or under a path of the workspace (default /work): at most 100 lines.",
		schema: `{"type":"object","properties":{"text":{"type":"string","minLength":1},"path":{"type":"string"}},` +
			`"required":["text"],"additionalProperties":false}`,
		hints: threads.Hints{ReadOnly: true},
	},
}

func builtinNamed(name string) (builtin, bool) {
	for _, b := range builtins {
		if b.name == name {
			return b, true
		}
	}
	return builtin{}, false
}

// hash is the tool's definition's hash (pin.ToolHash).
func (bt builtin) hash() (string, error) {
	return pin.ToolHash(pin.Tool{Name: bt.name, Description: bt.description, InputSchema: json.RawMessage(bt.schema)})
}

func builtinTools(backend string) ([]threads.Tool, error) {
	var tools []threads.Tool
	for _, bt := range builtins {
		hash, err := bt.hash()
		if err != nil {
			return nil, fmt.Errorf("built-in tool %s: %w", bt.name, err)
		}
		tools = append(tools, threads.Tool{
			Name: bt.name, Description: bt.description, InputSchema: json.RawMessage(bt.schema), Hints: bt.hints,
			Ref: threads.ToolRef{Sandbox: true, Tool: bt.name, Hash: hash, Fingerprint: backend},
		})
	}
	return tools, nil
}

// builtinArgs are every built-in's arguments; each reads its own.
type builtinArgs struct {
	Argv    []string `json:"argv"`
	Stdin   *string  `json:"stdin"`
	Path    string   `json:"path"`
	Content *string  `json:"content"`
	Text    string   `json:"text"`
}

// decode reads args strictly: a key the tool's schema does not name is
// refused with the rest.
func (bt builtin) decode(args json.RawMessage) (builtinArgs, error) {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	json.Unmarshal([]byte(bt.schema), &schema)
	var given map[string]json.RawMessage
	if len(bytes.TrimSpace(args)) > 0 {
		if err := json.Unmarshal(args, &given); err != nil {
			return builtinArgs{}, fmt.Errorf("%s: the arguments are not a JSON object: %w", bt.name, err)
		}
	}
	for k := range given {
		if _, ok := schema.Properties[k]; !ok {
			return builtinArgs{}, fmt.Errorf("%s: no argument %q", bt.name, k)
		}
	}
	for _, k := range schema.Required {
		if _, ok := given[k]; !ok {
			return builtinArgs{}, fmt.Errorf("%s: argument %q is required", bt.name, k)
		}
	}
	var a builtinArgs
	if len(given) > 0 {
		if err := json.Unmarshal(args, &a); err != nil {
			return builtinArgs{}, fmt.Errorf("%s: %w", bt.name, err)
		}
	}
	return a, nil
}

// callBuiltin runs bt in one guest. Arguments that do not fit are an
// IsError result: nothing ran.
func (b *Toolbox) callBuiltin(ctx context.Context, bt builtin, args json.RawMessage, c *Call) (threads.Result, error) {
	a, err := bt.decode(args)
	switch {
	case err != nil:
	case bt.name == "run" && len(a.Argv) == 0:
		err = errors.New("run: argv is empty")
	case bt.name == "run":
		a.Argv[0], err = program(a.Argv[0])
	case bt.name == "write_file" && a.Content == nil:
		err = errors.New("write_file: content is not a string")
	}
	if err != nil {
		c.Outcome = threads.OutcomeError
		return threads.Result{Text: err.Error(), IsError: true}, nil
	}
	g := sandbox.Guest{Workspace: b.o.Workspace, Copy: b.o.Copy, Limits: b.o.Limits}
	helper := func(words ...string) []string {
		return append(append([]string{b.o.Helper}, b.o.HelperArgs...), words...)
	}
	switch bt.name {
	case "run":
		g.Argv = a.Argv
		if a.Stdin != nil {
			g.Stdin = []byte(*a.Stdin)
		}
	case "read_file":
		g.Argv = helper("read", a.Path)
	case "write_file":
		g.Argv, g.Stdin = helper("write", a.Path), []byte(*a.Content)
	case "list_files":
		g.Argv = helper("list", orWork(a.Path))
	case "search_files":
		g.Argv = helper("search", a.Text, orWork(a.Path))
	}
	if bt.name != "run" {
		helperPath, err := canonical(b.o.Helper)
		if err != nil {
			return threads.Result{}, fmt.Errorf("guest helper: %w", err)
		}
		g.Argv[0] = helperPath
		g.ReadOnly = []string{helperPath}
	}
	r, err := b.o.Runner.Run(ctx, g)
	if err != nil {
		return threads.Result{}, fmt.Errorf("%s: %w", bt.name, err)
	}
	c.Outcome = outcome(r)
	if bt.name == "run" {
		return runResult(r), nil
	}
	return helperResult(r), nil
}

func orWork(p string) string {
	if p == "" {
		return sandbox.WorkDir
	}
	return p
}

// program is argv[0] as the guest runs it: an absolute, clean path as
// given, or a bare name found in the host's /usr/bin or /bin (which
// bubblewrap and runsc guests see).
func program(name string) (string, error) {
	switch {
	case name == "":
		return "", errors.New("run: argv[0] is empty")
	case filepath.IsAbs(name):
		if filepath.Clean(name) != name {
			return "", fmt.Errorf("run: argv[0] %q is not a clean path", name)
		}
		return name, nil
	case strings.ContainsRune(name, '/'):
		return "", fmt.Errorf("run: argv[0] %q is neither an absolute path nor a bare name", name)
	}
	for _, dir := range []string{"/usr/bin", "/bin"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			return filepath.Join(dir, name), nil
		}
	}
	return "", fmt.Errorf("run: no program %q in /usr/bin or /bin", name)
}

// canonical is p with its links resolved, as Guest.ReadOnly takes it.
func canonical(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path", p)
	}
	return filepath.EvalSymlinks(p)
}

// A RunResult is run's answer, as JSON.
type RunResult struct {
	ExitCode     int    `json:"exit_code"` // -1 when the guest was killed
	Stdout       string `json:"stdout"`
	Stderr       string `json:"stderr"`
	TimedOut     bool   `json:"timed_out,omitempty"`
	MemoryKilled bool   `json:"memory_killed,omitempty"`
}

func runResult(r sandbox.Result) threads.Result {
	text, _ := json.Marshal(RunResult{ExitCode: r.ExitCode, Stdout: cut(string(r.Stdout), MaxStream),
		Stderr: cut(string(r.Stderr), MaxStream), TimedOut: r.TimedOut, MemoryKilled: r.MemoryKilled})
	return threads.Result{Text: string(text), IsError: outcome(r) != threads.OutcomeOK}
}

// helperResult is the helper's JSON answer; a helper that ended otherwise
// (killed, or no answer) is said in words.
func helperResult(r sandbox.Result) threads.Result {
	out := strings.TrimSpace(string(r.Stdout))
	switch {
	case r.TimedOut:
		return threads.Result{Text: "the guest was stopped at its time limit", IsError: true}
	case r.MemoryKilled:
		return threads.Result{Text: "the guest was stopped at its memory limit", IsError: true}
	case !json.Valid([]byte(out)):
		return threads.Result{Text: fmt.Sprintf("the guest helper gave no answer (exit %d): %s", r.ExitCode, cut(string(r.Stderr), 2048)), IsError: true}
	}
	return threads.Result{Text: out, IsError: r.ExitCode != 0}
}
