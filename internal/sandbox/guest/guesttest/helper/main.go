// Command helper is the guest helper for tests: guest.Main, as "zero guest"
// runs it, in a small static program that guesttest.Helper builds.
package main

import (
	"os"

	"github.com/zero-dev/zero/internal/sandbox/guest"
)

func main() {
	os.Exit(guest.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
