package cli

import (
	"flag"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/graphstore"
	"github.com/zero-dev/zero/internal/mcpserver/memory"
)

// mcpMemoryCommand serves the graph file named by --memory-file, else
// MEMORY_FILE_PATH, else memory.jsonl, relative to the working directory. A
// file that cannot be loaded, a corrupt one included, is a usage error:
// nothing is served and the file is left as it is.
func mcpMemoryCommand() *Command {
	return mcpServerCommand("memory", "[--memory-file FILE]",
		"a knowledge graph in a JSONL file (--memory-file, else $MEMORY_FILE_PATH, else ./memory.jsonl); plain text, not encrypted",
		`Memory keeps the reference server's knowledge graph in its JSONL format.
Every change is on disk before the tool answers; two processes sharing a
file lose nothing (FILE.lock). A corrupt file stops the server with the line
and byte, and is never rewritten.
`,
		func(fs *flag.FlagSet) configureFunc {
			file := fs.String("memory-file", "", "the knowledge graph's JSONL `FILE` (default $MEMORY_FILE_PATH, else memory.jsonl)")
			return func(args []string, stdio Stdio) (*mcp.Server, func() error, error) {
				if len(args) > 0 {
					return nil, nil, usagef("unexpected arguments %q; give the file with --memory-file", args)
				}
				wd, err := os.Getwd()
				if err != nil {
					return nil, nil, usagef("the working directory is unknown: %v", err)
				}
				store, err := graphstore.Open(memory.FilePath(*file, os.Getenv("MEMORY_FILE_PATH"), wd))
				if err != nil {
					return nil, nil, usagef("%v", err)
				}
				return memory.New(store, stdio.Err), store.Close, nil
			}
		})
}
