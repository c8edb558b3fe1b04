package runtime

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// remote is an MCP server over streamable HTTP on a loopback TLS test
// server.
type remote struct {
	url   string
	tls   *tls.Config
	allow []netip.Prefix
}

// remoteMCP starts a remote server with one tool, hello, which answers
// only requests that carry auth in their Authorization header.
func remoteMCP(t *testing.T, auth string) remote {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "hello", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Who string }
			json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + args.Who}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != auth {
			http.Error(rw, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(ts.Close)
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	return remote{url: ts.URL + "/mcp", tls: &tls.Config{RootCAs: pool}, allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
}

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
		"http://mcp.example.com/mcp",
	} {
		req, _ := http.NewRequest("POST", u, nil)
		rt.RoundTrip(req)
		if req.Header.Get("Authorization") != "" {
			t.Errorf("the caller's request was changed: %s", u)
		}
	}
	for i, want := range []string{"Bearer s3cret", "Bearer s3cret", "", "", "", ""} {
		if got := base.got[i].Header.Get("Authorization"); got != want {
			t.Errorf("request %d to %s carried %q, want %q", i, base.got[i].URL, got, want)
		}
	}
}
