// Package redact removes known secret values from text before it reaches an
// error message, a log line or a stored record. It is the one place Zero
// does this; code that shows text which may hold a secret passes it through a
// [Redactor] built from the secrets it knows.
//
// A secret is found as written and in the forms it takes on its way into
// text: URL query and path escaped, JSON string escaped (with and without
// HTML escaping), and base64 in the standard and URL alphabets, padded or
// not. Each occurrence becomes "[redacted NAME]". Where occurrences overlap,
// the whole overlapping run becomes one marker, named after the occurrence
// that starts first (the longest one, if several start there), so no part of
// any secret survives.
//
// [Redactor.Error] makes an error safe to return: its text redacted, and its
// chain cut down to the sentinels the caller names and the errors that
// redact themselves ([Redactable]), so that nothing that unwraps it can reach
// an unredacted value further down.
//
// What it cannot do: it knows only the values it is given, so a secret it was
// not told about, or one transformed in any other way (hashed, encrypted,
// split by other text, re-encoded twice, base64 at an offset inside a larger
// base64 blob), passes through. A short secret redacts every occurrence of
// its bytes, wherever they are. Redaction is a last line of defence; the
// first is not to put secrets into messages.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
)

// Redactor replaces secret values with markers. Its zero value, and a nil
// *Redactor, redact nothing. A Redactor is safe for concurrent use.
type Redactor struct {
	byFirst [256][]pattern // patterns by their first byte, longest first
	maxLen  int            // the longest pattern
}

// pattern is one form of one secret.
type pattern struct {
	value  string
	marker string
}

// New returns a Redactor for secrets, which maps each secret's name to its
// value. Empty values are ignored. When two names share a value, or a form
// of one value is a form of another, the marker names the first in byte
// order.
func New(secrets map[string]string) *Redactor {
	forms := map[string]string{} // form -> name
	for name, value := range secrets {
		if value == "" {
			continue
		}
		for _, f := range encodings(value) {
			if f == "" {
				continue
			}
			if prev, ok := forms[f]; !ok || name < prev {
				forms[f] = name
			}
		}
	}
	r := &Redactor{}
	for f, name := range forms {
		r.byFirst[f[0]] = append(r.byFirst[f[0]], pattern{f, "[redacted " + name + "]"})
		r.maxLen = max(r.maxLen, len(f))
	}
	for i := range r.byFirst {
		slices.SortFunc(r.byFirst[i], func(a, b pattern) int {
			if len(a.value) != len(b.value) {
				return len(b.value) - len(a.value)
			}
			return strings.Compare(a.value, b.value)
		})
	}
	return r
}

// encodings returns the forms of v that are searched for.
func encodings(v string) []string {
	b := []byte(v)
	jsonPlain := func(escapeHTML bool) string {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(escapeHTML)
		enc.Encode(v) // a string always encodes
		s := strings.TrimSuffix(buf.String(), "\n")
		return s[1 : len(s)-1]
	}
	return []string{
		v,
		url.QueryEscape(v),
		url.PathEscape(v),
		jsonPlain(true),
		jsonPlain(false),
		base64.StdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b),
		base64.RawURLEncoding.EncodeToString(b),
	}
}

// String returns s with every secret replaced by its marker.
func (r *Redactor) String(s string) string {
	if r == nil || r.maxLen == 0 {
		return s
	}
	var st state
	out, _ := r.scan(nil, s, true, &st)
	if !st.changed {
		return s
	}
	return string(out)
}

// Bytes returns b with every secret replaced by its marker. It returns b
// itself when nothing was replaced, and a new slice otherwise.
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil || r.maxLen == 0 {
		return b
	}
	var st state
	out, _ := r.scan(nil, string(b), true, &st)
	if !st.changed {
		return b
	}
	return out
}

// Redactable is an error type that knows how to redact its own values, so
// that [Redactor.Error] can keep it: a model's status error, say, whose
// code is no secret but whose message might hold one.
type Redactable interface {
	error
	// Redact returns a copy of the error with r applied to every value
	// that could hold a secret.
	Redact(r *Redactor) error
}

// Error returns an error whose text is err's with every secret replaced,
// and nil for nil. It unwraps to nothing of err's chain but the errors of
// keep that err matches with errors.Is (sentinels such as
// context.Canceled), and the Redact result of each [Redactable] error in the
// chain (not looked into further); everything else is dropped, because its
// values (a *url.Error's URL, say) could hold a secret, and code that
// unwrapped it could print them. An error Error returned for r comes back
// as it is.
func (r *Redactor) Error(err error, keep ...error) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*redactedError); ok && e.by == r {
		return e
	}
	e := &redactedError{msg: r.String(err.Error()), by: r}
	for _, target := range keep {
		if target != nil && errors.Is(err, target) {
			e.kept = append(e.kept, target)
		}
	}
	e.kept = appendRedactable(e.kept, err, r)
	return e
}

// appendRedactable appends to kept the Redact result of every Redactable
// error in err's tree, without looking inside those.
func appendRedactable(kept []error, err error, r *Redactor) []error {
	switch x := err.(type) {
	case nil:
		return kept
	case Redactable:
		if red := x.Redact(r); red != nil {
			kept = append(kept, red)
		}
		return kept
	case interface{ Unwrap() error }:
		return appendRedactable(kept, x.Unwrap(), r)
	case interface{ Unwrap() []error }:
		for _, e := range x.Unwrap() {
			kept = appendRedactable(kept, e, r)
		}
	}
	return kept
}

// A redactedError has had secrets replaced in its text, and keeps only
// what Error was told to keep.
type redactedError struct {
	msg  string
	kept []error
	by   *Redactor
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.kept }

// state carries a scan across calls, for [Writer].
type state struct {
	remaining int    // bytes of the current run of secrets still to drop
	marker    string // the marker for the current run
	changed   bool   // whether anything has been replaced
}

// longest returns the longest pattern that s starts with.
func (r *Redactor) longest(s string) (pattern, bool) {
	if s == "" {
		return pattern{}, false
	}
	for _, p := range r.byFirst[s[0]] {
		if strings.HasPrefix(s, p.value) {
			return p, true
		}
	}
	return pattern{}, false
}

// scan appends to dst the redacted form of the positions of s it can
// decide, and returns how many bytes of s it consumed. A position is decided
// once every pattern could be checked there: all of s when final, else all
// but the last maxLen-1 bytes. The rest must be passed again, with more
// text after it, on the next call.
func (r *Redactor) scan(dst []byte, s string, final bool, st *state) ([]byte, int) {
	limit := len(s)
	if !final {
		limit = len(s) - (r.maxLen - 1)
	}
	i := 0
	for ; i < limit; i++ {
		p, ok := r.longest(s[i:])
		if st.remaining > 0 {
			// Inside a run: a secret starting here extends it.
			if ok && len(p.value) > st.remaining {
				st.remaining = len(p.value)
			}
			st.remaining--
			continue
		}
		if st.marker != "" {
			dst = append(dst, st.marker...)
			st.marker = ""
		}
		if ok {
			st.marker, st.remaining, st.changed = p.marker, len(p.value)-1, true
			continue
		}
		dst = append(dst, s[i])
	}
	if st.remaining == 0 && st.marker != "" {
		// The run ended at the last decided byte; nothing later can
		// extend it, since a secret extending it would start inside it.
		dst = append(dst, st.marker...)
		st.marker = ""
	}
	return dst, max(i, 0)
}
