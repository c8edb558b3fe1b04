package redact

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzRedact checks, for two random secrets and a random input, that no
// secret value, nor any form of one, survives in the text between markers,
// and that Error's text and the Writer, given the input in two pieces,
// say what String returns.
func FuzzRedact(f *testing.F) {
	f.Add("hunter2", "ter", []byte("password hunter2 hunter"), uint(3))
	f.Add("aa", "a", []byte("aaaaaaa"), uint(1))
	f.Add("xab", "abcd", []byte("xabcd"), uint(2))
	f.Add("e", "[redacted A]", []byte("[redacted A]e"), uint(0))
	f.Add("a b", "a+b", []byte("a%20b a+b YSBi"), uint(5))
	f.Fuzz(func(t *testing.T, a, b string, input []byte, split uint) {
		secrets := map[string]string{"A": a, "B": b}
		r := New(secrets)
		out := r.String(string(input))
		if got := string(r.Bytes(input)); got != out {
			t.Fatalf("Bytes %q != String %q", got, out)
		}
		if got := r.Error(errors.New(string(input))).Error(); got != out {
			t.Fatalf("Error %q != String %q", got, out)
		}
		// The pieces of output between markers are input left as it was;
		// none may hold a secret in any form.
		pieces := []string{out}
		for _, marker := range []string{"[redacted A]", "[redacted B]"} {
			var next []string
			for _, p := range pieces {
				next = append(next, strings.Split(p, marker)...)
			}
			pieces = next
		}
		for _, v := range []string{a, b} {
			if v == "" {
				continue
			}
			for _, form := range encodings(v) {
				for _, p := range pieces {
					if form != "" && strings.Contains(p, form) {
						t.Fatalf("output %q holds %q (a form of %q) in %q", out, form, v, p)
					}
				}
			}
		}
		var buf bytes.Buffer
		w := r.Writer(&buf)
		k := int(split % uint(len(input)+1))
		w.Write(input[:k])
		w.Write(input[k:])
		w.Close()
		if buf.String() != out {
			t.Fatalf("Writer split at %d wrote %q, String returned %q", k, buf.String(), out)
		}
	})
}
