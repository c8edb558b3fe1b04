package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zero-dev/zero/internal/guard/localhttp"
	"github.com/zero-dev/zero/internal/workspace"
	"github.com/zero-dev/zero/internal/workspace/servers"
)

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

func serveCommand() *Command {
	return &Command{
		Name:      "serve",
		UsageLine: "serve [--addr 127.0.0.1:7077] [--team]",
		Short:     "run the workspace: MCP servers behind approval, on this machine only",
		Long: `Serve runs the workspace: a web UI and a JSON API on a loopback
address, with its database, secrets key and audit log under $ZERO_HOME
(default ~/.zero). It prints a one-time login link: open it in your browser
to get a session. Agents and scripts use bearer tokens, which the owner
creates in a browser session; approvals are browser-only.

HTTP MCP servers on loopback, private or link-local hosts are refused unless
their origin is listed in ZERO_ALLOWED_LOCAL_ORIGINS (comma-separated, such
as https://127.0.0.1:8443).

Flags:

	--addr ADDR   listen address, loopback only (default 127.0.0.1:7077)
	--team        several users with roles (owner, member, viewer)
`,
		Run: runServe,
	}
}

func runServe(ctx context.Context, stdio Stdio, args []string) error {
	fs := flag.NewFlagSet("zero serve", flag.ContinueOnError)
	addr := fs.String("addr", workspace.DefaultAddr, "listen address")
	team := fs.Bool("team", false, "several users with roles")
	rest, err := parseFlags(fs, args, stdio.Out, "usage: zero "+serveCommand().UsageLine+"\n\n"+serveCommand().Long)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected arguments %q", rest)
	}
	if _, err := localhttp.CheckAddr(*addr, false); err != nil {
		return usagef("--addr: %v", err)
	}
	home, err := zeroHome()
	if err != nil {
		return usagef("%v", err)
	}
	origins, err := servers.ParseOrigins(os.Getenv("ZERO_ALLOWED_LOCAL_ORIGINS"))
	if err != nil {
		return usagef("ZERO_ALLOWED_LOCAL_ORIGINS: %v", err)
	}
	return workspace.Serve(ctx, workspace.Options{Home: home, Team: *team, AllowedLocalOrigins: origins, Stderr: stdio.Err}, *addr)
}
