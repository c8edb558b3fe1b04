package passkeys

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/zero-dev/zero/internal/database"
)

// An Action is one request a person confirms with a passkey: it is bound by
// its Binding.
type Action struct {
	UserID int64
	Method string // "POST"
	Path   string // the request's escaped path, e.g. "/api/servers/3/approve"
	Body   []byte // the canonical body (the workspace canonicalises forms); may be empty
	Words  string // what the person confirms, as the page shows it (not part of the binding)
}

// bindingDomain begins every binding: it keeps a binding apart from any
// other SHA-256 Zero computes.
const bindingDomain = "zero-approval-v1\x00"

// Binding is the hex SHA-256 of "zero-approval-v1\x00", the decimal UserID,
// "\x00", Method, "\x00", Path, "\x00" and Body. Method and Path (escaped)
// hold no NUL, and Body comes last, so no two actions share a binding.
func (a Action) Binding() string {
	h := sha256.New()
	h.Write([]byte(bindingDomain + strconv.FormatInt(a.UserID, 10) + "\x00" + a.Method + "\x00" + a.Path + "\x00"))
	h.Write(a.Body)
	return hex.EncodeToString(h.Sum(nil))
}

// assertionChallenge is the challenge of an assertion for binding (hex)
// and nonce (base64url): SHA-256 of the binding's 32 bytes and the nonce's
// 32 random bytes. The nonce is unpredictable and single use, so the
// challenge is too; the binding ties it to the action.
func assertionChallenge(binding, nonce string) ([]byte, error) {
	b, err := hex.DecodeString(binding)
	if err != nil {
		return nil, err
	}
	n, err := base64.RawURLEncoding.DecodeString(nonce)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(append(b, n...))
	return sum[:], nil
}

// BeginAssertion begins an assertion by u for action a: options are what
// navigator.credentials.get() takes ({"publicKey": {...}}, as go-webauthn
// marshals protocol.CredentialAssertion), allowing u's passkeys, requiring
// user verification, with the challenge assertionChallenge derives from
// a.Binding() and a new nonce. nonce names the challenge for
// VerifyAssertion: single use, it expires after ChallengeTTL.
// ErrNoPasskey if u has none; ErrWrongAction if a is not u's.
func (s *Service) BeginAssertion(ctx context.Context, u User, a Action) (options json.RawMessage, nonce string, err error) {
	if a.UserID != u.ID {
		return nil, "", fmt.Errorf("begin a passkey assertion: %w: the action is another person's", ErrWrongAction)
	}
	keys, err := s.load(ctx, s.db, u.ID, "")
	if err != nil {
		return nil, "", err
	}
	if len(keys) == 0 {
		return nil, "", ErrNoPasskey
	}
	binding := a.Binding()
	_, nonce = newNonce()
	challengeBytes, err := assertionChallenge(binding, nonce)
	if err != nil {
		return nil, "", fmt.Errorf("begin a passkey assertion: %w", err)
	}
	assertion, session, err := s.wa.BeginLogin(newPerson(u, keys),
		webauthn.WithChallenge(challengeBytes),
		webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return nil, "", fmt.Errorf("begin a passkey assertion: %w", err)
	}
	if options, err = json.Marshal(assertion); err != nil {
		return nil, "", fmt.Errorf("begin a passkey assertion: %w", err)
	}
	c := challenge{nonce: nonce, userID: u.ID, kind: kindAssert, binding: binding, words: a.Words, session: *session}
	if err := s.keep(ctx, c); err != nil {
		return nil, "", err
	}
	return options, nonce, nil
}

// VerifyAssertion checks that assertion (the JSON of the browser's
// PublicKeyCredential, as protocol.ParseCredentialRequestResponseBytes
// reads it) was made by u, with one of u's passkeys, for action a and the
// challenge nonce names. It consumes the nonce first, whatever follows.
// Then it refuses, in order: ErrChallengeUnknown (no such nonce, used,
// expired, another person's, or a registration's); ErrWrongAction (the
// challenge was begun for another action); ErrAssertion (go-webauthn
// refuses it: the signature, the origin, the relying-party id, no user
// verification, a credential not u's; or the sign count went back). On
// success it stores the credential's sign count and flags and when it was
// used, and returns the passkey.
func (s *Service) VerifyAssertion(ctx context.Context, u User, a Action, nonce string, assertion []byte) (Passkey, error) {
	c, err := s.consume(ctx, nonce, u.ID, kindAssert)
	if err != nil {
		return Passkey{}, fmt.Errorf("verify a passkey assertion: %w", err)
	}
	// The challenge the assertion must carry is derived again, from the
	// action the caller is about to take, not only read back.
	binding := a.Binding()
	want, err := assertionChallenge(binding, nonce)
	if err != nil || c.binding != binding || c.session.Challenge != protocol.URLEncodedBase64(want).String() {
		return Passkey{}, fmt.Errorf("verify a passkey assertion: %w", ErrWrongAction)
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(assertion)
	if err != nil {
		return Passkey{}, fmt.Errorf("%w: %w", ErrAssertion, err)
	}

	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Passkey{}, fmt.Errorf("verify a passkey assertion: %w", err)
	}
	defer tx.Rollback()
	keys, err := s.load(ctx, tx, u.ID, database.ForUpdate(s.db))
	if err != nil {
		return Passkey{}, err
	}
	cred, err := s.wa.ValidateLogin(newPerson(u, keys), c.session, parsed)
	if err != nil {
		return Passkey{}, fmt.Errorf("%w: %w", ErrAssertion, err)
	}
	if cred.Authenticator.CloneWarning {
		return Passkey{}, fmt.Errorf("%w: the sign count went back to %d", ErrAssertion, parsed.Response.AuthenticatorData.Counter)
	}
	i := 0
	for i < len(keys) && !bytes.Equal(keys[i].cred.ID, cred.ID) {
		i++
	}
	if i == len(keys) {
		return Passkey{}, errors.New("verify a passkey assertion: the credential went missing")
	}
	record, err := json.Marshal(cred)
	if err != nil {
		return Passkey{}, fmt.Errorf("verify a passkey assertion: %w", err)
	}
	now := stamp(s.now())
	if _, err := tx.ExecContext(ctx, `UPDATE passkeys SET credential = ?, last_used_at = ? WHERE id = ?`, string(record), now, keys[i].ID); err != nil {
		return Passkey{}, fmt.Errorf("verify a passkey assertion: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return Passkey{}, fmt.Errorf("verify a passkey assertion: %w", err)
	}
	k := keys[i]
	k.cred = *cred
	k.LastUsedAt = parseStamp(now)
	return k.Passkey, nil
}
