// Package testref starts, for tests, the reference MCP servers that npm
// installs in the checkout's node folder (npm ci --prefix node), so that a
// test can require Zero to read, write and answer as they do. Without node or
// the package the test skips, or fails when ZERO_REQUIRE_NODE is set. Only
// tests import it.
package testref

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Memory runs the reference memory server on the file at path and returns a
// session to it, closed when the test ends.
func Memory(t testing.TB, path string) *mcp.ClientSession {
	t.Helper()
	cmd := command(t, "@modelcontextprotocol/server-memory/dist/index.js")
	cmd.Env = []string{"MEMORY_FILE_PATH=" + path, "PATH=" + os.Getenv("PATH")}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: "testref", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start the reference server: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// command returns node running script, a path under node/node_modules. It
// skips the test when either is missing, unless ZERO_REQUIRE_NODE is set.
func command(t testing.TB, script string) *exec.Cmd {
	t.Helper()
	node, err := exec.LookPath("node")
	var root string
	if err == nil {
		root, err = moduleRoot()
	}
	path := filepath.Join(root, "node", "node_modules", filepath.FromSlash(script))
	if err == nil {
		_, err = os.Stat(path)
	}
	if err != nil {
		if os.Getenv("ZERO_REQUIRE_NODE") != "" {
			t.Fatalf("the reference server is required (ZERO_REQUIRE_NODE): %v", err)
		}
		t.Skipf("the reference server is not available: %v", err)
	}
	return exec.Command(node, path)
}

// moduleRoot is the nearest directory holding go.mod, from the test's
// working directory (its package's) up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
