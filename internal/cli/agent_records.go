package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/zero-dev/zero/internal/repoagent"
	"github.com/zero-dev/zero/internal/repoagent/record"
)

func agentRecordsCommand() *Command {
	fs := flag.NewFlagSet("zero agent records", flag.ContinueOnError)
	verify := fs.Bool("verify", false, "verify the records' hash chain and head instead of listing them")
	return &Command{
		Name:      "records",
		UsageLine: "agent records [--verify]",
		Short:     "list the redacted, hash-chained task records, or verify them",
		Long: `Records lists the task records in $ZERO_HOME/agent/records.log, one a line.
With --verify it checks their hash chain instead, and exits 1 when it is
broken.
`,
		Flag: fs,
		Run: func(_ context.Context, stdio Stdio, args []string) error {
			if len(args) > 0 {
				return usagef("unexpected arguments %q", args)
			}
			home, err := zeroHome()
			if err != nil {
				return usagef("%v", err)
			}
			path := repoagent.RecordsPath(home)
			if *verify {
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
				fmt.Fprintf(stdio.Out, "%s %s %s task=%s outcome=%s mode=%s risk=%s reason=%s\n", r.Time.Format("2006-01-02T15:04:05Z"),
					r.Target, r.Action, r.Detail["task"], r.Detail["outcome"], r.Detail["mode"], r.Detail["risk"], r.Detail["reason"])
			}
			return nil
		},
	}
}
