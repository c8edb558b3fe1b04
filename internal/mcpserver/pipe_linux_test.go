package mcpserver

import (
	"bufio"
	"context"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestServeGrowsStdoutPipe checks that a server on stdio widens a stdout
// pipe to replyPipeSize, so that a large reply goes out in one write.
func TestServeGrowsStdoutPipe(t *testing.T) {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	before, err := unix.FcntlInt(outW.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Skipf("F_GETPIPE_SZ: %v", err)
	}
	if before >= replyPipeSize {
		t.Fatalf("a new pipe already holds %d bytes; the test proves nothing", before)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, echoServer(), Options{Stdin: inR, Stdout: outW, Stderr: os.Stderr}) }()
	inW.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n")
	if _, err := bufio.NewReader(outR).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	after, err := unix.FcntlInt(outW.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	if after < replyPipeSize {
		t.Errorf("stdout pipe holds %d bytes while serving, want %d (it held %d before)", after, replyPipeSize, before)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
