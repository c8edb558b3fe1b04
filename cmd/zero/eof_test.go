package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAnswersAtEndOfInput: a client that writes its requests and closes
// its end at once (a pipe, a one-shot script) gets every answer, the slow
// ones included, before the server exits: `printf '%s\n' "$INITIALIZE" |
// zero mcp filesystem DIR` printed nothing before.
func TestAnswersAtEndOfInput(t *testing.T) {
	dir := t.TempDir()
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`
	const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	cases := []struct {
		name  string
		args  []string
		calls []string // after initialize and initialized
	}{
		{"filesystem", []string{"mcp", "filesystem", dir}, []string{
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_allowed_directories","arguments":{}}}`}},
		{"memory", []string{"mcp", "memory", "--memory-file", filepath.Join(dir, "memory.jsonl")}, []string{
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_graph","arguments":{}}}`}},
		{"shell, a call still running at the end of input", []string{"mcp", "shell", dir}, []string{
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_command","arguments":{"program":"sleep","args":["0.5"]}}}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`}},
		{"skills", []string{"mcp", "skills", "--workspace", dir}, []string{`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`}},
		{"fetch", []string{"mcp", "fetch"}, []string{`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(zeroBinary(t), tc.args...)
			cmd.Stdin = strings.NewReader(strings.Join(append([]string{initialize, initialized}, tc.calls...), "\n") + "\n")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("exit: %v\n%s", err, stderr.String())
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatal("the server did not exit after the end of its input")
			}
			ids := map[float64]bool{}
			for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
				var resp struct {
					ID     float64         `json:"id"`
					Result json.RawMessage `json:"result"`
				}
				if err := json.Unmarshal([]byte(line), &resp); err != nil || resp.Result == nil {
					t.Fatalf("not a result: %q (%v)", line, err)
				}
				ids[resp.ID] = true
			}
			for id := 1; id <= 1+len(tc.calls); id++ {
				if !ids[float64(id)] {
					t.Errorf("no answer to request %d; stdout:\n%s", id, stdout.String())
				}
			}
		})
	}
}
