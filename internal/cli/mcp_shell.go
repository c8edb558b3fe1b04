package cli

import (
	"flag"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/mcpserver/shell"
)

func mcpShellCommand() *Command {
	return mcpServerCommand("shell", "[--timeout D] [--max-timeout D] [--isolate] [DIR...]",
		"run programs (no shell) with the working directory inside the allowed directories (default: the working directory); not a sandbox",
		`Shell's execute_command runs one program with arguments, never through a
shell; its working directory must be inside the allowed directories (the
arguments; with none, the working directory), and that is its only
restriction: it is not a sandbox unless --isolate. A timeout kills the whole
process group; output is capped at 1 MiB per stream.
`,
		func(fs *flag.FlagSet) configureFunc {
			timeout := fs.Duration("timeout", shell.DefaultTimeout, "the `DURATION` a command may run when it asks for no timeout")
			maxTimeout := fs.Duration("max-timeout", shell.MaxTimeout, "the longest `DURATION` a command may ask for")
			isolate := fs.Bool("isolate", false, "run every command under bubblewrap isolation: no network, read-only system, writable working directory")
			return func(dirs []string, stdio Stdio) (*mcp.Server, func() error, error) {
				switch {
				case *timeout <= 0:
					return nil, nil, usagef("--timeout must be positive, got %v", *timeout)
				case *maxTimeout < *timeout:
					return nil, nil, usagef("--max-timeout %v is shorter than --timeout %v", *maxTimeout, *timeout)
				}
				if *isolate {
					if err := spawn.IsolationAvailable(); err != nil {
						return nil, nil, usagef("--isolate: %v", err)
					}
				}
				roots, err := openRoots(dirs)
				if err != nil {
					return nil, nil, err
				}
				opts := shell.Options{Roots: roots, DefaultTimeout: *timeout, MaxTimeout: *maxTimeout, Isolate: *isolate}
				return shell.New(opts, stdio.Err), roots.Close, nil
			}
		})
}
