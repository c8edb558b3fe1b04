package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/graphstore"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/localhttp"
	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/mcpserver"
	"github.com/zero-dev/zero/internal/mcpserver/fetch"
	"github.com/zero-dev/zero/internal/mcpserver/filesystem"
	"github.com/zero-dev/zero/internal/mcpserver/memory"
	"github.com/zero-dev/zero/internal/mcpserver/shell"
	"github.com/zero-dev/zero/internal/mcpserver/skills"
)

// An mcpServer is one of the six servers of 'zero mcp'.
type mcpServer struct {
	name  string
	args  string // positional arguments, for usage
	short string
	// flags names the flags of a server not built yet, so that a flag given
	// to the wrong server is named as such. A built server defines its flags
	// in build.
	flags []string
	// build defines the server's own flags on fs and returns what configures
	// the server once they are parsed. Nil: not built yet.
	build func(fs *flag.FlagSet) configureFunc
}

// A configureFunc builds a server from its parsed flags and positional
// arguments. An unusable configuration is a usage error. cleanup runs after
// the server stops; its error is the command's.
type configureFunc func(positional []string, stdio Stdio) (server *mcp.Server, cleanup func() error, err error)

// owns reports whether flag name belongs to s.
func (s *mcpServer) owns(name string) bool {
	if s.build == nil {
		for _, f := range s.flags {
			if f == name {
				return true
			}
		}
		return false
	}
	fs := flag.NewFlagSet(s.name, flag.ContinueOnError)
	s.build(fs)
	return fs.Lookup(name) != nil
}

func mcpServers() []*mcpServer {
	return []*mcpServer{
		{
			name:  "filesystem",
			args:  "[DIR...]",
			short: "read, write, edit, list and search files inside the allowed directories (default: the working directory)",
			build: buildFilesystem,
		},
		{
			name:  "fetch",
			args:  "[--user-agent UA] [--respect-robots-txt] [--block-private-networks [--allow-private-networks LIST]]",
			short: "fetch web pages as Markdown; by default it can reach loopback and private addresses (no SSRF protection)",
			build: buildFetch,
		},
		{
			name:  "memory",
			args:  "[--memory-file FILE]",
			short: "a knowledge graph in a JSONL file (--memory-file, else $MEMORY_FILE_PATH, else ./memory.jsonl); plain text, not encrypted",
			build: buildMemory,
		},
		{
			name:  "shell",
			args:  "[--timeout D] [--max-timeout D] [--isolate] [DIR...]",
			short: "run programs (no shell) with the working directory inside the allowed directories (default: the working directory); not a sandbox",
			build: buildShell,
		},
		{
			name:  "skills",
			args:  "[--workspace DIR]",
			short: "discover and read Agent Skills in a workspace (default: the working directory); never runs them",
			build: buildSkills,
		},
		{name: "agents", short: "agents defined in a workspace, calling a model provider", flags: []string{"workspace"}},
	}
}

func mcpCommand() *Command {
	var long strings.Builder
	long.WriteString(`Mcp runs exactly one of Zero's MCP servers.

It speaks MCP over stdin and stdout (newline-delimited JSON-RPC; logs go to
stderr). With --http ADDR it serves streamable HTTP instead; ADDR must be a
loopback address such as 127.0.0.1:8080 unless --allow-remote is given.
Requests whose Host or Origin header is not local are refused.

None of these servers is a sandbox: they act with your user's permissions.
Never expose them on a network you do not control.

Servers:

`)
	for _, s := range mcpServers() {
		status := ""
		if s.build == nil {
			status = " (not built yet)"
		}
		fmt.Fprintf(&long, "\t%-10s %s%s\n", s.name, s.short, status)
	}
	long.WriteString(`
Flags for every server:

	--http ADDR       serve streamable HTTP on ADDR instead of stdio
	--allow-remote    allow a non-loopback --http address (prints a warning)
`)
	return &Command{
		Name:      "mcp",
		UsageLine: "mcp <server> [flags] [arguments]",
		Short:     "run one MCP server (filesystem, fetch, memory, shell, skills, agents)",
		Long:      long.String(),
		Run:       runMCP,
	}
}

func runMCP(ctx context.Context, stdio Stdio, args []string) error {
	if len(args) == 0 {
		return usagef("missing server: want one of %s", serverNames())
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		fmt.Fprint(stdio.Out, "usage: zero "+mcpCommand().UsageLine+"\n\n"+mcpCommand().Long)
		return errHelp
	}
	var srv *mcpServer
	for _, s := range mcpServers() {
		if s.name == args[0] {
			srv = s
		}
	}
	if srv == nil {
		return usagef("unknown server %q: want one of %s", args[0], serverNames())
	}
	if srv.build == nil {
		return usagef("the %s server is not built yet", srv.name)
	}

	fs := flag.NewFlagSet("zero mcp "+srv.name, flag.ContinueOnError)
	httpAddr := fs.String("http", "", "serve streamable HTTP on this address")
	allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback --http address")
	configure := srv.build(fs)
	usage := fmt.Sprintf("usage: zero mcp %s [--http ADDR [--allow-remote]] %s\n\n%s.\n", srv.name, srv.args, srv.short)
	fs.VisitAll(func(f *flag.Flag) { usage += fmt.Sprintf("\n  --%-14s %s", f.Name, f.Usage) })
	usage += "\n"
	positional, err := parseFlags(fs, args[1:], stdio.Out, usage)
	if err != nil {
		return explainFlagError(err, srv)
	}
	opts := mcpserver.Options{Stdin: stdio.In, Stdout: stdio.Out, Stderr: stdio.Err}
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
}

// explainFlagError names the server a misplaced flag belongs to.
func explainFlagError(err error, srv *mcpServer) error {
	const undefined = "flag provided but not defined: -"
	msg := err.Error()
	if !strings.HasPrefix(msg, undefined) {
		return err
	}
	name := strings.TrimPrefix(msg, undefined)
	for _, other := range mcpServers() {
		if other.name != srv.name && other.owns(name) {
			return usagef("flag --%s belongs to 'zero mcp %s'; the %s server does not take it", name, other.name, srv.name)
		}
	}
	return usagef("unknown flag --%s for the %s server", name, srv.name)
}

func serverNames() string {
	var names []string
	for _, s := range mcpServers() {
		names = append(names, s.name)
	}
	return strings.Join(names, ", ")
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

// buildFilesystem configures the filesystem server: the positional
// arguments are the allowed directories.
func buildFilesystem(*flag.FlagSet) configureFunc {
	return func(dirs []string, stdio Stdio) (*mcp.Server, func() error, error) {
		roots, err := openRoots(dirs)
		if err != nil {
			return nil, nil, err
		}
		return filesystem.New(roots, stdio.Err), roots.Close, nil
	}
}

// buildShell configures the shell server: the positional arguments are the
// directories commands may run in.
func buildShell(fs *flag.FlagSet) configureFunc {
	timeout := fs.Duration("timeout", shell.DefaultTimeout, "timeout of a command that asks for none")
	maxTimeout := fs.Duration("max-timeout", shell.MaxTimeout, "the longest timeout a command may ask for")
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
}

// buildFetch configures the fetch server; it takes no positional arguments.
func buildFetch(fs *flag.FlagSet) configureFunc {
	userAgent := fs.String("user-agent", fetch.DefaultUserAgent, "the User-Agent of every request")
	robots := fs.Bool("respect-robots-txt", false, "check robots.txt before each tool fetch (the prompt never does)")
	block := fs.Bool("block-private-networks", false, "refuse loopback, private, link-local and metadata addresses, checked at connect time and on every redirect")
	allow := fs.String("allow-private-networks", "", "with --block-private-networks: comma-separated addresses or prefixes still allowed")
	return func(args []string, stdio Stdio) (*mcp.Server, func() error, error) {
		if len(args) > 0 {
			return nil, nil, usagef("unexpected arguments %q", args)
		}
		if strings.TrimSpace(*userAgent) == "" {
			return nil, nil, usagef("--user-agent must not be empty")
		}
		opts := fetch.Options{UserAgent: *userAgent, RespectRobots: *robots, BlockPrivate: *block}
		if *allow != "" {
			if !*block {
				return nil, nil, usagef("--allow-private-networks needs --block-private-networks")
			}
			prefixes, err := netguard.ParseAllow(*allow)
			if err != nil {
				return nil, nil, usagef("--allow-private-networks: %v", err)
			}
			opts.Allow = prefixes
		}
		return fetch.New(opts, stdio.Err), func() error { return nil }, nil
	}
}

// buildMemory configures the memory server on the graph file named by
// --memory-file, else MEMORY_FILE_PATH, else memory.jsonl, relative to the
// working directory. A file that cannot be loaded, a corrupt one included,
// is a usage error: nothing is served and the file is left as it is.
func buildMemory(fs *flag.FlagSet) configureFunc {
	file := fs.String("memory-file", "", "the knowledge graph's JSONL file")
	return func(args []string, stdio Stdio) (*mcp.Server, func() error, error) {
		if len(args) > 0 {
			return nil, nil, usagef("unexpected arguments %q; give the file with --memory-file", args)
		}
		wd, err := os.Getwd()
		if err != nil {
			return nil, nil, usagef("the working directory is unknown: %v", err)
		}
		store, err := graphstore.Open(memory.FilePath(*file, os.Getenv("MEMORY_FILE_PATH"), wd))
		if err != nil {
			return nil, nil, usagef("%v", err)
		}
		return memory.New(store, stdio.Err), store.Close, nil
	}
}

// buildSkills configures the skills server on one workspace directory.
func buildSkills(fs *flag.FlagSet) configureFunc {
	workspace := fs.String("workspace", "", "the workspace holding the skills (default: the working directory)")
	return func(args []string, stdio Stdio) (*mcp.Server, func() error, error) {
		if len(args) > 0 {
			return nil, nil, usagef("unexpected arguments %q; give the workspace with --workspace", args)
		}
		var dirs []string
		if *workspace != "" {
			dirs = []string{*workspace}
		}
		roots, err := openRoots(dirs)
		if err != nil {
			return nil, nil, err
		}
		return skills.New(roots, stdio.Err), roots.Close, nil
	}
}
