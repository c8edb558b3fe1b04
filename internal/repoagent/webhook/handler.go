package webhook

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// A Ledger remembers replay keys. Remember records key and reports false if
// it was recorded before, which makes the delivery a replay. It must be safe
// for concurrent use, record atomically (two concurrent calls with one key
// may not both report fresh), and keep each key at least 8 days, longer than
// any forge retries or lets a user redeliver; the caller's store does.
type Ledger interface {
	Remember(ctx context.Context, key string, now time.Time) (fresh bool, err error)
}

// Defaults for a Handler's zero fields.
const (
	DefaultSkew    = 5 * time.Minute
	DefaultMaxBody = 5 << 20
)

// Handler receives webhooks at POST /webhooks/github, /webhooks/gitlab and
// /webhooks/gitea. Each request goes through, in this order: the method
// (405 unless POST), the route (404 for any other path), a body read with a
// cap (413 when over, nothing verified or parsed), [Verify] (401), the
// [Ledger] (409 for a replay), [Parse] (400), and Accept (202, or 503 if it
// fails). A missing Ledger or Accept is a 503 for every delivery.
//
// The replay key is recorded before the body is parsed and before Accept
// runs, so a delivery answered 400, or 503 because Accept failed, is
// answered 409 if the forge sends it again. Accept should therefore only hand the event to
// something durable, such as a queue, and fail rarely.
//
// Answers are short fixed text that never echo the request. Rejections are
// logged to Log with the forge and a fixed reason only: never a header
// value, the body, or the error a Ledger or Accept returned, which should
// log for themselves. Nothing is logged for an accepted delivery.
type Handler struct {
	Secrets Secrets
	Ledger  Ledger
	Now     func() time.Time // time.Now if nil
	Skew    time.Duration    // DefaultSkew if zero or less
	MaxBody int64            // DefaultMaxBody if zero or less; at most MaxPayload
	// Accept receives each verified, new, parsed event. An error answers 503.
	Accept func(ctx context.Context, e Event) error
	Log    *slog.Logger // may be nil
}

// routes maps each path the Handler serves to its forge.
var routes = map[string]Forge{
	"/webhooks/github": GitHub,
	"/webhooks/gitlab": GitLab,
	"/webhooks/gitea":  Gitea,
}

// outcome is how a request ends: the status, the fixed text answered, and
// the sentinel error whose fixed text is logged as the reason.
type outcome struct {
	status int
	answer string
	reason error
}

// Reasons for rejections that are not the caller's to test for.
var (
	errNotConfigured = errors.New("handler has no ledger or accept function")
	errUnreadable    = errors.New("webhook body unreadable")
	errLedger        = errors.New("ledger failed")
	errAccept        = errors.New("accept failed")
	errUnverified    = errors.New("verification failed")
)

var (
	accepted      = outcome{http.StatusAccepted, "accepted", nil}
	badMethod     = outcome{http.StatusMethodNotAllowed, "method not allowed", ErrMethod}
	notFound      = outcome{http.StatusNotFound, "not found", ErrUnknownForge}
	notConfigured = outcome{http.StatusServiceUnavailable, "unavailable", errNotConfigured}
	tooLarge      = outcome{http.StatusRequestEntityTooLarge, "payload too large", ErrTooLarge}
	unreadable    = outcome{http.StatusBadRequest, "bad request", errUnreadable}
	replayed      = outcome{http.StatusConflict, "duplicate delivery", ErrReplay}
	ledgerFailed  = outcome{http.StatusServiceUnavailable, "unavailable", errLedger}
	badPayload    = outcome{http.StatusBadRequest, "bad payload", ErrPayload}
	acceptFailed  = outcome{http.StatusServiceUnavailable, "unavailable", errAccept}
)

// ServeHTTP handles one delivery; see [Handler].
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	forge, o := h.serve(r)
	if o.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", http.MethodPost)
	}
	if o.status != http.StatusAccepted && h.Log != nil {
		h.Log.LogAttrs(r.Context(), slog.LevelWarn, "webhook rejected",
			slog.String("forge", string(forge)), slog.String("reason", o.reason.Error()))
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(o.status)
	io.WriteString(w, o.answer+"\n")
}

func (h *Handler) serve(r *http.Request) (Forge, outcome) {
	if r.Method != http.MethodPost {
		return "", badMethod
	}
	forge, ok := routes[r.URL.Path]
	if !ok {
		return "", notFound
	}
	if h.Ledger == nil || h.Accept == nil {
		return forge, notConfigured
	}
	max := h.MaxBody
	if max <= 0 {
		max = DefaultMaxBody
	}
	max = min(max, MaxPayload)
	if r.ContentLength > max {
		return forge, tooLarge
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		return forge, unreadable
	}
	if int64(len(body)) > max {
		return forge, tooLarge
	}

	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	skew := h.Skew
	if skew <= 0 {
		skew = DefaultSkew
	}
	t := now()
	d, err := Verify(forge, r.Header, body, h.Secrets, t, skew)
	if err != nil {
		return forge, verifyOutcome(err)
	}
	fresh, err := h.Ledger.Remember(r.Context(), d.ReplayKey, t)
	switch {
	case err != nil:
		return forge, ledgerFailed
	case !fresh:
		return forge, replayed
	}
	e, err := Parse(d, body)
	if err != nil {
		return forge, badPayload
	}
	if err := h.Accept(r.Context(), e); err != nil {
		return forge, acceptFailed
	}
	return forge, accepted
}

// verifyOutcome is 401 with the sentinel naming the check that failed as
// the reason. Only sentinels are logged, so no wrapped detail can carry
// input into the log.
func verifyOutcome(err error) outcome {
	for _, sentinel := range []error{ErrNoSecret, ErrSignature, ErrStale, ErrNoEvent, ErrNoDeliveryID, ErrUnknownForge} {
		if errors.Is(err, sentinel) {
			return outcome{http.StatusUnauthorized, "unauthorized", sentinel}
		}
	}
	return outcome{http.StatusUnauthorized, "unauthorized", errUnverified}
}
