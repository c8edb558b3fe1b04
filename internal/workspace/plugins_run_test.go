package workspace

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/plugin"
	"github.com/zero-dev/zero/internal/plugin/host/hosttest"
	"github.com/zero-dev/zero/internal/testgit"
	"github.com/zero-dev/zero/internal/workspace/plugins"
)

// statusResolver resolves status.example.com to 127.0.0.1, as a DNS
// rebinding attacker or a hostile resolver could, refuses every other
// name, and records each name it is asked; nothing reaches real DNS.
type statusResolver struct {
	mu    sync.Mutex
	asked []string
}

func (r *statusResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.asked = append(r.asked, host)
	r.mu.Unlock()
	if host == "status.example.com" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "only status.example.com resolves in this test", Name: host, IsNotFound: true}
}

func (r *statusResolver) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.asked)
}

// TestExamplePluginCannotReachLoopback installs and enables the example
// plugin of docs/plugins.md from a real local git server and calls its
// check_status through /mcp, run by real Node under bubblewrap, with
// status.example.com resolving to 127.0.0.1: Zero's broker resolves the
// granted host, refuses the loopback address (no allowed local origin
// allows it), and the call's result says so, from Zero.
func TestExamplePluginCannotReachLoopback(t *testing.T) {
	hosttest.Require(t)
	resolver := &statusResolver{}
	ts := start(t, Options{GitHubURL: exampleRepo(t), Resolver: resolver})
	b := ts.browser
	ts.installExample()

	var bearer struct {
		Token string `json:"token"`
	}
	b.must("POST", "/api/tokens", map[string]string{"name": "agent"}, 201, &bearer)
	cs, _ := ts.mcpClient(bearer.Token)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "notes-helper__check_status", Arguments: map[string]any{"path": "/api/v2/status.json"}})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	// The plugin's error, then Zero's note of what its broker refused.
	if !res.IsError || len(texts) != 2 || !strings.HasPrefix(texts[0], "ctx.fetch status.example.com:443: refused by Zero (403)") ||
		!strings.HasPrefix(texts[1], "[zero] the plugin's network request was refused: ") ||
		!strings.Contains(texts[1], "status.example.com:443") || !strings.Contains(texts[1], "127.0.0.1 is loopback") {
		t.Errorf("check_status with status.example.com at 127.0.0.1: error %v, %q", res.IsError, texts)
	}
	for _, name := range resolver.names() {
		if name != "status.example.com" {
			t.Errorf("the resolver was asked for %q", name)
		}
	}
	if len(resolver.names()) == 0 {
		t.Error("the broker never resolved status.example.com: was the host refused for another reason?")
	}
}

// exampleRepo serves the example plugin of docs/plugins.md as
// acme/notes-helper from a real local git server, and returns its URL.
func exampleRepo(t testing.TB) string {
	t.Helper()
	files := map[string]string{"LICENSE": mitLicence}
	for _, name := range []string{plugin.ManifestFile, "plugin.js"} {
		data, err := os.ReadFile(filepath.Join("..", "plugin", "testdata", "example", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(data)
	}
	g := testgit.NewServer(t)
	g.Repo(t, "acme/notes-helper", files)
	return g.URL
}

// installExample installs and enables the example plugin from the
// workspace's git server (exampleRepo): its tools are offered as
// notes-helper__NAME.
func (ts *testServer) installExample() {
	ts.t.Helper()
	b := ts.browser
	var p plugins.Preview
	b.must("POST", "/api/plugins/preview", map[string]string{"repo": "acme/notes-helper", "ref": "main"}, 200, &p)
	var in plugins.Installed
	b.must("POST", "/api/plugins", map[string]any{"repo": "acme/notes-helper", "ref": "main", "commit": p.Commit,
		"permission_hash": p.PermissionHash, "set_hash": p.SetHash}, 201, &in)
	b.must("POST", "/api/plugins/"+itoa(in.Plugin.ID)+"/enable", map[string]string{"fingerprint": p.Fingerprint}, 200, nil)
}
