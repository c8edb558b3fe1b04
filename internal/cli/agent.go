package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/zero-dev/zero/internal/repoagent"
	"github.com/zero-dev/zero/internal/repoagent/policy"
	"github.com/zero-dev/zero/internal/repoagent/record"
	agentrun "github.com/zero-dev/zero/internal/repoagent/run"
	"github.com/zero-dev/zero/internal/repoagent/webhook"
)

func agentCommand() *Command {
	return &Command{
		Name:      "agent",
		UsageLine: "agent run|serve|approve|records [flags]",
		Short:     "Agent Zero: review and fix repositories; observes unless policy allows more",
		Long: `Agent Zero reviews repositories with a model and proposes fixes. It observes
by default: a run reports and never writes to the repository. A change is
made only when every step of the authorization chain holds (mode, autofix,
confidence, Zero's own risk class of the diff, the repository's checks,
isolation), and then only on a new agent-zero/ branch pushed to the remote.

	zero agent run --repo PATH [--event FILE] [--mode observe|fix|autonomous] [--name OWNER/NAME]
	zero agent serve [--addr 127.0.0.1:7078] [--allow-remote]
	zero agent approve TASK
	zero agent records [--verify]

--mode can only lower the mode: the effective mode is the least of the
operator's ceiling, the repository's .agent-zero.yml (read from its default
branch) and --mode (default observe). --event FILE is a JSON event (as
webhook parsing produces), for a run on its behalf. Approve shows a held
change's diff and applies it once you type the task id.

Files: $ZERO_HOME/agent (agent.db, records.log, operator.yml).
Environment: AGENT_ZERO_MODEL_BASE_URL, AGENT_ZERO_MODEL_API_KEY,
AGENT_ZERO_MODEL, AGENT_ZERO_WEBHOOK_SECRET, AGENT_ZERO_GITLAB_TOKEN,
AGENT_ZERO_GITHUB_TOKEN.

Flags:

	--config FILE   the operator's configuration (default $ZERO_HOME/agent/operator.yml)
`,
		Run: runAgent,
	}
}

func runAgent(ctx context.Context, stdio Stdio, args []string) error {
	if len(args) == 0 {
		return usagef("want a subcommand: run, serve, approve or records")
	}
	sub := args[0]
	usage := "usage: zero " + agentCommand().UsageLine + "\n\n" + agentCommand().Long
	fs := flag.NewFlagSet("zero agent "+sub, flag.ContinueOnError)
	config := fs.String("config", "", "the operator's configuration")
	var repo, eventFile, mode, name, addr *string
	var allowRemote, verify *bool
	switch sub {
	case "run":
		repo = fs.String("repo", "", "the checkout")
		eventFile = fs.String("event", "", "a JSON event")
		mode = fs.String("mode", "observe", "observe, fix or autonomous: can only lower the mode")
		name = fs.String("name", "", "the repository's owner/name")
	case "serve":
		addr = fs.String("addr", repoagent.DefaultAddr, "listen address")
		allowRemote = fs.Bool("allow-remote", false, "listen on a non-loopback address")
	case "records":
		verify = fs.Bool("verify", false, "verify the hash chain")
	case "approve":
	default:
		return usagef("unknown subcommand %q: want run, serve, approve or records", sub)
	}
	rest, err := parseFlags(fs, args[1:], stdio.Out, usage)
	if err != nil {
		return err
	}
	home, err := zeroHome()
	if err != nil {
		return usagef("%v", err)
	}
	if sub == "records" {
		if len(rest) > 0 {
			return usagef("unexpected arguments %q", rest)
		}
		return agentRecords(stdio, repoagent.RecordsPath(home), *verify)
	}
	if sub == "approve" && len(rest) != 1 || sub != "approve" && len(rest) > 0 {
		return usagef("unexpected or missing arguments %q", rest)
	}
	var requested policy.Mode
	var event *webhook.Event
	if sub == "run" {
		if *repo == "" {
			return usagef("--repo is required")
		}
		if requested, err = policy.ParseMode(*mode); err != nil {
			return usagef("--mode: %v", err)
		}
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
	}
	a, err := repoagent.Open(ctx, repoagent.Options{Home: home, OperatorFile: *config, Stderr: stdio.Err})
	if err != nil {
		return usagef("%v", err)
	}
	defer a.Close()
	switch sub {
	case "run":
		rep, err := a.Run(ctx, repoagent.RunOptions{RepoDir: *repo, Name: *name, Event: event, Requested: requested})
		rep.Write(stdio.Out)
		if err != nil {
			return fmt.Errorf("the task record: %w", err)
		}
		if rep.Outcome == agentrun.Failed {
			return fmt.Errorf("the task failed")
		}
		return nil
	case "serve":
		return a.Serve(ctx, *addr, *allowRemote, func(url string) {
			fmt.Fprintf(stdio.Err, "Agent Zero receives webhooks at %s/webhooks/{github,gitlab,gitea}\n", url)
		})
	default: // approve
		return agentApprove(ctx, stdio, a, rest[0])
	}
}

// agentApprove shows a held change and applies it once the person types its
// task id.
func agentApprove(ctx context.Context, stdio Stdio, a *repoagent.Agent, id string) error {
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
		return fmt.Errorf("not approved: nothing was changed")
	}
	rep, err := a.Approve(ctx, id)
	rep.Write(stdio.Out)
	if err != nil {
		return fmt.Errorf("the task record: %w", err)
	}
	if rep.Outcome == agentrun.Failed {
		return fmt.Errorf("the approved change failed")
	}
	return nil
}

func agentRecords(stdio Stdio, path string, verify bool) error {
	if verify {
		n, err := record.Verify(path)
		if err != nil {
			return fmt.Errorf("%s is not whole: %w", path, err)
		}
		fmt.Fprintf(stdio.Out, "%s: %d records, chain and head intact\n", path, n)
		return nil
	}
	recs, err := record.Read(path)
	if err != nil {
		return err
	}
	for _, r := range recs {
		fmt.Fprintf(stdio.Out, "%s %s %s task=%s outcome=%s mode=%s risk=%s\n", r.Time.Format("2006-01-02T15:04:05Z"),
			r.Target, r.Action, r.Detail["task"], r.Detail["outcome"], r.Detail["mode"], r.Detail["risk"])
	}
	return nil
}
