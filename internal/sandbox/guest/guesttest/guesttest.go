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
// arguments. It is built with CGO_ENABLED=0 on the first call, into the
// user's cache folder (zero-guesttest/guest-helper there, replaced by
// each build, the same bytes each time): not under /tmp, which a Docker
// guest has of its own, so that a Docker image can hold it at its path.
func Helper(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		cache, err := os.UserCacheDir()
		if err != nil {
			buildErr = err
			return
		}
		dir := filepath.Join(cache, "zero-guesttest")
		if err = os.MkdirAll(dir, 0o755); err == nil {
			dir, err = filepath.EvalSymlinks(dir)
		}
		if err != nil {
			buildErr = err
			return
		}
		// Built under a name of its own, then moved into place: a test
		// binary running at the same time keeps a whole file.
		tmp, err := os.CreateTemp(dir, "build-")
		if err != nil {
			buildErr = err
			return
		}
		tmp.Close()
		defer os.Remove(tmp.Name())
		cmd := exec.Command("go", "build", "-trimpath", "-o", tmp.Name(), "github.com/zero-dev/zero/internal/sandbox/guest/guesttest/helper")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if buildOut, buildErr = cmd.CombinedOutput(); buildErr != nil {
			return
		}
		built = filepath.Join(dir, "guest-helper")
		buildErr = os.Rename(tmp.Name(), built)
	})
	if buildErr != nil {
		t.Fatalf("build the guest helper: %v\n%s", buildErr, buildOut)
	}
	return built
}
