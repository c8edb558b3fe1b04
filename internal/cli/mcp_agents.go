package cli

import "context"

// mcpAgentsCommand is the agents server, not built yet: it takes no flags
// and fails, whatever its arguments, with exit code 2.
func mcpAgentsCommand() *Command {
	return &Command{
		Name:      "agents",
		UsageLine: "mcp agents",
		Short:     "agents defined in a workspace, calling a model provider (not built yet)",
		Run: func(context.Context, Stdio, []string) error {
			return usagef("the agents server is not built yet")
		},
	}
}
