package redact

import (
	"errors"
	"io"
	"sync"
)

// ErrClosed is returned by [Writer.Write] after [Writer.Close].
var ErrClosed = errors.New("redact: writer closed")

// Writer redacts a stream on its way to an underlying writer. A secret split
// across two or more writes is still caught: the Writer holds back the last
// few bytes of what it was given (one less than the longest form of any
// secret) until it sees what follows them. Call Flush or Close at the end of
// the stream to write what is held; a secret split across a Flush is not
// caught. A Writer is safe for concurrent use.
type Writer struct {
	mu     sync.Mutex
	r      *Redactor
	w      io.Writer
	held   []byte // bytes given but not yet decided
	st     state
	closed bool
}

// Writer returns a [Writer] that redacts what is written to it and passes
// the result to w.
func (r *Redactor) Writer(w io.Writer) *Writer {
	return &Writer{r: r, w: w}
}

// Write redacts p, writes what it can decide to the underlying writer, and
// holds back the rest. It reports len(p) when the underlying write succeeds.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, ErrClosed
	}
	if w.r == nil || w.r.maxLen == 0 {
		return w.w.Write(p)
	}
	w.held = append(w.held, p...)
	if err := w.emit(false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes everything held back, treating it as the end of the stream.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	return w.emit(true)
}

// Close flushes the Writer and refuses later writes. It does not close the
// underlying writer.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return w.emit(true)
}

func (w *Writer) emit(final bool) error {
	if w.r == nil || w.r.maxLen == 0 {
		return nil
	}
	out, n := w.r.scan(nil, string(w.held), final, &w.st)
	w.held = append(w.held[:0], w.held[n:]...)
	if len(out) == 0 {
		return nil
	}
	_, err := w.w.Write(out)
	return err
}
