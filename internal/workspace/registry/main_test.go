package registry

import (
	"os"
	"testing"

	"github.com/zero-dev/zero/internal/database/databasetest"
)

// TestMain runs the tests on SQLite, or on PostgreSQL under
// ZERO_TEST_DATABASE=postgres (see databasetest.Main).
func TestMain(m *testing.M) { os.Exit(databasetest.Main(m)) }
