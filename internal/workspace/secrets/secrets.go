// Package secrets guards the workspace's stored secrets (MCP servers'
// environment and header values): it seals them with AES-256-GCM under a key
// kept in a file of its own (mode 0600) under $ZERO_HOME, and binds each one
// to the fingerprint of the configuration it was approved for, so that a
// secret opens only for that exact configuration.
//
// What this protects: a copy of the database alone (a backup, a synced
// folder) reveals no secret, and a secret cannot be released to a changed
// configuration. What it does not: anyone who can read both the database
// and the key file, any process running as the same user, can decrypt them.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// KeyFile is the key's file name under $ZERO_HOME.
const KeyFile = "secrets.key"

const keySize = 32

// ErrKeyPermissions reports a key file that others than its owner may read
// or write.
var ErrKeyPermissions = errors.New("the secrets key file must be readable and writable by its owner only (mode 0600)")

// ErrOpen reports a secret that does not open: it was sealed for another
// configuration, another secret slot, or under another key, or it was
// altered.
var ErrOpen = errors.New("secret does not open for this configuration")

// A Box seals and opens secrets.
type Box struct {
	aead cipher.AEAD
}

// LoadKey reads the key at path, creating it (mode 0600, exclusively) if
// there is none. A key file with wider permissions, or of the wrong size,
// is refused.
func LoadKey(path string) (*Box, error) {
	key, err := readKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		key, err = createKey(path)
	}
	if err != nil {
		return nil, err
	}
	return New(key)
}

// OpenKey reads the key at path, which must be there: a key every
// replica of a workspace shares (ZERO_SECRETS_KEY_FILE) is made once, by
// its operator, never by one replica alone. A key file with wider
// permissions, or of the wrong size, is refused.
func OpenKey(path string) (*Box, error) {
	key, err := readKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("the secrets key %s is not there: make it once, %d random bytes, mode 0600 (head -c %d /dev/urandom > FILE; chmod 600 FILE), and give every replica the same", path, keySize, keySize)
	}
	if err != nil {
		return nil, err
	}
	return New(key)
}

func readKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: %w", path, ErrKeyPermissions)
	}
	key := make([]byte, keySize+1)
	n, _ := f.Read(key)
	if n != keySize {
		return nil, fmt.Errorf("%s: want a %d-byte key, found %d bytes", path, keySize, n)
	}
	return key[:keySize], nil
}

func createKey(path string) ([]byte, error) {
	key := make([]byte, keySize)
	rand.Read(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create secrets key: %w", err)
	}
	_, err = f.Write(key)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("create secrets key: %w", err)
	}
	return key, nil
}

// New returns a box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != keySize {
		return nil, fmt.Errorf("want a %d-byte key, got %d", keySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// A Slot names where a secret belongs: its server, its kind (env or
// header), its name, and the fingerprint of the configuration approved to
// receive it. A sealed secret opens only for the very same slot.
type Slot struct {
	ServerID    int64
	Kind        string
	Name        string
	Fingerprint string
}

func (s Slot) additionalData() []byte {
	// Unambiguous: no field may hold a newline (names are identifiers or
	// header tokens; fingerprints are "sha256:" and hex).
	return []byte(fmt.Sprintf("zero-secret-v1\n%d\n%s\n%s\n%s", s.ServerID, s.Kind, s.Name, s.Fingerprint))
}

// Seal encrypts value for slot: nonce followed by ciphertext.
func (b *Box) Seal(slot Slot, value string) ([]byte, error) {
	if strings.ContainsAny(slot.Kind+slot.Name+slot.Fingerprint, "\n") {
		return nil, errors.New("a secret slot may not contain a newline")
	}
	nonce := make([]byte, b.aead.NonceSize())
	rand.Read(nonce)
	return b.aead.Seal(nonce, nonce, []byte(value), slot.additionalData()), nil
}

// Open decrypts a sealed secret for slot, or fails with [ErrOpen].
func (b *Box) Open(slot Slot, sealed []byte) (string, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return "", ErrOpen
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], slot.additionalData())
	if err != nil {
		return "", ErrOpen
	}
	return string(plain), nil
}

// checkSlot is the slot of the key check: no secret has its kind.
var checkSlot = Slot{Kind: "key-check"}

// SealCheck seals the key check, which a database keeps so that a
// workspace opened with another key (a replica given another
// ZERO_SECRETS_KEY_FILE, or none) is told before it seals or fails to open
// anything: see [Box.Check].
func (b *Box) SealCheck() []byte {
	sealed, _ := b.Seal(checkSlot, "zero")
	return sealed
}

// Check reports whether sealed is a key check SealCheck made with this
// box's key.
func (b *Box) Check(sealed []byte) bool {
	v, err := b.Open(checkSlot, sealed)
	return err == nil && v == "zero"
}

// SealPending seals values a person typed into a form so that a page (a
// preview) can carry them to the next request without holding them in its
// HTML. The result is text for a hidden form field, bound to the user and
// valid until expires.
func (b *Box) SealPending(userID int64, expires time.Time, plain []byte) string {
	unix := expires.Unix()
	nonce := make([]byte, b.aead.NonceSize())
	rand.Read(nonce)
	sealed := b.aead.Seal(nonce, nonce, plain, pendingData(userID, unix))
	return strconv.FormatInt(unix, 10) + "." + base64.RawURLEncoding.EncodeToString(sealed)
}

// ErrPendingExpired reports sealed form values past their time.
var ErrPendingExpired = errors.New("the values typed into this form have expired")

// OpenPending opens what SealPending sealed for the same user, before it
// expires.
func (b *Box) OpenPending(userID int64, now time.Time, field string) ([]byte, error) {
	unixText, data, ok := strings.Cut(field, ".")
	unix, err := strconv.ParseInt(unixText, 10, 64)
	if !ok || err != nil {
		return nil, ErrOpen
	}
	sealed, err := base64.RawURLEncoding.DecodeString(data)
	n := b.aead.NonceSize()
	if err != nil || len(sealed) < n {
		return nil, ErrOpen
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], pendingData(userID, unix))
	if err != nil {
		return nil, ErrOpen
	}
	if now.Unix() > unix {
		return nil, ErrPendingExpired
	}
	return plain, nil
}

func pendingData(userID, unix int64) []byte {
	return []byte(fmt.Sprintf("zero-pending-v1\n%d\n%d", userID, unix))
}
