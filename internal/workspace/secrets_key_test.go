package workspace

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/database/databasetest"
	"github.com/zero-dev/zero/internal/workspace/secrets"
)

// TestSharedSecretsKey: with SecretsKeyFile (ZERO_SECRETS_KEY_FILE) the
// workspace seals with that key, which must exist and be its owner's only,
// and makes no key of its own; two homes given the same file open each
// other's sealed values, as replicas on one database must.
func TestSharedSecretsKey(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "shared.key")
	if _, err := Open(context.Background(), Options{Home: filepath.Join(dir, "a"), SecretsKeyFile: keyFile}); err == nil || !strings.Contains(err.Error(), "make it once") {
		t.Fatalf("a missing shared key: %v", err)
	}
	key := make([]byte, 32)
	rand.Read(key)
	os.WriteFile(keyFile, key, 0o644)
	if _, err := Open(context.Background(), Options{Home: filepath.Join(dir, "a"), SecretsKeyFile: keyFile}); err == nil {
		t.Fatal("a shared key others can read was taken")
	}
	os.Chmod(keyFile, 0o600)
	var boxes []*secrets.Box
	for _, home := range []string{"a", "b"} {
		ts := start(t, Options{Home: filepath.Join(dir, home), SecretsKeyFile: keyFile})
		if _, err := os.Stat(filepath.Join(ts.home, secrets.KeyFile)); err == nil {
			t.Errorf("home %s made a key of its own", home)
		}
		boxes = append(boxes, ts.w.box)
	}
	slot := secrets.Slot{ServerID: 1, Kind: "env", Name: "API_KEY", Fingerprint: "sha256:f"}
	sealed, err := boxes[0].Seal(slot, "value")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := boxes[1].Open(slot, sealed); err != nil || v != "value" {
		t.Errorf("the other replica opens %q %v", v, err)
	}
}

// TestAnotherSecretsKey: a workspace whose key is not the one its
// database's secrets are sealed with is refused on PostgreSQL (a replica
// given another ZERO_SECRETS_KEY_FILE), saying which key, before it seals or
// fails to open anything, and the right key opens it again; on SQLite (a
// secrets.key lost and made again) it opens with a warning naming the key.
func TestAnotherSecretsKey(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	o := Options{Home: home, DatabaseURL: databasetest.For(t, home)}
	w, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	keyPath := filepath.Join(home, secrets.KeyFile)
	good, _ := os.ReadFile(keyPath)
	other := make([]byte, 32)
	rand.Read(other)
	os.WriteFile(keyPath, other, 0o600)
	var stderr strings.Builder
	o.Stderr = &stderr
	w, err = Open(context.Background(), o)
	if o.DatabaseURL == "" {
		if err != nil || !strings.Contains(stderr.String(), "warning: the secrets key "+keyPath) {
			t.Fatalf("another key on SQLite: %v, stderr %q", err, stderr.String())
		}
		w.Close()
		return
	}
	if err == nil || !strings.Contains(err.Error(), keyPath) || !strings.Contains(err.Error(), "ZERO_SECRETS_KEY_FILE") {
		t.Fatalf("another key on PostgreSQL: %v", err)
	}
	os.WriteFile(keyPath, good, 0o600)
	w, err = Open(context.Background(), o)
	if err != nil {
		t.Fatalf("the right key again: %v", err)
	}
	w.Close()
}
