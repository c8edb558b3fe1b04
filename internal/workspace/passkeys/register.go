package passkeys

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/zero-dev/zero/internal/database"
)

// BeginRegistration begins registering a passkey for u: options are what
// navigator.credentials.create() takes ({"publicKey": {...}}, as
// go-webauthn marshals protocol.CredentialCreation), asking for a resident
// key, user verification and no attestation, accepting EdDSA, ES256 and
// RS256, and excluding u's passkeys; the challenge is random. nonce names
// the challenge for FinishRegistration: single use, it expires after
// ChallengeTTL.
func (s *Service) BeginRegistration(ctx context.Context, u User) (options json.RawMessage, nonce string, err error) {
	keys, err := s.load(ctx, s.db, u.ID, "")
	if err != nil {
		return nil, "", err
	}
	p := newPerson(u, keys)
	creation, session, err := s.wa.BeginRegistration(p,
		webauthn.WithCredentialParameters(webauthn.CredentialParametersRecommendedL3()),
		webauthn.WithExclusions(webauthn.Credentials(p.creds).CredentialDescriptors()))
	if err != nil {
		return nil, "", fmt.Errorf("begin passkey registration: %w", err)
	}
	if options, err = json.Marshal(creation); err != nil {
		return nil, "", fmt.Errorf("begin passkey registration: %w", err)
	}
	_, nonce = newNonce()
	if err := s.keep(ctx, challenge{nonce: nonce, userID: u.ID, kind: kindRegister, session: *session}); err != nil {
		return nil, "", err
	}
	return options, nonce, nil
}

// FinishRegistration registers the passkey credential holds, for u, under
// name (see checkName; "" is "Passkey N", N one more than u's count):
// credential is the JSON of the browser's PublicKeyCredential (id, rawId,
// type, response {clientDataJSON, attestationObject, transports}),
// base64url-encoded, as protocol.ParseCredentialCreationResponseBytes reads
// it. The nonce is consumed whatever happens: ErrChallengeUnknown if it is
// not u's registration's, or has expired; ErrRegistration if go-webauthn
// refuses the attestation, or another passkey has the credential's id.
func (s *Service) FinishRegistration(ctx context.Context, u User, nonce, name string, credential []byte) (Passkey, error) {
	c, err := s.consume(ctx, nonce, u.ID, kindRegister)
	if err != nil {
		return Passkey{}, fmt.Errorf("register a passkey: %w", err)
	}
	if name != "" {
		if name, err = checkName(name); err != nil {
			return Passkey{}, err
		}
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(credential)
	if err != nil {
		return Passkey{}, fmt.Errorf("%w: %w", ErrRegistration, err)
	}
	keys, err := s.load(ctx, s.db, u.ID, "")
	if err != nil {
		return Passkey{}, err
	}
	cred, err := s.wa.CreateCredential(newPerson(u, keys), c.session, parsed)
	if err != nil {
		return Passkey{}, fmt.Errorf("%w: %w", ErrRegistration, err)
	}
	if name == "" {
		name = defaultName(keys)
	}
	record, err := json.Marshal(cred)
	if err != nil {
		return Passkey{}, fmt.Errorf("register a passkey: %w", err)
	}
	now := stamp(s.now())
	var id int64
	err = s.db.QueryRowContext(ctx, `INSERT INTO passkeys (user_id, name, credential_id, credential, created_at)
		VALUES (?, ?, ?, ?, ?) RETURNING id`, u.ID, name, cred.ID, string(record), now).Scan(&id)
	if database.IsUnique(err) {
		return Passkey{}, fmt.Errorf("%w: the credential is registered already", ErrRegistration)
	}
	if err != nil {
		return Passkey{}, fmt.Errorf("register a passkey: %w", err)
	}
	k := key{Passkey: Passkey{ID: id, UserID: u.ID, Name: name, CreatedAt: parseStamp(now)}, cred: *cred}
	k.fill()
	return k.Passkey, nil
}

// defaultName is "Passkey N", N the first from one more than len(keys)
// that no key has.
func defaultName(keys []key) string {
	taken := map[string]bool{}
	for _, k := range keys {
		taken[k.Name] = true
	}
	for n := len(keys) + 1; ; n++ {
		if name := fmt.Sprintf("Passkey %d", n); !taken[name] {
			return name
		}
	}
}
