package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zero-dev/zero/internal/workspace/passkeys/passkeytest"
)

// TestLoginResetPasskeys: zero login --reset-passkeys refuses while zero
// serve runs on the home; with it stopped, it removes the owner's passkey
// and the setting, says how many, and records passkey.reset in an audit
// log that still verifies; served again, approvals need no passkey.
func TestLoginResetPasskeys(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	p := startServeIn(t, home, nil)
	browser, headers := owner(t, p, p.link)
	key := passkeytest.New(p.base)
	var begin struct {
		Nonce   string          `json:"nonce"`
		Options json.RawMessage `json:"options"`
	}
	getJSON(t, browser, "POST", p.base+"/api/passkeys/registrations", map[string]any{}, headers, &begin)
	cred, err := key.Create(begin.Options)
	if err != nil {
		t.Fatal(err)
	}
	var pk struct{ ID int64 }
	getJSON(t, browser, "POST", p.base+"/api/passkeys", map[string]any{"nonce": begin.Nonce, "name": "key", "credential": json.RawMessage(cred)}, headers, &pk)

	if _, stderr, code := zeroIn(t, home, "login", "--reset-passkeys"); code != 1 || !strings.Contains(stderr, "stop it") {
		t.Fatalf("a reset while zero serve runs: exit %d, %q", code, stderr)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
	if _, stderr, code := zeroIn(t, home, "login", "--reset-passkeys"); code != 0 || !strings.Contains(stderr, "Removed 1 passkeys") {
		t.Fatalf("the reset: exit %d, %q", code, stderr)
	}
	log, err := os.ReadFile(filepath.Join(home, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"passkey.reset"`) || !strings.Contains(last, `"shell"`) {
		t.Errorf("the audit log's last record: %s", last)
	}
	if _, stderr, code := zeroIn(t, home, "audit", "verify"); code != 0 {
		t.Errorf("zero audit verify after the reset: exit %d, %s", code, stderr)
	}

	p = startServeIn(t, home, nil)
	browser, headers = owner(t, p, p.link)
	var list struct {
		Passkeys []any `json:"passkeys"`
		Required bool  `json:"required"`
	}
	getJSON(t, browser, "GET", p.base+"/api/passkeys", nil, headers, &list)
	if len(list.Passkeys) != 0 || list.Required {
		t.Errorf("after the reset: %+v", list)
	}
}
