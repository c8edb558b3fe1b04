package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/mcpserver/agents"
	"github.com/zero-dev/zero/internal/mcpserver/agents/children"
)

// An agentsSetup builds, for a workspace, what the agents server runs: the
// catalog of its agents (definitions joined with their child servers, the
// key read from each env_key at spawn time through getenv) and the loader
// of named skills.
type agentsSetup func(workspace *fsroot.Set, getenv func(string) string, stderr io.Writer) (agents.Options, error)

// mcpAgentsCommand serves the agents the workspace defines
// (agents.WorkspaceOptions).
func mcpAgentsCommand() *Command {
	return agentsCommand(func(ws *fsroot.Set, getenv func(string) string, stderr io.Writer) (agents.Options, error) {
		return agents.WorkspaceOptions(ws, getenv, stderr), nil
	})
}

// agentsCommand is the agents server over the catalog setup builds.
func agentsCommand(setup agentsSetup) *Command {
	return mcpServerCommand("agents", "[--workspace DIR]",
		"run the agents a workspace defines, each calling its model provider and the child MCP tools it selects",
		`Agents runs the agents defined in a workspace (default: the working
directory). spawn_agent starts one on a task and returns at once;
wait_agent waits for results; send_input continues or interrupts one.
Definitions and skills are trusted workspace input, not a security
boundary: agents send prompts to their provider and start the child
servers their definitions name, with your user's permissions. A
provider's key comes only from the environment variable its env_key
names.
`,
		func(fs *flag.FlagSet) configureFunc {
			workspace := fs.String("workspace", "", "the workspace `DIR` holding the agent definitions (default: the working directory)")
			return func(args []string, stdio Stdio) (*mcp.Server, func() error, error) {
				if os.Getenv(children.AgentChildEnv) != "" {
					return nil, nil, fmt.Errorf("this agents server was started as an agent's child server (%s is set): agents cannot spawn agents", children.AgentChildEnv)
				}
				roots, err := openWorkspace(*workspace, args)
				if err != nil {
					return nil, nil, err
				}
				o, err := setup(roots, os.Getenv, stdio.Err)
				if err != nil {
					roots.Close()
					return nil, nil, err
				}
				o.Stderr = stdio.Err
				srv, err := agents.New(o)
				if err != nil {
					roots.Close()
					return nil, nil, err
				}
				return srv.MCP(), func() error { return errors.Join(srv.Close(), roots.Close()) }, nil
			}
		})
}
