package servers

import (
	"crypto/x509"
	"net/http"
	"testing"
)

type recordingTransport struct{ got []*http.Request }

func (t *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.got = append(t.got, r)
	return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
}

// TestHeadersOnlyToTheServersOrigin: a server's secret headers go with
// requests to its own origin and with no other, such as the target of a
// redirect.
func TestHeadersOnlyToTheServersOrigin(t *testing.T) {
	base := &recordingTransport{}
	rt := &withHeaders{base: base, origin: "https://mcp.example.com:443", headers: map[string]string{"Authorization": "Bearer s3cret"}}
	for _, u := range []string{
		"https://mcp.example.com/mcp", "https://MCP.example.com:443/other",
		"https://evil.example/mcp", "https://mcp.example.com:8443/mcp", "https://sub.mcp.example.com/mcp",
	} {
		req, _ := http.NewRequest("POST", u, nil)
		rt.RoundTrip(req)
		if req.Header.Get("Authorization") != "" {
			t.Errorf("the caller's request was changed: %s", u)
		}
	}
	for i, want := range []string{"Bearer s3cret", "Bearer s3cret", "", "", ""} {
		if got := base.got[i].Header.Get("Authorization"); got != want {
			t.Errorf("request %d to %s carried %q, want %q", i, base.got[i].URL, got, want)
		}
	}
}

// TestLocalCAOnlyForLocalOrigins: the local CA is trusted for the allowed
// local origins and for no other server.
func TestLocalCAOnlyForLocalOrigins(t *testing.T) {
	pool := x509.NewCertPool()
	m := &Manager{o: Options{LocalCA: pool, Policy: Policy{LocalOrigins: []string{"https://127.0.0.1:8443"}}}}
	if got := m.tlsFor("https://127.0.0.1:8443/mcp"); got == nil || got.RootCAs != pool {
		t.Errorf("an allowed local origin: %+v", got)
	}
	for _, u := range []string{"https://mcp.example.com/mcp", "https://127.0.0.1:9443/mcp", "https://127.0.0.2:8443/mcp"} {
		if got := m.tlsFor(u); got != nil {
			t.Errorf("%s gets the local CA", u)
		}
	}
}
