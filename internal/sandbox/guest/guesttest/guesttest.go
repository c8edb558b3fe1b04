// Package guesttest is for tests that run the guest helper in a guest:
// Helper builds it once per test binary, static, so that every backend
// (runsc, a Docker image FROM scratch) can run it.
package guesttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	once     sync.Once
	built    string
	buildErr error
	buildOut []byte
)

// Helper returns the host path (absolute, canonical) of the guest helper, a
// program that runs guest.Main on its arguments: it takes no prefix
// arguments. It is built with CGO_ENABLED=0 on the first call, into a
// temporary folder that outlives the test binary (one small file a run).
func Helper(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		dir, err := os.MkdirTemp("", "zero-guesttest-")
		if err == nil {
			dir, err = filepath.EvalSymlinks(dir)
		}
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "guest-helper")
		cmd := exec.Command("go", "build", "-trimpath", "-o", built, "github.com/zero-dev/zero/internal/sandbox/guest/guesttest/helper")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build the guest helper: %v\n%s", buildErr, buildOut)
	}
	return built
}
