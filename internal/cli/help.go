package cli

import (
	"context"
	"fmt"
)

func helpCommand() *Command {
	return &Command{
		Name:      "help",
		UsageLine: "help [command]",
		Short:     "print help about zero or one of its commands",
		Run: func(_ context.Context, stdio Stdio, args []string) error {
			switch len(args) {
			case 0:
				fmt.Fprint(stdio.Out, mainUsage())
				return nil
			case 1:
				c := lookup(args[0])
				if c == nil {
					return usagef("unknown command %q", args[0])
				}
				fmt.Fprintf(stdio.Out, "usage: zero %s\n\n%s\n", c.UsageLine, c.Short)
				if c.Long != "" {
					fmt.Fprintf(stdio.Out, "\n%s", c.Long)
				}
				return nil
			}
			return usagef("takes at most one command")
		},
	}
}
