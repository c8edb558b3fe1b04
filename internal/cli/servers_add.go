package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/zero-dev/zero/internal/workspace/servers"
)

func serversAddCommand() *Command {
	fs := flag.NewFlagSet("zero servers add", flag.ContinueOnError)
	api := defineAPIFlags(fs)
	config := defineConfigFlags(fs)
	return &Command{
		Name:      "add",
		UsageLine: "servers add " + configUsage,
		Short:     "save a server as an unapproved, disabled draft and print where the owner approves it",
		Long: `Add saves the configuration as a draft, unapproved and disabled, and prints
its fingerprint and the page where the owner reviews and approves it in a
browser session. Nothing runs until then: a token never approves.

	zero servers add --name files --command /usr/bin/npx --arg -y \
		--arg @modelcontextprotocol/server-filesystem --arg .
	zero servers add --name docs --kind http --url https://example.com/mcp \
		--header Authorization
`,
		Flag: fs,
		Run: func(ctx context.Context, stdio Stdio, args []string) error {
			c, err := config.parse(args)
			if err != nil {
				return err
			}
			client, err := api.client()
			if err != nil {
				return err
			}
			var res struct {
				Server     servers.Server `json:"server"`
				ApproveURL string         `json:"approve_url"`
			}
			if err := client.do(ctx, "POST", "/api/servers", map[string]any{"config": c}, &res); err != nil {
				return err
			}
			fmt.Fprintf(stdio.Out, "added server %d (%s), unapproved and disabled; nothing ran.\n", res.Server.ID, res.Server.Config.Name)
			fmt.Fprintf(stdio.Out, "fingerprint %s\napprove it in your browser: %s\n", res.Server.Fingerprint, res.ApproveURL)
			return nil
		},
	}
}
