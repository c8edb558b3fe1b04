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
	dbURL := defineDatabaseFlag(fs)
	taskTimeout := fs.Duration("task-timeout", repoagent.TaskTimeout, "cut a task after `DURATION`; it is recorded as interrupted")
	rescueAfter := fs.Duration("rescue-after", 0, "retry a task running for longer than `DURATION` (its worker was killed); "+
		"more than --task-timeout (default --task-timeout + "+repoagent.RescueMargin.String()+")")
	return &Command{
		Name:      "serve",
		UsageLine: "agent serve [--addr 127.0.0.1:7078] [--allow-remote] [--config FILE] [--database URL] [--task-timeout 1h] [--rescue-after DURATION]",
		Short:     "receive webhooks from GitHub, GitLab and Gitea/Forgejo, and run them",
		Long: `Serve receives webhooks at /webhooks/github, /webhooks/gitlab and
/webhooks/gitea, verifies each delivery before parsing it (and refuses
replays), queues it, and runs it for the repositories the operator enabled.

With --database, the held changes, the ledger of deliveries and the work
queue (River) are in that PostgreSQL database, and any number of workers on
any number of machines share them: a delivery is taken by one worker only,
and a replay is refused whichever worker got the original. The task records
are one hash chain there too (zero agent records --database).

A task whose worker dies (kill -9, a lost machine) is retried by River, on
whichever worker is free, once it has been running for --rescue-after; the
retry is the same task, so it pushes to the same branch, which a push
never overwrites. --rescue-after must exceed --task-timeout, so that a task
still running is never taken twice; the workers' leader rescues with its
own value, every 30 seconds.
`,
		Flag: fs,
		Run: func(ctx context.Context, stdio Stdio, args []string) error {
			if len(args) > 0 {
				return usagef("unexpected or missing arguments %q", args)
			}
			o := repoagent.ServeOptions{Addr: *addr, AllowRemote: *allowRemote, TaskTimeout: *taskTimeout, RescueAfter: *rescueAfter,
				Ready: func(url string) {
					fmt.Fprintf(stdio.Err, "Agent Zero receives webhooks at %s/webhooks/{github,gitlab,gitea}\n", url)
				}}
			if err := o.Check(); err != nil {
				return usagef("%v", err)
			}
			a, err := openAgent(ctx, stdio, *config, *dbURL)
			if err != nil {
				return err
			}
			defer a.Close()
			return a.Serve(ctx, o)
		},
	}
}
