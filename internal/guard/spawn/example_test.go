package spawn_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/spawn"
)

// Start a long-running child and talk to it over its pipes. An MCP server
// is talked to the same way, through
// mcp.IOTransport{Reader: p.Stdout, Writer: p.Stdin}.
func ExampleStart() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	roots, err := fsroot.Open([]string{dir})
	if err != nil {
		log.Fatal(err)
	}
	defer roots.Close()

	p, err := spawn.Start(context.Background(), spawn.Cmd{Program: "cat", Roots: roots, Dir: dir, Timeout: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	io.WriteString(p.Stdin, "hello\n")
	line, _ := bufio.NewReader(p.Stdout).ReadString('\n')
	fmt.Print(line)

	res, err := p.Stop() // cat exits at end of file on stdin
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("exit code", res.ExitCode)
	// Output:
	// hello
	// exit code 0
}
