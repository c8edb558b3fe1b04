package providers

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/database/databasetest"
	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/testnet"
	"github.com/zero-dev/zero/internal/workspace/secrets"
	"github.com/zero-dev/zero/internal/workspace/store"
)

const canary = "sk-canary-4b1d9e"

type fixture struct {
	m         *Manager
	auditPath string
	dbPath    string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "zero.db")
	db := databasetest.OpenAt(t, dbPath, store.Migrations())
	key := make([]byte, 32)
	rand.Read(key)
	box, err := secrets.New(key)
	if err != nil {
		t.Fatal(err)
	}
	auditPath := filepath.Join(dir, "audit.log")
	log, err := audit.Open(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return fixture{m: New(db, box, log), auditPath: auditPath, dbPath: dbPath}
}

// endpoint is an OpenAI-compatible server that records the Authorization
// of each request and lists two models.
type endpoint struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func newEndpoint(t *testing.T) *endpoint {
	e := &endpoint{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.auths = append(e.auths, r.Header.Get("Authorization"))
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":[{"id":"m-small"},{"id":"m-large"}]}`)
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *endpoint) lastAuth() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.auths) == 0 {
		return "(none)"
	}
	return e.auths[len(e.auths)-1]
}

// TestKeyGoesOnlyWhereItWasSet: a provider's key is sent to the endpoint
// it was set for, is in no answer of the package nor in the audit log, and
// is dropped when the base URL changes without a new key; the models are
// discovered with it.
func TestKeyGoesOnlyWhereItWasSet(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	e := newEndpoint(t)
	f.m.http = e.Client()
	p, err := f.m.Save(ctx, "user:owner", Provider{Name: "local", BaseURL: e.URL + "/v1/", Stream: true, DefaultModel: "m-small"}, Key{Set: true, Value: canary})
	if err != nil {
		t.Fatal(err)
	}
	if !p.KeySet || p.KeySetBy != "user:owner" || p.BaseURL != e.URL+"/v1" {
		t.Errorf("saved: %+v", p)
	}
	p, err = f.m.Discover(ctx, "user:owner", p.ID)
	if err != nil || strings.Join(p.Models, ",") != "m-small,m-large" || e.lastAuth() != "Bearer "+canary {
		t.Fatalf("discover: %+v %v, auth %q", p, err, e.lastAuth())
	}
	list, _ := f.m.List(ctx)
	data, _ := json.Marshal(list)
	if strings.Contains(string(data), canary) {
		t.Errorf("the list holds the key: %s", data)
	}

	// Another endpoint, no new key: the key is not sent there.
	other := newEndpoint(t)
	p.BaseURL = other.URL + "/v1"
	p, err = f.m.Save(ctx, "user:owner", p, Key{})
	if err != nil || p.KeySet || len(p.Models) != 0 {
		t.Fatalf("after the URL changed: %+v %v", p, err)
	}
	f.m.http = other.Client()
	if _, err := f.m.Discover(ctx, "user:owner", p.ID); err != nil || other.lastAuth() != "" {
		t.Errorf("the other endpoint got Authorization %q (%v)", other.lastAuth(), err)
	}
	log, _ := os.ReadFile(f.auditPath)
	if strings.Contains(string(log), canary) || !strings.Contains(string(log), "dropped: the base URL changed") || !strings.Contains(string(log), `"provider.create"`) {
		t.Errorf("audit log:\n%s", log)
	}
	db, _ := os.ReadFile(f.dbPath)
	if strings.Contains(string(db), canary) {
		t.Error("the key is in the database file in the clear")
	}
}

// TestKeySealedForItsURL: a key whose row was pointed at another URL
// behind the package's back does not open: the client is refused, and
// nothing is sent without it.
func TestKeySealedForItsURL(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	e := newEndpoint(t)
	f.m.http = e.Client()
	p, err := f.m.Save(ctx, "user:owner", Provider{Name: "p", BaseURL: e.URL + "/v1"}, Key{Set: true, Value: canary})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.db.Exec(`UPDATE providers SET base_url = ? WHERE id = ?`, e.URL+"/other", p.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.m.Client(ctx, p.ID); err == nil || !strings.Contains(err.Error(), "does not open") {
		t.Errorf("a key sealed for another URL: %v", err)
	}
	if got := e.lastAuth(); got != "(none)" {
		t.Errorf("a request was sent, with Authorization %q", got)
	}
}

// TestSaveRefuses bad names, base URLs (plain http off loopback, other
// schemes, a query), control characters, a taken name and an unknown id,
// saving nothing.
func TestSaveRefuses(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.m.Save(ctx, "user:owner", Provider{Name: "ok", BaseURL: "https://api.example.com/v1"}, Key{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p    Provider
		key  Key
		want error
	}{
		{Provider{Name: "", BaseURL: "https://api.example.com/v1"}, Key{}, ErrInvalid},
		{Provider{Name: "a b", BaseURL: "https://api.example.com/v1"}, Key{}, ErrInvalid},
		{Provider{Name: "x", BaseURL: "http://api.example.com/v1"}, Key{}, ErrInvalid},
		{Provider{Name: "x", BaseURL: "ftp://127.0.0.1/v1"}, Key{}, ErrInvalid},
		{Provider{Name: "x", BaseURL: "https://api.example.com/v1?key=1"}, Key{}, ErrInvalid},
		{Provider{Name: "x", BaseURL: "https://api.example.com/v1", DefaultModel: "m\n"}, Key{}, ErrInvalid},
		{Provider{Name: "x", BaseURL: "https://api.example.com/v1"}, Key{Set: true, Value: "sk\r\nX-Evil: 1"}, ErrInvalid},
		{Provider{Name: "ok", BaseURL: "https://api.example.com/v1"}, Key{}, ErrTaken},
		{Provider{ID: 42, Name: "y", BaseURL: "https://api.example.com/v1"}, Key{}, ErrNotFound},
	} {
		if _, err := f.m.Save(ctx, "user:owner", tc.p, tc.key); !errors.Is(err, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.p, err, tc.want)
		}
	}
	if list, _ := f.m.List(ctx); len(list) != 1 {
		t.Errorf("providers saved: %+v", list)
	}
	if err := f.m.Delete(ctx, "user:owner", 42); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete of an unknown id: %v", err)
	}
}

// TestReach: Reach asks the endpoint a provider is saved with, without its
// key, and says in words why nothing answered; it saves nothing.
func TestReach(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	e := newEndpoint(t)
	p, err := f.m.Save(ctx, "user:owner", Provider{Name: "local", BaseURL: e.URL + "/v1"}, Key{Set: true, Value: canary})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.m.Reach(ctx, p); err != nil || e.lastAuth() != "" {
		t.Errorf("Reach of an endpoint that answers: %v, Authorization %q", err, e.lastAuth())
	}
	closed := "http://" + testnet.ClosedAddr(t) + "/v1"
	err = f.m.Reach(ctx, Provider{Name: "gone", BaseURL: closed})
	if !errors.Is(err, model.ErrUnreachable) || !strings.Contains(err.Error(), closed+": nothing is listening there (connection refused)") {
		t.Errorf("Reach of a closed port: %v", err)
	}
	if list, _ := f.m.List(ctx); len(list) != 1 {
		t.Errorf("Reach saved something: %+v", list)
	}
}

// TestSaveSaysWhatIsWrongWithTheURL: a base URL without its scheme is
// refused with the form to write it in.
func TestSaveSaysWhatIsWrongWithTheURL(t *testing.T) {
	f := newFixture(t)
	for _, raw := range []string{"127.0.0.1:11434/v1", "localhost:8080", "api.example.com/v1"} {
		_, err := f.m.Save(context.Background(), "user:owner", Provider{Name: "x", BaseURL: raw}, Key{})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "the base URL has no scheme: write https://HOST/v1, or http://127.0.0.1:PORT/v1") {
			t.Errorf("%q: %v", raw, err)
		}
	}
}
