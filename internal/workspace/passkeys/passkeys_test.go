package passkeys

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/workspace/passkeys/passkeytest"
)

// TestBinding: the binding is the hex SHA-256 of the domain, the person,
// the method, the path and the body, NUL-separated, and each of them
// changes it; the words do not.
func TestBinding(t *testing.T) {
	a := Action{UserID: 12, Method: "POST", Path: "/api/servers/3/approve", Body: []byte("fingerprint=ab"), Words: "Approve git"}
	sum := sha256.Sum256([]byte("zero-approval-v1\x0012\x00POST\x00/api/servers/3/approve\x00fingerprint=ab"))
	if got, want := a.Binding(), hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("Binding() = %s, want %s", got, want)
	}
	others := []Action{
		{UserID: 1, Method: "POST", Path: "/api/servers/3/approve", Body: []byte("fingerprint=ab")},
		{UserID: 12, Method: "PUT", Path: "/api/servers/3/approve", Body: []byte("fingerprint=ab")},
		{UserID: 12, Method: "POST", Path: "/api/servers/4/approve", Body: []byte("fingerprint=ab")},
		{UserID: 12, Method: "POST", Path: "/api/servers/3/approve", Body: []byte("fingerprint=ac")},
		{UserID: 12, Method: "POST", Path: "/api/servers/3/approve\x00fingerprint=ab"},
	}
	for _, o := range others {
		if o.Binding() == a.Binding() {
			t.Errorf("%+v binds as %+v does", o, a)
		}
	}
	a.Words = "other words"
	if a.Binding() != hex.EncodeToString(sum[:]) {
		t.Error("the words changed the binding")
	}
}

// TestNewRefusesAnIPAddress: the relying party id is a domain, as browsers
// require.
func TestNewRefusesAnIPAddress(t *testing.T) {
	f := newFixture(t)
	if _, err := New(Options{DB: f.db, RPID: "127.0.0.1", Origins: []string{"http://127.0.0.1:7077"}, RPName: "Zero"}); err == nil {
		t.Error("New accepted 127.0.0.1 as the relying party id")
	}
}

// TestRegisterThenAssert: a registered passkey asserts an action: the
// options ask for what the brief says, the challenge is the action's, and
// a verified assertion stores the sign count and when it was used.
func TestRegisterThenAssert(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	auth := passkeytest.New(origin)

	options, nonce, err := f.s.BeginRegistration(ctx, f.owner)
	if err != nil {
		t.Fatal(err)
	}
	co := decode[creationOptions](t, options).PublicKey
	var algs []int
	for _, p := range co.Params {
		algs = append(algs, p.Alg)
	}
	handle, _ := base64.RawURLEncoding.DecodeString(co.User.ID)
	if co.RP.ID != "localhost" || co.RP.Name != "Zero" || co.User.Name != "ada" ||
		!cmp.Equal(handle, binary.BigEndian.AppendUint64(nil, uint64(f.owner.ID))) ||
		co.Selection.ResidentKey != "required" || !co.Selection.RequireResidentKey || co.Selection.UserVerification != "required" ||
		co.Attestation != "none" || !cmp.Equal(algs, []int{-8, -7, -257}) || co.Timeout != int(ChallengeTTL/time.Millisecond) || len(co.Exclude) != 0 {
		t.Errorf("creation options: %s", options)
	}
	if c, err := base64.RawURLEncoding.DecodeString(co.Challenge); err != nil || len(c) < 16 {
		t.Errorf("registration challenge %q", co.Challenge)
	}
	cred, err := auth.Create(options)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := f.s.FinishRegistration(ctx, f.owner, nonce, "", cred)
	if err != nil {
		t.Fatal(err)
	}
	want := Passkey{ID: pk.ID, UserID: f.owner.ID, Name: "Passkey 1", CredentialID: decode[struct{ ID string }](t, cred).ID,
		AAGUID: hex.EncodeToString(auth.AAGUID[:]), CreatedAt: f.clock.now()}
	if diff := cmp.Diff(want, pk); diff != "" || pk.ID == 0 {
		t.Errorf("registered (-want +got):\n%s", diff)
	}
	if list, err := f.s.List(ctx, f.owner.ID); err != nil || !cmp.Equal(list, []Passkey{want}) {
		t.Errorf("List: %+v %v", list, err)
	}

	f.clock.add(time.Hour)
	a := approve(f.owner)
	options, nonce, err = f.s.BeginAssertion(ctx, f.owner, a)
	if err != nil {
		t.Fatal(err)
	}
	ro := decode[requestOptions](t, options).PublicKey
	binding, _ := hex.DecodeString(a.Binding())
	raw, _ := base64.RawURLEncoding.DecodeString(nonce)
	challenge := sha256.Sum256(append(binding, raw...))
	if len(raw) != 32 || ro.Challenge != base64.RawURLEncoding.EncodeToString(challenge[:]) || ro.RPID != "localhost" ||
		ro.UserVerification != "required" || len(ro.Allow) != 1 || ro.Allow[0].ID != pk.CredentialID {
		t.Errorf("request options %s for nonce %s", options, nonce)
	}
	assertion, err := auth.Get(options)
	if err != nil {
		t.Fatal(err)
	}
	used, err := f.s.VerifyAssertion(ctx, f.owner, a, nonce, assertion)
	if err != nil {
		t.Fatal(err)
	}
	want.LastUsedAt = f.clock.now()
	if diff := cmp.Diff(want, used); diff != "" {
		t.Errorf("the passkey used (-want +got):\n%s", diff)
	}
	if list, err := f.s.List(ctx, f.owner.ID); err != nil || !cmp.Equal(list, []Passkey{want}) {
		t.Errorf("List after use: %+v %v", list, err)
	}
	if n := f.signCount(t, pk.ID); n != 1 {
		t.Errorf("sign count %d after one assertion, want 1", n)
	}
	nonce, assertion = f.begin(t, f.owner, a, auth)
	if _, err := f.s.VerifyAssertion(ctx, f.owner, a, nonce, assertion); err != nil {
		t.Fatal(err)
	}
	if n := f.signCount(t, pk.ID); n != 2 {
		t.Errorf("sign count %d after two assertions, want 2", n)
	}
}

// TestAssertionBoundToOneAction: an assertion made for one action is
// refused for another (another path, another body, another person's), a
// second time, after its challenge expired, by another person, and as a
// registration's; a refusal uses the nonce up; the challenge is derived
// from the action verified.
func TestAssertionBoundToOneAction(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	auth := passkeytest.New(origin)
	f.register(t, f.owner, auth, "")
	a := approve(f.owner)

	otherPath, otherBody, otherUser := a, a, a
	otherPath.Path = "/api/servers/4/approve"
	otherBody.Body = []byte("fingerprint=sha256%3Acd34")
	otherUser.UserID = f.member.ID
	for name, b := range map[string]Action{"another path": otherPath, "another body": otherBody, "another person's": otherUser} {
		nonce, assertion := f.begin(t, f.owner, a, auth)
		if _, err := f.s.VerifyAssertion(ctx, f.owner, b, nonce, assertion); !errors.Is(err, ErrWrongAction) {
			t.Errorf("%s: %v, want ErrWrongAction", name, err)
		}
		if _, err := f.s.VerifyAssertion(ctx, f.owner, a, nonce, assertion); !errors.Is(err, ErrChallengeUnknown) {
			t.Errorf("%s, then for its own action: %v, want ErrChallengeUnknown", name, err)
		}
	}

	// The challenge is derived again from the action verified, not read
	// back: a stored binding changed to another action's does not pass.
	nonce, assertion := f.begin(t, f.owner, a, auth)
	if _, err := f.db.Exec(`UPDATE passkey_challenges SET binding = ? WHERE nonce = ?`, otherPath.Binding(), nonce); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.VerifyAssertion(ctx, f.owner, otherPath, nonce, assertion); !errors.Is(err, ErrWrongAction) {
		t.Errorf("a stored binding changed to another action's: %v, want ErrWrongAction", err)
	}

	nonce, assertion = f.begin(t, f.owner, a, auth)
	if _, err := f.s.VerifyAssertion(ctx, f.owner, a, nonce, assertion); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.VerifyAssertion(ctx, f.owner, a, nonce, assertion); !errors.Is(err, ErrChallengeUnknown) {
		t.Errorf("the same assertion twice: %v, want ErrChallengeUnknown", err)
	}

	nonce, assertion = f.begin(t, f.owner, a, auth)
	f.clock.add(ChallengeTTL - time.Nanosecond)
	if _, err := f.s.VerifyAssertion(ctx, f.owner, a, nonce, assertion); err != nil {
		t.Errorf("just before the challenge expired: %v", err)
	}
	nonce, assertion = f.begin(t, f.owner, a, auth)
	f.clock.add(ChallengeTTL)
	if _, err := f.s.VerifyAssertion(ctx, f.owner, a, nonce, assertion); !errors.Is(err, ErrChallengeUnknown) {
		t.Errorf("after ChallengeTTL: %v, want ErrChallengeUnknown", err)
	}

	// The member registers too, then answers the owner's challenge.
	f.register(t, f.member, passkeytest.New(origin), "")
	nonce, assertion = f.begin(t, f.owner, a, auth)
	if _, err := f.s.VerifyAssertion(ctx, f.member, otherUser, nonce, assertion); !errors.Is(err, ErrChallengeUnknown) {
		t.Errorf("the owner's challenge, by the member: %v, want ErrChallengeUnknown", err)
	}

	nonce, _ = f.create(t, f.owner, passkeytest.New(origin))
	if _, err := f.s.VerifyAssertion(ctx, f.owner, a, nonce, assertion); !errors.Is(err, ErrChallengeUnknown) {
		t.Errorf("a registration's nonce: %v, want ErrChallengeUnknown", err)
	}
	if _, err := f.s.VerifyAssertion(ctx, f.owner, a, "", assertion); !errors.Is(err, ErrChallengeUnknown) {
		t.Errorf("no nonce: %v, want ErrChallengeUnknown", err)
	}
	if _, _, err := f.s.BeginAssertion(ctx, f.owner, otherUser); !errors.Is(err, ErrWrongAction) {
		t.Errorf("beginning another person's action: %v, want ErrWrongAction", err)
	}
}

// TestAssertionRefused: go-webauthn's refusals are ErrAssertion: a
// credential never registered, another person's, a wrong origin, no user
// verification, a sign count that went back; none of them counts as a use.
func TestAssertionRefused(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	auth := passkeytest.New(origin)
	pk := f.register(t, f.owner, auth, "")
	a := approve(f.owner)

	// An authenticator whose credential was begun, never finished.
	stranger := passkeytest.New(origin)
	f.create(t, f.owner, stranger)
	stranger.AnyCredential = true
	// The member's registered passkey.
	members := passkeytest.New(origin)
	f.register(t, f.member, members, "")
	members.AnyCredential = true
	// The owner's passkey, answering for another origin, or without
	// verifying the person.
	elsewhere := auth.Clone()
	elsewhere.Origin = "http://localhost:7078"
	unverified := auth.Clone()
	unverified.NoUV = true

	for _, c := range []struct {
		name string
		auth *passkeytest.Authenticator
	}{
		{"never registered", stranger},
		{"the member's", members},
		{"a wrong origin", elsewhere},
		{"no user verification", unverified},
	} {
		nonce, assertion := f.begin(t, f.owner, a, c.auth)
		if _, err := f.s.VerifyAssertion(ctx, f.owner, a, nonce, assertion); !errors.Is(err, ErrAssertion) {
			t.Errorf("%s: %v, want ErrAssertion", c.name, err)
		}
	}
	if list, _ := f.s.List(ctx, f.owner.ID); len(list) != 1 || !list[0].LastUsedAt.IsZero() || f.signCount(t, pk.ID) != 0 {
		t.Errorf("after refusals only: %+v, sign count %d", list, f.signCount(t, pk.ID))
	}

	// A clone: the original counts to 2; the clone's 1 goes back.
	clone := auth.Clone()
	for range 2 {
		nonce, assertion := f.begin(t, f.owner, a, auth)
		if _, err := f.s.VerifyAssertion(ctx, f.owner, a, nonce, assertion); err != nil {
			t.Fatal(err)
		}
	}
	nonce, assertion := f.begin(t, f.owner, a, clone)
	if _, err := f.s.VerifyAssertion(ctx, f.owner, a, nonce, assertion); !errors.Is(err, ErrAssertion) {
		t.Errorf("a sign count that went back: %v, want ErrAssertion", err)
	}
	if n := f.signCount(t, pk.ID); n != 2 {
		t.Errorf("sign count %d after the clone's refusal, want 2", n)
	}
	nonce, _ = f.begin(t, f.owner, a, auth)
	if _, err := f.s.VerifyAssertion(ctx, f.owner, a, nonce, []byte(`{"id":"AA","rawId":"AA","type":"public-key"}`)); !errors.Is(err, ErrAssertion) {
		t.Errorf("an assertion that does not parse: %v, want ErrAssertion", err)
	}
	if _, _, err := f.s.BeginAssertion(ctx, User{ID: f.member.ID + 1, Name: "nobody"}, Action{UserID: f.member.ID + 1}); !errors.Is(err, ErrNoPasskey) {
		t.Errorf("a person without a passkey: %v, want ErrNoPasskey", err)
	}
}

// TestRegistration: a registration's nonce is single use and expires; the
// options exclude the person's passkeys; names are checked, or given.
func TestRegistration(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	auth := passkeytest.New(origin)

	nonce, cred := f.create(t, f.owner, auth)
	first, err := f.s.FinishRegistration(ctx, f.owner, nonce, "  YubiKey 5C  ", cred)
	if err != nil || first.Name != "YubiKey 5C" {
		t.Fatalf("%+v %v", first, err)
	}
	if _, err := f.s.FinishRegistration(ctx, f.owner, nonce, "", cred); !errors.Is(err, ErrChallengeUnknown) {
		t.Errorf("the nonce a second time: %v, want ErrChallengeUnknown", err)
	}

	options, _, err := f.s.BeginRegistration(ctx, f.owner)
	if err != nil {
		t.Fatal(err)
	}
	if ex := decode[creationOptions](t, options).PublicKey.Exclude; len(ex) != 1 || ex[0].ID != first.CredentialID {
		t.Errorf("excludeCredentials %+v, want the first passkey %s", ex, first.CredentialID)
	}
	if _, err := auth.Create(options); err == nil {
		t.Error("the authenticator made a second credential although the options exclude its first")
	}

	second := passkeytest.New(origin)
	for _, c := range []struct {
		name string
		want error
	}{
		{strings.Repeat("é", MaxNameLen+1), ErrInvalidName},
		{"Key\nnext line", ErrInvalidName},
		{"Key \u202eevil", ErrInvalidName},
		{"   ", ErrInvalidName},
	} {
		nonce, cred := f.create(t, f.owner, second)
		if _, err := f.s.FinishRegistration(ctx, f.owner, nonce, c.name, cred); !errors.Is(err, c.want) {
			t.Errorf("name %q: %v, want %v", c.name, err, c.want)
		}
		if _, err := f.s.FinishRegistration(ctx, f.owner, nonce, "ok", cred); !errors.Is(err, ErrChallengeUnknown) {
			t.Errorf("name %q, then the nonce again: %v, want ErrChallengeUnknown", c.name, err)
		}
	}
	if n, err := f.s.Count(ctx, f.owner.ID); n != 1 || err != nil {
		t.Errorf("after refused names: %d passkeys %v, want 1", n, err)
	}
	if pk := f.register(t, f.owner, second, strings.Repeat("é", MaxNameLen)); pk.Name != strings.Repeat("é", MaxNameLen) {
		t.Errorf("a name of %d characters: %q", MaxNameLen, pk.Name)
	}
	if pk := f.register(t, f.owner, passkeytest.New(origin), ""); pk.Name != "Passkey 3" {
		t.Errorf("the third passkey, unnamed: %q, want Passkey 3", pk.Name)
	}

	// Expired; another person's; an assertion's; an attestation from
	// another origin.
	third := passkeytest.New(origin)
	nonce, cred = f.create(t, f.owner, third)
	f.clock.add(ChallengeTTL)
	if _, err := f.s.FinishRegistration(ctx, f.owner, nonce, "", cred); !errors.Is(err, ErrChallengeUnknown) {
		t.Errorf("after ChallengeTTL: %v, want ErrChallengeUnknown", err)
	}
	nonce, cred = f.create(t, f.owner, third)
	if _, err := f.s.FinishRegistration(ctx, f.member, nonce, "", cred); !errors.Is(err, ErrChallengeUnknown) {
		t.Errorf("the owner's nonce, by the member: %v, want ErrChallengeUnknown", err)
	}
	assertNonce, _ := f.begin(t, f.owner, approve(f.owner), auth)
	if _, err := f.s.FinishRegistration(ctx, f.owner, assertNonce, "", cred); !errors.Is(err, ErrChallengeUnknown) {
		t.Errorf("an assertion's nonce: %v, want ErrChallengeUnknown", err)
	}
	third.Origin = "http://localhost:7078"
	nonce, cred = f.create(t, f.owner, third)
	if _, err := f.s.FinishRegistration(ctx, f.owner, nonce, "", cred); !errors.Is(err, ErrRegistration) {
		t.Errorf("from another origin: %v, want ErrRegistration", err)
	}
	if n, err := f.s.Count(ctx, f.owner.ID); n != 3 || err != nil {
		t.Errorf("at the end: %d passkeys %v, want 3", n, err)
	}
}

// TestRenameRemove: a person renames and removes their own passkeys only.
func TestRenameRemove(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	mine := f.register(t, f.owner, passkeytest.New(origin), "")
	theirs := f.register(t, f.member, passkeytest.New(origin), "")

	got, err := f.s.Rename(ctx, f.owner.ID, mine.ID, " Laptop ")
	mine.Name = "Laptop"
	if err != nil || !cmp.Equal(got, mine) {
		t.Errorf("Rename: %+v %v, want %+v", got, err, mine)
	}
	if _, err := f.s.Rename(ctx, f.owner.ID, mine.ID, strings.Repeat("x", MaxNameLen+1)); !errors.Is(err, ErrInvalidName) {
		t.Errorf("a long name: %v, want ErrInvalidName", err)
	}
	if _, err := f.s.Rename(ctx, f.owner.ID, theirs.ID, "mine now"); !errors.Is(err, ErrNotFound) {
		t.Errorf("renaming the member's: %v, want ErrNotFound", err)
	}
	if err := f.s.Remove(ctx, f.owner.ID, theirs.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("removing the member's: %v, want ErrNotFound", err)
	}
	if list, err := f.s.List(ctx, f.member.ID); err != nil || !cmp.Equal(list, []Passkey{theirs}) {
		t.Errorf("the member's passkeys: %+v %v", list, err)
	}
	if err := f.s.Remove(ctx, f.owner.ID, mine.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.s.Remove(ctx, f.owner.ID, mine.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("removing it again: %v, want ErrNotFound", err)
	}
	if n, err := f.s.Count(ctx, f.owner.ID); n != 0 || err != nil {
		t.Errorf("after removing: %d %v", n, err)
	}
}

// TestRequired: approvals need a passkey once the owner has one, unless the
// owner switched it off; a member's passkey does not count; Reset removes
// every passkey, every pending challenge and the setting.
func TestRequired(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	required := func(want bool, when string) {
		t.Helper()
		if got, err := f.s.Required(ctx, f.owner.ID); got != want || err != nil {
			t.Errorf("%s: Required %v %v, want %v", when, got, err, want)
		}
	}
	required(false, "with no passkey")
	f.register(t, f.member, passkeytest.New(origin), "")
	required(false, "with the member's passkey")
	if err := f.s.SetRequired(ctx, "ada", true); err != nil {
		t.Fatal(err)
	}
	required(false, "switched on, with the member's passkey")
	auth := passkeytest.New(origin)
	f.register(t, f.owner, auth, "")
	required(true, "once the owner has one")
	if err := f.s.SetRequired(ctx, "ada", false); err != nil {
		t.Fatal(err)
	}
	required(false, "switched off")
	if err := f.s.SetRequired(ctx, "ada", true); err != nil {
		t.Fatal(err)
	}
	required(true, "switched on again")
	if err := f.s.SetRequired(ctx, "ada", false); err != nil {
		t.Fatal(err)
	}

	a := approve(f.owner)
	nonce, assertion := f.begin(t, f.owner, a, auth)
	if n, err := f.s.Reset(ctx); n != 2 || err != nil {
		t.Errorf("Reset: %d %v, want 2", n, err)
	}
	for _, u := range []User{f.owner, f.member} {
		if n, err := f.s.Count(ctx, u.ID); n != 0 || err != nil {
			t.Errorf("%s after Reset: %d passkeys %v", u.Name, n, err)
		}
	}
	if _, err := f.s.VerifyAssertion(ctx, f.owner, a, nonce, assertion); !errors.Is(err, ErrChallengeUnknown) {
		t.Errorf("a challenge begun before Reset: %v, want ErrChallengeUnknown", err)
	}
	required(false, "after Reset")
	f.register(t, f.owner, passkeytest.New(origin), "")
	required(true, "after Reset, once the owner has a passkey again (the 'off' is gone)")
}

// TestConcurrentVerify: of 8 verifications of one assertion at once,
// exactly one passes.
func TestConcurrentVerify(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	auth := passkeytest.New(origin)
	f.register(t, f.owner, auth, "")
	a := approve(f.owner)
	nonce, assertion := f.begin(t, f.owner, a, auth)

	const n = 8
	if database.DialectOf(f.db) == database.PostgreSQL {
		// Open the connections first, each having read the table once, so
		// that the verifications run side by side rather than each behind
		// a new connection.
		f.db.SetMaxIdleConns(n)
		var conns []*sql.Conn
		for range n {
			c, err := f.db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.ExecContext(ctx, `DELETE FROM passkey_challenges WHERE nonce = ''`); err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		for _, c := range conns {
			c.Close()
		}
	}
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			_, errs[i] = f.s.VerifyAssertion(ctx, f.owner, a, nonce, assertion)
		})
	}
	close(start)
	wg.Wait()
	passed := 0
	for _, err := range errs {
		switch {
		case err == nil:
			passed++
		case !errors.Is(err, ErrChallengeUnknown):
			t.Errorf("a verification: %v, want ErrChallengeUnknown", err)
		}
	}
	if passed != 1 {
		t.Errorf("%d of %d verifications passed, want 1", passed, n)
	}
}

// TestPendingBounded: a person keeps at most maxPending challenges (a new
// one drops their oldest), and a Begin deletes expired challenges.
func TestPendingBounded(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	auth := passkeytest.New(origin)
	f.register(t, f.owner, auth, "")
	f.register(t, f.member, passkeytest.New(origin), "")
	a := approve(f.owner)
	var nonces []string
	var assertions [][]byte
	for range maxPending + 1 {
		f.clock.add(time.Millisecond)
		nonce, assertion := f.begin(t, f.owner, a, auth)
		nonces, assertions = append(nonces, nonce), append(assertions, assertion)
	}
	pending := func() (n int) {
		t.Helper()
		if err := f.db.QueryRow(`SELECT count(*) FROM passkey_challenges`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := pending(); n != maxPending {
		t.Errorf("%d challenges kept, want %d", n, maxPending)
	}
	if _, err := f.s.VerifyAssertion(ctx, f.owner, a, nonces[0], assertions[0]); !errors.Is(err, ErrChallengeUnknown) {
		t.Errorf("the oldest of %d: %v, want ErrChallengeUnknown", maxPending+1, err)
	}
	if _, err := f.s.VerifyAssertion(ctx, f.owner, a, nonces[maxPending], assertions[maxPending]); err != nil {
		t.Errorf("the newest: %v", err)
	}
	f.clock.add(ChallengeTTL)
	if _, _, err := f.s.BeginAssertion(ctx, f.member, approve(f.member)); err != nil {
		t.Fatal(err)
	}
	if n := pending(); n != 1 {
		t.Errorf("%d challenges after the others expired and one more began, want 1", n)
	}
}

// FuzzVerifyAssertion: whatever the browser's answer holds, verifying it
// never panics, and a refusal of it is ErrAssertion.
func FuzzVerifyAssertion(fz *testing.F) {
	f := newFixture(fz)
	auth := passkeytest.New(origin)
	f.register(fz, f.owner, auth, "")
	a := approve(f.owner)
	_, valid := f.begin(fz, f.owner, a, auth)
	fz.Add(valid)
	fz.Add([]byte(`{"id":"AA","rawId":"AA","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"","signature":""}}`))
	fz.Add([]byte(`null`))
	fz.Fuzz(func(t *testing.T, assertion []byte) {
		ctx := context.Background()
		_, nonce, err := f.s.BeginAssertion(ctx, f.owner, a)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.VerifyAssertion(ctx, f.owner, a, nonce, assertion); err != nil && !errors.Is(err, ErrAssertion) {
			t.Errorf("%s: %v, want nil or ErrAssertion", assertion, err)
		}
	})
}
