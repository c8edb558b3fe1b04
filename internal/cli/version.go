package cli

import (
	"context"
	"fmt"

	"github.com/zero-dev/zero/internal/buildinfo"
)

func versionCommand() *Command {
	return &Command{
		Name:      "version",
		UsageLine: "version",
		Short:     "print the version of zero",
		Run: func(_ context.Context, stdio Stdio, args []string) error {
			if len(args) > 0 {
				return usagef("takes no arguments")
			}
			fmt.Fprintf(stdio.Out, "zero %s\n", buildinfo.Version())
			return nil
		},
	}
}
