package cli

import (
	"context"
	"flag"
	"os"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/localhttp"
	"github.com/zero-dev/zero/internal/mcpserver"
)

func mcpCommand() *Command {
	return &Command{
		Name:      "mcp",
		UsageLine: "mcp <server> [flags] [arguments]",
		Short:     "run one MCP server, or bridge a client to the workspace",
		Long: `Mcp runs exactly one of Zero's MCP servers.

It speaks MCP over stdin and stdout (newline-delimited JSON-RPC; logs go to
stderr). With --http ADDR it serves streamable HTTP instead; ADDR must be a
loopback address such as 127.0.0.1:8080 unless --allow-remote is given.
Requests whose Host or Origin header is not local are refused. Every server
takes --http and --allow-remote, and --max-reply: no reply passes 8 MiB
(8388608 bytes) on the wire, or the lower budget --max-reply gives, so that
every client can read it; a tool whose answer would be larger returns part
of it with a way to ask for the rest, or says how to ask for less.

None of these servers is a sandbox: they act with your user's permissions.
Never expose them on a network you do not control.

Mcp workspace is not a server of its own: it bridges a client on stdio to
the approved tools of a running zero serve.
`,
		Subcommands: []*Command{mcpFilesystemCommand(), mcpFetchCommand(), mcpMemoryCommand(), mcpShellCommand(),
			mcpSkillsCommand(), mcpAgentsCommand(), mcpWorkspaceCommand()},
		kind: "server",
	}
}

// A configureFunc builds a server from its parsed flags and positional
// arguments. An unusable configuration is a usage error. cleanup runs after
// the server stops; its error is the command's.
type configureFunc func(positional []string, stdio Stdio) (server *mcp.Server, cleanup func() error, err error)

// mcpServerCommand is the command of one MCP server: the flags every server
// takes (--http, --allow-remote, --max-reply), the server's own, which
// define adds, and a Run that serves what define's configureFunc builds.
func mcpServerCommand(name, args, short, long string, define func(fs *flag.FlagSet) configureFunc) *Command {
	fs := flag.NewFlagSet("zero mcp "+name, flag.ContinueOnError)
	httpAddr := fs.String("http", "", "serve streamable HTTP on `ADDR` instead of stdio")
	allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback --http address (prints a warning)")
	maxReply := fs.Int("max-reply", mcpserver.DefaultReplyBudget, "the most `BYTES` one reply takes on the wire; a larger answer is cut with a way to continue, or refused with the way around it (at least "+
		strconv.Itoa(mcpserver.MinReplyBudget)+", at most the default)")
	configure := define(fs)
	return &Command{
		Name:      name,
		UsageLine: "mcp " + name + " [--http ADDR [--allow-remote]] [--max-reply BYTES] " + args,
		Short:     short,
		Long:      long,
		Flag:      fs,
		Run: func(ctx context.Context, stdio Stdio, positional []string) error {
			opts := mcpserver.Options{Stdin: stdio.In, Stdout: stdio.Out, Stderr: stdio.Err, GOGC: os.Getenv("GOGC"), MaxReply: *maxReply}
			if *maxReply < mcpserver.MinReplyBudget || *maxReply > mcpserver.DefaultReplyBudget {
				return usagef("--max-reply must be between %d and %d bytes, got %d", mcpserver.MinReplyBudget, mcpserver.DefaultReplyBudget, *maxReply)
			}
			if *allowRemote && *httpAddr == "" {
				return usagef("--allow-remote needs --http")
			}
			if *httpAddr != "" {
				l, err := localhttp.CheckAddr(*httpAddr, *allowRemote)
				if err != nil {
					return usagef("--http: %v; pass --allow-remote to serve other hosts", err)
				}
				opts.HTTP = &l
			}
			server, cleanup, err := configure(positional, stdio)
			if err != nil {
				return err
			}
			err = mcpserver.Serve(ctx, server, opts)
			if cerr := cleanup(); err == nil {
				err = cerr
			}
			return err
		},
	}
}

// openRoots opens the allowed directories, or the working directory if none
// is given; an unusable one is a usage error.
func openRoots(dirs []string) (*fsroot.Set, error) {
	if len(dirs) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return nil, usagef("no directory given and the working directory is unknown: %v", err)
		}
		dirs = []string{wd}
	}
	roots, err := fsroot.Open(dirs)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return roots, nil
}
