package cli

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/gitsource"
	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/localhttp"
	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/workspace"
	"github.com/zero-dev/zero/internal/workspace/servers"
)

func serveCommand() *Command {
	fs := flag.NewFlagSet("zero serve", flag.ContinueOnError)
	addr := fs.String("addr", workspace.DefaultAddr, "listen on `ADDR`, a loopback address")
	team := fs.Bool("team", false, "several users with roles (owner, member, viewer)")
	localCA := fs.String("local-ca", "", "trust the CA certificates in PEM `FILE`, besides the system's, for the origins in ZERO_ALLOWED_LOCAL_ORIGINS only")
	dbURL := fs.String("database", "", "keep the state and the audit log in the PostgreSQL database `URL` (postgres://...; or ZERO_DATABASE_URL), which replicas share")
	return &Command{
		Name:      "serve",
		UsageLine: "serve [--addr 127.0.0.1:7077] [--team] [--local-ca FILE] [--database URL]",
		Short:     "run the workspace: MCP servers behind approval, locally",
		Long: `Serve runs the workspace: a web UI and a JSON API on a loopback
address, with its database, secrets key and audit log under $ZERO_HOME
(default ~/.zero). It prints a one-time login link: open it in your browser
to get a session; 'zero login' prints a new one while it runs. Agents and
scripts use bearer tokens, which the owner creates in a browser session;
approvals are browser-only.

Whoever can read $ZERO_HOME is its owner: the directory holds the database
and the key that decrypts the secrets.

One zero serve runs per $ZERO_HOME: it holds $ZERO_HOME/serve.lock, which
names its URL, and a second one says where the first runs and exits 1. On
an address another program holds, it exits 1 before it creates anything,
naming a free port to give --addr.

Secrets are sealed with $ZERO_HOME/secrets.key, made at the first start, or
with the key ZERO_SECRETS_KEY_FILE names (32 bytes, mode 0600), which must
exist: replicas that share a database share that key.

With --database (or ZERO_DATABASE_URL, which keeps a password out of the
process list), users, sessions, tokens, servers, approvals, tool sets,
sealed secrets, threads and the audit log are in that PostgreSQL database,
and several zero serve replicas, each with its own $ZERO_HOME, share them.
Give every replica the same ZERO_SECRETS_KEY_FILE. See docs/scale-out.md
for what replicas do not share.

Skills are added from GitHub (ZERO_GITHUB_URL for another host, such as
GitHub Enterprise), with the token in GH_TOKEN or GITHUB_TOKEN, or gh's own
(gh auth token) when gh is installed; it is sent to that host only.

Servers are added from the MCP Registry at
https://registry.modelcontextprotocol.io, or at the registry
ZERO_REGISTRY_URL names (https, or http to loopback), such as a company's
sub-registry.

HTTP MCP servers on loopback, private or link-local hosts are refused unless
their origin is listed in ZERO_ALLOWED_LOCAL_ORIGINS (comma-separated, such
as https://127.0.0.1:8443), an environment variable zero serve reads when it
starts. A local https server, or icon, with a certificate of its own is
trusted with --local-ca, for those origins only; every other https
connection (model providers, the skills' host) trusts the system's roots
alone.
`,
		Flag: fs,
		Run: func(ctx context.Context, stdio Stdio, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			if _, err := localhttp.CheckAddr(*addr, false); err != nil {
				return usagef("--addr: %v", err)
			}
			home, err := zeroHome()
			if err != nil {
				return usagef("%v", err)
			}
			origins, err := servers.ParseOrigins(os.Getenv("ZERO_ALLOWED_LOCAL_ORIGINS"))
			if err != nil {
				return usagef("ZERO_ALLOWED_LOCAL_ORIGINS: %v", err)
			}
			databaseURL := *dbURL
			if databaseURL == "" {
				databaseURL = os.Getenv("ZERO_DATABASE_URL")
			}
			if databaseURL != "" {
				if err := database.CheckPostgres(databaseURL); err != nil {
					return usagef("--database or ZERO_DATABASE_URL: %v", err)
				}
			}
			githubURL := os.Getenv("ZERO_GITHUB_URL")
			if githubURL != "" {
				if _, err := gitsource.CheckBaseURL(githubURL); err != nil {
					return usagef("ZERO_GITHUB_URL: %v", err)
				}
			}
			registryURL := os.Getenv("ZERO_REGISTRY_URL")
			if registryURL != "" {
				if err := workspace.CheckRegistryURL(registryURL); err != nil {
					return usagef("ZERO_REGISTRY_URL: %v", err)
				}
			}
			// Sandboxed threads' guests run this executable as their helper
			// ("zero guest ..."); without its path they have no file tools.
			helper, err := os.Executable()
			if err == nil {
				helper, err = filepath.EvalSymlinks(helper)
			}
			if err != nil {
				return fmt.Errorf("find zero's own executable, the sandbox's guest helper: %w", err)
			}
			return workspace.Serve(ctx, workspace.Options{Home: home, Team: *team, AllowedLocalOrigins: origins, LocalCAFile: *localCA,
				GOGC: os.Getenv("GOGC"), Stderr: stdio.Err, SecretsKeyFile: os.Getenv("ZERO_SECRETS_KEY_FILE"), DatabaseURL: databaseURL, GitHubURL: githubURL,
				RegistryURL: registryURL,
				GitHubToken: githubToken(ctx, home, githubURL), SandboxHelper: helper, SandboxHelperArgs: []string{guestWord},
				SandboxDockerHost: os.Getenv("DOCKER_HOST")}, *addr)
		},
	}
}

// githubToken is the token sent to the skills' git host: GH_TOKEN, else
// GITHUB_TOKEN, else what gh auth token prints for that host when gh is
// installed, else none.
func githubToken(ctx context.Context, home, baseURL string) string {
	for _, name := range []string{"GH_TOKEN", "GITHUB_TOKEN"} {
		if v := strings.TrimSpace(os.Getenv(name)); v != "" {
			return v
		}
	}
	host := "github.com"
	if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
		host = u.Hostname()
	}
	roots, err := fsroot.Open([]string{home})
	if err != nil {
		return ""
	}
	defer roots.Close()
	res, err := spawn.Run(ctx, spawn.Cmd{Program: "gh", Args: []string{"auth", "token", "--hostname", host}, Dir: ".", Roots: roots,
		Env: envscrub.Spec{Pass: []string{"GH_CONFIG_DIR", "XDG_CONFIG_HOME"}}, Timeout: 5 * time.Second, OutputLimit: 4096})
	if err != nil || res.ExitCode != 0 {
		return ""
	}
	return strings.TrimSpace(string(res.Stdout))
}
