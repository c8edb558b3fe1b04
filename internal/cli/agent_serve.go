package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/zero-dev/zero/internal/repoagent"
)

func agentServeCommand() *Command {
	fs := flag.NewFlagSet("zero agent serve", flag.ContinueOnError)
	config := defineConfigFlag(fs)
	addr := fs.String("addr", repoagent.DefaultAddr, "listen on `ADDR`; a public address needs --allow-remote")
	allowRemote := fs.Bool("allow-remote", false, "listen on a non-loopback address")
	return &Command{
		Name:      "serve",
		UsageLine: "agent serve [--addr 127.0.0.1:7078] [--allow-remote] [--config FILE]",
		Short:     "receive webhooks from GitHub, GitLab and Gitea/Forgejo, and run them",
		Long: `Serve receives webhooks at /webhooks/github, /webhooks/gitlab and
/webhooks/gitea, verifies each delivery before parsing it (and refuses
replays), queues it, and runs it for the repositories the operator enabled.
`,
		Flag: fs,
		Run: func(ctx context.Context, stdio Stdio, args []string) error {
			if len(args) > 0 {
				return usagef("unexpected or missing arguments %q", args)
			}
			a, err := openAgent(ctx, stdio, *config)
			if err != nil {
				return err
			}
			defer a.Close()
			return a.Serve(ctx, *addr, *allowRemote, func(url string) {
				fmt.Fprintf(stdio.Err, "Agent Zero receives webhooks at %s/webhooks/{github,gitlab,gitea}\n", url)
			})
		},
	}
}
