// Package shell is the shell MCP server. Its one tool, execute_command, runs
// one program with arguments (never through a shell) via the execution
// boundary internal/guard/spawn, with its working directory inside the
// allowed directories, a timeout and capped output.
//
// It is not a sandbox and has no command filter: a program run from an
// allowed directory can do anything the user can, and bash -lc works. With
// --isolate every command runs under spawn's bubblewrap isolation instead.
package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/mcpserver"
)

// Name is the server's implementation name.
const Name = "zero-shell"

// Options configure the server.
type Options struct {
	Roots          *fsroot.Set   // where commands may run; the caller owns it
	DefaultTimeout time.Duration // for a call that gives no timeout_ms
	MaxTimeout     time.Duration // the largest timeout_ms a call may ask for
	Isolate        bool          // run every command under bubblewrap isolation
}

// Default timeouts.
const (
	DefaultTimeout = 30 * time.Second
	MaxTimeout     = 10 * time.Minute
)

// New returns the shell server.
func New(o Options, stderr io.Writer) *mcp.Server {
	s := &server{opts: o}
	srv := mcpserver.NewServer(Name, stderr, &mcp.ServerOptions{
		Instructions: "execute_command runs one program with arguments, without a shell, in an allowed directory. " +
			"It is not a sandbox: the program can do anything the user running this server can.",
	})
	mcpserver.AddTool(srv, &mcp.Tool{
		Name:  "execute_command",
		Title: "Execute Command",
		Description: "Run one program with arguments, without a shell: shell operators in arguments are passed to the " +
			"program literally. The working directory (cwd, default: the first allowed directory) must be inside the " +
			"allowed directories; that is the only restriction, and it is not a sandbox. Returns the exit code, stdout " +
			"and stderr (each capped at 1 MiB), whether the command timed out, and whether output was truncated. " +
			"Output that is mostly not text (more than one byte in ten a control byte or invalid UTF-8) comes as " +
			"base64 in stdout_base64 or stderr_base64; in text, invalid UTF-8 becomes U+FFFD. When both streams " +
			"would not fit the server's reply budget, each keeps what fits of its beginning and is marked truncated. " +
			"The whole process group is killed at the timeout.",
		InputSchema:  inputSchema,
		OutputSchema: outputSchema,
		Annotations: &mcp.ToolAnnotations{
			Title: "Execute Command", DestructiveHint: ptr(true), IdempotentHint: false, OpenWorldHint: ptr(true),
		},
	}, s.execute)
	return srv
}

func ptr[T any](v T) *T { return &v }

var inputSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"program":{"type":"string","minLength":1,"description":"The program to run: a name looked up in PATH, or a path."},` +
	`"args":{"type":"array","items":{"type":"string"},"default":[],"description":"Arguments, passed as they are: no shell parses them."},` +
	`"cwd":{"type":"string","minLength":1,"description":"Working directory inside an allowed directory; default: the first allowed directory."},` +
	`"timeout_ms":{"type":"integer","minimum":1,"description":"Kill the command after this many milliseconds; default and maximum are set by the server."},` +
	`"stdin":{"type":"string","description":"Text written to the program's standard input; without it, standard input is empty."}` +
	`},"required":["program"],"additionalProperties":false}`)

var outputSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"exit_code":{"type":"integer","description":"The exit code; -1 when the process was killed by a signal."},` +
	`"signal":{"type":"string"},` +
	`"stdout":{"type":"string","description":"Standard output as text; empty when it comes as base64."},` +
	`"stderr":{"type":"string","description":"Standard error as text; empty when it comes as base64."},` +
	`"stdout_base64":{"type":"string","description":"Standard output as base64, when it is mostly not text."},` +
	`"stderr_base64":{"type":"string","description":"Standard error as base64, when it is mostly not text."},` +
	`"timed_out":{"type":"boolean"},"stdout_truncated":{"type":"boolean"},"stderr_truncated":{"type":"boolean"},` +
	`"isolation":{"type":"string","enum":["none","bubblewrap"]},"duration_ms":{"type":"integer"}` +
	`},"required":["exit_code","stdout","stderr","timed_out","stdout_truncated","stderr_truncated","isolation","duration_ms"],"additionalProperties":false}`)

type executeArgs struct {
	Program   string   `json:"program"`
	Args      []string `json:"args"`
	Cwd       string   `json:"cwd"`
	TimeoutMS *int64   `json:"timeout_ms"`
	Stdin     *string  `json:"stdin"`
}

func (a *executeArgs) Validate() error {
	if a.Program == "" {
		return errors.New("program is required and must not be empty")
	}
	if a.TimeoutMS != nil && *a.TimeoutMS < 1 {
		return fmt.Errorf("timeout_ms must be at least 1, got %d", *a.TimeoutMS)
	}
	return nil
}

type server struct {
	opts Options
}

func (s *server) execute(ctx context.Context, _ *mcp.CallToolRequest, in *executeArgs) (*mcp.CallToolResult, error) {
	timeout := s.opts.DefaultTimeout
	if in.TimeoutMS != nil {
		timeout = time.Duration(*in.TimeoutMS) * time.Millisecond
		if timeout > s.opts.MaxTimeout {
			return nil, fmt.Errorf("timeout_ms %d is over this server's maximum of %d", *in.TimeoutMS, s.opts.MaxTimeout.Milliseconds())
		}
	}
	cwd := in.Cwd
	if cwd == "" {
		cwd = s.opts.Roots.Roots()[0].Given
	}
	cmd := spawn.Cmd{
		Program: in.Program,
		Args:    in.Args,
		Dir:     cwd,
		Roots:   s.opts.Roots,
		Timeout: timeout,
	}
	if in.Stdin != nil {
		cmd.Stdin = []byte(*in.Stdin)
	}
	if s.opts.Isolate {
		cmd.Isolation = spawn.Bubblewrap
	}
	res, err := spawn.Run(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return reply(ctx, &res), nil
}
