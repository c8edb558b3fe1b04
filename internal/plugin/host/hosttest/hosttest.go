// Package hosttest is for tests that run plugins: Require skips a test
// where they cannot run, or fails it where the environment says they must.
package hosttest

import (
	"os"
	"testing"

	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/plugin/host"
)

// Require returns the node that runs plugins here, after checking that
// bubblewrap and cgroup limits work. Where one of them is missing it skips
// t, unless ZERO_REQUIRE_BWRAP (bubblewrap, limits) or ZERO_REQUIRE_NODE
// (node) is set, as in CI: then it fails t.
func Require(t testing.TB) host.Node {
	t.Helper()
	skip := func(env string, err error) {
		if os.Getenv(env) != "" {
			t.Fatalf("%s is set but plugins cannot run here: %v", env, err)
		}
		t.Skipf("plugins cannot run here: %v", err)
	}
	if err := spawn.IsolationAvailable(); err != nil {
		skip("ZERO_REQUIRE_BWRAP", err)
	}
	if err := spawn.LimitsAvailable(); err != nil {
		skip("ZERO_REQUIRE_BWRAP", err)
	}
	node, err := host.FindNode(t.Context(), "node")
	if err != nil {
		skip("ZERO_REQUIRE_NODE", err)
	}
	return node
}
