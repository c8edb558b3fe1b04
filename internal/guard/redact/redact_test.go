package redact

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestString(t *testing.T) {
	const tok = "s3cr3t/t0ken+=&<x>"
	secrets := map[string]string{"API_KEY": tok, "EMPTY": "", "SHORT": "pw"}
	r := New(secrets)
	tests := []struct {
		name, in, want string
	}{
		{"none", "nothing to see", "nothing to see"},
		{"empty", "", ""},
		{"raw", "key=" + tok + ";", "key=[redacted API_KEY];"},
		{"twice", tok + " and " + tok, "[redacted API_KEY] and [redacted API_KEY]"},
		{"adjacent", tok + tok, "[redacted API_KEY][redacted API_KEY]"},
		{"query escaped", "GET /x?k=" + url.QueryEscape(tok), "GET /x?k=[redacted API_KEY]"},
		{"path escaped", "GET /x/" + url.PathEscape(tok), "GET /x/[redacted API_KEY]"},
		{"JSON escaped", `{"k":"s3cr3t/t0ken+=\u0026\u003cx\u003e"}`, `{"k":"[redacted API_KEY]"}`},
		{"JSON, no HTML escapes", `{"k":"s3cr3t/t0ken+=&<x>"}`, `{"k":"[redacted API_KEY]"}`},
		{"base64", "Basic " + base64.StdEncoding.EncodeToString([]byte(tok)), "Basic [redacted API_KEY]"},
		{"base64 URL", base64.URLEncoding.EncodeToString([]byte(tok)), "[redacted API_KEY]"},
		{"base64 unpadded", base64.RawURLEncoding.EncodeToString([]byte(tok)) + ".", "[redacted API_KEY]."},
		{"short secret everywhere", "pwpw pw", "[redacted SHORT][redacted SHORT] [redacted SHORT]"},
		{"short secret inside a word", "upwards", "u[redacted SHORT]ards"},
		{"multibyte around", "é" + tok + "日", "é[redacted API_KEY]日"},
		{"partial is kept", tok[:5], tok[:5]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, r.String(tt.in)); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, string(r.Bytes([]byte(tt.in)))); diff != "" {
				t.Errorf("Bytes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOverlappingSecrets: where secrets overlap, nothing of any of them is
// left.
func TestOverlappingSecrets(t *testing.T) {
	tests := []struct {
		name    string
		secrets map[string]string
		in      string
		want    string
	}{
		{"one inside another", map[string]string{"SHORT": "abc", "LONG": "abcdef"}, "x abcdef abc", "x [redacted LONG] [redacted SHORT]"},
		{"one inside another, in the middle", map[string]string{"IN": "cd", "OUT": "abcdef"}, "abcdef", "[redacted OUT]"},
		{"overlapping ends", map[string]string{"X": "xab", "Y": "abcd"}, "-xabcd-", "-[redacted X]-"},
		{"chained overlaps", map[string]string{"A": "aa"}, "aaaaa b aa", "[redacted A] b [redacted A]"},
		{"same value, two names", map[string]string{"B": "v4lue", "A": "v4lue"}, "v4lue", "[redacted A]"},
		{"one secret's base64 is another", map[string]string{"A": "YWJj", "B": "abc"}, "YWJj", "[redacted A]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := New(tt.secrets).String(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRedactsNothing(t *testing.T) {
	var zero Redactor
	var nilR *Redactor
	for name, r := range map[string]*Redactor{"zero": &zero, "nil": nilR, "empty values": New(map[string]string{"A": ""}), "no secrets": New(nil)} {
		if got := r.String("a b c"); got != "a b c" {
			t.Errorf("%s: String = %q", name, got)
		}
		in := []byte("a b c")
		if got := r.Bytes(in); &got[0] != &in[0] {
			t.Errorf("%s: Bytes copied", name)
		}
		err := fmt.Errorf("x: %w", fs.ErrNotExist)
		if red := r.Error(err, fs.ErrNotExist); red.Error() != "x: file does not exist" || !errors.Is(red, fs.ErrNotExist) {
			t.Errorf("%s: Error = %v", name, red)
		}
		var buf bytes.Buffer
		w := r.Writer(&buf)
		fmt.Fprint(w, "a b c")
		w.Close()
		if buf.String() != "a b c" {
			t.Errorf("%s: Writer wrote %q", name, buf.String())
		}
	}
}

func TestBytesDoesNotChangeInput(t *testing.T) {
	r := New(map[string]string{"K": "key"})
	in := []byte("a key")
	out := r.Bytes(in)
	if string(in) != "a key" || string(out) != "a [redacted K]" {
		t.Errorf("in %q, out %q", in, out)
	}
}

type codeError struct{ code int }

func (e *codeError) Error() string { return fmt.Sprintf("code %d", e.code) }

// noteError is Redactable: its code is kept, its note redacted.
type noteError struct {
	code int
	note string
}

func (e *noteError) Error() string { return fmt.Sprintf("code %d: %s", e.code, e.note) }
func (e *noteError) Redact(r *Redactor) error {
	return &noteError{code: e.code, note: r.String(e.note)}
}

// TestError checks that Error redacts the text and keeps, of the chain, only
// the sentinels named that the error matches and Redactable errors,
// redacted: nothing that unwraps the result reaches a secret.
func TestError(t *testing.T) {
	r := New(map[string]string{"TOKEN": "hunter2"})
	ue := &url.Error{Op: "Get", URL: "https://example.com/?k=hunter2", Err: fs.ErrPermission}
	note := &noteError{code: 429, note: "slow down, hunter2"}
	err := fmt.Errorf("fetch: %w: %w: %w", ue, &codeError{7}, note)
	red := r.Error(err, fs.ErrPermission, os.ErrNotExist, nil)
	want := `fetch: Get "https://example.com/?k=[redacted TOKEN]": permission denied: code 7: code 429: slow down, [redacted TOKEN]`
	if red.Error() != want {
		t.Errorf("message %q, want %q", red, want)
	}
	if !errors.Is(red, fs.ErrPermission) {
		t.Error("a kept sentinel is lost")
	}
	if errors.Is(red, os.ErrNotExist) {
		t.Error("a sentinel the error does not match is kept")
	}
	if _, ok := errors.AsType[*url.Error](red); ok {
		t.Error("errors.As reaches the *url.Error, which holds the secret")
	}
	if _, ok := errors.AsType[*codeError](red); ok {
		t.Error("errors.As reaches an error that was not kept")
	}
	if ne, ok := errors.AsType[*noteError](red); !ok || ne.code != 429 || ne.note != "slow down, [redacted TOKEN]" {
		t.Errorf("the Redactable error: %+v, %v", ne, ok)
	}
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if strings.Contains(e.Error(), "hunter2") {
			t.Errorf("the chain holds the secret: %q", e)
		}
		switch x := e.(type) {
		case interface{ Unwrap() error }:
			walk(x.Unwrap())
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				walk(e)
			}
		}
	}
	walk(red)
	if r.Error(nil) != nil {
		t.Error("Error(nil) != nil")
	}
	if r.Error(red) != red {
		t.Error("an error already redacted by r was wrapped again")
	}
	if again := New(map[string]string{"OTHER": "code"}).Error(red); strings.Contains(again.Error(), "code 7") {
		t.Errorf("another Redactor did not redact its own secret: %q", again)
	}
	wrapped := r.Error(fmt.Errorf("outer: %w", red), fs.ErrPermission)
	if got := wrapped.Error(); strings.Contains(got, "hunter2") || !errors.Is(wrapped, fs.ErrPermission) {
		t.Errorf("wrapping again: %v", got)
	}
	if ne, ok := errors.AsType[*noteError](wrapped); !ok || ne.code != 429 {
		t.Errorf("wrapping again lost the Redactable error: %+v, %v", ne, ok)
	}
}

// streamInput holds each form of two overlapping secrets, so every split
// point falls inside some secret.
func streamSecrets() map[string]string {
	return map[string]string{"A": "correct horse", "B": "horse battery", "C": "z"}
}

func streamInput() string {
	a := "correct horse"
	return "start " + a + " battery staple, " + url.QueryEscape(a) + "|" +
		base64.StdEncoding.EncodeToString([]byte(a)) + "|" + `"correct horse"` + " and horse battery z end"
}

// TestWriterEverySplit writes the input in two pieces split at every point,
// and in three pieces at every pair of points; the output always equals
// String's.
func TestWriterEverySplit(t *testing.T) {
	r := New(streamSecrets())
	in := streamInput()
	want := r.String(in)
	if strings.Contains(want, "horse") || strings.Contains(want, "z") {
		t.Fatalf("String left a secret: %q", want)
	}
	write := func(pieces ...string) string {
		var buf bytes.Buffer
		w := r.Writer(&buf)
		for _, p := range pieces {
			n, err := w.Write([]byte(p))
			if err != nil || n != len(p) {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	for i := 0; i <= len(in); i++ {
		if got := write(in[:i], in[i:]); got != want {
			t.Fatalf("split at %d: got %q, want %q", i, got, want)
		}
		for j := i; j <= len(in); j++ {
			if got := write(in[:i], in[i:j], in[j:]); got != want {
				t.Fatalf("split at %d and %d: got %q, want %q", i, j, got, want)
			}
		}
	}
	pieces := strings.Split(in, "")
	if got := write(pieces...); got != want {
		t.Fatalf("byte at a time: got %q, want %q", got, want)
	}
}

// TestWriterHoldsBack: until the stream ends, the Writer holds exactly the
// bytes that could still start a secret.
func TestWriterHoldsBack(t *testing.T) {
	r := New(map[string]string{"K": "abcdef"})
	var buf bytes.Buffer
	w := r.Writer(&buf)
	fmt.Fprint(w, "0123456789abc")
	// The longest form is base64 "YWJjZGVm" (8 bytes): 7 are held.
	if got := buf.String(); got != "012345" {
		t.Errorf("before Flush: %q", got)
	}
	fmt.Fprint(w, "def!")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "0123456789[redacted K]!" {
		t.Errorf("after Flush: %q", got)
	}
	w.Close()
	if _, err := w.Write([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write(p []byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterError(t *testing.T) {
	w := New(map[string]string{"K": "k"}).Writer(failWriter{})
	if _, err := w.Write([]byte("hello world")); err == nil {
		t.Error("no error from a failing writer")
	}
}
