package cli

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/zero-dev/zero/internal/workspace"
	"github.com/zero-dev/zero/internal/workspace/auth"
)

func loginCommand() *Command {
	fs := flag.NewFlagSet("zero login", flag.ContinueOnError)
	reset := fs.Bool("reset-passkeys", false, "remove every passkey and the setting that approvals need one, audited; zero serve must be stopped")
	return &Command{
		Name:      "login",
		UsageLine: "login [--reset-passkeys]",
		Flag:      fs,
		Short:     "print a one-time login link for the running workspace's owner",
		Long: `Login prints a fresh one-time login link for the owner of the zero serve
running on $ZERO_HOME (valid 15 minutes, once), for a signed-out owner who
lost the link zero serve printed. The server need not restart.

It reads $ZERO_HOME directly: the running server's URL from serve.lock, and
the database, where it stores the link's hash. Whoever can read $ZERO_HOME
is its owner, and can sign in as the owner this way; keep the directory
yours alone (mode 0700).

It exits 1 when no zero serve runs on $ZERO_HOME.

With --reset-passkeys it prints no link: it removes every passkey of every
user, the challenges pending and the setting that approvals need a passkey,
and records passkey.reset in the audit log, for an owner who lost their
passkeys. zero serve must be stopped on $ZERO_HOME while it runs. A passkey
stops agents that drive a browser, not a person or program with this
shell: whoever can read $ZERO_HOME is its owner.
`,
		Run: func(ctx context.Context, stdio Stdio, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			home, err := zeroHome()
			if err != nil {
				return usagef("%v", err)
			}
			if *reset {
				n, err := workspace.ResetPasskeys(ctx, home, os.Getenv("ZERO_DATABASE_URL"))
				if err != nil {
					return err
				}
				fmt.Fprintf(stdio.Err, "Removed %d passkeys and the setting that approvals need one; the audit log records it.\n", n)
				return nil
			}
			link, err := workspace.NewLoginLink(ctx, home, os.Getenv("ZERO_DATABASE_URL"))
			if err != nil {
				return err
			}
			fmt.Fprintf(stdio.Err, "Open this one-time login link in your browser (valid %v, once):\n", auth.LoginLinkTTL)
			fmt.Fprintln(stdio.Out, link)
			return nil
		},
	}
}
