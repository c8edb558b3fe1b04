package passkeys

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/database/databasetest"
	"github.com/zero-dev/zero/internal/workspace/passkeys/passkeytest"
	"github.com/zero-dev/zero/internal/workspace/store"
)

// TestMain runs the tests on SQLite, or on PostgreSQL under
// ZERO_TEST_DATABASE=postgres (see databasetest.Main).
func TestMain(m *testing.M) { os.Exit(databasetest.Main(m)) }

// origin is the workspace's origin in these tests.
const origin = "http://localhost:7077"

// A clock is a Now the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// A fixture is a Service on a database of its own, with an owner and a
// member.
type fixture struct {
	s             *Service
	db            *sql.DB
	clock         *clock
	owner, member User
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	db := databasetest.OpenAt(t, filepath.Join(t.TempDir(), "zero.db"), store.Migrations())
	f := &fixture{db: db, clock: &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}}
	for _, u := range []struct {
		to   *User
		name string
		role string
	}{{&f.owner, "ada", "owner"}, {&f.member, "bob", "member"}} {
		u.to.Name = u.name
		if err := db.QueryRowContext(ctx, `INSERT INTO users (name, role, created_at) VALUES (?, ?, '') RETURNING id`, u.name, u.role).Scan(&u.to.ID); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(Options{DB: db, RPID: "localhost", Origins: []string{origin}, RPName: "Zero", Now: f.clock.now})
	if err != nil {
		t.Fatal(err)
	}
	f.s = s
	return f
}

// create begins a registration for u and has auth answer it.
func (f *fixture) create(t testing.TB, u User, auth *passkeytest.Authenticator) (nonce string, cred []byte) {
	t.Helper()
	options, nonce, err := f.s.BeginRegistration(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	cred, err = auth.Create(options)
	if err != nil {
		t.Fatal(err)
	}
	return nonce, cred
}

// register registers a passkey on auth for u, named name.
func (f *fixture) register(t testing.TB, u User, auth *passkeytest.Authenticator, name string) Passkey {
	t.Helper()
	nonce, cred := f.create(t, u, auth)
	pk, err := f.s.FinishRegistration(context.Background(), u, nonce, name, cred)
	if err != nil {
		t.Fatal(err)
	}
	return pk
}

// begin begins an assertion by u for a and has auth answer it; an
// authenticator that cannot answer fails the test.
func (f *fixture) begin(t testing.TB, u User, a Action, auth *passkeytest.Authenticator) (nonce string, assertion []byte) {
	t.Helper()
	options, nonce, err := f.s.BeginAssertion(context.Background(), u, a)
	if err != nil {
		t.Fatal(err)
	}
	assertion, err = auth.Get(options)
	if err != nil {
		t.Fatal(err)
	}
	return nonce, assertion
}

// approve is an action of u's: approving server 3 at a fingerprint.
func approve(u User) Action {
	return Action{UserID: u.ID, Method: "POST", Path: "/api/servers/3/approve", Body: []byte("fingerprint=sha256%3Aab12"), Words: "Approve server git, sha256:ab12"}
}

// creationOptions are the members of BeginRegistration's options the
// tests look at.
type creationOptions struct {
	PublicKey struct {
		RP        struct{ ID, Name string }
		User      struct{ ID, Name string }
		Challenge string
		Timeout   int
		Params    []struct{ Alg int }   `json:"pubKeyCredParams"`
		Exclude   []struct{ ID string } `json:"excludeCredentials"`
		Selection struct {
			ResidentKey        string `json:"residentKey"`
			RequireResidentKey bool   `json:"requireResidentKey"`
			UserVerification   string `json:"userVerification"`
		} `json:"authenticatorSelection"`
		Attestation string
	}
}

// requestOptions are the members of BeginAssertion's options the tests
// look at.
type requestOptions struct {
	PublicKey struct {
		Challenge        string
		Timeout          int
		RPID             string                `json:"rpId"`
		Allow            []struct{ ID string } `json:"allowCredentials"`
		UserVerification string                `json:"userVerification"`
	}
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// signCount is the sign count stored for passkey id.
func (f *fixture) signCount(t *testing.T, id int64) uint32 {
	t.Helper()
	var record string
	if err := f.db.QueryRow(`SELECT credential FROM passkeys WHERE id = ?`, id).Scan(&record); err != nil {
		t.Fatal(err)
	}
	return decode[struct{ Authenticator struct{ SignCount uint32 } }](t, []byte(record)).Authenticator.SignCount
}
