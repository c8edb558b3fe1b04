package cli

import (
	"flag"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/mcpserver/skills"
)

func mcpSkillsCommand() *Command {
	return mcpServerCommand("skills", "[--workspace DIR]",
		"discover and read Agent Skills in a workspace (default: the working directory); never runs them",
		`Skills finds Agent Skills, folders with a SKILL.md, in
`+strings.Join(wrap(skills.Where, helpWidth), "\n")+`
(of two of one name, the one found first is used), returns their
instructions and resource paths, flags hidden content, and never runs
anything.
`,
		func(fs *flag.FlagSet) configureFunc {
			workspace := fs.String("workspace", "", "the workspace `DIR` holding the skills (default: the working directory)")
			return func(args []string, stdio Stdio) (*mcp.Server, func() error, error) {
				roots, err := openWorkspace(*workspace, args)
				if err != nil {
					return nil, nil, err
				}
				return skills.New(roots, stdio.Err), roots.Close, nil
			}
		})
}

// openWorkspace opens the workspace --workspace names, or the working
// directory; a server that takes it takes no positional arguments.
func openWorkspace(workspace string, args []string) (*fsroot.Set, error) {
	if len(args) > 0 {
		return nil, usagef("unexpected arguments %q; give the workspace with --workspace", args)
	}
	var dirs []string
	if workspace != "" {
		dirs = []string{workspace}
	}
	return openRoots(dirs)
}
