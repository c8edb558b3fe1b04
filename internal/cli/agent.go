package cli

import (
	"context"
	"flag"
	"os"

	"github.com/zero-dev/zero/internal/repoagent"
)

func agentCommand() *Command {
	return &Command{
		Name:      "agent",
		UsageLine: "agent run|serve|approve|records [flags]",
		Short:     "Agent Zero: review and fix repositories; observes by default",
		Long: `Agent Zero reviews repositories with a model and proposes fixes. It observes
by default: a run reports and never writes to the repository. A change is
made only when every step of the authorization chain holds (mode, autofix,
confidence, Zero's own risk class of the diff, the repository's checks,
isolation), and then only on a new agent-zero/ branch pushed to the remote.

Files: $ZERO_HOME/agent (agent.db, records.log, operator.yml); with
--database, the state, the queue and the records are in PostgreSQL.
Environment: AGENT_ZERO_MODEL_BASE_URL, AGENT_ZERO_MODEL_API_KEY,
AGENT_ZERO_MODEL, AGENT_ZERO_WEBHOOK_SECRET, AGENT_ZERO_GITLAB_TOKEN,
AGENT_ZERO_GITHUB_TOKEN.
`,
		Subcommands: []*Command{agentRunCommand(), agentServeCommand(), agentApproveCommand(), agentRecordsCommand()},
	}
}

// defineConfigFlag defines --config, the operator's configuration, for the
// subcommands that open Agent Zero.
func defineConfigFlag(fs *flag.FlagSet) *string {
	return fs.String("config", "", "the operator's configuration `FILE` (default $ZERO_HOME/agent/operator.yml)")
}

// openAgent opens Agent Zero under $ZERO_HOME with the operator's
// configuration file and the process's environment.
// defineDatabaseFlag adds --database, the PostgreSQL database workers
// share.
func defineDatabaseFlag(fs *flag.FlagSet) *string {
	return fs.String("database", "", "keep the state, the work queue and the task records in the PostgreSQL database `URL` (postgres://...), which several workers may share")
}

func openAgent(ctx context.Context, stdio Stdio, operatorFile, databaseURL string) (*repoagent.Agent, error) {
	home, err := zeroHome()
	if err != nil {
		return nil, usagef("%v", err)
	}
	a, err := repoagent.Open(ctx, repoagent.Options{Home: home, OperatorFile: operatorFile, Getenv: os.Getenv, Stderr: stdio.Err, DatabaseURL: databaseURL})
	if err != nil {
		return nil, usagef("%v", err)
	}
	return a, nil
}
