package secrets

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSealOpensOnlyForItsSlot(t *testing.T) {
	box, err := LoadKey(filepath.Join(t.TempDir(), KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	slot := Slot{ServerID: 1, Kind: "env", Name: "API_KEY", Fingerprint: "sha256:aa"}
	sealed, err := box.Seal(slot, "hunter2-secret")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("hunter2")) {
		t.Fatal("the sealed secret holds its value in clear")
	}
	if got, err := box.Open(slot, sealed); err != nil || got != "hunter2-secret" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	for name, other := range map[string]Slot{
		"another fingerprint": {1, "env", "API_KEY", "sha256:bb"},
		"another server":      {2, "env", "API_KEY", "sha256:aa"},
		"another kind":        {1, "header", "API_KEY", "sha256:aa"},
		"another name":        {1, "env", "OTHER", "sha256:aa"},
	} {
		if _, err := box.Open(other, sealed); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: the secret opened (%v)", name, err)
		}
	}
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	if _, err := box.Open(slot, tampered); !errors.Is(err, ErrOpen) {
		t.Error("an altered secret opened")
	}
}

func TestKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), KeyFile)
	a, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	slot := Slot{1, "env", "K", "sha256:aa"}
	sealed, _ := a.Seal(slot, "v")
	b, err := LoadKey(path) // a restart reads the same key
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Open(slot, sealed); err != nil || got != "v" {
		t.Errorf("after reloading the key: %q, %v", got, err)
	}
	os.Chmod(path, 0o644)
	if _, err := LoadKey(path); !errors.Is(err, ErrKeyPermissions) {
		t.Errorf("a world-readable key was accepted: %v", err)
	}
	os.Chmod(path, 0o600)
	os.WriteFile(path, []byte("short"), 0o600)
	if _, err := LoadKey(path); err == nil {
		t.Error("a short key was accepted")
	}
	other, _ := New(bytes.Repeat([]byte{7}, 32))
	if _, err := other.Open(slot, sealed); !errors.Is(err, ErrOpen) {
		t.Error("a secret opened under another key")
	}
}

// TestPendingOpensOnlyForItsUserAndTime: values carried through a form open
// for the user they were sealed for, until they expire, and not altered.
func TestPendingOpensOnlyForItsUserAndTime(t *testing.T) {
	box, _ := New(bytes.Repeat([]byte{1}, 32))
	now := time.Unix(1_800_000_000, 0)
	field := box.SealPending(7, now.Add(time.Hour), []byte("API_KEY=v"))
	if strings.Contains(field, "API_KEY") {
		t.Fatal("the field holds the plain text")
	}
	if got, err := box.OpenPending(7, now, field); err != nil || string(got) != "API_KEY=v" {
		t.Fatalf("OpenPending = %q, %v", got, err)
	}
	if _, err := box.OpenPending(8, now, field); !errors.Is(err, ErrOpen) {
		t.Errorf("another user opened it: %v", err)
	}
	if _, err := box.OpenPending(7, now.Add(2*time.Hour), field); !errors.Is(err, ErrPendingExpired) {
		t.Errorf("it opened after expiring: %v", err)
	}
	unix, data, _ := strings.Cut(field, ".")
	later, _ := strconv.ParseInt(unix, 10, 64)
	if _, err := box.OpenPending(7, now, strconv.FormatInt(later+86400, 10)+"."+data); !errors.Is(err, ErrOpen) {
		t.Errorf("a postponed expiry opened: %v", err)
	}
	for _, bad := range []string{"", "x", "1.", "1.!!!", field[:len(field)-2]} {
		if _, err := box.OpenPending(7, now, bad); !errors.Is(err, ErrOpen) {
			t.Errorf("OpenPending(%q): %v", bad, err)
		}
	}
}
