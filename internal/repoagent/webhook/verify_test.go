package webhook

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestGitHubVector checks GitHub's published example: secret "It's a Secret
// to Everybody" and body "Hello, World!" sign to 757107ea….
func TestGitHubVector(t *testing.T) {
	const want = "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	s := Secrets{HMAC: "It's a Secret to Everybody"}
	body := []byte("Hello, World!")
	for _, sig := range []string{"sha256=" + want, "sha256=" + strings.ToUpper(want)} {
		h := http.Header{}
		h.Set("X-Hub-Signature-256", sig)
		h.Set("X-GitHub-Event", "ping")
		h.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
		h.Set("X-GitHub-Hook-ID", "42")
		d, err := Verify(GitHub, h, body, s, testNow, DefaultSkew)
		if err != nil {
			t.Fatalf("signature %s: %v", sig, err)
		}
		wantD := Delivery{Forge: GitHub, Event: "ping", ReplayKey: "github:42:72d3162e-cc78-11e3-81ab-4c9367dc0958", verified: true}
		if diff := cmp.Diff(wantD, d, cmp.AllowUnexported(Delivery{})); diff != "" {
			t.Errorf("delivery (-want +got):\n%s", diff)
		}
	}
	// The vector itself, through the package's own comparison.
	if !hexMACEqual(want, []byte(s.HMAC), body) {
		t.Error("hexMACEqual rejects the published vector")
	}
}

func TestVerifyGitHub(t *testing.T) {
	body := []byte(`{"zen":"Keep it logically awesome."}`)
	good := "sha256=" + hexSum(testSecrets.HMAC, body)
	forged := []byte(good)
	forged[len(forged)-1] ^= 1 // '0'..'9','a'..'f' flipped stays hex
	tests := []struct {
		name   string
		edit   func(h http.Header)
		want   error
		wantKy string
	}{
		{"valid", func(http.Header) {}, nil, "github:12345:d-1"},
		{"uppercase hex", func(h http.Header) { h.Set("X-Hub-Signature-256", "sha256="+strings.ToUpper(good[7:])) }, nil, "github:12345:d-1"},
		{"no hook id", func(h http.Header) { h.Del("X-GitHub-Hook-ID") }, nil, "github::d-1"},
		{"forged", func(h http.Header) { h.Set("X-Hub-Signature-256", string(forged)) }, ErrSignature, ""},
		{"missing", func(h http.Header) { h.Del("X-Hub-Signature-256") }, ErrSignature, ""},
		{"empty", func(h http.Header) { h.Set("X-Hub-Signature-256", "") }, ErrSignature, ""},
		{"prefix only", func(h http.Header) { h.Set("X-Hub-Signature-256", "sha256=") }, ErrSignature, ""},
		{"no prefix", func(h http.Header) { h.Set("X-Hub-Signature-256", good[7:]) }, ErrSignature, ""},
		{"sha1 prefix", func(h http.Header) { h.Set("X-Hub-Signature-256", "sha1="+good[7:]) }, ErrSignature, ""},
		{"uppercase prefix", func(h http.Header) { h.Set("X-Hub-Signature-256", "SHA256="+good[7:]) }, ErrSignature, ""},
		{"truncated", func(h http.Header) { h.Set("X-Hub-Signature-256", good[:len(good)-2]) }, ErrSignature, ""},
		{"trailing junk", func(h http.Header) { h.Set("X-Hub-Signature-256", good+"00") }, ErrSignature, ""},
		{"not hex", func(h http.Header) { h.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("zz", 32)) }, ErrSignature, ""},
		{"different body", func(h http.Header) {
			h.Set("X-Hub-Signature-256", "sha256="+hexSum(testSecrets.HMAC, []byte(`{"zen":"other"}`)))
		}, ErrSignature, ""},
		{"other secret", func(h http.Header) { h.Set("X-Hub-Signature-256", "sha256="+hexSum("guess", body)) }, ErrSignature, ""},
		{"repeated signature", func(h http.Header) { h.Add("X-Hub-Signature-256", good) }, ErrSignature, ""},
		{"no event", func(h http.Header) { h.Del("X-GitHub-Event") }, ErrNoEvent, ""},
		{"event with space", func(h http.Header) { h.Set("X-GitHub-Event", "pull request") }, ErrNoEvent, ""},
		{"no delivery", func(h http.Header) { h.Del("X-GitHub-Delivery") }, ErrNoDeliveryID, ""},
		{"delivery with colon", func(h http.Header) { h.Set("X-GitHub-Delivery", "a:b") }, ErrNoDeliveryID, ""},
		{"hook id with colon", func(h http.Header) { h.Set("X-GitHub-Hook-ID", "1:2") }, ErrNoDeliveryID, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := githubHeaders(testSecrets.HMAC, "ping", "d-1", body)
			tt.edit(h)
			d, err := Verify(GitHub, h, body, testSecrets, testNow, DefaultSkew)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
			if d.ReplayKey != tt.wantKy || (err == nil) != d.verified {
				t.Errorf("delivery = %+v, want replay key %q", d, tt.wantKy)
			}
		})
	}
}

// TestVerifyNoSecret checks that a forge with no secret configured refuses
// every delivery, before looking at anything else, even a correctly signed
// one.
func TestVerifyNoSecret(t *testing.T) {
	body := []byte(`{}`)
	for _, f := range forges {
		for name, h := range map[string]http.Header{
			"signed with empty key": signedWithEmptyKey(f, body),
			"no headers":            {},
		} {
			_, err := Verify(f, h, body, Secrets{}, testNow, DefaultSkew)
			if !errors.Is(err, ErrNoSecret) {
				t.Errorf("%s, %s: Verify = %v, want ErrNoSecret", f, name, err)
			}
		}
	}
	// GitLab with only a token configured does not need the HMAC secret;
	// GitHub and Gitea with only a token configured have no secret.
	_, err := Verify(GitHub, githubHeaders("", "ping", "d", body), body, Secrets{GitLab: "t"}, testNow, DefaultSkew)
	if !errors.Is(err, ErrNoSecret) {
		t.Errorf("GitHub with only a GitLab token: %v, want ErrNoSecret", err)
	}
}

func signedWithEmptyKey(f Forge, body []byte) http.Header {
	switch f {
	case GitHub:
		return githubHeaders("", "ping", "d", body)
	case Gitea:
		return giteaHeaders("", "push", "d", body)
	}
	h := standardHeaders(nil, "Push Hook", "d", testNow, body)
	h.Set("X-Gitlab-Token", "")
	return h
}

func TestVerifyUnknownForge(t *testing.T) {
	body := []byte(`{}`)
	for _, f := range []Forge{"", "bitbucket", "GitHub", "github "} {
		h := githubHeaders(testSecrets.HMAC, "ping", "d", body)
		if _, err := Verify(f, h, body, testSecrets, testNow, DefaultSkew); !errors.Is(err, ErrUnknownForge) {
			t.Errorf("Verify(%q) = %v, want ErrUnknownForge", f, err)
		}
	}
}

func TestVerifyGitLabToken(t *testing.T) {
	body := []byte(`{"object_kind":"push"}`)
	tests := []struct {
		name    string
		secrets Secrets
		edit    func(h http.Header)
		want    error
		wantKey string
	}{
		{"valid", testSecrets, func(http.Header) {}, nil, "gitlab:idem-1"},
		{"token only configured", Secrets{GitLab: testSecrets.GitLab}, func(http.Header) {}, nil, "gitlab:idem-1"},
		{"wrong token", testSecrets, func(h http.Header) { h.Set("X-Gitlab-Token", "gitlab-test-tokeN") }, ErrSignature, ""},
		{"token prefix", testSecrets, func(h http.Header) { h.Set("X-Gitlab-Token", "gitlab-test") }, ErrSignature, ""},
		{"empty token", testSecrets, func(h http.Header) { h.Set("X-Gitlab-Token", "") }, ErrSignature, ""},
		{"missing token", testSecrets, func(h http.Header) { h.Del("X-Gitlab-Token") }, ErrSignature, ""},
		{"repeated token", testSecrets, func(h http.Header) { h.Add("X-Gitlab-Token", testSecrets.GitLab) }, ErrSignature, ""},
		{"token not configured", Secrets{HMAC: "x"}, func(http.Header) {}, ErrSignature, ""},
		{"webhook uuid", testSecrets, func(h http.Header) {
			h.Del("Idempotency-Key")
			h.Set("X-Gitlab-Webhook-UUID", "wh-uuid")
			h.Set("X-Gitlab-Event-UUID", "ev-uuid")
			h.Set("Webhook-Id", "msg-id")
		}, nil, "gitlab:wh-uuid"},
		{"event uuid", testSecrets, func(h http.Header) {
			h.Del("Idempotency-Key")
			h.Set("X-Gitlab-Event-UUID", "ev-uuid")
			h.Set("Webhook-Id", "msg-id")
		}, nil, "gitlab:ev-uuid"},
		{"webhook-id last", testSecrets, func(h http.Header) { h.Del("Idempotency-Key"); h.Set("Webhook-Id", "msg-id") }, nil, "gitlab:msg-id"},
		{"idempotency key first", testSecrets, func(h http.Header) { h.Set("X-Gitlab-Webhook-UUID", "wh-uuid") }, nil, "gitlab:idem-1"},
		{"no delivery id", testSecrets, func(h http.Header) { h.Del("Idempotency-Key") }, ErrNoDeliveryID, ""},
		{"empty delivery id", testSecrets, func(h http.Header) { h.Set("Idempotency-Key", "") }, ErrNoDeliveryID, ""},
		{"malformed delivery id", testSecrets, func(h http.Header) { h.Set("Idempotency-Key", "../a b") }, ErrNoDeliveryID, ""},
		{"no event", testSecrets, func(h http.Header) { h.Del("X-Gitlab-Event") }, ErrNoEvent, ""},
		{"event with newline", testSecrets, func(h http.Header) { h["X-Gitlab-Event"] = []string{"Push\nHook"} }, ErrNoEvent, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := gitlabTokenHeaders(testSecrets.GitLab, "Push Hook", "idem-1")
			tt.edit(h)
			d, err := Verify(GitLab, h, body, tt.secrets, testNow, DefaultSkew)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
			if d.ReplayKey != tt.wantKey {
				t.Errorf("replay key = %q, want %q", d.ReplayKey, tt.wantKey)
			}
		})
	}
}

func TestVerifyGitLabStandardWebhooks(t *testing.T) {
	body := []byte(`{"object_kind":"push"}`)
	key := []byte(testSecrets.HMAC)
	s := Secrets{HMAC: testSecrets.HMAC}
	check := func(t *testing.T, h http.Header, s Secrets, want error) Delivery {
		t.Helper()
		d, err := Verify(GitLab, h, body, s, testNow, 5*time.Minute)
		if !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Fatalf("Verify = %v, want %v", err, want)
		}
		return d
	}

	t.Run("tolerance", func(t *testing.T) {
		for _, tc := range []struct {
			offset time.Duration
			want   error
		}{
			{0, nil},
			{4*time.Minute + 59*time.Second, nil},
			{-4*time.Minute - 59*time.Second, nil},
			{5 * time.Minute, nil},
			{-5 * time.Minute, nil},
			{5*time.Minute + time.Second, ErrStale},
			{-5*time.Minute - time.Second, ErrStale},
			{-24 * time.Hour, ErrStale},
			{365 * 24 * time.Hour, ErrStale},
		} {
			t.Run(tc.offset.String(), func(t *testing.T) {
				check(t, standardHeaders(key, "Push Hook", "msg_1", testNow.Add(tc.offset), body), s, tc.want)
			})
		}
	})
	t.Run("far future timestamp", func(t *testing.T) {
		h := standardHeaders(key, "Push Hook", "msg_1", testNow, body)
		ts := "99999999999999999" // past what time.Unix can add to now without care
		h.Set("Webhook-Timestamp", ts)
		h.Set("Webhook-Signature", "v1,"+base64.StdEncoding.EncodeToString(sum(key, []byte("msg_1."+ts+"."), body)))
		check(t, h, s, ErrStale)
	})
	t.Run("stale but right token", func(t *testing.T) {
		// Either way suffices: the token holder is authenticated.
		h := standardHeaders(key, "Push Hook", "msg_1", testNow.Add(-time.Hour), body)
		h.Set("X-Gitlab-Token", testSecrets.GitLab)
		check(t, h, testSecrets, nil)
	})
	t.Run("one of several signatures", func(t *testing.T) {
		h := standardHeaders(key, "Push Hook", "msg_1", testNow, body)
		good := h.Get("Webhook-Signature")
		other := "v1," + base64.StdEncoding.EncodeToString(sum([]byte("old key"), []byte("msg_1."), body))
		for _, list := range []string{
			other + " " + good,
			good + " " + other,
			"v1a,AAAA " + good,
			other + "  " + good,
		} {
			h.Set("Webhook-Signature", list)
			check(t, h, s, nil)
		}
		for _, list := range []string{other, other + " v1a," + good[3:], "v2," + good[3:], good[3:], "", "v1,", "v1," + good[3:len(good)-4]} {
			h.Set("Webhook-Signature", list)
			check(t, h, s, ErrSignature)
		}
	})
	t.Run("signature binds id, timestamp and body", func(t *testing.T) {
		h := standardHeaders(key, "Push Hook", "msg_1", testNow, body)
		h.Set("Webhook-Id", "msg_2")
		check(t, h, s, ErrSignature)
		h = standardHeaders(key, "Push Hook", "msg_1", testNow, body)
		h.Set("Webhook-Timestamp", strconv.FormatInt(testNow.Unix()+1, 10))
		check(t, h, s, ErrSignature)
		h = standardHeaders(key, "Push Hook", "msg_1", testNow, []byte(`{"object_kind":"note"}`))
		check(t, h, s, ErrSignature)
	})
	t.Run("malformed headers", func(t *testing.T) {
		for name, edit := range map[string]func(http.Header){
			"no id":        func(h http.Header) { h.Del("Webhook-Id") },
			"id with dot":  func(h http.Header) { h.Set("Webhook-Id", "a.1") },
			"no timestamp": func(h http.Header) { h.Del("Webhook-Timestamp") },
			"signed timestamp": func(h http.Header) {
				h.Set("Webhook-Timestamp", "+"+h.Get("Webhook-Timestamp"))
			},
			"no signature": func(h http.Header) { h.Del("Webhook-Signature") },
			"two ids":      func(h http.Header) { h.Add("Webhook-Id", "msg_1") },
		} {
			h := standardHeaders(key, "Push Hook", "msg_1", testNow, body)
			edit(h)
			if _, err := Verify(GitLab, h, body, s, testNow, DefaultSkew); !errors.Is(err, ErrSignature) {
				t.Errorf("%s: Verify = %v, want ErrSignature", name, err)
			}
		}
	})
	t.Run("whsec key", func(t *testing.T) {
		raw := []byte{0x00, 0xff, 0x10, 'k', 'e', 'y', 0x80}
		ws := Secrets{HMAC: "whsec_" + base64.StdEncoding.EncodeToString(raw)}
		check(t, standardHeaders(raw, "Push Hook", "msg_1", testNow, body), ws, nil)
		// The string itself is not the key.
		check(t, standardHeaders([]byte(ws.HMAC), "Push Hook", "msg_1", testNow, body), ws, ErrSignature)
		// Without the prefix the string's bytes are the key, base64 or not.
		plain := Secrets{HMAC: base64.StdEncoding.EncodeToString(raw)}
		check(t, standardHeaders([]byte(plain.HMAC), "Push Hook", "msg_1", testNow, body), plain, nil)
		check(t, standardHeaders(raw, "Push Hook", "msg_1", testNow, body), plain, ErrSignature)
		// A whsec_ secret that is not base64 is a configuration error.
		bad := Secrets{HMAC: "whsec_not*base64"}
		check(t, standardHeaders([]byte(bad.HMAC), "Push Hook", "msg_1", testNow, body), bad, ErrNoSecret)
	})
	t.Run("replay key is the signed id", func(t *testing.T) {
		h := standardHeaders(key, "Push Hook", "msg_1", testNow, body)
		h.Set("Idempotency-Key", "chosen-by-replayer")
		h.Set("X-Gitlab-Webhook-UUID", "also-chosen")
		d := check(t, h, s, nil)
		if d.ReplayKey != "gitlab:msg_1" {
			t.Errorf("replay key = %q, want gitlab:msg_1", d.ReplayKey)
		}
	})
	t.Run("skew is an argument", func(t *testing.T) {
		h := standardHeaders(key, "Push Hook", "msg_1", testNow.Add(-time.Minute), body)
		if _, err := Verify(GitLab, h, body, s, testNow, 30*time.Second); !errors.Is(err, ErrStale) {
			t.Errorf("skew 30s, 1 minute old: %v, want ErrStale", err)
		}
		if _, err := Verify(GitLab, h, body, s, testNow.Add(-time.Minute), 0); err != nil {
			t.Errorf("now equal to the timestamp, skew 0: %v", err)
		}
	})
}

func TestVerifyGitea(t *testing.T) {
	body := []byte(`{"ref":"refs/heads/main"}`)
	good := hexSum(testSecrets.HMAC, body)
	bad := hexSum("guess", body)
	tests := []struct {
		name    string
		headers http.Header
		want    error
		wantKey string
	}{
		{"gitea", giteaHeaders(testSecrets.HMAC, "push", "g-1", body), nil, "gitea:g-1"},
		{"forgejo with both names", forgejoHeaders(testSecrets.HMAC, "push", "f-1", body), nil, "gitea:f-1"},
		{"forgejo names only", http.Header{
			"X-Forgejo-Signature": {good}, "X-Forgejo-Event": {"push"}, "X-Forgejo-Delivery": {"f-2"},
		}, nil, "gitea:f-2"},
		{"uppercase hex", http.Header{
			"X-Gitea-Signature": {strings.ToUpper(good)}, "X-Gitea-Event": {"push"}, "X-Gitea-Delivery": {"g-1"},
		}, nil, "gitea:g-1"},
		{"empty", http.Header{
			"X-Gitea-Signature": {""}, "X-Gitea-Event": {"push"}, "X-Gitea-Delivery": {"g-1"},
		}, ErrSignature, ""},
		{"missing", http.Header{"X-Gitea-Event": {"push"}, "X-Gitea-Delivery": {"g-1"}}, ErrSignature, ""},
		{"forged", http.Header{
			"X-Gitea-Signature": {bad}, "X-Gitea-Event": {"push"}, "X-Gitea-Delivery": {"g-1"},
		}, ErrSignature, ""},
		{"github prefix", http.Header{
			"X-Gitea-Signature": {"sha256=" + good}, "X-Gitea-Event": {"push"}, "X-Gitea-Delivery": {"g-1"},
		}, ErrSignature, ""},
		{"good gitea, forged forgejo", http.Header{
			"X-Gitea-Signature": {good}, "X-Forgejo-Signature": {bad}, "X-Gitea-Event": {"push"}, "X-Gitea-Delivery": {"g-1"},
		}, ErrSignature, ""},
		{"good gitea, empty forgejo", http.Header{
			"X-Gitea-Signature": {good}, "X-Forgejo-Signature": {""}, "X-Gitea-Event": {"push"}, "X-Gitea-Delivery": {"g-1"},
		}, ErrSignature, ""},
		{"events disagree", http.Header{
			"X-Gitea-Signature": {good}, "X-Gitea-Event": {"push"}, "X-Forgejo-Event": {"issues"}, "X-Gitea-Delivery": {"g-1"},
		}, ErrNoEvent, ""},
		{"deliveries disagree", http.Header{
			"X-Gitea-Signature": {good}, "X-Gitea-Event": {"push"}, "X-Gitea-Delivery": {"g-1"}, "X-Forgejo-Delivery": {"g-2"},
		}, ErrNoDeliveryID, ""},
		{"no delivery", http.Header{"X-Gitea-Signature": {good}, "X-Gitea-Event": {"push"}}, ErrNoDeliveryID, ""},
		{"no event", http.Header{"X-Gitea-Signature": {good}, "X-Gitea-Delivery": {"g-1"}}, ErrNoEvent, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Verify(Gitea, tt.headers, body, testSecrets, testNow, DefaultSkew)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
			if d.ReplayKey != tt.wantKey {
				t.Errorf("replay key = %q, want %q", d.ReplayKey, tt.wantKey)
			}
		})
	}
}

// TestVerifyErrorsQuoteNoInput checks that no error from Verify holds a
// header value or body bytes, by putting a canary in all of them.
func TestVerifyErrorsQuoteNoInput(t *testing.T) {
	const canary = "CANARY7x"
	body := []byte(`{"title":"` + canary + `"}`)
	names := []string{
		"X-Hub-Signature-256", "X-GitHub-Event", "X-GitHub-Delivery", "X-GitHub-Hook-ID",
		"X-Gitlab-Token", "X-Gitlab-Event", "Idempotency-Key", "Webhook-Id", "Webhook-Timestamp", "Webhook-Signature",
		"X-Gitea-Signature", "X-Gitea-Event", "X-Gitea-Delivery",
	}
	for _, f := range forges {
		for i := range names {
			h := http.Header{}
			for j, n := range names {
				v := canary
				if j < i {
					v = "sha256=" + canary // vary what fails first
				}
				h.Set(n, v)
			}
			for _, s := range []Secrets{testSecrets, {HMAC: "whsec_" + canary}, {}} {
				_, err := Verify(f, h, body, s, testNow, DefaultSkew)
				if err == nil {
					t.Fatalf("%s accepted a canary delivery", f)
				}
				if strings.Contains(err.Error(), canary) {
					t.Errorf("%s: error %q quotes input", f, err)
				}
			}
		}
	}
}
