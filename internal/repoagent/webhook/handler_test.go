package webhook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// validBody is a payload each forge's parser accepts, for event "push".
func validBody(f Forge) []byte {
	if f == GitLab {
		return []byte(`{"object_kind":"push","checkout_sha":"` + sha1Hex + `","project":{"path_with_namespace":"g/p","default_branch":"main"}}`)
	}
	return []byte(`{"after":"` + sha1Hex + `","repository":{"full_name":"o/r","default_branch":"main"}}`)
}

// testHandler returns a Handler at testNow whose Accept counts its calls.
func testHandler(t *testing.T) (*Handler, *memLedger, *atomic.Int32) {
	t.Helper()
	ledger := &memLedger{}
	var accepted atomic.Int32
	h := &Handler{
		Secrets: testSecrets,
		Ledger:  ledger,
		Now:     func() time.Time { return testNow },
		Accept: func(context.Context, Event) error {
			accepted.Add(1)
			return nil
		},
	}
	return h, ledger, &accepted
}

// strictHandler returns a Handler whose Accept fails the test if called.
func strictHandler(t *testing.T) (*Handler, *memLedger) {
	h, ledger, _ := testHandler(t)
	h.Accept = func(context.Context, Event) error {
		t.Error("Accept called for a delivery that should have been rejected")
		return nil
	}
	return h, ledger
}

func send(h http.Handler, method, path string, hdr http.Header, body io.Reader) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, body)
	for k, vs := range hdr {
		r.Header[k] = vs
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func post(h http.Handler, f Forge, hdr http.Header, body []byte) *httptest.ResponseRecorder {
	return send(h, http.MethodPost, "/webhooks/"+string(f), hdr, bytes.NewReader(body))
}

// unsigned returns headers for a delivery of body whose signature is
// forged, missing or empty, but which is otherwise complete.
func unsigned(f Forge, how string, body []byte) http.Header {
	h := signedFor(f, "push", "d-1", body)
	var names []string
	switch f {
	case GitHub:
		names = []string{"X-Hub-Signature-256"}
	case Gitea:
		names = []string{"X-Gitea-Signature"}
	case GitLab:
		names = []string{"Webhook-Signature", "X-Gitlab-Token"}
	}
	for _, n := range names {
		switch how {
		case "forged":
			forged := signedFor(f, "push", "d-1", []byte("another body"))
			h.Set("X-Gitlab-Token", "not-the-token")
			if v := forged.Get(n); v != "" {
				h.Set(n, v)
			}
		case "missing":
			h.Del(n)
		case "empty":
			h.Set(n, "")
		}
	}
	return h
}

// TestHandlerRejectsBeforeParsing sends bodies that make the parser fail
// (invalid JSON, a million-deep array) with forged, missing and empty
// signatures. Each must be answered 401, not 400: a 400 would mean the body
// was parsed. Neither the Ledger nor Accept may be reached.
func TestHandlerRejectsBeforeParsing(t *testing.T) {
	for _, f := range forges {
		for bombName, bomb := range bombs {
			for _, how := range []string{"forged", "missing", "empty"} {
				t.Run(string(f)+"/"+bombName+"/"+how, func(t *testing.T) {
					h, ledger := strictHandler(t)
					w := post(h, f, unsigned(f, how, bomb), bomb)
					if w.Code != http.StatusUnauthorized {
						t.Errorf("status %d %q, want 401", w.Code, w.Body)
					}
					if ledger.calls != 0 {
						t.Errorf("ledger called %d times before verification", ledger.calls)
					}
				})
			}
		}
	}
}

// TestHandlerBombIsParsedOnlyWhenSigned is the control for
// TestHandlerRejectsBeforeParsing: the same bodies, correctly signed, do
// reach the parser and are answered 400.
func TestHandlerBombIsParsedOnlyWhenSigned(t *testing.T) {
	for _, f := range forges {
		for bombName, bomb := range bombs {
			h, ledger := strictHandler(t)
			w := post(h, f, signedFor(f, "push", "d-1", bomb), bomb)
			if w.Code != http.StatusBadRequest || ledger.calls != 1 {
				t.Errorf("%s/%s: status %d, ledger calls %d; want 400 after one ledger call", f, bombName, w.Code, ledger.calls)
			}
		}
	}
}

// TestHandlerReplay checks that a delivery is accepted once: the same
// delivery again is 409, and so is a correctly signed bomb reusing its
// delivery ID, which proves the ledger is consulted before parsing.
func TestHandlerReplay(t *testing.T) {
	for _, f := range forges {
		t.Run(string(f), func(t *testing.T) {
			h, _, accepted := testHandler(t)
			body := validBody(f)
			hdr := signedFor(f, "push", "d-1", body)
			if w := post(h, f, hdr, body); w.Code != http.StatusAccepted {
				t.Fatalf("first delivery: %d %q, want 202", w.Code, w.Body)
			}
			if w := post(h, f, hdr, body); w.Code != http.StatusConflict {
				t.Errorf("same delivery again: %d, want 409", w.Code)
			}
			for name, bomb := range bombs {
				if w := post(h, f, signedFor(f, "push", "d-1", bomb), bomb); w.Code != http.StatusConflict {
					t.Errorf("signed %s bomb with a seen ID: %d, want 409 (400 means it was parsed)", name, w.Code)
				}
			}
			if got := accepted.Load(); got != 1 {
				t.Errorf("Accept called %d times, want 1", got)
			}
			// A new delivery ID is a new delivery.
			if w := post(h, f, signedFor(f, "push", "d-2", body), body); w.Code != http.StatusAccepted {
				t.Errorf("next delivery: %d, want 202", w.Code)
			}
		})
	}
}

func TestHandlerAcceptsEvent(t *testing.T) {
	h, _, _ := testHandler(t)
	var got []Event
	h.Accept = func(_ context.Context, e Event) error {
		got = append(got, e)
		return nil
	}
	for _, f := range forges {
		body := validBody(f)
		w := post(h, f, signedFor(f, "push", "d-1", body), body)
		if w.Code != http.StatusAccepted || w.Body.String() != "accepted\n" {
			t.Errorf("%s: %d %q, want 202 accepted", f, w.Code, w.Body)
		}
	}
	want := []Event{
		{Forge: GitHub, Kind: KindPush, Repo: "o/r", HeadSHA: sha1Hex, DefaultBranch: "main"},
		{Forge: GitLab, Kind: KindPush, Repo: "g/p", HeadSHA: sha1Hex, DefaultBranch: "main"},
		{Forge: Gitea, Kind: KindPush, Repo: "o/r", HeadSHA: sha1Hex, DefaultBranch: "main"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestHandlerGitLabToken(t *testing.T) {
	h, _, accepted := testHandler(t)
	body := validBody(GitLab)
	if w := post(h, GitLab, gitlabTokenHeaders(testSecrets.GitLab, "Push Hook", "idem-1"), body); w.Code != http.StatusAccepted {
		t.Errorf("token delivery: %d, want 202", w.Code)
	}
	if w := post(h, GitLab, gitlabTokenHeaders("wrong", "Push Hook", "idem-2"), body); w.Code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d, want 401", w.Code)
	}
	if w := post(h, GitLab, gitlabTokenHeaders(testSecrets.GitLab, "Push Hook", ""), body); w.Code != http.StatusUnauthorized {
		t.Errorf("no delivery id: %d, want 401", w.Code)
	}
	if accepted.Load() != 1 {
		t.Errorf("Accept called %d times, want 1", accepted.Load())
	}
}

func TestHandlerMethods(t *testing.T) {
	for _, f := range forges {
		for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions, "post"} {
			h, ledger := strictHandler(t)
			body := validBody(f)
			w := send(h, m, "/webhooks/"+string(f), signedFor(f, "push", "d-1", body), bytes.NewReader(body))
			if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != http.MethodPost {
				t.Errorf("%s %s: %d, Allow %q; want 405, Allow POST", m, f, w.Code, w.Header().Get("Allow"))
			}
			if ledger.calls != 0 {
				t.Errorf("%s %s reached the ledger", m, f)
			}
		}
	}
}

func TestHandlerRoutes(t *testing.T) {
	body := validBody(GitHub)
	hdr := signedFor(GitHub, "push", "d-1", body)
	for _, path := range []string{"/", "/webhooks", "/webhooks/", "/webhooks/github/", "/webhooks/GitHub",
		"/webhooks/github/x", "/webhooks/bitbucket", "/webhooks/forgejo", "/x/webhooks/github", "/webhooks//github"} {
		h, ledger := strictHandler(t)
		w := send(h, http.MethodPost, path, hdr, bytes.NewReader(body))
		if w.Code != http.StatusNotFound || ledger.calls != 0 {
			t.Errorf("POST %s: %d (ledger calls %d), want 404", path, w.Code, ledger.calls)
		}
	}
}

// TestHandlerBodyCap checks that a body over the cap is 413 whether or not
// its length is announced, that a body at the cap is read, and the default.
func TestHandlerBodyCap(t *testing.T) {
	const limit = 1024
	pad := func(n int) []byte {
		b := validBody(GitHub)
		return append(b, bytes.Repeat([]byte(" "), n-len(b))...)
	}
	h, ledger, accepted := testHandler(t)
	h.MaxBody = limit

	at := pad(limit)
	if w := post(h, GitHub, signedFor(GitHub, "push", "at", at), at); w.Code != http.StatusAccepted {
		t.Errorf("body at the cap: %d, want 202", w.Code)
	}
	over := pad(limit + 1)
	hdr := signedFor(GitHub, "push", "over", over)
	if w := post(h, GitHub, hdr, over); w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("announced body over the cap: %d, want 413", w.Code)
	}
	stream := io.MultiReader(bytes.NewReader(over)) // length not announced
	if w := send(h, http.MethodPost, "/webhooks/github", hdr, stream); w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("streamed body over the cap: %d, want 413", w.Code)
	}
	if accepted.Load() != 1 || ledger.calls != 1 {
		t.Errorf("Accept %d, ledger %d calls; want 1 and 1", accepted.Load(), ledger.calls)
	}

	h.MaxBody = 0
	big := pad(DefaultMaxBody + 1)
	if w := post(h, GitHub, signedFor(GitHub, "push", "big", big), big); w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("default cap: %d, want 413", w.Code)
	}
}

func TestHandlerFailures(t *testing.T) {
	body := validBody(GitHub)
	hdr := signedFor(GitHub, "push", "d-1", body)
	tests := []struct {
		name string
		edit func(h *Handler)
		want int
	}{
		{"accept fails", func(h *Handler) { h.Accept = func(context.Context, Event) error { return errors.New("queue full") } }, http.StatusServiceUnavailable},
		{"ledger fails", func(h *Handler) {
			h.Ledger = &memLedger{err: errors.New("disk full")}
			h.Accept = func(context.Context, Event) error { t.Error("Accept called after the ledger failed"); return nil }
		}, http.StatusServiceUnavailable},
		{"no ledger", func(h *Handler) { h.Ledger = nil }, http.StatusServiceUnavailable},
		{"no accept", func(h *Handler) { h.Accept = nil }, http.StatusServiceUnavailable},
		{"no secrets", func(h *Handler) { h.Secrets = Secrets{} }, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _, _ := testHandler(t)
			tt.edit(h)
			if w := post(h, GitHub, hdr, body); w.Code != tt.want {
				t.Errorf("status %d, want %d", w.Code, tt.want)
			}
		})
	}
}

func TestHandlerParseFailure(t *testing.T) {
	h, ledger := strictHandler(t)
	body := []byte(`{"after":"HEAD","repository":{"full_name":"../etc"}}`)
	w := post(h, GitHub, signedFor(GitHub, "push", "d-1", body), body)
	if w.Code != http.StatusBadRequest || w.Body.String() != "bad payload\n" || ledger.calls != 1 {
		t.Errorf("status %d %q, ledger calls %d; want 400 bad payload after one ledger call", w.Code, w.Body, ledger.calls)
	}
}

// TestHandlerSkew checks that the handler verifies at its own clock, with
// a 5 minute default skew.
func TestHandlerSkew(t *testing.T) {
	key := []byte(testSecrets.HMAC)
	body := validBody(GitLab)
	for _, tc := range []struct {
		age  time.Duration
		skew time.Duration
		want int
	}{
		{4 * time.Minute, 0, http.StatusAccepted},
		{-4 * time.Minute, 0, http.StatusAccepted},
		{6 * time.Minute, 0, http.StatusUnauthorized},
		{-6 * time.Minute, 0, http.StatusUnauthorized},
		{6 * time.Minute, 10 * time.Minute, http.StatusAccepted},
		{2 * time.Minute, time.Minute, http.StatusUnauthorized},
	} {
		h, _, _ := testHandler(t)
		h.Skew = tc.skew
		hdr := standardHeaders(key, "Push Hook", "msg_1", testNow.Add(-tc.age), body)
		if w := post(h, GitLab, hdr, body); w.Code != tc.want {
			t.Errorf("age %v, skew %v: %d, want %d", tc.age, tc.skew, w.Code, tc.want)
		}
	}
	// With no clock set, the handler uses the real one.
	h, _, _ := testHandler(t)
	h.Now = nil
	if w := post(h, GitLab, standardHeaders(key, "Push Hook", "msg_1", time.Now(), body), body); w.Code != http.StatusAccepted {
		t.Errorf("real clock, fresh delivery: %d, want 202", w.Code)
	}
	if w := post(h, GitLab, standardHeaders(key, "Push Hook", "msg_2", testNow, body), body); w.Code != http.StatusUnauthorized {
		t.Errorf("real clock, delivery signed at testNow: %d, want 401", w.Code)
	}
}

// TestHandlerLogsNoSecrets checks that rejections are logged with forge and
// reason only: neither a canary in the body nor a canary token in
// X-Gitlab-Token reaches the log, and an accepted delivery logs nothing.
func TestHandlerLogsNoSecrets(t *testing.T) {
	const bodyCanary, tokenCanary = "BODYCANARY31", "TOKENCANARY47"
	var logs bytes.Buffer
	h, _, _ := testHandler(t)
	h.Log = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	rejected := []byte(`{"object_kind":"push","note":"` + bodyCanary + `"}`)
	hdr := gitlabTokenHeaders(tokenCanary, "Push Hook", "idem-"+bodyCanary)
	if w := post(h, GitLab, hdr, rejected); w.Code != http.StatusUnauthorized {
		t.Fatalf("canary delivery: %d, want 401", w.Code)
	}
	// A verified body that fails parsing is rejected too, and not logged.
	unparsable := []byte(`{"object_kind":"push","project":{"path_with_namespace":"../` + bodyCanary + `"}}`)
	if w := post(h, GitLab, signedFor(GitLab, "push", "m1", unparsable), unparsable); w.Code != http.StatusBadRequest {
		t.Fatalf("unparsable delivery: %d, want 400", w.Code)
	}
	got := logs.String()
	for _, want := range []string{`"forge":"gitlab"`, `"reason":"` + ErrSignature.Error() + `"`, `"reason":"` + ErrPayload.Error() + `"`} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %s:\n%s", want, got)
		}
	}
	for _, canary := range []string{bodyCanary, tokenCanary, testSecrets.GitLab, testSecrets.HMAC} {
		if strings.Contains(got, canary) {
			t.Errorf("log holds %q:\n%s", canary, got)
		}
	}

	logs.Reset()
	ok := validBody(GitLab)
	if w := post(h, GitLab, signedFor(GitLab, "push", "m2", ok), ok); w.Code != http.StatusAccepted {
		t.Fatalf("valid delivery: %d", w.Code)
	}
	if logs.Len() != 0 {
		t.Errorf("accepted delivery logged: %s", logs.String())
	}
}

// TestHandlerAnswersEchoNothing checks that no answer quotes the request.
func TestHandlerAnswersEchoNothing(t *testing.T) {
	const canary = "ECHOCANARY5"
	body := []byte(`{"after":"` + canary + `","repository":{"full_name":"` + canary + `"}}`)
	hdr := http.Header{}
	for _, n := range []string{"X-Hub-Signature-256", "X-GitHub-Event", "X-GitHub-Delivery", "X-Gitlab-Token", "X-Gitea-Signature"} {
		hdr.Set(n, canary)
	}
	h, _, _ := testHandler(t)
	answers := map[string]bool{}
	check := func(w *httptest.ResponseRecorder) {
		t.Helper()
		answers[w.Body.String()] = true
		if strings.Contains(w.Body.String(), canary) || strings.Contains(w.Header().Get("Content-Type"), canary) {
			t.Errorf("answer %d %q echoes input", w.Code, w.Body)
		}
		if w.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("content type %q", w.Header().Get("Content-Type"))
		}
	}
	for _, f := range forges {
		check(post(h, f, hdr, body))                                        // 401
		check(post(h, f, signedFor(f, "push", "d-"+string(f), body), body)) // 400
		check(send(h, http.MethodGet, "/webhooks/"+string(f)+canary, hdr, nil))
		check(send(h, http.MethodPost, "/"+canary, hdr, bytes.NewReader(body)))
	}
	if len(answers) < 4 {
		t.Errorf("saw only answers %v; the cases did not reach 401, 400, 405 and 404", answers)
	}
}
