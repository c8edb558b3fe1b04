package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/zero-dev/zero/internal/repoagent"
	"github.com/zero-dev/zero/internal/repoagent/policy"
	agentrun "github.com/zero-dev/zero/internal/repoagent/run"
	"github.com/zero-dev/zero/internal/repoagent/webhook"
)

func agentRunCommand() *Command {
	fs := flag.NewFlagSet("zero agent run", flag.ContinueOnError)
	config := defineConfigFlag(fs)
	repo := fs.String("repo", "", "the checkout's `PATH` (required)")
	eventFile := fs.String("event", "", "a JSON event `FILE`, as webhook parsing produces, for a run on its behalf")
	mode := fs.String("mode", "observe", "the `MODE`: observe, fix or autonomous; it can only lower the mode")
	name := fs.String("name", "", "the repository's `OWNER/NAME`, for the report and record")
	dbURL := defineDatabaseFlag(fs)
	return &Command{
		Name:      "run",
		UsageLine: "agent run --repo PATH [--event FILE] [--mode observe|fix|autonomous] [--name OWNER/NAME] [--config FILE] [--database URL]",
		Short:     "review a local checkout and print a report; observes by default",
		Long: `Run reviews a checkout with the model and prints a report. It never writes
to the checkout. --mode can only lower the mode: the effective mode is the
least of the operator's ceiling, the repository's .agent-zero.yml (read from
its default branch) and --mode; the report says which of them capped it.
It exits 1 when the task failed or was interrupted. With --database, a
change held for approval and the task record go to the PostgreSQL database
the workers share (zero agent serve --database), not to $ZERO_HOME.
`,
		Flag: fs,
		Run: func(ctx context.Context, stdio Stdio, args []string) error {
			if len(args) > 0 {
				return usagef("unexpected or missing arguments %q", args)
			}
			if *repo == "" {
				return usagef("--repo is required")
			}
			requested, err := policy.ParseMode(*mode)
			if err != nil {
				return usagef("--mode: %v", err)
			}
			var event *webhook.Event
			if *eventFile != "" {
				data, err := os.ReadFile(*eventFile)
				if err != nil {
					return usagef("--event: %v", err)
				}
				event = &webhook.Event{}
				dec := json.NewDecoder(strings.NewReader(string(data)))
				dec.DisallowUnknownFields()
				if err := dec.Decode(event); err != nil {
					return usagef("--event %s: %v", *eventFile, err)
				}
			}
			a, err := openAgent(ctx, stdio, *config, *dbURL)
			if err != nil {
				return err
			}
			defer a.Close()
			rep, err := a.Run(ctx, repoagent.RunOptions{RepoDir: *repo, Name: *name, Event: event, Requested: requested})
			rep.Write(stdio.Out)
			if err != nil {
				return fmt.Errorf("the task record: %w", err)
			}
			if rep.Outcome == agentrun.Failed || rep.Outcome == agentrun.Interrupted {
				return fmt.Errorf("the task %s", rep.Outcome)
			}
			return nil
		},
	}
}
