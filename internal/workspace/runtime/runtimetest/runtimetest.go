// Package runtimetest builds the MCP server the tool runtime's tests run
// (runtime/testdata/toolserver, see its doc) and counts the child processes
// a test leaves behind. Only tests import it.
package runtimetest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	once sync.Once
	path string
	err  error
)

// Toolserver builds the test server once per test binary and returns the
// path of its executable, in a directory the operating system's temporary
// directory holds.
func Toolserver(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		var dir string
		if dir, err = os.MkdirTemp("", "zero-toolserver-"); err != nil {
			return
		}
		path = filepath.Join(dir, "toolserver")
		out, berr := exec.Command("go", "build", "-o", path, "github.com/zero-dev/zero/internal/workspace/runtime/testdata/toolserver").CombinedOutput()
		if berr != nil {
			err = errors.New(berr.Error() + "\n" + string(out))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// Children returns the process ids of the children of the test process
// but a Docker daemon a test started (dockertest),
// as /proc lists them; nil when there are none.
func Children(t testing.TB) []string {
	t.Helper()
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	var out []string
	for _, task := range tasks {
		data, rerr := os.ReadFile(task)
		if rerr != nil {
			t.Fatal(rerr)
		}
		for _, f := range bytes.Fields(data) {
			// A Docker daemon is a test's fixture (dockertest): Zero never
			// starts one.
			if comm, _ := os.ReadFile("/proc/" + string(f) + "/comm"); string(bytes.TrimSpace(comm)) != "dockerd" {
				out = append(out, string(f))
			}
		}
	}
	return out
}
