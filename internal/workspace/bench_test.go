package workspace

import (
	"fmt"
	"testing"

	"github.com/zero-dev/zero/internal/workspace/servers"
)

// BenchmarkPreview measures POST /api/servers/preview from a browser
// session over loopback, against a real SQLite file.
func BenchmarkPreview(b *testing.B) {
	ts := start(b, Options{})
	cfg := servers.Config{Name: "bench", Kind: servers.KindStdio, Command: "/usr/bin/node",
		Args: []string{"server.js", "--port", "0"}, Env: []string{"API_KEY", "REGION"}}
	body := map[string]any{"config": cfg}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ts.browser.must("POST", "/api/servers/preview", body, 200, nil)
	}
}

// BenchmarkPreviewApprove measures one approval as a person makes it:
// preview a new server, then create it with the fingerprint and a secret.
func BenchmarkPreviewApprove(b *testing.B) {
	ts := start(b, Options{})
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		i++
		ts.approveNew(int64(i))
	}
}

// approveNew makes an approval as a person does: preview the new server
// bench-i, then create it with the fingerprint and a secret.
func (ts *testServer) approveNew(i int64) {
	cfg := servers.Config{Name: fmt.Sprint("bench-", i), Kind: servers.KindStdio, Command: "/usr/bin/node",
		Args: []string{"server.js", fmt.Sprint(i)}, Env: []string{"API_KEY"}}
	var p servers.Preview
	ts.browser.must("POST", "/api/servers/preview", map[string]any{"config": cfg}, 200, &p)
	ts.browser.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": p.Fingerprint,
		"secrets": map[string]any{"env": map[string]string{"API_KEY": "v"}}}, 201, nil)
}

// BenchmarkTestStdioServer measures the Test action on a stdio Go MCP
// server: start it through the execution boundary, initialize, list and
// hash its tools, record the result.
func BenchmarkTestStdioServer(b *testing.B) {
	ts := start(b, Options{})
	cfg := stdioConfig(b, "bench", "API_KEY")
	var p servers.Preview
	ts.browser.must("POST", "/api/servers/preview", map[string]any{"config": cfg}, 200, &p)
	var c created
	ts.browser.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": p.Fingerprint,
		"secrets": map[string]any{"env": map[string]string{"API_KEY": "v"}}}, 201, &c)
	path := "/api/servers/" + itoa(c.Server.ID) + "/test"
	b.ResetTimer()
	for b.Loop() {
		var s servers.Server
		ts.browser.must("POST", path, nil, 200, &s)
		if s.Status != servers.StatusOK {
			b.Fatalf("status %q: %s", s.Status, s.LastError)
		}
	}
}
