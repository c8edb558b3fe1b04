package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zero-dev/zero/internal/guard/localhttp"
	"github.com/zero-dev/zero/internal/workspace"
	"github.com/zero-dev/zero/internal/workspace/servers"
)

func serversCommand() *Command {
	return &Command{
		Name:      "servers",
		UsageLine: "servers list|preview|add [flags]",
		Short:     "list, preview and add the workspace's MCP servers through its API, with a bearer token",
		Long: `Servers talks to a running zero serve with a bearer token, which the owner
creates in a browser session and saves in a file only they can read
($ZERO_HOME/cli-token unless --token-file names another).

	zero servers list
	zero servers preview --name N --command PROG [--arg A]... [--cwd DIR] [--env NAME]...
	zero servers preview --name N --kind http --url https://... [--header NAME]...
	zero servers add (same flags as preview)

Add saves the server unapproved and disabled, and prints the link where the
owner approves it in the browser: approval is never done with a token.
Secret values are not taken here; the owner sets them in the browser
session, with the edit route (PUT /api/servers/{id}), which approves too.

Flags:

	--addr ADDR        the workspace (default 127.0.0.1:7077)
	--token-file FILE  the bearer token (default $ZERO_HOME/cli-token)
`,
		Run: runServers,
	}
}

// repeated is a flag that may be given more than once.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func runServers(ctx context.Context, stdio Stdio, args []string) error {
	if len(args) == 0 {
		return usagef("want a subcommand: list, preview or add")
	}
	sub := args[0]
	fs := flag.NewFlagSet("zero servers "+sub, flag.ContinueOnError)
	addr := fs.String("addr", workspace.DefaultAddr, "the workspace's address")
	tokenFile := fs.String("token-file", "", "the bearer token's file")
	var c servers.Config
	var argv, env, headers repeated
	if sub == "preview" || sub == "add" {
		fs.StringVar(&c.Name, "name", "", "the server's name")
		fs.StringVar(&c.Kind, "kind", servers.KindStdio, "stdio, http or sse")
		fs.StringVar(&c.Command, "command", "", "stdio: the program")
		fs.Var(&argv, "arg", "stdio: an argument (repeat)")
		fs.StringVar(&c.Cwd, "cwd", "", "stdio: working directory, relative, inside the thread workspace")
		fs.Var(&env, "env", "stdio: an environment variable's name (repeat)")
		fs.StringVar(&c.URL, "url", "", "http, sse: the https URL")
		fs.Var(&headers, "header", "http, sse: a header's name (repeat)")
	}
	rest, err := parseFlags(fs, args[1:], stdio.Out, "usage: zero "+serversCommand().UsageLine+"\n\n"+serversCommand().Long)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected arguments %q", rest)
	}
	c.Args, c.Env, c.Headers = argv, env, headers
	if _, err := localhttp.CheckAddr(*addr, false); err != nil {
		return usagef("--addr: %v", err)
	}
	token, err := readToken(*tokenFile)
	if err != nil {
		return usagef("%v", err)
	}
	api := &apiClient{base: "http://" + *addr, token: token}
	switch sub {
	case "list":
		return listServers(ctx, api, stdio.Out)
	case "preview":
		var p servers.Preview
		if err := api.do(ctx, "POST", "/api/servers/preview", map[string]any{"config": c}, &p); err != nil {
			return err
		}
		printPreview(stdio.Out, p)
		return nil
	case "add":
		var res struct {
			Server     servers.Server `json:"server"`
			ApproveURL string         `json:"approve_url"`
		}
		if err := api.do(ctx, "POST", "/api/servers", map[string]any{"config": c}, &res); err != nil {
			return err
		}
		fmt.Fprintf(stdio.Out, "added server %d (%s), unapproved and disabled; nothing ran.\n", res.Server.ID, res.Server.Config.Name)
		fmt.Fprintf(stdio.Out, "fingerprint %s\napprove it in your browser: %s\n", res.Server.Fingerprint, res.ApproveURL)
		return nil
	}
	return usagef("unknown subcommand %q: want list, preview or add", sub)
}

// readToken reads a bearer token from a file only its owner may read.
func readToken(path string) (string, error) {
	if path == "" {
		home, err := zeroHome()
		if err != nil {
			return "", err
		}
		path = filepath.Join(home, "cli-token")
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w (create a token in a browser session, POST /api/tokens, and save it there)", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("token file %s may be read by others (mode %v); chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

type apiClient struct {
	base, token string
}

// do calls the API; an error answer becomes an error with its code.
func (a *apiClient) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("is zero serve running? %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		json.Unmarshal(data, &e)
		return fmt.Errorf("%s %s: %d %s: %s", method, path, resp.StatusCode, e.Error.Code, e.Error.Message)
	}
	return json.Unmarshal(data, out)
}

func listServers(ctx context.Context, api *apiClient, out io.Writer) error {
	var list []servers.Server
	if err := api.do(ctx, "GET", "/api/servers", nil, &list); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tKIND\tAPPROVED\tENABLED\tSTATUS\tTOOLS")
	for _, s := range list {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%t\t%t\t%s\t%d\n", s.ID, s.Config.Name, s.Config.Kind, s.Approved, s.Enabled, s.Status, len(s.Tools))
	}
	return tw.Flush()
}

func printPreview(out io.Writer, p servers.Preview) {
	c := p.Config
	fmt.Fprintf(out, "name:        %s\nkind:        %s\n", c.Name, c.Kind)
	if c.Kind == servers.KindStdio {
		fmt.Fprintf(out, "command:     %q\n", append([]string{c.Command}, c.Args...))
		fmt.Fprintf(out, "cwd:         %q\nenv names:   %q\n", c.Cwd, c.Env)
	} else {
		fmt.Fprintf(out, "url:         %s\nheaders:     %q\n", c.URL, c.Headers)
	}
	fmt.Fprintf(out, "fingerprint: %s\n", p.Fingerprint)
	for _, w := range p.Warnings {
		fmt.Fprintf(out, "warning (%s): %s\n", w.Severity, w.Message)
	}
}
