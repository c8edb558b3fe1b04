package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/zero-dev/zero/internal/workspace/servers"
)

// configUsage is the usage of the configuration flags, for preview and add.
const configUsage = "--name NAME (--command PROG [--arg ARG]... [--cwd DIR] [--env NAME]... | --kind http|sse --url URL [--header NAME]...) [--addr ADDR] [--token-file FILE]"

func serversPreviewCommand() *Command {
	fs := flag.NewFlagSet("zero servers preview", flag.ContinueOnError)
	api := defineAPIFlags(fs)
	config := defineConfigFlags(fs)
	return &Command{
		Name:      "preview",
		UsageLine: "servers preview " + configUsage,
		Short:     "show what the owner will review for a configuration: command line, warnings, fingerprint; saves nothing",
		Long: `Preview sends a configuration to the workspace and prints what the review
page shows for it: the exact command line and the program it runs, or the
URL; the names of its environment variables or headers, its warnings and
its fingerprint.
Nothing is saved and nothing runs.
`,
		Flag: fs,
		Run: func(ctx context.Context, stdio Stdio, args []string) error {
			c, err := config.parse(args)
			if err != nil {
				return err
			}
			client, err := api.client()
			if err != nil {
				return err
			}
			var p servers.Preview
			if err := client.do(ctx, "POST", "/api/servers/preview", map[string]any{"config": c}, &p); err != nil {
				return err
			}
			printPreview(stdio.Out, p)
			return nil
		},
	}
}

// configFlags are a server configuration's flags, for preview and add.
type configFlags struct {
	c                  servers.Config
	args, env, headers repeated
}

func defineConfigFlags(fs *flag.FlagSet) *configFlags {
	f := &configFlags{}
	fs.StringVar(&f.c.Name, "name", "", "the server's `NAME`")
	fs.StringVar(&f.c.Kind, "kind", servers.KindStdio, "the server's `KIND`: stdio, http or sse")
	fs.StringVar(&f.c.Command, "command", "", "stdio: the `PROGRAM` to run")
	fs.Var(&f.args, "arg", "stdio: `ARG` is one argument, exactly as written (repeat for more)")
	fs.StringVar(&f.c.Cwd, "cwd", "", "stdio: the working directory `DIR`, relative, inside the thread workspace")
	fs.Var(&f.env, "env", "stdio: the `NAME` of an environment variable (repeat for more); its value is set in the browser")
	fs.StringVar(&f.c.URL, "url", "", "http, sse: the server's https `URL`")
	fs.Var(&f.headers, "header", "http, sse: the `NAME` of a header (repeat for more); its value is set in the browser")
	return f
}

// parse checks what can be checked here, before the token is read or
// anything is sent: no positional arguments, and every required flag.
func (f *configFlags) parse(args []string) (servers.Config, error) {
	if err := noArgs(args); err != nil {
		return servers.Config{}, err
	}
	c := f.c
	c.Args, c.Env, c.Headers = f.args, f.env, f.headers
	var missing []string
	if c.Name == "" {
		missing = append(missing, "--name")
	}
	hint := ""
	switch c.Kind {
	case servers.KindStdio:
		if c.Command == "" {
			missing = append(missing, "--command (the program to run)")
			hint = "; for an http or sse server, give --kind and --url instead"
		}
	case servers.KindHTTP, servers.KindSSE:
		if c.URL == "" {
			missing = append(missing, "--url (the server's https URL)")
		}
	default:
		return c, usagef("--kind %q: want stdio, http or sse", c.Kind)
	}
	if len(missing) > 0 {
		return c, usagef("missing %s%s", strings.Join(missing, " and "), hint)
	}
	return c, nil
}

func printPreview(out io.Writer, p servers.Preview) {
	c := p.Config
	fmt.Fprintf(out, "name:        %s\nkind:        %s\n", c.Name, c.Kind)
	if c.Kind == servers.KindStdio {
		fmt.Fprintf(out, "command:     %q\n", append([]string{c.Command}, c.Args...))
		fmt.Fprintf(out, "runs:        %s\n", runs(c))
		fmt.Fprintf(out, "cwd:         %q\nenv names:   %q\n", c.Cwd, c.Env)
	} else {
		fmt.Fprintf(out, "url:         %s\nheaders:     %q\n", c.URL, c.Headers)
	}
	fmt.Fprintf(out, "fingerprint: %s\n", p.Fingerprint)
	for _, w := range p.Warnings {
		fmt.Fprintf(out, "warning (%s): %s\n", w.Severity, w.Message)
	}
}

// runs says what a stdio configuration runs, as the review page does: the
// program its command resolves to in the PATH zero serve passes on, links
// resolved (what the approval covers), or that nothing would run.
func runs(c servers.Config) string {
	if c.Program == "" {
		return "nothing: the command resolves to no executable file"
	}
	return fmt.Sprintf("%q (the program the command resolves to in zero serve's PATH, links resolved)", c.Program)
}
