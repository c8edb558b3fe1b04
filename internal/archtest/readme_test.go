package archtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCIRunsTheREADMECommands checks that the README's first screen names
// the two commands for a fresh machine, and that .ci/run ends by running the
// README's test command. (cmd/zero's TestREADMEFirstScreen runs the first.)
func TestCIRunsTheREADMECommands(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(moduleRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	firstScreen := strings.Join(strings.SplitN(string(readme), "\n", 25)[:24], "\n")
	for _, cmd := range []string{`go install -v ./cmd/zero && "$(go env GOPATH)/bin/zero" serve`, "scripts/test"} {
		if !strings.Contains(firstScreen, "\n"+cmd) {
			t.Errorf("README's first screen lacks the command %q", cmd)
		}
	}
	ci, err := os.ReadFile(filepath.Join(moduleRoot, ".ci/run"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(ci)), "\n")
	if last := lines[len(lines)-1]; last != "scripts/test" {
		t.Errorf(".ci/run ends with %q, want the README's test command scripts/test", last)
	}
	for _, f := range []string{"scripts/test", ".ci/run"} {
		fi, err := os.Stat(filepath.Join(moduleRoot, f))
		if err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable: %v", f, err)
		}
	}
}
