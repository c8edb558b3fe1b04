// Package passkeytest is a software WebAuthn authenticator for tests: it
// answers the options of navigator.credentials.create() and get() with the
// JSON a browser gives, so that Go tests can register and use passkeys
// without a browser. Only tests import it.
package passkeytest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
)

// The authenticator data flags it sets.
const (
	flagUP = 0x01 // user present
	flagUV = 0x04 // user verified
	flagAT = 0x40 // attested credential data
)

// An Authenticator holds ES256 credentials, each with its sign counter and
// the user handle it was made for. Its exported fields change how it
// answers, for tests of what a server must refuse.
type Authenticator struct {
	// Origin is the origin its client data names, as a browser's would.
	Origin string
	// AAGUID names its model in the credentials it makes.
	AAGUID [16]byte
	// NoUV leaves the user-verified flag out of its assertions.
	NoUV bool
	// AnyCredential answers get() with its first credential, whatever
	// allowCredentials names, as an authenticator an attacker drives would.
	AnyCredential bool

	creds map[string]*credential // by raw id
	order []string               // raw ids, oldest first
}

type credential struct {
	key        *ecdsa.PrivateKey
	userHandle []byte
	counter    uint32
}

// New returns an Authenticator with no credentials, whose client data
// names origin (e.g. "http://localhost:7077"); the relying-party id comes
// from each call's options.
func New(origin string) *Authenticator {
	a := &Authenticator{Origin: origin, creds: map[string]*credential{}}
	rand.Read(a.AAGUID[:])
	return a
}

// Clone returns a copy holding the same keys and counters, as a cloned
// authenticator would: the two count on from where they were apart.
func (a *Authenticator) Clone() *Authenticator {
	c := *a
	c.creds = maps.Clone(a.creds)
	for id, cr := range c.creds {
		copied := *cr
		c.creds[id] = &copied
	}
	c.order = append([]string(nil), a.order...)
	return &c
}

// b64 is base64url without padding, as WebAuthn's JSON encodes bytes.
var b64 = base64.RawURLEncoding

// Create answers navigator.credentials.create(options): a new ES256
// credential for options' user and relying party, attestation "none",
// flags UP, UV and AT. It refuses when options exclude a credential it
// holds, as an authenticator does.
func (a *Authenticator) Create(options []byte) ([]byte, error) {
	var o struct {
		PublicKey struct {
			RP        struct{ ID string }
			User      struct{ ID string }
			Challenge string
			Exclude   []struct{ ID string } `json:"excludeCredentials"`
		}
	}
	if err := json.Unmarshal(options, &o); err != nil {
		return nil, fmt.Errorf("read the creation options: %w", err)
	}
	pk := o.PublicKey
	for _, d := range pk.Exclude {
		if id, err := b64.DecodeString(d.ID); err == nil && a.creds[string(id)] != nil {
			return nil, errors.New("InvalidStateError: the authenticator holds an excluded credential")
		}
	}
	handle, err := b64.DecodeString(pk.User.ID)
	if err != nil || pk.RP.ID == "" || pk.Challenge == "" {
		return nil, errors.New("the creation options lack a user, relying party or challenge")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	point, err := key.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		return nil, err
	}
	cose, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         int64(webauthncose.P256),
		XCoord:        point[1:33],
		YCoord:        point[33:],
	})
	if err != nil {
		return nil, err
	}
	auth := authData(pk.RP.ID, flagUP|flagUV|flagAT, 0)
	auth = append(auth, a.AAGUID[:]...)
	auth = binary.BigEndian.AppendUint16(auth, uint16(len(raw)))
	auth = append(auth, raw...)
	auth = append(auth, cose...)
	object, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": auth})
	if err != nil {
		return nil, err
	}
	a.creds[string(raw)] = &credential{key: key, userHandle: handle}
	a.order = append(a.order, string(raw))
	return json.Marshal(map[string]any{
		"id":    b64.EncodeToString(raw),
		"rawId": b64.EncodeToString(raw),
		"type":  "public-key",
		"response": map[string]any{
			"clientDataJSON":    b64.EncodeToString(clientData("webauthn.create", pk.Challenge, a.Origin)),
			"attestationObject": b64.EncodeToString(object),
			"transports":        []string{"internal"},
		},
		"clientExtensionResults":  map[string]any{},
		"authenticatorAttachment": "platform",
	})
}

// Get answers navigator.credentials.get(options) with the first of its
// credentials allowCredentials names (an error if none; see
// AnyCredential): flags UP and UV (see NoUV), its counter one more.
func (a *Authenticator) Get(options []byte) ([]byte, error) {
	var o struct {
		PublicKey struct {
			Challenge string
			RPID      string                `json:"rpId"`
			Allow     []struct{ ID string } `json:"allowCredentials"`
		}
	}
	if err := json.Unmarshal(options, &o); err != nil {
		return nil, fmt.Errorf("read the request options: %w", err)
	}
	pk := o.PublicKey
	var raw string
	for _, d := range pk.Allow {
		if id, err := b64.DecodeString(d.ID); err == nil && a.creds[string(id)] != nil {
			raw = string(id)
			break
		}
	}
	if raw == "" && a.AnyCredential && len(a.order) > 0 {
		raw = a.order[0]
	}
	if raw == "" {
		return nil, errors.New("NotAllowedError: the authenticator holds none of the allowed credentials")
	}
	if pk.RPID == "" || pk.Challenge == "" {
		return nil, errors.New("the request options lack a relying party or challenge")
	}
	c := a.creds[raw]
	c.counter++
	flags := byte(flagUP | flagUV)
	if a.NoUV {
		flags = flagUP
	}
	auth := authData(pk.RPID, flags, c.counter)
	client := clientData("webauthn.get", pk.Challenge, a.Origin)
	digest := sha256.Sum256(client)
	signed := sha256.Sum256(append(bytes.Clone(auth), digest[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, c.key, signed[:])
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{
		"id":    b64.EncodeToString([]byte(raw)),
		"rawId": b64.EncodeToString([]byte(raw)),
		"type":  "public-key",
		"response": map[string]any{
			"clientDataJSON":    b64.EncodeToString(client),
			"authenticatorData": b64.EncodeToString(auth),
			"signature":         b64.EncodeToString(sig),
			"userHandle":        b64.EncodeToString(c.userHandle),
		},
		"clientExtensionResults":  map[string]any{},
		"authenticatorAttachment": "platform",
	})
}

// authData is the authenticator data's first 37 bytes: the relying-party
// id's SHA-256, the flags and the counter.
func authData(rpID string, flags byte, counter uint32) []byte {
	h := sha256.Sum256([]byte(rpID))
	return binary.BigEndian.AppendUint32(append(h[:], flags), counter)
}

// clientData is the client data JSON a browser collects, the challenge as
// the options give it (base64url without padding). It names its members in the order browsers do.
func clientData(typ, challenge, origin string) []byte {
	b, _ := json.Marshal(struct {
		Type        string `json:"type"`
		Challenge   string `json:"challenge"`
		Origin      string `json:"origin"`
		CrossOrigin bool   `json:"crossOrigin"`
	}{typ, challenge, origin, false})
	return b
}
