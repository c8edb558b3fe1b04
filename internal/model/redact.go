package model

import (
	"context"
	"errors"

	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/guard/redact"
)

// redactor keeps the API key out of what the package returns.
type redactor struct{ r *redact.Redactor }

func newRedactor(apiKey string) redactor {
	return redactor{redact.New(map[string]string{"API key": apiKey})}
}

// kept lists the errors a scrubbed error still matches with errors.Is.
var kept = []error{
	ErrConfig, ErrResponse, ErrTooManyTurns,
	context.Canceled, context.DeadlineExceeded,
	netguard.ErrURL, netguard.ErrBlocked, netguard.ErrBodyTooLarge, netguard.ErrRedirects,
}

// scrub returns err with the key redacted from its text, or nil for nil.
// The result still matches, with errors.Is, the package's sentinels, the
// context errors and netguard's, and with errors.As a [*StatusError] (its
// message redacted again); the rest of the chain is dropped, because its
// values (a *url.Error's URL, say) could hold the key.
func (r redactor) scrub(err error) error {
	if err == nil {
		return nil
	}
	if s, ok := err.(*scrubbed); ok {
		return s // already scrubbed, by the same key
	}
	s := &scrubbed{msg: r.r.String(err.Error())}
	for _, target := range kept {
		if errors.Is(err, target) {
			s.kept = append(s.kept, target)
		}
	}
	if se, ok := errors.AsType[*StatusError](err); ok {
		s.kept = append(s.kept, &StatusError{StatusCode: se.StatusCode, Message: r.r.String(se.Message)})
	}
	return s
}

// A scrubbed error has had the key redacted from its text.
type scrubbed struct {
	msg  string
	kept []error
}

func (e *scrubbed) Error() string   { return e.msg }
func (e *scrubbed) Unwrap() []error { return e.kept }
