package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"github.com/zero-dev/zero/internal/mcpbridge"
	"github.com/zero-dev/zero/internal/mcpserver"
	"github.com/zero-dev/zero/internal/workspace"
)

// mcpWorkspaceCommand is the stdio bridge to a running workspace's /mcp
// endpoint: one mcpServers entry gives a local client every approved tool.
func mcpWorkspaceCommand() *Command {
	fs := flag.NewFlagSet("zero mcp workspace", flag.ContinueOnError)
	api := defineTokenFlags(fs, &apiFlags{defaultFile: workspace.ClientTokenFile, page: "the Connect a client page, %s/connect",
		formerFile: workspace.CLITokenFile})
	return &Command{
		Name:      "workspace",
		UsageLine: "mcp workspace [--addr ADDR] [--token-file FILE]",
		Short:     "bridge a local MCP client (stdio) to a running zero serve's approved tools",
		Long: `Mcp workspace passes an MCP client's messages, on stdin and stdout, to the
/mcp endpoint of a running zero serve, with the bearer token from
$ZERO_HOME/client-token (or --token-file), and passes the answers back. The
client sees the tools of the workspace's enabled, approved servers that the
token may use, named SERVER__TOOL, and gets notifications/tools/list_changed
when they change. The Connect a client page (http://127.0.0.1:7077/connect)
shows the mcpServers entry for Claude Desktop, VS Code, Cursor and Claude
Code, and makes a token for it, often limited to some servers, with the
command that saves it in client-token. The CLI's token (zero servers) is in
another file, cli-token, which the bridge never reads in its place.

The workspace must be on loopback: the token is sent nowhere else. Before
relaying anything the bridge checks that the workspace answers and takes the
token, and exits 1 with what to do if not.
`,
		Flag: fs,
		Run: func(ctx context.Context, stdio Stdio, _ []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			ws := &mcpbridge.Workspace{URL: c.base + "/mcp", Token: c.token,
				Log: slog.New(slog.NewTextHandler(stdio.Err, nil))}
			if err := ws.Probe(ctx); err != nil {
				return bridgeError(err, c)
			}
			local, err := (&mcpserver.StdioTransport{In: stdio.In, Out: stdio.Out}).Connect(ctx)
			if err != nil {
				return err
			}
			remote, err := ws.Connect(ctx)
			if err != nil {
				local.Close()
				return err
			}
			if err := mcpbridge.Relay(ctx, local, remote); err != nil {
				return bridgeError(err, c)
			}
			return nil
		},
	}
}

// bridgeError says what the person can do about err.
func bridgeError(err error, c *apiClient) error {
	switch {
	case errors.Is(err, mcpbridge.ErrUnreachable):
		return fmt.Errorf("no workspace answers at %s: is zero serve running? (%w)", c.base, err)
	case errors.Is(err, mcpbridge.ErrTokenRefused):
		return fmt.Errorf("the workspace at %s refused the token in %s (revoked, or another workspace's): create a new token on %s/connect and save it there", c.base, c.tokenFile, c.base)
	case errors.Is(err, mcpbridge.ErrSessionEnded):
		return fmt.Errorf("the workspace at %s ended the session (its token's sessions were closed, or it restarted): restart the client to connect again (%w)", c.base, err)
	}
	return fmt.Errorf("workspace bridge: %w", err)
}
