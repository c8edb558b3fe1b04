// Package cli is the zero command line: a table of commands, each with its
// own flag set, that turn arguments into options and call into internal/.
// It holds no logic of its own beyond parsing and exit codes.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Stdio is the process's standard streams.
type Stdio struct {
	In  io.ReadCloser
	Out io.Writer
	Err io.Writer
}

// A Command is one zero subcommand.
type Command struct {
	Name      string
	UsageLine string // after "zero "
	Short     string
	Long      string
	Run       func(ctx context.Context, io Stdio, args []string) error
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the command ran and failed
	exitUsage = 2 // bad arguments or an unusable configuration; nothing ran
)

// usageError reports bad arguments or configuration: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errHelp reports that help was asked for and printed: exit code 0.
var errHelp = errors.New("help requested")

func commands() []*Command {
	return []*Command{serveCommand(), mcpCommand(), serversCommand(), auditCommand(), agentCommand(), versionCommand(), helpCommand()}
}

func lookup(name string) *Command {
	for _, c := range commands() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Main runs the zero command line with args (without the program name) and
// returns the process exit code.
func Main(ctx context.Context, args []string, stdio Stdio) int {
	if len(args) == 0 {
		fmt.Fprint(stdio.Err, mainUsage())
		return exitUsage
	}
	name := args[0]
	if name == "-h" || name == "--help" || name == "-help" {
		name = "help"
	}
	cmd := lookup(name)
	if cmd == nil {
		fmt.Fprintf(stdio.Err, "zero: unknown command %q\nRun 'zero help' for usage.\n", args[0])
		return exitUsage
	}
	err := cmd.Run(ctx, stdio, args[1:])
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stdio.Err, "zero %s: %s\nRun 'zero help %s' for usage.\n", cmd.Name, ue.msg, cmd.Name)
		return exitUsage
	default:
		fmt.Fprintf(stdio.Err, "zero %s: %v\n", cmd.Name, err)
		return exitError
	}
}

func mainUsage() string {
	var b strings.Builder
	b.WriteString("Zero: MCP servers, a workspace and repository automation, built for safety.\n\nUsage:\n\n\tzero <command> [arguments]\n\nCommands:\n\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "\t%-10s %s\n", c.Name, c.Short)
	}
	b.WriteString("\nRun 'zero help <command>' for more about a command.\n")
	return b.String()
}

// parseFlags parses args with fs, allowing flags after positional arguments
// ("--" ends the flags). It returns the positional arguments. A -h or --help
// prints usage to out and returns errHelp.
func parseFlags(fs *flag.FlagSet, args []string, out io.Writer, usage string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var positional []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(out, usage)
			return nil, errHelp
		}
		if err != nil {
			return nil, &usageError{msg: err.Error()}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}
