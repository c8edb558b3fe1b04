package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Forge names the software that sent a delivery.
type Forge string

// The forges a delivery may come from.
const (
	GitHub Forge = "github"
	GitLab Forge = "gitlab"
	Gitea  Forge = "gitea" // also Forgejo, which sends the same deliveries
)

// Secrets are the keys deliveries are verified with. The caller reads them
// from fixed environment variables; this package never reads the
// environment.
type Secrets struct {
	// HMAC is AGENT_ZERO_WEBHOOK_SECRET: the HMAC key for GitHub and
	// Gitea/Forgejo, and the Standard Webhooks key for GitLab. For GitLab
	// only, a value starting with "whsec_" is followed by the base64 of the
	// key bytes; any other value is the key bytes as written.
	HMAC string
	// GitLab is AGENT_ZERO_GITLAB_TOKEN: the value X-Gitlab-Token must have.
	GitLab string
}

// A Delivery is what verification establishes, before any parsing: the
// forge, the event type from the headers, and the key a replay of the same
// delivery would have. Only [Verify] makes a Delivery that [Parse] accepts.
type Delivery struct {
	Forge     Forge
	Event     string
	ReplayKey string

	verified bool // set by Verify alone
}

// Errors from Verify, Parse and the Handler. They never quote a header
// value or a byte of the body.
var (
	ErrNoSecret     = errors.New("no webhook secret configured")
	ErrSignature    = errors.New("missing or invalid webhook signature")
	ErrStale        = errors.New("webhook timestamp outside the allowed skew")
	ErrNoDeliveryID = errors.New("missing or malformed delivery id")
	ErrNoEvent      = errors.New("missing or malformed event header")
	ErrMethod       = errors.New("method not allowed")
	ErrTooLarge     = errors.New("webhook body too large")
	ErrReplay       = errors.New("webhook delivery already seen")
	ErrUnknownForge = errors.New("unknown forge")
	ErrNotVerified  = errors.New("delivery not verified")
	ErrPayload      = errors.New("invalid webhook payload")
)

// Header names. Go canonicalizes header keys, so these are looked up
// case-insensitively.
const (
	hGitHubSignature = "X-Hub-Signature-256"
	hGitHubEvent     = "X-GitHub-Event"
	hGitHubDelivery  = "X-GitHub-Delivery"
	hGitHubHookID    = "X-GitHub-Hook-ID"

	hGitLabToken       = "X-Gitlab-Token"
	hGitLabEvent       = "X-Gitlab-Event"
	hGitLabWebhookUUID = "X-Gitlab-Webhook-UUID"
	hGitLabEventUUID   = "X-Gitlab-Event-UUID"
	hIdempotencyKey    = "Idempotency-Key"
	hStandardID        = "Webhook-Id"
	hStandardTimestamp = "Webhook-Timestamp"
	hStandardSignature = "Webhook-Signature"

	hGiteaSignature   = "X-Gitea-Signature"
	hForgejoSignature = "X-Forgejo-Signature"
	hGiteaEvent       = "X-Gitea-Event"
	hForgejoEvent     = "X-Forgejo-Event"
	hGiteaDelivery    = "X-Gitea-Delivery"
	hForgejoDelivery  = "X-Forgejo-Delivery"
)

// Verify checks one delivery from forge f: its signature or token, for
// GitLab Standard Webhooks the timestamp against now within ±skew, and the
// presence of an event type and a delivery ID. It reads only headers and the
// raw body bytes, which it hashes but never parses. It is pure: it reads no
// clock and no environment, and changes neither h nor body.
//
// Errors wrap one of ErrUnknownForge, ErrNoSecret, ErrSignature, ErrStale,
// ErrNoEvent or ErrNoDeliveryID.
func Verify(f Forge, h http.Header, body []byte, s Secrets, now time.Time, skew time.Duration) (Delivery, error) {
	var (
		d   Delivery
		err error
	)
	switch f {
	case GitHub:
		d, err = verifyGitHub(h, body, s)
	case GitLab:
		d, err = verifyGitLab(h, body, s, now, skew)
	case Gitea:
		d, err = verifyGitea(h, body, s)
	default:
		return Delivery{}, ErrUnknownForge
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("verify %s delivery: %w", f, err)
	}
	d.Forge = f
	d.verified = true
	return d, nil
}

func verifyGitHub(h http.Header, body []byte, s Secrets) (Delivery, error) {
	if s.HMAC == "" {
		return Delivery{}, ErrNoSecret
	}
	sig, ok := single(h, hGitHubSignature)
	if !ok {
		return Delivery{}, ErrSignature
	}
	hexMAC, ok := strings.CutPrefix(sig, "sha256=")
	if !ok || !hexMACEqual(hexMAC, []byte(s.HMAC), body) {
		return Delivery{}, ErrSignature
	}
	event, ok := single(h, hGitHubEvent)
	if !ok || !isToken(event) {
		return Delivery{}, ErrNoEvent
	}
	delivery, ok := single(h, hGitHubDelivery)
	if !ok || !isID(delivery) {
		return Delivery{}, ErrNoDeliveryID
	}
	hook, ok := single(h, hGitHubHookID)
	if !ok || (hook != "" && !isID(hook)) {
		return Delivery{}, ErrNoDeliveryID
	}
	return Delivery{Event: event, ReplayKey: "github:" + hook + ":" + delivery}, nil
}

func verifyGitea(h http.Header, body []byte, s Secrets) (Delivery, error) {
	if s.HMAC == "" {
		return Delivery{}, ErrNoSecret
	}
	// Forgejo sends both headers. Each one present must match, so that a
	// forged second header cannot ride along with a genuine first.
	signed := 0
	for _, name := range []string{hGiteaSignature, hForgejoSignature} {
		vs := h.Values(name)
		if len(vs) == 0 {
			continue
		}
		if len(vs) > 1 || !hexMACEqual(vs[0], []byte(s.HMAC), body) {
			return Delivery{}, ErrSignature
		}
		signed++
	}
	if signed == 0 {
		return Delivery{}, ErrSignature
	}
	event, ok := either(h, hGiteaEvent, hForgejoEvent)
	if !ok || !isToken(event) {
		return Delivery{}, ErrNoEvent
	}
	delivery, ok := either(h, hGiteaDelivery, hForgejoDelivery)
	if !ok || !isID(delivery) {
		return Delivery{}, ErrNoDeliveryID
	}
	return Delivery{Event: event, ReplayKey: "gitea:" + delivery}, nil
}

// verifyGitLab accepts a delivery that carries either a valid Standard
// Webhooks signature or the configured token. A signed delivery takes its
// replay key from the signed webhook-id, which a replayer cannot change; a
// token-only delivery from Idempotency-Key, then the GitLab UUID headers,
// then webhook-id.
func verifyGitLab(h http.Header, body []byte, s Secrets, now time.Time, skew time.Duration) (Delivery, error) {
	if s.HMAC == "" && s.GitLab == "" {
		return Delivery{}, ErrNoSecret
	}
	fail := ErrSignature
	signedID := ""
	if s.HMAC != "" && (len(h.Values(hStandardSignature)) > 0 || len(h.Values(hStandardID)) > 0 || len(h.Values(hStandardTimestamp)) > 0) {
		id, err := verifyStandard(h, body, s.HMAC, now, skew)
		if err == nil {
			signedID = id
		} else {
			fail = err
		}
	}
	if signedID == "" && !gitLabTokenMatches(h, s.GitLab) {
		return Delivery{}, fail
	}
	event, ok := single(h, hGitLabEvent)
	if !ok || !isGitLabEvent(event) {
		return Delivery{}, ErrNoEvent
	}
	key := signedID
	if key == "" {
		for _, name := range []string{hIdempotencyKey, hGitLabWebhookUUID, hGitLabEventUUID, hStandardID} {
			v, ok := single(h, name)
			if !ok {
				return Delivery{}, ErrNoDeliveryID
			}
			if v != "" {
				key = v
				break
			}
		}
		if !isID(key) {
			return Delivery{}, ErrNoDeliveryID
		}
	}
	return Delivery{Event: event, ReplayKey: "gitlab:" + key}, nil
}

func gitLabTokenMatches(h http.Header, want string) bool {
	got, ok := single(h, hGitLabToken)
	return ok && got != "" && want != "" && equalSecret(got, want)
}

// verifyStandard checks a Standard Webhooks signature and timestamp and
// returns the signed message ID.
func verifyStandard(h http.Header, body []byte, secret string, now time.Time, skew time.Duration) (string, error) {
	key, err := standardKey(secret)
	if err != nil {
		return "", err
	}
	id, ok1 := single(h, hStandardID)
	ts, ok2 := single(h, hStandardTimestamp)
	sigs, ok3 := single(h, hStandardSignature)
	// The ID may not hold "." so that the signed string id.timestamp.body
	// splits one way only.
	if !ok1 || !ok2 || !ok3 || !isID(id) || strings.Contains(id, ".") || !isDigits(ts, 19) {
		return "", ErrSignature
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	want := mac.Sum(nil)
	matched := false
	for _, sig := range strings.Split(sigs, " ") {
		b64, ok := strings.CutPrefix(sig, "v1,")
		if !ok {
			continue // another scheme, or the empty piece between two spaces
		}
		got, err := base64.StdEncoding.Strict().DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			matched = true
		}
	}
	if !matched {
		return "", ErrSignature
	}
	if !fresh(ts, now, skew) {
		return "", ErrStale
	}
	return id, nil
}

// fresh reports whether the unix time ts (decimal digits) is within skew
// of now. Seconds are compared as integers first, so that no timestamp is
// too large to turn into a time.Time.
func fresh(ts string, now time.Time, skew time.Duration) bool {
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || skew < 0 {
		return false
	}
	if d := now.Unix() - secs; d > int64(skew/time.Second)+1 || d < -int64(skew/time.Second)-1 {
		return false
	}
	return now.Sub(time.Unix(secs, 0)).Abs() <= skew
}

// standardKey returns the Standard Webhooks key: the base64 after "whsec_",
// decoded, or else the secret's own bytes.
func standardKey(secret string) ([]byte, error) {
	b64, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		return []byte(secret), nil
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("%w: whsec_ secret is not base64 of a key", ErrNoSecret)
	}
	return key, nil
}

// hexMACEqual reports whether given is the hex (either case) of
// HMAC-SHA256(key, body), comparing MACs in constant time.
func hexMACEqual(given string, key, body []byte) bool {
	if len(given) != 2*sha256.Size {
		return false
	}
	got, err := hex.DecodeString(given)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// equalSecret compares two secrets in constant time, lengths included, by
// comparing their SHA-256 digests.
func equalSecret(a, b string) bool {
	da, db := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return hmac.Equal(da[:], db[:])
}

// single returns the one value of a header, "" if it is absent, and false
// if it appears more than once: a repeated header is ambiguous.
func single(h http.Header, name string) (string, bool) {
	vs := h.Values(name)
	switch len(vs) {
	case 0:
		return "", true
	case 1:
		return vs[0], true
	}
	return "", false
}

// either returns the value of header a or header b, which must agree when
// both are present and not empty.
func either(h http.Header, a, b string) (string, bool) {
	va, oka := single(h, a)
	vb, okb := single(h, b)
	switch {
	case !oka || !okb:
		return "", false
	case va == "":
		return vb, true
	case vb == "" || va == vb:
		return va, true
	}
	return "", false
}

const maxHeaderToken = 128

// isToken reports whether s is an HTTP token (RFC 9110) of a sane length.
func isToken(s string) bool {
	if s == "" || len(s) > maxHeaderToken {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// isGitLabEvent reports whether s looks like a GitLab event name such as
// "Merge Request Hook": words of letters, digits, '_', '.', '-' joined by
// single spaces.
func isGitLabEvent(s string) bool {
	if s == "" || len(s) > maxHeaderToken || s[0] == ' ' || s[len(s)-1] == ' ' || strings.Contains(s, "  ") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != ' ' && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// isID reports whether s can be part of a replay key: 1 to 128 of
// [A-Za-z0-9._-]. It holds no ':', so the parts of a key cannot be confused.
func isID(s string) bool {
	if s == "" || len(s) > maxHeaderToken {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isDigits(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
