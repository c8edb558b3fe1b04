// Command zero is Zero's single binary: MCP servers, the workspace and Agent
// Zero. Everything it does lives in internal/cli and below.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/zero-dev/zero/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
