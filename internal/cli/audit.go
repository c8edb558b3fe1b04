package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/zero-dev/zero/internal/audit"
)

func auditCommand() *Command {
	return &Command{
		Name:      "audit",
		UsageLine: "audit verify [--file FILE]",
		Short:     "check that the audit log is whole: no record changed, removed, reordered or inserted",
		Long: `Audit verify walks the hash-chained audit log ($ZERO_HOME/audit.log unless
--file names another) and checks every record's hash, the chain, the sequence
numbers and the head file beside the log. It exits 0 when the log is whole,
1 when it is not, naming the first bad record.

The log is tamper-evident, not tamper-proof: someone who can rewrite both the
log and its head file can forge a consistent log.
`,
		Run: runAudit,
	}
}

func runAudit(_ context.Context, stdio Stdio, args []string) error {
	if len(args) == 0 || args[0] != "verify" {
		return usagef("want: zero audit verify [--file FILE]")
	}
	fs := flag.NewFlagSet("zero audit verify", flag.ContinueOnError)
	file := fs.String("file", "", "the audit log (default $ZERO_HOME/audit.log)")
	rest, err := parseFlags(fs, args[1:], stdio.Out, "usage: zero "+auditCommand().UsageLine+"\n\n"+auditCommand().Long)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected arguments %q", rest)
	}
	path := *file
	if path == "" {
		home, err := zeroHome()
		if err != nil {
			return usagef("%v", err)
		}
		path = filepath.Join(home, "audit.log")
	}
	n, err := audit.Verify(path)
	if err != nil {
		return fmt.Errorf("%s is not whole: %w", path, err)
	}
	fmt.Fprintf(stdio.Out, "%s: %d records, chain and head intact\n", path, n)
	return nil
}
