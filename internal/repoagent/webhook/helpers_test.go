package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fixed inputs shared by the tests.
var (
	testNow     = time.Unix(1_750_000_000, 0)
	testSecrets = Secrets{HMAC: "hmac-test-secret", GitLab: "gitlab-test-token"}
)

// sum is HMAC-SHA256(key, parts...), written here rather than taken from
// the package so that tests do not check the code with itself.
func sum(key []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

func hexSum(key string, body []byte) string { return hex.EncodeToString(sum([]byte(key), body)) }

// githubHeaders are the headers of a correctly signed GitHub delivery.
func githubHeaders(secret, event, delivery string, body []byte) http.Header {
	h := http.Header{}
	h.Set("X-Hub-Signature-256", "sha256="+hexSum(secret, body))
	h.Set("X-GitHub-Event", event)
	h.Set("X-GitHub-Delivery", delivery)
	h.Set("X-GitHub-Hook-ID", "12345")
	return h
}

// giteaHeaders are the headers of a correctly signed Gitea delivery.
func giteaHeaders(secret, event, delivery string, body []byte) http.Header {
	h := http.Header{}
	h.Set("X-Gitea-Signature", hexSum(secret, body))
	h.Set("X-Gitea-Event", event)
	h.Set("X-Gitea-Delivery", delivery)
	return h
}

// forgejoHeaders are the headers of a correctly signed Forgejo delivery,
// which carries both the Forgejo and the Gitea names.
func forgejoHeaders(secret, event, delivery string, body []byte) http.Header {
	h := giteaHeaders(secret, event, delivery, body)
	h.Set("X-Forgejo-Signature", hexSum(secret, body))
	h.Set("X-Forgejo-Event", event)
	h.Set("X-Forgejo-Delivery", delivery)
	return h
}

// gitlabTokenHeaders are the headers of a GitLab delivery with a token.
func gitlabTokenHeaders(token, event, idempotencyKey string) http.Header {
	h := http.Header{}
	h.Set("X-Gitlab-Token", token)
	h.Set("X-Gitlab-Event", event)
	h.Set("Idempotency-Key", idempotencyKey)
	return h
}

// standardHeaders are the headers of a GitLab delivery signed the Standard
// Webhooks way with key at time ts.
func standardHeaders(key []byte, event, id string, ts time.Time, body []byte) http.Header {
	t := strconv.FormatInt(ts.Unix(), 10)
	h := http.Header{}
	h.Set("X-Gitlab-Event", event)
	h.Set("Webhook-Id", id)
	h.Set("Webhook-Timestamp", t)
	h.Set("Webhook-Signature", "v1,"+base64.StdEncoding.EncodeToString(sum(key, []byte(id+"."+t+"."), body)))
	return h
}

// signedFor returns correctly signed headers for each forge.
func signedFor(f Forge, event, id string, body []byte) http.Header {
	switch f {
	case GitHub:
		return githubHeaders(testSecrets.HMAC, event, id, body)
	case Gitea:
		return giteaHeaders(testSecrets.HMAC, event, id, body)
	case GitLab:
		return standardHeaders([]byte(testSecrets.HMAC), gitlabEventFor(event), id, testNow, body)
	}
	panic("unknown forge " + string(f))
}

// gitlabEventFor maps a GitHub-style event name to GitLab's.
func gitlabEventFor(event string) string {
	switch event {
	case "pull_request":
		return "Merge Request Hook"
	case "push":
		return "Push Hook"
	}
	return event
}

var forges = []Forge{GitHub, GitLab, Gitea}

// bombs are bodies that make a JSON parser fail loudly: not JSON at all,
// and an array nested a million deep.
var bombs = map[string][]byte{
	"invalid": []byte("{this is not json"),
	"deep":    []byte(strings.Repeat("[", 1_000_000)),
}

// memLedger is an in-memory Ledger that counts its calls.
type memLedger struct {
	mu    sync.Mutex
	seen  map[string]bool
	calls int
	err   error
}

func (l *memLedger) Remember(_ context.Context, key string, _ time.Time) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if l.err != nil {
		return false, l.err
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	fresh := !l.seen[key]
	l.seen[key] = true
	return fresh, nil
}

// mustVerify verifies a delivery that the test built to be valid.
func mustVerify(t *testing.T, f Forge, h http.Header, body []byte) Delivery {
	t.Helper()
	d, err := Verify(f, h, body, testSecrets, testNow, DefaultSkew)
	if err != nil {
		t.Fatalf("Verify(%s): %v", f, err)
	}
	return d
}
