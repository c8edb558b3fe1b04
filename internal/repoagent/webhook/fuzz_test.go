package webhook

import (
	"encoding/base64"
	"errors"
	"math"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzVerify feeds Verify random secrets, headers and bodies. It must never
// panic, never change its inputs, fail only with the package's sentinels,
// and accept only what the fuzz function itself, computing the HMAC without
// the package's help, agrees is signed.
//
// mode picks the forge (bits 0-1), whether the fuzz function signs the
// delivery correctly before the fuzzer's other inputs are applied (bit 2),
// whether a second Gitea signature header is sent (bit 3), whether
// Standard Webhooks headers are sent (bit 4), and whether the GitLab token
// header is the configured token (bit 5).
func FuzzVerify(f *testing.F) {
	f.Add(uint8(0), "It's a Secret to Everybody", "", "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17", "", "ping", "d-1", int64(0), []byte("Hello, World!"))
	f.Add(uint8(4), "k", "", "", "", "push", "d-1", int64(0), []byte(`{}`))
	f.Add(uint8(2|4|8), "k", "", hexSum("k", []byte(`{}`)), "", "push", "d-1", int64(0), []byte(`{}`))
	f.Add(uint8(2|4), "k", "", "", "", "push", "d-1", int64(0), []byte(`{}`))
	f.Add(uint8(1|4|16), "whsec_a2V5", "", "", "", "Push Hook", "msg_1", int64(299), []byte(`{}`))
	f.Add(uint8(1|4|16), "k", "", "v1,AAAA", "", "Push Hook", "msg_1", int64(-301), []byte(`{}`))
	f.Add(uint8(1|32), "", "tok", "", "tok", "Push Hook", "idem", int64(0), []byte(`{}`))
	f.Add(uint8(1), "", "tok", "", "TOK", "Push Hook", "idem", int64(0), []byte(`{}`))
	f.Add(uint8(0), "k", "", "sha256=", "", "ping", "", int64(0), []byte(nil))
	f.Add(uint8(3), "k", "t", "x", "t", "e", "d", int64(math.MaxInt64), []byte("[[["))
	f.Fuzz(func(t *testing.T, mode uint8, hmacSecret, gitlabSecret, sig, token, event, delivery string, offset int64, body []byte) {
		forge := []Forge{GitHub, GitLab, Gitea, "other"}[mode&3]
		signSelf := mode&4 != 0
		ts := strconv.FormatInt(testNow.Unix()+offset%1e12, 10)
		swKey, swKeyOK := fuzzStandardKey(hmacSecret)

		h := http.Header{}
		ghSig, gtSig, swSig := sig, sig, sig
		if signSelf {
			ghSig = "sha256=" + hexSum(hmacSecret, body)
			gtSig = hexSum(hmacSecret, body)
			swSig = sig + " v1," + base64.StdEncoding.EncodeToString(sum(swKey, []byte(delivery+"."+ts+"."), body))
		}
		h["X-Hub-Signature-256"] = []string{ghSig}
		h["X-Github-Event"] = []string{event}
		h["X-Github-Delivery"] = []string{delivery}
		h["X-Gitea-Signature"] = []string{gtSig}
		if mode&8 != 0 {
			h["X-Forgejo-Signature"] = []string{sig}
		}
		h["X-Gitea-Event"] = []string{event}
		h["X-Gitea-Delivery"] = []string{delivery}
		h["X-Gitlab-Event"] = []string{event}
		h["Idempotency-Key"] = []string{delivery}
		h["X-Gitlab-Token"] = []string{token}
		if mode&32 != 0 {
			h["X-Gitlab-Token"] = []string{gitlabSecret}
		}
		if mode&16 != 0 {
			h["Webhook-Id"] = []string{delivery}
			h["Webhook-Timestamp"] = []string{ts}
			h["Webhook-Signature"] = []string{swSig}
		}
		before, bodyBefore := h.Clone(), string(body)
		s := Secrets{HMAC: hmacSecret, GitLab: gitlabSecret}

		d, err := Verify(forge, h, body, s, testNow, DefaultSkew)
		if !reflect.DeepEqual(h, before) || string(body) != bodyBefore {
			t.Fatal("Verify changed its inputs")
		}
		if d2, err2 := Verify(forge, h, body, s, testNow, DefaultSkew); d2 != d || (err == nil) != (err2 == nil) {
			t.Fatal("Verify is not deterministic")
		}
		if err != nil {
			if d != (Delivery{}) {
				t.Fatalf("failed with a non-zero delivery %+v", d)
			}
			for _, sentinel := range []error{ErrUnknownForge, ErrNoSecret, ErrSignature, ErrStale, ErrNoEvent, ErrNoDeliveryID} {
				if errors.Is(err, sentinel) {
					return
				}
			}
			t.Fatalf("error %v wraps no sentinel", err)
		}

		if d.Forge != forge || !d.verified || d.Event != event || !strings.HasPrefix(d.ReplayKey, string(forge)+":") {
			t.Fatalf("delivery %+v does not match forge %s, event %q", d, forge, event)
		}
		for _, r := range d.ReplayKey {
			if r <= ' ' || r >= 0x7f {
				t.Fatalf("replay key %q holds %q", d.ReplayKey, r)
			}
		}
		switch forge {
		case GitHub:
			want := "sha256=" + hexSum(hmacSecret, body)
			if hmacSecret == "" || !strings.HasPrefix(ghSig, "sha256=") || !strings.EqualFold(ghSig, want) {
				t.Fatalf("accepted GitHub signature %q, HMAC is %q", ghSig, want)
			}
		case Gitea:
			want := hexSum(hmacSecret, body)
			if hmacSecret == "" || !strings.EqualFold(gtSig, want) {
				t.Fatalf("accepted Gitea signature %q, HMAC is %q", gtSig, want)
			}
			if fj, ok := h["X-Forgejo-Signature"]; ok && !strings.EqualFold(fj[0], want) {
				t.Fatalf("accepted a forged Forgejo signature %q beside a good Gitea one", fj[0])
			}
		case GitLab:
			tokenOK := gitlabSecret != "" && h.Get("X-Gitlab-Token") == gitlabSecret
			signedOK := false
			if mode&16 != 0 && hmacSecret != "" && swKeyOK {
				want := base64.StdEncoding.EncodeToString(sum(swKey, []byte(delivery+"."+ts+"."), body))
				secs, _ := strconv.ParseInt(ts, 10, 64)
				fresh := secs >= testNow.Unix()-300 && secs <= testNow.Unix()+300
				signedOK = fresh && strings.Contains(" "+swSig+" ", " v1,"+want+" ")
			}
			if !tokenOK && !signedOK {
				t.Fatalf("accepted a GitLab delivery with neither the token nor a fresh signature")
			}
		}
	})
}

// fuzzStandardKey derives the Standard Webhooks key without the package.
func fuzzStandardKey(secret string) ([]byte, bool) {
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		k, err := base64.StdEncoding.DecodeString(rest)
		return k, err == nil && len(k) > 0
	}
	return []byte(secret), true
}

var (
	fuzzSegment = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	fuzzSHA     = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})?$`)
	fuzzAction  = regexp.MustCompile(`^[A-Za-z0-9._-]{0,64}$`)
)

// FuzzParse feeds Parse random event names and bodies for a verified
// delivery. It must never panic, and every event it accepts must meet the
// rules the package documents, checked here independently.
func FuzzParse(f *testing.F) {
	seeds := []struct {
		forge uint8
		event string
		body  string
	}{
		{0, "pull_request", hubPR("octo/repo", sha1Hex, "main", "opened", 1)},
		{0, "issue_comment", `{"action":"created","issue":{"number":3,"title":"T"},"comment":{"body":"C"},"repository":{"full_name":"a/b"}}`},
		{0, "issues", `{"issue":{"number":3,"title":"é","body":"\u0000"},"repository":{"full_name":"a/b","default_branch":"x/y"}}`},
		{0, "push", `{"after":"` + sha256Hex + `","repository":{"full_name":"a/b"}}`},
		{0, "ping", `{"repository":{"full_name":"../x"}}`},
		{1, "Merge Request Hook", `{"object_kind":"merge_request","project":{"path_with_namespace":"g/s/p","default_branch":"main"},"object_attributes":{"iid":1,"last_commit":{"id":"` + sha1Hex + `"}}}`},
		{1, "Note Hook", `{"object_kind":"note","project":{"path_with_namespace":"g/p"},"object_attributes":{"note":"n"},"issue":{"iid":2}}`},
		{1, "Push Hook", `{"object_kind":"push","checkout_sha":null,"after":"` + sha1Hex + `","project":{"path_with_namespace":"g/p"}}`},
		{1, "Issue Hook", `{"object_kind":"issue","project":{"path_with_namespace":"g/p"},"object_attributes":{"iid":2,"action":"open"}}`},
		{2, "pull_request", `{"pull_request":{"number":1,"head":{"sha":"` + sha1Hex + `"}},"repository":{"full_name":"a/b"}}`},
		{2, "issue_comment", `{"issue":{"number":1},"comment":{"body":"x"},"repository":{"full_name":"a/b"}}`},
		{0, "push", `[[[[[[[[[[`},
		{0, "push", `{"after":1e400}`},
		{1, "Push Hook", `{"object_kind":"push","project":{"path_with_namespace":"a/b","default_branch":"-x"}}`},
	}
	for _, s := range seeds {
		f.Add(s.forge, s.event, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, forgeSel uint8, event string, body []byte) {
		forge := []Forge{GitHub, GitLab, Gitea, ""}[forgeSel&3]
		if _, err := Parse(Delivery{Forge: forge, Event: event}, body); !errors.Is(err, ErrNotVerified) {
			t.Fatalf("unverified delivery: %v", err)
		}
		e, err := Parse(Delivery{Forge: forge, Event: event, verified: true}, body)
		if err != nil {
			if e != (Event{}) {
				t.Fatalf("failed with a non-zero event %+v", e)
			}
			return
		}
		if e.Forge != forge {
			t.Fatalf("forge %q, want %q", e.Forge, forge)
		}
		if want := fuzzKind(forge, event); e.Kind != want {
			t.Fatalf("event %q of %s gave kind %q, want %q", event, forge, e.Kind, want)
		}
		if e.Repo != "" || e.Kind != KindOther {
			segs := strings.Split(e.Repo, "/")
			max := 2
			if forge == GitLab {
				max = 20
			}
			if len(segs) < 2 || len(segs) > max {
				t.Fatalf("repo %q has %d segments", e.Repo, len(segs))
			}
			for _, s := range segs {
				if !fuzzSegment.MatchString(s) || s == "." || s == ".." {
					t.Fatalf("repo %q has segment %q", e.Repo, s)
				}
			}
		}
		if e.Number < 0 || e.Number > math.MaxInt32 {
			t.Fatalf("number %d", e.Number)
		}
		if (e.Kind == KindPullRequest || e.Kind == KindIssue) && e.Number == 0 {
			t.Fatalf("%s without a number", e.Kind)
		}
		if !fuzzSHA.MatchString(e.HeadSHA) {
			t.Fatalf("head sha %q", e.HeadSHA)
		}
		if b := e.DefaultBranch; b != "" {
			if strings.Contains(b, "..") || strings.HasPrefix(b, "-") || strings.HasSuffix(b, ".lock") ||
				strings.ContainsAny(b, " \t\n\r") || len(b) > 255 || !utf8.ValidString(b) {
				t.Fatalf("default branch %q", b)
			}
			for _, r := range b {
				if unicode.IsControl(r) {
					t.Fatalf("default branch %q holds control %U", b, r)
				}
			}
		}
		if !fuzzAction.MatchString(e.Action) {
			t.Fatalf("action %q", e.Action)
		}
		if len(e.Title) > MaxText || len(e.Body) > MaxText || !utf8.ValidString(e.Title) || !utf8.ValidString(e.Body) {
			t.Fatalf("title %d bytes, body %d bytes", len(e.Title), len(e.Body))
		}
	})
}

// fuzzKind is the kind a forge's event name maps to.
func fuzzKind(f Forge, event string) Kind {
	m := map[string]Kind{"pull_request": KindPullRequest, "push": KindPush, "issues": KindIssue, "issue_comment": KindIssueComment}
	if f == GitLab {
		m = map[string]Kind{"Merge Request Hook": KindPullRequest, "Push Hook": KindPush, "Issue Hook": KindIssue, "Note Hook": KindIssueComment}
	}
	if k, ok := m[event]; ok {
		return k
	}
	return KindOther
}
