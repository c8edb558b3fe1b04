// Command fakenpx is the registry tests' stand-in for npx: the test-only
// runtime hint (registry.DeriveOptions.Runtimes["npx"]) points at it, so
// that an npm entry's derived command, npx -y NAME@VERSION ARGS..., runs
// with no network and no Node. It accepts exactly that shape, with the
// one package it knows (@zero-test/filesystem@1.0.0) and one argument, a
// folder, and then is `zero mcp filesystem FOLDER`; anything else exits 2
// saying what it got, so a test sees a derivation that went wrong.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/zero-dev/zero/internal/cli"
)

// Package is the one package fakenpx runs.
const Package = "@zero-test/filesystem@1.0.0"

func main() {
	args := os.Args[1:]
	if len(args) != 3 || args[0] != "-y" || args[1] != Package {
		fmt.Fprintf(os.Stderr, "fakenpx: want -y %s FOLDER, got %q\n", Package, args)
		os.Exit(2)
	}
	os.Exit(cli.Main(context.Background(), []string{"mcp", "filesystem", args[2]}, cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}
