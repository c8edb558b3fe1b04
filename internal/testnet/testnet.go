// Package testnet gives tests a TCP listener on the host's loopback that
// counts the connections it accepts, to prove that something did, or did
// not, reach the network. It is for tests only.
package testnet

import (
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// A Listener accepts and closes connections on 127.0.0.1 until the test
// ends, counting them.
type Listener struct {
	Addr     string // host:port
	Port     string
	ln       net.Listener
	accepted atomic.Int32
}

// Listen starts a counting listener, closed when the test ends.
func Listen(t testing.TB) *Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &Listener{Addr: ln.Addr().String(), Port: strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), ln: ln}
	t.Cleanup(l.Close)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accepted.Add(1)
			c.Close()
		}
	}()
	return l
}

// Close stops accepting.
func (l *Listener) Close() { l.ln.Close() }

// Accepted is how many connections were accepted so far.
func (l *Listener) Accepted() int32 { return l.accepted.Load() }

// WaitAccepted waits up to d for at least n connections, and returns how
// many were accepted: a client's connect can return before the listener's
// Accept does.
func (l *Listener) WaitAccepted(n int32, d time.Duration) int32 {
	for deadline := time.Now().Add(d); l.Accepted() < n && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	return l.Accepted()
}

// ClosedAddr returns a host:port on 127.0.0.1 where nothing listens: a
// port the system gave a listener, closed again. A connection to it is
// refused at once.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
