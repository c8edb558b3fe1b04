package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	agentrun "github.com/zero-dev/zero/internal/repoagent/run"
)

func agentApproveCommand() *Command {
	fs := flag.NewFlagSet("zero agent approve", flag.ContinueOnError)
	config := defineConfigFlag(fs)
	return &Command{
		Name:      "approve",
		UsageLine: "agent approve [--config FILE] TASK",
		Short:     "show a held change's diff and apply it once you type its task id",
		Long: `Approve shows the change task TASK holds, with its diff, and applies it
once you type the task id. The repository's checks still run before
anything is pushed.
`,
		Flag: fs,
		Run: func(ctx context.Context, stdio Stdio, args []string) error {
			if len(args) != 1 {
				return usagef("unexpected or missing arguments %q", args)
			}
			id := args[0]
			a, err := openAgent(ctx, stdio, *config)
			if err != nil {
				return err
			}
			defer a.Close()
			h, err := a.Held(ctx, id)
			if err != nil {
				return err
			}
			if h.Status != "held" {
				return fmt.Errorf("task %s is not waiting for approval (%s)", id, h.Status)
			}
			fmt.Fprintf(stdio.Out, "Task %s on %s holds a %s change (model confidence %.2f) to %s.\n\n%s\n",
				h.ID, h.RepoName, h.Risk, h.Confidence, h.HeadSHA, h.Diff)
			fmt.Fprintf(stdio.Out, "The repository's checks still run before anything is pushed.\nType the task id to approve it: ")
			line, _ := bufio.NewReader(stdio.In).ReadString('\n')
			if strings.TrimSpace(line) != id {
				return errors.New("not approved: nothing was changed")
			}
			rep, err := a.Approve(ctx, id)
			rep.Write(stdio.Out)
			if err != nil {
				return fmt.Errorf("the task record: %w", err)
			}
			if rep.Outcome == agentrun.Failed {
				return errors.New("the approved change failed")
			}
			return nil
		},
	}
}
