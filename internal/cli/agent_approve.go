package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/zero-dev/zero/internal/repoagent/policy"
	agentrun "github.com/zero-dev/zero/internal/repoagent/run"
)

func agentApproveCommand() *Command {
	fs := flag.NewFlagSet("zero agent approve", flag.ContinueOnError)
	config := defineConfigFlag(fs)
	dbURL := defineDatabaseFlag(fs)
	return &Command{
		Name:      "approve",
		UsageLine: "agent approve [--config FILE] [--database URL] TASK",
		Short:     "show a held change's diff and apply it once you type its task id",
		Long: `Approve shows the change task TASK holds, with its diff, and applies it
once you type the task id. Your approval lifts the high-impact hold and
nothing else: the change goes through the same chain as a run, with the
operator's configuration as it is now and the policy at the remote's
current default branch; it is applied and classified again, and the
repository's checks run again, before anything is pushed. It exits 1 when
the change is not applied. With --database, the held change is read from
the PostgreSQL database the workers share (zero agent serve --database).
`,
		Flag: fs,
		Run: func(ctx context.Context, stdio Stdio, args []string) error {
			if len(args) != 1 {
				return usagef("unexpected or missing arguments %q", args)
			}
			id := args[0]
			a, err := openAgent(ctx, stdio, *config, *dbURL)
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
			fmt.Fprintf(stdio.Out, "Task %s on %s holds a %s change (model confidence %.2f) to %s.\n",
				h.ID, h.RepoName, h.Risk, h.Confidence, h.HeadSHA)
			agentrun.WriteDiff(stdio.Out, h.Diff)
			fmt.Fprintf(stdio.Out, "\nYour approval lifts the high-impact hold only: the mode, the policy, the isolation and\n"+
				"the checks are judged again, as they are now, before anything is pushed.\nType the task id to approve it: ")
			line, _ := bufio.NewReader(stdio.In).ReadString('\n')
			if strings.TrimSpace(line) != id {
				return errors.New("not approved: nothing was changed")
			}
			rep, err := a.Approve(ctx, id)
			rep.Write(stdio.Out)
			if err != nil {
				return fmt.Errorf("the task record: %w", err)
			}
			if rep.Outcome != policy.Applied {
				return fmt.Errorf("the approved change was not applied: %s", rep.Outcome)
			}
			return nil
		},
	}
}
