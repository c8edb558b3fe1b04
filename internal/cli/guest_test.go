package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGuestCommand: "zero guest" runs the guest helper (its JSON answers
// and exit codes), and no help names it.
func TestGuestCommand(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"guest", "read", "/etc/passwd"}, 1}, // outside /work: refused
		{[]string{"guest", "nope"}, 2},
	} {
		code, stdout, _ := run(t, tt.args...)
		var answer struct{ Error string }
		if err := json.Unmarshal([]byte(stdout), &answer); err != nil || code != tt.code || answer.Error == "" {
			t.Errorf("zero %q: exit %d (want %d), stdout %q", tt.args, code, tt.code, stdout)
		}
	}
	for _, args := range [][]string{{"help"}, {"--help"}} {
		if _, stdout, _ := run(t, args...); strings.Contains(stdout, "guest") {
			t.Errorf("zero %q names the hidden guest command:\n%s", args, stdout)
		}
	}
}
