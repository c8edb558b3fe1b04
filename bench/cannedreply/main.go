// Command cannedreply is a stand-in MCP server for benchmarks: it answers
// every request carrying an id with the same JSON-RPC result, read from a
// file, and does nothing else. Timing a client against it measures the
// client's own cost for replies of that size.
//
//	cannedreply RESULT.json
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cannedreply RESULT.json")
		os.Exit(2)
	}
	result, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	result = bytes.TrimSpace(result)
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		i := bytes.Index(line, []byte(`"id":`))
		if i < 0 {
			continue // a notification
		}
		j := i + len(`"id":`)
		k := j
		for k < len(line) && line[k] >= '0' && line[k] <= '9' {
			k++
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", line[j:k], result)
		out.Flush()
	}
}
