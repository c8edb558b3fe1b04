package cli

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/zero-dev/zero/internal/workspace/servers"
)

func serversListCommand() *Command {
	fs := flag.NewFlagSet("zero servers list", flag.ContinueOnError)
	api := defineAPIFlags(fs)
	return &Command{
		Name:      "list",
		UsageLine: "servers list [--addr ADDR] [--token-file FILE]",
		Short:     "list every server with its status",
		Long: `List prints every server of the workspace: its id, name, kind, whether it
is approved and enabled, its status and how many tools it has. NOTE flags a
stdio server that cannot run as it is: its command resolves to no program,
or to another program than the one approved. A token limited to some
servers sees those only, and list says so.
`,
		Flag: fs,
		Run: func(ctx context.Context, stdio Stdio, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			c, err := api.client()
			if err != nil {
				return err
			}
			var list []servers.Server
			if err := c.do(ctx, "GET", "/api/servers", nil, &list); err != nil {
				return err
			}
			if err := c.sayScope(ctx, stdio.Err); err != nil {
				return err
			}
			tw := tabwriter.NewWriter(stdio.Out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tKIND\tAPPROVED\tENABLED\tSTATUS\tTOOLS\tNOTE")
			for _, s := range list {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%t\t%t\t%s\t%d\t%s\n", s.ID, s.Config.Name, s.Config.Kind, s.Approved, s.Enabled, s.Status, len(s.Tools), note(s))
			}
			return tw.Flush()
		},
	}
}

// note flags a stdio server that cannot run as it is, as its page does.
func note(s servers.Server) string {
	switch {
	case s.Config.Kind != servers.KindStdio:
		return ""
	case s.Config.Program == "":
		return fmt.Sprintf("cannot run: %q resolves to no executable file", s.Config.Command)
	case s.PinnedProgram != "" && s.PinnedProgram != s.Config.Program:
		return fmt.Sprintf("cannot run until approved again: %q now resolves to %s", s.Config.Command, s.Config.Program)
	}
	return ""
}
