package mcpserver

import (
	"mime"
	"net/http"
)

// replyHandler serves h with the reply budget in every request's context,
// and with HTML escapes undone in every JSON and SSE body it writes (see
// encode.go). The SDK writes each JSON body and each SSE event in one Write
// and sets no Content-Length; still, an escape cut between two writes is
// held back until the next, and a Content-Length, which undoing escapes
// would falsify, is dropped.
func replyHandler(h http.Handler, budget int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uw := &unescapingWriter{w: w}
		h.ServeHTTP(uw, r.WithContext(WithReplyBudget(r.Context(), budget)))
		uw.finish()
	})
}

// An unescapingWriter undoes HTML escapes in a JSON or SSE response body.
type unescapingWriter struct {
	w                 http.ResponseWriter
	decided, rewrites bool
	tail              []byte // a cut escape, waiting for the next write
}

func (u *unescapingWriter) Header() http.Header { return u.w.Header() }

// Unwrap lets http.ResponseController reach the connection's writer.
func (u *unescapingWriter) Unwrap() http.ResponseWriter { return u.w }

func (u *unescapingWriter) WriteHeader(code int) {
	u.decide()
	u.w.WriteHeader(code)
}

// decide looks, once, at the response's media type.
func (u *unescapingWriter) decide() {
	if u.decided {
		return
	}
	u.decided = true
	mt, _, _ := mime.ParseMediaType(u.w.Header().Get("Content-Type"))
	u.rewrites = mt == "application/json" || mt == "text/event-stream"
	if u.rewrites {
		u.w.Header().Del("Content-Length")
	}
}

func (u *unescapingWriter) Write(p []byte) (int, error) {
	u.decide()
	if !u.rewrites {
		return u.w.Write(p)
	}
	src := p
	if len(u.tail) > 0 {
		src = append(u.tail, p...)
	}
	out, tail := appendUnescapedHTMLPart(make([]byte, 0, len(src)), src)
	u.tail = append([]byte(nil), tail...)
	if _, err := u.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// finish writes what is held back once the handler is done.
func (u *unescapingWriter) finish() {
	if len(u.tail) > 0 {
		u.w.Write(u.tail)
	}
}
