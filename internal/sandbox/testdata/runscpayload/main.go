// Command runscpayload is the static program the sandbox tests run in a
// guest: its first argument says what to try, and it prints what happened.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: runscpayload true|dial ADDR|read PATH|write PATH|env|id|alloc MIB|spawn N|hold|cat|sleep|ifaces")
	}
	arg := func(i int) string {
		if len(os.Args) <= i {
			fail("missing argument")
		}
		return os.Args[i]
	}
	switch os.Args[1] {
	case "true":
	case "dial": // connect to a TCP address
		c, err := net.DialTimeout("tcp", arg(2), 2*time.Second)
		if err != nil {
			fail("dial: %v", err)
		}
		c.Close()
		fmt.Println("connected")
	case "read": // print a file
		b, err := os.ReadFile(arg(2))
		if err != nil {
			fail("read: %v", err)
		}
		os.Stdout.Write(b)
	case "write": // write "written" to a file
		if err := os.WriteFile(arg(2), []byte("written"), 0o644); err != nil {
			fail("write: %v", err)
		}
		fmt.Println("wrote")
	case "env":
		for _, kv := range os.Environ() {
			fmt.Println(kv)
		}
	case "id":
		fmt.Println(os.Getuid(), os.Getgid())
	case "alloc": // touch MIB mebibytes, one at a time
		n, _ := strconv.Atoi(arg(2))
		var keep [][]byte
		for i := 0; i < n; i++ {
			b := make([]byte, 1<<20)
			for j := range b {
				b[j] = byte(j)
			}
			keep = append(keep, b)
		}
		fmt.Println("allocated", len(keep))
	case "spawn": // start up to N children that live until this ends
		n, _ := strconv.Atoi(arg(2))
		started := 0
		var err error
		for ; started < n; started++ {
			c := exec.Command(os.Args[0], "hold")
			if _, err = c.StdinPipe(); err != nil {
				break
			}
			if err = c.Start(); err != nil {
				break
			}
		}
		fmt.Println("started", started, err)
	case "ifaces": // print the network interfaces' names
		ifs, err := net.Interfaces()
		if err != nil {
			fail("interfaces: %v", err)
		}
		for _, i := range ifs {
			fmt.Println(i.Name)
		}
	case "cat": // copy stdin to stdout
		io.Copy(os.Stdout, os.Stdin)
	case "sleep": // never end
		time.Sleep(time.Hour)
	case "hold": // live until stdin closes
		var b [1]byte
		os.Stdin.Read(b[:])
	default:
		fail("unknown %q", os.Args[1])
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}
