package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/zero-dev/zero/internal/repoagent"
)

func agentRecordsCommand() *Command {
	fs := flag.NewFlagSet("zero agent records", flag.ContinueOnError)
	verify := fs.Bool("verify", false, "verify the records' hash chain and head instead of listing them")
	dbURL := fs.String("database", "", "read the chain the workers share in the PostgreSQL database `URL` (zero agent serve --database)")
	return &Command{
		Name:      "records",
		UsageLine: "agent records [--verify] [--database URL]",
		Short:     "list the redacted, hash-chained task records, or verify them",
		Long: `Records lists the task records in $ZERO_HOME/agent/records.log, one a line.
With --verify it checks their hash chain instead, and exits 1 when it is
broken. With --database, the records are the chain the workers share in
that PostgreSQL database.
`,
		Flag: fs,
		Run: func(ctx context.Context, stdio Stdio, args []string) error {
			if len(args) > 0 {
				return usagef("unexpected arguments %q", args)
			}
			home, err := zeroHome()
			if err != nil {
				return usagef("%v", err)
			}
			if *verify {
				where, n, err := repoagent.VerifyRecords(ctx, home, *dbURL)
				if err != nil {
					return fmt.Errorf("%s is not whole: %w", where, err)
				}
				intact := "chain and head intact"
				if *dbURL != "" {
					intact = "chain intact" // a table has no head file
				}
				fmt.Fprintf(stdio.Out, "%s: %d records, %s\n", where, n, intact)
				return nil
			}
			_, recs, err := repoagent.ReadRecords(ctx, home, *dbURL)
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
