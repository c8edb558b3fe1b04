package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/database"
)

func auditVerifyCommand() *Command {
	fs := flag.NewFlagSet("zero audit verify", flag.ContinueOnError)
	file := fs.String("file", "", "the audit log `FILE` (default $ZERO_HOME/audit.log)")
	dsn := fs.String("database", "", "check the chain kept in the PostgreSQL database `URL` instead (postgres://...)")
	return &Command{
		Name:      "verify",
		UsageLine: "audit verify [--file FILE | --database URL]",
		Short:     "check the audit log's hash chain and its head file",
		Long: `Audit verify walks the hash-chained audit log ($ZERO_HOME/audit.log unless
--file names another) and checks every record's hash, the chain, the sequence
numbers, the head file beside the log and the checkpoint file, if there is
one. It exits 0 when the log is whole, 1 when it is not, naming the first bad
record. Records after the one the head names pass when they chain from it:
they were written by batched appends (tool calls) not yet flushed, because
zero serve is running or stopped before its flush, and it says so. It reads
the files and writes none.

zero serve reads less at each start: only from the record the checkpoint file
(audit.log.checkpoint) names on, checking that that record is at the byte the
file says, with its hash, that every record after it chains from it, and the
head file. The writer moves the checkpoint forward every 1000 records, once
their bytes read back from the file as what it checked at start or wrote. A
record before the checkpoint's that was changed in place, keeping the length
of its line, is therefore found here, not by a start.

With --database, or ZERO_DATABASE_URL when no --file is given (as zero serve
reads it), the chain is the one kept in a PostgreSQL database's audit_records
table (several replicas share it): every record's hash, the chain and the
sequence numbers are checked the same way.

The log is tamper-evident, not tamper-proof: someone who can rewrite both the
log and its head file can forge a consistent log, and anyone who can write the
log can add or remove records after the head's.
`,
		Flag: fs,
		Run: func(ctx context.Context, stdio Stdio, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			url := *dsn
			if url != "" && *file != "" {
				return usagef("--file and --database name two logs: give one")
			}
			if url == "" && *file == "" {
				url = os.Getenv("ZERO_DATABASE_URL")
			}
			if url != "" {
				if err := database.CheckPostgres(url); err != nil {
					return usagef("--database or ZERO_DATABASE_URL: %v", err)
				}
				db, err := database.ConnectPostgres(url)
				if err != nil {
					return err
				}
				defer db.Close()
				n, err := audit.VerifyTable(ctx, db)
				if err != nil {
					return fmt.Errorf("the audit chain in the database is not whole: %w", err)
				}
				fmt.Fprintf(stdio.Out, "audit_records: %d records, the chain verifies\n", n)
				return nil
			}
			path := *file
			if path == "" {
				home, err := zeroHome()
				if err != nil {
					return usagef("%v", err)
				}
				path = filepath.Join(home, "audit.log")
			}
			rep, err := audit.Inspect(path)
			if err != nil {
				return fmt.Errorf("%s is not whole: %w", path, err)
			}
			fmt.Fprintf(stdio.Out, "%s: %s\n", path, rep)
			return nil
		},
	}
}
