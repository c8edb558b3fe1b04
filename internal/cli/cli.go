// Package cli is the zero command line: a tree of commands, each a value
// with its own flag set (one file per leaf command), that turn arguments
// into options and call into internal/. It holds no logic of its own
// beyond parsing, help and exit codes, and it is where configuration from
// the environment is read.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Stdio is the process's standard streams.
type Stdio struct {
	In  io.ReadCloser
	Out io.Writer
	Err io.Writer
}

// A Command is one zero command or subcommand, in the style of cmd/go: a
// value holding its usage, its help and its own flag set. A command either
// runs (Run) or groups others (Subcommands).
type Command struct {
	Name      string // the word that selects it: "add" in "zero servers add"
	UsageLine string // after "zero ": "servers add --name NAME ..."; a group without one shows its subcommands'
	Short     string // one line, for the parent's list
	Long      string // the help, less the flags: those are listed from Flag
	// Flag is the command's own flag set, whose usage strings are the
	// help's. Nil: the command takes no flags, and Run gets every argument
	// (a lone -h or --help still prints the help).
	Flag *flag.FlagSet
	// Run runs a leaf command with the arguments Flag did not consume.
	Run func(ctx context.Context, stdio Stdio, args []string) error
	// Subcommands are the commands under this one; Run is then nil.
	Subcommands []*Command

	parent *Command
	kind   string // what a group calls its subcommands: "server" for mcp; default "subcommand"
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

// tree returns the command tree, fresh: every FlagSet is new.
func tree() *Command {
	root := &Command{Name: "zero"}
	root.Subcommands = []*Command{serveCommand(), loginCommand(), mcpCommand(), serversCommand(), auditCommand(),
		agentCommand(), versionCommand(), helpCommand(root)}
	link(root)
	return root
}

func link(c *Command) {
	for _, s := range c.Subcommands {
		s.parent = c
		link(s)
	}
}

// path is the command's words after "zero": "servers add".
func (c *Command) path() string {
	if c.parent == nil {
		return ""
	}
	if p := c.parent.path(); p != "" {
		return p + " " + c.Name
	}
	return c.Name
}

// lookup returns the subcommand named name, or nil.
func (c *Command) lookup(name string) *Command {
	for _, s := range c.Subcommands {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func (c *Command) childKind() string {
	if c.kind == "" {
		return "subcommand"
	}
	return c.kind
}

// noun is how an error names the command: "the fetch server" for an MCP
// server, else 'zero servers list'.
func (c *Command) noun() string {
	if c.parent != nil && c.parent.kind != "" {
		return "the " + c.Name + " " + c.parent.kind
	}
	return "'zero " + c.path() + "'"
}

func (c *Command) names() string {
	var names []string
	for _, s := range c.Subcommands {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

func isHelpFlag(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

// Main runs the zero command line with args (without the program name) and
// returns the process exit code.
func Main(ctx context.Context, args []string, stdio Stdio) int {
	root := tree()
	if len(args) == 0 {
		fmt.Fprint(stdio.Err, mainUsage(root))
		return exitUsage
	}
	if args[0] == guestWord {
		return runGuest(args[1:], stdio)
	}
	if isHelpFlag(args[0]) {
		args = []string{"help"}
	}
	if root.lookup(args[0]) == nil {
		fmt.Fprintf(stdio.Err, "zero: unknown command %q\nRun 'zero help' for usage.\n", args[0])
		return exitUsage
	}
	cmd, err := dispatch(ctx, stdio, root, args)
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stdio.Err, "zero %s: %s\nRun 'zero help %s' for usage.\n", cmd.path(), ue.msg, cmd.path())
		return exitUsage
	default:
		fmt.Fprintf(stdio.Err, "zero %s: %v\n", cmd.path(), err)
		return exitError
	}
}

// dispatch walks from c down the tree by args and runs the command they
// name. It returns that command, for the error's prefix.
func dispatch(ctx context.Context, stdio Stdio, c *Command, args []string) (*Command, error) {
	for len(c.Subcommands) > 0 {
		if len(args) == 0 {
			return c, usagef("missing %s: want one of %s", c.childKind(), c.names())
		}
		if isHelpFlag(args[0]) {
			fmt.Fprint(stdio.Out, c.help())
			return c, errHelp
		}
		sub := c.lookup(args[0])
		if sub == nil {
			return c, usagef("unknown %s %q: want one of %s", c.childKind(), args[0], c.names())
		}
		c, args = sub, args[1:]
	}
	if c.Flag == nil {
		if len(args) == 1 && isHelpFlag(args[0]) {
			fmt.Fprint(stdio.Out, c.help())
			return c, errHelp
		}
		return c, c.Run(ctx, stdio, args)
	}
	rest, err := parseFlags(c.Flag, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdio.Out, c.help())
		return c, errHelp
	}
	if err != nil {
		return c, explainFlagError(c, err)
	}
	return c, c.Run(ctx, stdio, rest)
}

// explainFlagError turns the flag package's error into a usage error, and
// names the sibling command a misplaced flag belongs to.
func explainFlagError(c *Command, err error) error {
	const undefined = "flag provided but not defined: -"
	name, ok := strings.CutPrefix(err.Error(), undefined)
	if !ok {
		return &usageError{msg: err.Error()}
	}
	if c.parent != nil {
		for _, other := range c.parent.Subcommands {
			if other != c && other.Flag != nil && other.Flag.Lookup(name) != nil {
				return usagef("flag --%s belongs to 'zero %s'; %s does not take it", name, other.path(), c.noun())
			}
		}
	}
	return usagef("unknown flag --%s for %s", name, c.noun())
}

// parseFlags parses args with fs, allowing flags after positional arguments
// ("--" ends the flags). It returns the positional arguments, or
// flag.ErrHelp for -h or --help.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
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

// noArgs refuses positional arguments.
func noArgs(args []string) error {
	if len(args) > 0 {
		return usagef("unexpected arguments %q", args)
	}
	return nil
}

// zeroHome returns $ZERO_HOME, or ~/.zero.
func zeroHome() (string, error) {
	if h := os.Getenv("ZERO_HOME"); h != "" {
		return filepath.Abs(h)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("ZERO_HOME is unset and the home directory is unknown: %w", err)
	}
	return filepath.Join(home, ".zero"), nil
}

// repeated is a flag that may be given more than once.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }
