package cli

import (
	"flag"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/mcpserver/filesystem"
)

func mcpFilesystemCommand() *Command {
	return mcpServerCommand("filesystem", "[DIR...]",
		"read, write, edit, list and search files inside the allowed directories (default: the working directory)",
		`The arguments are the allowed directories; with none, it is the working
directory. Each must exist and be a readable directory. A client's MCP roots
can only narrow them.
`,
		func(*flag.FlagSet) configureFunc {
			return func(dirs []string, stdio Stdio) (*mcp.Server, func() error, error) {
				roots, err := openRoots(dirs)
				if err != nil {
					return nil, nil, err
				}
				return filesystem.New(roots, stdio.Err), roots.Close, nil
			}
		})
}
