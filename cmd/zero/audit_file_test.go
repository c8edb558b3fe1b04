package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/audit"
)

// TestAuditCheckpointAtStart: zero serve reads its audit log from the
// checkpoint on. A record before the checkpoint's, changed in place with
// its length kept, does not stop a start, and zero audit verify, which
// reads every record, names it; a change that moves the checkpoint's
// record stops the start, naming it.
func TestAuditCheckpointAtStart(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(home, "audit.log")
	l, err := audit.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	n := audit.CheckpointEvery + 10
	for i := range n {
		if _, err := l.AppendBatched(audit.Event{Actor: "token:1", Action: "tool.call", Target: fmt.Sprintf("server:%d", i+1)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Flush(); err != nil { // moves the checkpoint to the last record
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(log + ".checkpoint"); err != nil || !strings.HasPrefix(string(b), fmt.Sprintf(`{"seq":%d,`, n)) {
		t.Fatalf("checkpoint %q, %v", b, err)
	}
	edit := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(log)
		if err != nil || !strings.Contains(string(b), from) {
			t.Fatalf("%q not in the log: %v", from, err)
		}
		os.WriteFile(log, []byte(strings.Replace(string(b), from, to, 1)), 0o600)
	}
	verify := func() (string, int) {
		t.Helper()
		cmd := exec.Command(zeroBinary(t), "audit", "verify")
		cmd.Env = append(os.Environ(), "ZERO_HOME="+home)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	if out, code := verify(); code != 0 || !strings.Contains(out, fmt.Sprintf("%d records, chain and head intact; the checkpoint (record %d) is in place", n, n)) {
		t.Fatalf("zero audit verify of a whole log: exit %d\n%s", code, out)
	}

	edit(`"target":"server:3"`, `"target":"server:X"`)
	p := startServeIn(t, home, nil)
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
	if out, code := verify(); code != 1 || !strings.Contains(out, "record 3 (line 3) modified") {
		t.Errorf("zero audit verify of a record changed before the checkpoint: exit %d\n%s", code, out)
	}

	edit(`"target":"server:5"`, `"target":"server:55"`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, zeroBinary(t), "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "ZERO_HOME="+home)
	out, err := cmd.CombinedOutput()
	want := fmt.Sprintf("zero serve: audit log %s: record %d (line %d) modified: the checkpoint file names this record at byte", log, n, n)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), want) {
		t.Errorf("zero serve on a log whose checkpoint's record moved: %v\n%s\nwant: %s", err, out, want)
	}
}
