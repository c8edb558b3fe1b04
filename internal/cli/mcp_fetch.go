package cli

import (
	"flag"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/mcpserver/fetch"
)

func mcpFetchCommand() *Command {
	return mcpServerCommand("fetch", "[--user-agent UA] [--respect-robots-txt] [--block-private-networks [--allow-private-networks LIST]]",
		"fetch web pages as Markdown; by default it can reach loopback and private addresses (no SSRF protection)",
		`Fetch gets http and https URLs for the model and turns HTML into Markdown.
By default it can reach loopback, link-local and private addresses: there is
no SSRF protection unless --block-private-networks is given. Every request
has a 30-second timeout, and bodies are capped at 10 MiB.
`,
		func(fs *flag.FlagSet) configureFunc {
			userAgent := fs.String("user-agent", fetch.DefaultUserAgent, "the User-Agent header `UA` of every request")
			robots := fs.Bool("respect-robots-txt", false, "check robots.txt before each tool fetch (the prompt never does)")
			block := fs.Bool("block-private-networks", false, "refuse loopback, private, link-local and metadata addresses, checked at connect time and on every redirect")
			allow := fs.String("allow-private-networks", "", "with --block-private-networks: `LIST` is the comma-separated addresses or prefixes still allowed")
			return func(args []string, stdio Stdio) (*mcp.Server, func() error, error) {
				if len(args) > 0 {
					return nil, nil, usagef("unexpected arguments %q", args)
				}
				if strings.TrimSpace(*userAgent) == "" {
					return nil, nil, usagef("--user-agent must not be empty")
				}
				opts := fetch.Options{UserAgent: *userAgent, RespectRobots: *robots, BlockPrivate: *block}
				if *allow != "" {
					if !*block {
						return nil, nil, usagef("--allow-private-networks needs --block-private-networks")
					}
					prefixes, err := netguard.ParseAllow(*allow)
					if err != nil {
						return nil, nil, usagef("--allow-private-networks: %v", err)
					}
					opts.Allow = prefixes
				}
				return fetch.New(opts, stdio.Err), func() error { return nil }, nil
			}
		})
}
