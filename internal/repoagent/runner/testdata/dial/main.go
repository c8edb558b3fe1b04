// Command dial connects to the TCP address in its first argument and exits
// 0 if it could, 1 if not: a check for the isolation tests.
package main

import (
	"net"
	"os"
	"time"
)

func main() {
	c, err := net.DialTimeout("tcp", os.Args[1], 2*time.Second)
	if err != nil {
		os.Exit(1)
	}
	c.Close()
}
