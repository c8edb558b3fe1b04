package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, Stdio{In: io.NopCloser(strings.NewReader("")), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

// TestExitCodes checks that bad input fails before serving, with exit code
// 2, a message on stderr, and nothing on stdout (which belongs to JSON-RPC).
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	corrupt := filepath.Join(dir, "corrupt.jsonl")
	os.WriteFile(corrupt, []byte(`{"type":"entity","name":"a","entityType":"t","observations":[]}`+"\n{oops\n"), 0o600)
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, 2, "Usage:"},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"mcp"}, 2, "missing server"},
		{[]string{"mcp", "nope"}, 2, `unknown server "nope"`},
		{[]string{"mcp", "memory", "m.jsonl"}, 2, "give the file with --memory-file"},
		{[]string{"mcp", "memory", "--memory-file", corrupt}, 2, "line 2"},
		{[]string{"mcp", "fetch", "http://x"}, 2, "unexpected arguments"},
		{[]string{"mcp", "fetch", "--user-agent", " "}, 2, "--user-agent must not be empty"},
		{[]string{"mcp", "fetch", "--allow-private-networks", "10.0.0.0/8"}, 2, "needs --block-private-networks"},
		{[]string{"mcp", "fetch", "--block-private-networks", "--allow-private-networks", "nonsense"}, 2, "--allow-private-networks"},
		{[]string{"mcp", "fetch", "--isolate"}, 2, "flag --isolate belongs to 'zero mcp shell'"},
		{[]string{"mcp", "filesystem", "--user-agent", "x", dir}, 2, "flag --user-agent belongs to 'zero mcp fetch'"},
		{[]string{"mcp", "shell", "--timeout", "0s", dir}, 2, "--timeout must be positive"},
		{[]string{"mcp", "shell", "--timeout", "2m", "--max-timeout", "1m", dir}, 2, "shorter than --timeout"},
		{[]string{"mcp", "shell", "--timeout", "soon", dir}, 2, "invalid value"},
		{[]string{"mcp", "shell", filepath.Join(dir, "missing")}, 2, "no such file or directory"},
		{[]string{"mcp", "skills", dir}, 2, "give the workspace with --workspace"},
		{[]string{"mcp", "skills", "--workspace", file}, 2, "not a directory"},
		{[]string{"mcp", "skills", "--isolate"}, 2, "flag --isolate belongs to 'zero mcp shell'"},
		{[]string{"mcp", "agents"}, 2, "not built yet"},
		{[]string{"mcp", "filesystem", "--memory-file", "m.jsonl", dir}, 2, "flag --memory-file belongs to 'zero mcp memory'"},
		{[]string{"mcp", "filesystem", dir, "--isolate"}, 2, "flag --isolate belongs to 'zero mcp shell'"},
		{[]string{"mcp", "filesystem", "--bogus", dir}, 2, "unknown flag --bogus"},
		{[]string{"mcp", "filesystem", filepath.Join(dir, "missing")}, 2, "no such file or directory"},
		{[]string{"mcp", "filesystem", file}, 2, "not a directory"},
		{[]string{"mcp", "filesystem", dir, filepath.Join(dir, "missing")}, 2, "missing"},
		{[]string{"mcp", "filesystem", "--http", "0.0.0.0:0", dir}, 2, "not a loopback address"},
		{[]string{"mcp", "filesystem", "--http", "example.com:80", dir}, 2, "not a loopback address"},
		{[]string{"mcp", "filesystem", "--http", "nonsense", dir}, 2, "want host:port"},
		{[]string{"mcp", "filesystem", "--allow-remote", dir}, 2, "--allow-remote needs --http"},
		{[]string{"version", "x"}, 2, "takes no arguments"},
		{[]string{"help", "nope"}, 2, "unknown command"},
	}
	for _, tt := range tests {
		code, stdout, stderr := run(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("zero %q: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, tt.code, tt.stderr)
		}
		if stdout != "" {
			t.Errorf("zero %q wrote to stdout: %q", tt.args, stdout)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"help"}, "zero <command>"},
		{[]string{"--help"}, "zero <command>"},
		{[]string{"help", "mcp"}, "--allow-remote"},
		{[]string{"mcp", "--help"}, "filesystem"},
		{[]string{"mcp", "filesystem", "-h"}, "usage: zero mcp filesystem"},
		{[]string{"version"}, "zero "},
	}
	for _, tt := range tests {
		code, stdout, stderr := run(t, tt.args...)
		if code != 0 || !strings.Contains(stdout, tt.want) || stderr != "" {
			t.Errorf("zero %q: exit %d, stdout %q, stderr %q", tt.args, code, stdout, stderr)
		}
	}
}

func TestParseFlagsInterspersed(t *testing.T) {
	code, _, stderr := run(t, "mcp", "filesystem", t.TempDir(), "--http", "0.0.0.0:1")
	if code != 2 || !strings.Contains(stderr, "loopback") {
		t.Errorf("a flag after the directory was not parsed: exit %d %q", code, stderr)
	}
}
