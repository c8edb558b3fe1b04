// Package passkeys owns the workspace's passkeys: the WebAuthn credentials
// people register, and the assertions that bind one of them to one action.
//
// An approval the owner's setting guards (see [Service.Required]) is made
// with an assertion for that exact action: [Service.BeginAssertion] derives
// the challenge from the action's [Action.Binding] (the person, the method,
// the path and the canonical body) and a single-use server nonce that
// expires after [ChallengeTTL], and [Service.VerifyAssertion] consumes the
// nonce before anything else, then checks the binding, then the assertion
// itself (signature, origin, relying-party id, user verification, a
// credential of that person's, the sign counter). An assertion made for one
// action is refused for another, and a second time for the same one.
//
// The WebAuthn parsing and checks are go-webauthn's
// (github.com/go-webauthn/webauthn); this package keeps the records and the
// single-use challenges, in the workspace's database (migration 24 of
// package store).
package passkeys

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/zero-dev/zero/internal/guard/hiddentext"
)

// ChallengeTTL is how long a challenge, a registration's or an
// assertion's, may be answered after it was begun. It is also the timeout
// the options give the browser.
const ChallengeTTL = 2 * time.Minute

// MaxNameLen is the longest a passkey's name may be, in characters.
const MaxNameLen = 64

// maxPending is how many challenges one person may have begun and not
// answered: beginning another drops their oldest.
const maxPending = 16

// sweepBatch bounds how many expired challenges one Begin deletes.
const sweepBatch = 100

// The errors, each refusal its own.
var (
	ErrNotFound         = errors.New("no such passkey")
	ErrNoPasskey        = errors.New("no passkey registered")
	ErrChallengeUnknown = errors.New("unknown, used or expired passkey challenge")
	ErrWrongAction      = errors.New("the passkey assertion was made for another action")
	ErrAssertion        = errors.New("passkey assertion refused")
	ErrInvalidName      = errors.New("invalid passkey name")
	ErrRegistration     = errors.New("passkey registration refused")
)

// Options configure a Service.
type Options struct {
	DB      *sql.DB          // the workspace's database (already migrated)
	RPID    string           // the relying party id, a domain: "localhost"
	Origins []string         // the origins pages are served on, e.g. "http://localhost:7077"
	RPName  string           // the name an authenticator shows: "Zero"
	Now     func() time.Time // nil: time.Now
}

// A Service keeps people's passkeys and verifies their assertions.
type Service struct {
	db  *sql.DB
	wa  *webauthn.WebAuthn
	now func() time.Time
}

// New makes a Service. The relying party id must be a domain: an IP
// address is refused, as browsers refuse it.
func New(o Options) (*Service, error) {
	if o.DB == nil || o.RPID == "" || o.RPName == "" {
		return nil, errors.New("passkeys: a database, a relying party id and a name are needed")
	}
	timeout := webauthn.TimeoutConfig{Timeout: ChallengeTTL, TimeoutUVD: ChallengeTTL}
	wa, err := webauthn.New(&webauthn.Config{
		RPID:                  o.RPID,
		RPDisplayName:         o.RPName,
		RPOrigins:             o.Origins,
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			RequireResidentKey: protocol.ResidentKeyRequired(),
			ResidentKey:        protocol.ResidentKeyRequirementRequired,
			UserVerification:   protocol.VerificationRequired,
		},
		// The expiry is this package's, by its clock (see consume).
		Timeouts: webauthn.TimeoutsConfig{Login: timeout, Registration: timeout},
	})
	if err != nil {
		return nil, fmt.Errorf("passkeys: %w", err)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Service{db: o.DB, wa: wa, now: now}, nil
}

// A User is the person a passkey belongs to (the workspace's users table).
type User struct {
	ID   int64
	Name string
}

// A Passkey is one of a person's registered credentials.
type Passkey struct {
	ID           int64     `json:"id"`
	UserID       int64     `json:"user_id"`
	Name         string    `json:"name"`
	CredentialID string    `json:"credential_id"` // base64url (raw URL encoding)
	AAGUID       string    `json:"aaguid"`        // hex
	CreatedAt    time.Time `json:"created_at"`
	LastUsedAt   time.Time `json:"last_used_at,omitzero"`
}

// List returns a person's passkeys, oldest first.
func (s *Service) List(ctx context.Context, userID int64) ([]Passkey, error) {
	keys, err := s.load(ctx, s.db, userID, "")
	if err != nil {
		return nil, err
	}
	out := make([]Passkey, len(keys))
	for i, k := range keys {
		out[i] = k.Passkey
	}
	return out, nil
}

// Count returns how many passkeys a person has.
func (s *Service) Count(ctx context.Context, userID int64) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM passkeys WHERE user_id = ?`, userID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count passkeys: %w", err)
	}
	return n, nil
}

// Rename names a person's passkey id (see checkName); another person's is
// ErrNotFound.
func (s *Service) Rename(ctx context.Context, userID, id int64, name string) (Passkey, error) {
	name, err := checkName(name)
	if err != nil {
		return Passkey{}, err
	}
	res, err := s.db.ExecContext(ctx, `UPDATE passkeys SET name = ? WHERE id = ? AND user_id = ?`, name, id, userID)
	if err != nil {
		return Passkey{}, fmt.Errorf("rename passkey %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return Passkey{}, fmt.Errorf("rename passkey %d: %w", id, ErrNotFound)
	}
	keys, err := s.load(ctx, s.db, userID, "")
	if err != nil {
		return Passkey{}, err
	}
	for _, k := range keys {
		if k.ID == id {
			return k.Passkey, nil
		}
	}
	return Passkey{}, fmt.Errorf("rename passkey %d: %w", id, ErrNotFound)
}

// Remove deletes a person's passkey id; another person's is ErrNotFound.
func (s *Service) Remove(ctx context.Context, userID, id int64) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM passkeys WHERE id = ? AND user_id = ?`, id, userID)
	if err != nil {
		return fmt.Errorf("remove passkey %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("remove passkey %d: %w", id, ErrNotFound)
	}
	return nil
}

// checkName trims a passkey's name and checks it: 1 to MaxNameLen
// characters, each showing as itself on one line (no control, format or
// bidirectional characters: see hiddentext.Unprintable).
func checkName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch n := utf8.RuneCountInString(name); {
	case n == 0:
		return "", fmt.Errorf("%w: empty", ErrInvalidName)
	case n > MaxNameLen:
		return "", fmt.Errorf("%w: %d characters, more than %d", ErrInvalidName, n, MaxNameLen)
	case hiddentext.Unprintable(name):
		return "", fmt.Errorf("%w: it holds a character that does not print", ErrInvalidName)
	}
	return name, nil
}

// A key is a stored passkey with its credential record.
type key struct {
	Passkey
	cred webauthn.Credential
}

// fill sets the Passkey's fields its credential record holds.
func (k *key) fill() {
	k.CredentialID = base64.RawURLEncoding.EncodeToString(k.cred.ID)
	k.AAGUID = hex.EncodeToString(k.cred.Authenticator.AAGUID)
}

// querier is what load reads through: the database or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// load reads a person's passkeys, oldest first; suffix ends the query
// (database.ForUpdate in a transaction that goes on to change them).
func (s *Service) load(ctx context.Context, q querier, userID int64, suffix string) ([]key, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, name, credential, created_at, last_used_at FROM passkeys
		WHERE user_id = ? ORDER BY id`+suffix, userID)
	if err != nil {
		return nil, fmt.Errorf("read passkeys: %w", err)
	}
	defer rows.Close()
	var out []key
	for rows.Next() {
		k := key{Passkey: Passkey{UserID: userID}}
		var cred, created, used string
		if err := rows.Scan(&k.ID, &k.Name, &cred, &created, &used); err != nil {
			return nil, fmt.Errorf("read passkeys: %w", err)
		}
		if err := json.Unmarshal([]byte(cred), &k.cred); err != nil {
			return nil, fmt.Errorf("read passkey %d: %w", k.ID, err)
		}
		k.fill()
		k.CreatedAt, k.LastUsedAt = parseStamp(created), parseStamp(used)
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read passkeys: %w", err)
	}
	return out, nil
}

// person is a User with their credentials, as go-webauthn asks for them.
type person struct {
	u     User
	creds []webauthn.Credential
}

func newPerson(u User, keys []key) person {
	p := person{u: u}
	for _, k := range keys {
		p.creds = append(p.creds, k.cred)
	}
	return p
}

// WebAuthnID is the user handle: the person's id, 8 bytes big-endian,
// stable for as long as they are a person of this workspace.
func (p person) WebAuthnID() []byte                         { return binary.BigEndian.AppendUint64(nil, uint64(p.u.ID)) }
func (p person) WebAuthnName() string                       { return p.u.Name }
func (p person) WebAuthnDisplayName() string                { return p.u.Name }
func (p person) WebAuthnCredentials() []webauthn.Credential { return p.creds }

// newNonce returns 32 random bytes and their base64url form.
func newNonce() ([]byte, string) {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return b, base64.RawURLEncoding.EncodeToString(b)
}

// stampLayout is RFC 3339 in UTC with nanoseconds, fixed-width, so that
// stamps compare in SQL as the times they are.
const stampLayout = "2006-01-02T15:04:05.000000000Z"

func stamp(t time.Time) string { return t.UTC().Format(stampLayout) }

// parseStamp reads a stamp; an empty one (never) is the zero time.
func parseStamp(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
