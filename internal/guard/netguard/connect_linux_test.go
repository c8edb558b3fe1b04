package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// TestConnectTimeout: ConnectTimeout bounds the dial alone. A listener whose
// accept queue is full drops new connections' SYNs, so connecting to it
// hangs; the client gives up at ConnectTimeout, not at Timeout.
func TestConnectTimeout(t *testing.T) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil { // never accepted
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + itoa(sa.(*syscall.SockaddrInet4).Port)
	// Fill the accept queue; the next connection's SYN is dropped.
	for range 4 {
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err != nil {
			break
		}
		defer c.Close()
	}
	client := NewClient(Options{Timeout: time.Minute, ConnectTimeout: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
	_, err = client.Do(req)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || ctx.Err() != nil {
		t.Fatalf("connecting to a listener that never answers: %v (context: %v); want the dial's own timeout", err, ctx.Err())
	}
}
