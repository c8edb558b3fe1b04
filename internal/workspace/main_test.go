package workspace

import (
	"os"
	"testing"

	"github.com/zero-dev/zero/internal/database/databasetest"
	"github.com/zero-dev/zero/internal/sandbox/dockertest"
)

// TestMain runs the tests on SQLite, or on PostgreSQL under
// ZERO_TEST_DATABASE=postgres (see databasetest.Main), then stops the
// Docker daemon a test started, if one did.
func TestMain(m *testing.M) {
	code := databasetest.Main(m)
	dockertest.Stop()
	os.Exit(code)
}
