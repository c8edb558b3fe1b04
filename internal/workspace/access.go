package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/workspace/auth"
)

// Refusals are recorded in the audit log at most refusalBurst per
// refusalWindow; beyond that they are counted, and the count is recorded
// (access.refused.dropped) with the next refusal after the window, or when
// the workspace closes. A flood of refused requests therefore adds a bounded
// number of records.
const (
	refusalBurst  = 30
	refusalWindow = time.Minute
)

// maxRouteInRecord bounds the request path a refusal record quotes.
const maxRouteInRecord = 200

// refusals bounds the access.refused records.
type refusals struct {
	mu      sync.Mutex
	start   time.Time // of the current window
	written int       // records in the window
	dropped int       // refusals not recorded in the window
	now     func() time.Time
}

// admit reports whether a refusal may be recorded now, and how many were
// dropped in the window that just ended (to record first).
func (l *refusals) admit() (ok bool, dropped int, since time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.start) >= refusalWindow {
		dropped, since = l.dropped, l.start
		l.start, l.written, l.dropped = now, 0, 0
	}
	if l.written >= refusalBurst {
		l.dropped++
		return false, dropped, since
	}
	l.written++
	return true, dropped, since
}

// flush returns the refusals dropped and not yet recorded.
func (l *refusals) flush() (int, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, since := l.dropped, l.start
	l.dropped = 0
	return n, since
}

// refused records that the gate refused r: who asked (c, nil when the
// caller is unknown), which route and why (the error code the answer
// carries). It is rate-limited (see refusalBurst).
func (w *Workspace) refused(r *http.Request, c *auth.Caller, reason string) {
	ok, dropped, since := w.refusals.admit()
	if dropped > 0 {
		w.recordDropped(dropped, since)
	}
	if !ok {
		return
	}
	actor := "anonymous"
	switch {
	case c != nil:
		actor = c.Actor()
	case r.Header.Get("Authorization") != "":
		actor = "token:unknown"
	}
	route := r.Pattern
	if route == "" { // refused before routing: name the path, bounded
		route = r.Method + " " + r.URL.Path
		if len(route) > maxRouteInRecord {
			route = route[:maxRouteInRecord] + "..."
		}
	}
	w.appendRecord(audit.Event{Actor: actor, Action: "access.refused", Target: "route:" + route,
		Detail: map[string]string{"route": route, "reason": reason}})
}

func (w *Workspace) recordDropped(n int, since time.Time) {
	w.appendRecord(audit.Event{Actor: "zero", Action: "access.refused.dropped", Target: "route:*",
		Detail: map[string]string{"count": strconv.Itoa(n), "since": since.UTC().Format(time.RFC3339)}})
}

// appendRecord appends a record that no request waits on: a failure is
// logged, not answered.
func (w *Workspace) appendRecord(e audit.Event) {
	if _, err := w.audit.Append(e); err != nil {
		w.log.Error("audit record", "action", e.Action, "error", err)
	}
}

// guardRefused records the Host and Origin guard's refusals.
func (w *Workspace) guardRefused(r *http.Request, reason string) {
	w.refused(r, nil, reason)
}

// authorizeRecorded is authorize, with a refusal recorded, and then the
// passkey gate (passkeys_gate.go): a change that needs the caller's
// passkey goes no further without an assertion made for it.
func (w *Workspace) authorizeRecorded(r *http.Request, need access, c *auth.Caller) error {
	err := authorize(need, c)
	if ae, ok := err.(*apiError); ok {
		w.refused(r, c, ae.Code)
	}
	if err != nil || c.Passkey != "" { // refused, or confirmed already
		return err
	}
	needed, err := w.passkeyNeeded(r.Context(), r.Method, need, c)
	if err != nil || !needed {
		return err
	}
	return w.confirmPasskey(r, c)
}

// showOnce keeps what a page shows once (a new token, a new user's login
// link) for the one GET that a POST redirects to, so that reloading either
// page creates nothing and shows nothing again.
type showOnce struct {
	mu    sync.Mutex
	items map[string]shown
}

type shown struct {
	userID       int64
	label, value string
	expires      time.Time
}

// Bounds of showOnce: how long a value waits for its page, and how many
// wait at once.
const (
	showOnceTTL   = 5 * time.Minute
	showOnceItems = 100
)

func newShowOnce() *showOnce { return &showOnce{items: map[string]shown{}} }

// put keeps value for userID's next page and returns the key naming it.
func (s *showOnce) put(userID int64, label, value string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for k, it := range s.items {
		if now.After(it.expires) || len(s.items) >= showOnceItems {
			delete(s.items, k)
		}
	}
	key := randomKey()
	s.items[key] = shown{userID: userID, label: label, value: value, expires: now.Add(showOnceTTL)}
	return key
}

// take returns and forgets the value key names, if it is userID's and
// still waiting.
func (s *showOnce) take(userID int64, key string) (label, value string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, found := s.items[key]
	if !found || it.userID != userID || time.Now().After(it.expires) {
		return "", "", false
	}
	delete(s.items, key)
	return it.label, it.value, true
}

func randomKey() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
