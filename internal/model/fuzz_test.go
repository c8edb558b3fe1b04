package model

import (
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/zero-dev/zero/internal/guard/localhttp"
)

// FuzzCheckBaseURL checks that every base URL accepted is http or https with
// a host, no credentials, no query and no fragment, and plain http only to a
// loopback host, judged on the canonical URL that is sent.
func FuzzCheckBaseURL(f *testing.F) {
	for _, s := range []string{
		"https://api.example.com/v1", "http://127.0.0.1:8080/v1/", "http://[::1]/v1",
		"http://localhost/v1", "http://LOCALHOST./v1", "http://api.example.com/v1",
		"https://u:p@api.example.com/v1", "https://api.example.com/v1?x#y", "http://[::ffff:127.0.0.1]/",
		"http://127.0.0.1@evil.example/", "http://evil.example\\@127.0.0.1/", "https://%31%32%37.0.0.1/",
		"http://0x7f.1/", "http://2130706433/", " https://a.example/v1\t",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		canon, err := CheckBaseURL(raw)
		if err != nil {
			return
		}
		u, err := url.Parse(canon.String())
		if err != nil {
			t.Fatalf("accepted %q as %q, which does not parse: %v", raw, canon, err)
		}
		switch {
		case u.Scheme != "https" && u.Scheme != "http":
			t.Fatalf("accepted %q with scheme %q", raw, u.Scheme)
		case u.Hostname() == "" || u.User != nil:
			t.Fatalf("accepted %q with host %q, user %v", raw, u.Hostname(), u.User)
		case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
			t.Fatalf("accepted %q with a query or fragment", raw)
		case u.Scheme == "http" && !localhttp.IsLoopbackHost(u.Hostname()):
			t.Fatalf("accepted plain http to %q", u.Hostname())
		}
	})
}

// FuzzDecodeResponse checks that any response body decodes without a panic,
// that an accepted one is an assistant message, and that no error or quoted
// provider text holds the key.
func FuzzDecodeResponse(f *testing.F) {
	const key = "sk-fuzz-key-1234"
	for _, s := range []string{
		answerBody("hi"),
		toolCallBody([3]string{"c", "f", "{}"}),
		`{"choices":[]}`, `{"error":{"message":"bad key sk-fuzz-key-1234"}}`, `{"error":"x"}`,
		`{"choices":[{"message":{"content":null}}]}`, `null`, `[]`, `{"choices":null}`,
		"\x00\xff" + key,
	} {
		f.Add([]byte(s))
	}
	r := newRedactor(key)
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := decodeResponse(data, r)
		if err == nil && res.Message.Role == "" {
			t.Fatalf("accepted %q with no role", data)
		}
		if err != nil && strings.Contains(r.scrub(err).Error(), key) {
			t.Fatalf("error holds the key: %v", err)
		}
		q := r.quote(errorText(data))
		switch {
		case len(q) > MaxErrorMessage:
			t.Fatalf("quote is %d bytes", len(q))
		case !utf8.ValidString(q):
			t.Fatalf("quote %q is not valid UTF-8", q)
		case strings.ContainsFunc(q, unicode.IsControl):
			t.Fatalf("quote %q holds a control character", q)
		case strings.Contains(q, key):
			t.Fatalf("quote %q holds the key", q)
		}
	})
}
