package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/graphstore"
	"github.com/zero-dev/zero/internal/mcpserver/memory"
)

// mcpMemoryCommand serves the graph file named by --memory-file, else
// MEMORY_FILE_PATH, else memory.jsonl, relative to the working directory.
//
// A path no graph can be kept at (a directory, a missing directory, a file
// it cannot read) is a usage error: nothing is served. A file with a line
// that does not read is served anyway, so that the client is told why
// rather than seeing the connection close: the error goes to stderr, every
// call answers with it until the line is fixed, and the file is left as it
// is. If it is still not fixed when the server stops, the command ends as
// it would have at the start, with the usage error.
func mcpMemoryCommand() *Command {
	return mcpServerCommand("memory", "[--memory-file FILE]",
		"a knowledge graph in a JSONL file (--memory-file, else $MEMORY_FILE_PATH, else ./memory.jsonl); plain text, not encrypted",
		`Memory keeps the reference server's knowledge graph in its JSONL format.
Every change is on disk before the tool answers; two processes sharing a
file lose nothing (FILE.lock). A corrupt file is never rewritten: the server
starts, and every call answers with the line and byte to fix until the file
is fixed. If it is still corrupt when the server stops, the exit code is 2.
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
				store, err := graphstore.OpenEvenIfCorrupt(memory.FilePath(*file, os.Getenv("MEMORY_FILE_PATH"), wd))
				if err != nil {
					return nil, nil, usagef("%v", err)
				}
				loadErr := store.Check()
				if loadErr != nil {
					fmt.Fprintf(stdio.Err, "zero mcp memory: %v\nzero mcp memory: serving anyway: every call answers with this error until the file is fixed\n", loadErr)
				}
				closeStore := func() error {
					err := store.Close()
					var ce *graphstore.CorruptError
					if loadErr != nil && errors.As(err, &ce) {
						return usagef("%v", ce)
					}
					return err
				}
				return memory.New(store, stdio.Err), closeStore, nil
			}
		})
}
