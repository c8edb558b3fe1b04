package workspace

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/color/palette"
	gifpkg "image/gif"
	"image/png"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/plugin/host"
	"github.com/zero-dev/zero/internal/workspace/logo"
	"github.com/zero-dev/zero/internal/workspace/servers"
	"github.com/zero-dev/zero/internal/workspace/web"
)

// testRegistry is a local MCP Registry (the v0.1 API the official one
// serves): its entries are server.json documents with their status, in
// name order; a listing pages through them with the last name as the
// cursor. It counts the requests it answers.
type testRegistry struct {
	srv *httptest.Server
	mu  sync.Mutex
	all []registryEntry
	// down, when set, answers every request 503.
	down bool
	hits int
}

// registryEntry is one version of a server in the test registry.
type registryEntry struct {
	Server   json.RawMessage // the bytes of its server.json, as served
	Name     string
	Version  string
	Status   string // active, deprecated or deleted
	Message  string // its statusMessage
	IsLatest bool
}

func newTestRegistry(t testing.TB, entries ...registryEntry) *testRegistry {
	t.Helper()
	reg := &testRegistry{}
	for _, e := range entries {
		reg.add(t, e)
	}
	reg.srv = httptest.NewServer(http.HandlerFunc(reg.serve))
	t.Cleanup(reg.srv.Close)
	return reg
}

// add adds e, reading its name and version from its server.json.
func (reg *testRegistry) add(t testing.TB, e registryEntry) {
	t.Helper()
	var head struct{ Name, Version string }
	if err := json.Unmarshal(e.Server, &head); err != nil && e.Name == "" {
		t.Fatalf("a test entry: %v", err)
	}
	if e.Name == "" {
		e.Name, e.Version = head.Name, head.Version
	}
	if e.Status == "" {
		e.Status = "active"
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	reg.all = append(reg.all, e)
	slices.SortStableFunc(reg.all, func(a, b registryEntry) int { return strings.Compare(a.Name, b.Name) })
}

// answer is an entry as the API answers it: server.json under "server",
// the registry's own metadata under "_meta".
func (e registryEntry) answer() map[string]any {
	official := map[string]any{"status": e.Status, "isLatest": e.IsLatest,
		"publishedAt": "2025-09-16T16:43:44.243434Z", "updatedAt": "2025-09-16T16:43:44.243434Z"}
	if e.Message != "" {
		official["statusMessage"] = e.Message
	}
	return map[string]any{"server": e.Server, "_meta": map[string]any{"io.modelcontextprotocol.registry/official": official}}
}

func (reg *testRegistry) serve(rw http.ResponseWriter, r *http.Request) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	reg.hits++
	if reg.down {
		http.Error(rw, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	if rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/v0.1/servers/"); ok {
		escName, escVersion, ok := strings.Cut(rest, "/versions/")
		name, err1 := url.PathUnescape(escName)
		version, err2 := url.PathUnescape(escVersion)
		if !ok || err1 != nil || err2 != nil {
			http.NotFound(rw, r)
			return
		}
		for _, e := range reg.all {
			if e.Name == name && (e.Version == version || version == "latest" && e.IsLatest) {
				json.NewEncoder(rw).Encode(e.answer())
				return
			}
		}
		http.Error(rw, `{"title":"Not Found","status":404,"detail":"Server not found"}`, http.StatusNotFound)
		return
	}
	if r.URL.Path != "/v0.1/servers" {
		http.NotFound(rw, r)
		return
	}
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 30
	}
	search, cursor := strings.ToLower(q.Get("search")), q.Get("cursor")
	page := []map[string]any{} // an empty page is [], not null, which the client refuses
	next := ""
	for _, e := range reg.all {
		if q.Get("version") == "latest" && !e.IsLatest || cursor != "" && e.Name+":"+e.Version <= cursor ||
			search != "" && !strings.Contains(strings.ToLower(e.Name), search) {
			continue
		}
		if len(page) == limit {
			break
		}
		page = append(page, e.answer())
		next = e.Name + ":" + e.Version
	}
	if len(page) < limit {
		next = ""
	}
	meta := map[string]any{"count": len(page)}
	if next != "" {
		meta["nextCursor"] = next
	}
	json.NewEncoder(rw).Encode(map[string]any{"servers": page, "metadata": meta})
}

var (
	fakenpxOnce sync.Once
	fakenpxPath string
	fakenpxErr  error
)

// fakenpx builds testdata/fakenpx, the stand-in for npx that the
// test-only runtime hint (Options.RegistryRuntimes["npx"], passed to
// registry.DeriveOptions.Runtimes) names: it runs `zero mcp filesystem
// FOLDER` for the one npm package it knows.
func fakenpx(t testing.TB) string {
	t.Helper()
	fakenpxOnce.Do(func() {
		dir, err := os.MkdirTemp("", "zero-fakenpx-")
		if err != nil {
			fakenpxErr = err
			return
		}
		fakenpxPath = filepath.Join(dir, "npx")
		if out, err := exec.Command("go", "build", "-o", fakenpxPath, "./testdata/fakenpx").CombinedOutput(); err != nil {
			fakenpxErr = &buildError{err, string(out)}
		}
	})
	if fakenpxErr != nil {
		t.Fatal(fakenpxErr)
	}
	return fakenpxPath
}

// officialEntries are the official registry's published examples
// (registry/testdata/official, see its README), each the latest version.
func officialEntries(t testing.TB) []registryEntry {
	t.Helper()
	files, err := filepath.Glob("registry/testdata/official/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("the official examples: %v", err)
	}
	var out []registryEntry
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, registryEntry{Server: data, IsLatest: true})
	}
	return out
}

// fsEntry is an npm entry whose one package argument is folder: Zero
// derives `npx -y @zero-test/filesystem@1.0.0 FOLDER` from it.
func fsEntry(folder string) registryEntry {
	data, _ := json.Marshal(map[string]any{
		"$schema": "https://static.modelcontextprotocol.io/schemas/2025-10-17/server.schema.json",
		"name":    "io.github.zero-test/filesystem", "title": "Zero test filesystem", "version": "1.0.0",
		"description": "Reads the files of one folder.",
		"packages": []any{map[string]any{"registryType": "npm", "registryBaseUrl": "https://registry.npmjs.org",
			"identifier": "@zero-test/filesystem", "version": "1.0.0", "transport": map[string]any{"type": "stdio"},
			"packageArguments": []any{map[string]any{"type": "positional", "valueHint": "folder", "value": folder}}}},
		"someFieldZeroDoesNotUse": "<script>ignored</script>",
	})
	return registryEntry{Server: data, IsLatest: true}
}

// TestRegistryDraftToToolCall: against a local registry holding the
// official examples and an npm entry, a person searches and pages, sees
// on the entry's route exactly what Zero would run, and makes a draft
// (browser only: a bearer caller gets 403 browser_only); the draft is
// an ordinary one: unapproved and disabled, its review shows the derived
// command, and once approved its Test lists the tools and /mcp calls one.
// The npm package runs through the test-only runtime hint: "npx" is
// testdata/fakenpx, which runs `zero mcp filesystem FOLDER`, so nothing
// is fetched from npm.
func TestRegistryDraftToToolCall(t *testing.T) {
	folder := t.TempDir()
	if err := os.WriteFile(filepath.Join(folder, "hello.txt"), []byte("hello from the registry"), 0o600); err != nil {
		t.Fatal(err)
	}
	entries := append(officialEntries(t), fsEntry(folder))
	for i := range 40 { // more than a page
		data, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("io.github.zero-test/many-%02d", i), "version": "1.0.0",
			"description": "One of many.", "remotes": []any{map[string]any{"type": "streamable-http", "url": "https://example.com/mcp"}}})
		entries = append(entries, registryEntry{Server: data, IsLatest: true})
	}
	reg := newTestRegistry(t, entries...)
	npx := fakenpx(t)
	ts := start(t, Options{RegistryURL: reg.srv.URL, RegistryRuntimes: map[string]string{"npx": npx}})
	b := ts.browser

	var found registryListing
	b.must("GET", "/api/registry/servers?search=zero-test/filesystem", nil, 200, &found)
	if len(found.Servers) != 1 || found.Servers[0].Name != "io.github.zero-test/filesystem" || found.Servers[0].Title != "Zero test filesystem" {
		t.Fatalf("search: %+v", found)
	}
	// Paging: every entry once, in pages, by the registry's cursors.
	seen := map[string]bool{}
	cursor, pages := "", 0
	for {
		var p registryListing
		b.must("GET", "/api/registry/servers?cursor="+url.QueryEscape(cursor), nil, 200, &p)
		pages++
		for _, s := range p.Servers {
			if seen[s.Name] {
				t.Fatalf("%s listed twice", s.Name)
			}
			seen[s.Name] = true
		}
		if cursor = p.NextCursor; cursor == "" || pages > 5 {
			break
		}
	}
	if pages < 2 || len(seen) != len(entries) {
		t.Fatalf("paging: %d pages, %d entries listed of %d", pages, len(seen), len(entries))
	}

	// The entry's route: exactly what Zero would run.
	var det registryDetail
	b.must("GET", entryPath("io.github.zero-test/filesystem", "1.0.0"), nil, 200, &det)
	wantArgs := []string{"-y", "@zero-test/filesystem@1.0.0", folder}
	if len(det.Options) != 1 || det.Options[0].Config == nil || det.Options[0].Config.Command != npx ||
		!slices.Equal(det.Options[0].Config.Args, wantArgs) || det.Options[0].CommandLine != web.CommandLine(npx, wantArgs) {
		t.Fatalf("what Zero would run: %+v", det.Options)
	}

	// The pages: Explore lists it; its page shows the command.
	if st, page := b.do("GET", "/registry?search=zero-test/filesystem", nil); st != 200 || !strings.Contains(string(page), "Zero test filesystem") {
		t.Fatalf("the Explore page: %d %s", st, page)
	}
	if st, page := b.do("GET", entryPagePath("io.github.zero-test/filesystem", "1.0.0"), nil); st != 200 ||
		!strings.Contains(string(page), html.EscapeString(web.CommandLine(npx, wantArgs))) || strings.Contains(string(page), "<script>ignored") {
		t.Fatalf("the entry's page: %d %s", st, page)
	}

	body := map[string]any{"name": "io.github.zero-test/filesystem", "version": "1.0.0", "package": 0}
	agent := ts.bearer()
	if st, data := agent.do("POST", "/api/registry/drafts", body); st != 403 || errorCode(data) != "browser_only" {
		t.Fatalf("a bearer caller's draft: %d %s", st, data)
	}
	var c created
	b.must("POST", "/api/registry/drafts", body, 201, &c)
	s := c.Server
	if s.Approved || s.Enabled || s.Config.Command != npx || !slices.Equal(s.Config.Args, wantArgs) || s.Config.Registry == nil ||
		s.Config.Registry.Name != "io.github.zero-test/filesystem" || s.Config.Registry.Version != "1.0.0" || s.Config.Registry.EntrySHA256 != det.SHA256 {
		t.Fatalf("the draft: %+v", s)
	}
	// Its review, the server's page, shows the derived command.
	st, page := b.do("GET", "/servers/"+itoa(s.ID), nil)
	if st != 200 || !strings.Contains(string(page), html.EscapeString(web.CommandLine(npx, wantArgs))) {
		t.Fatalf("the draft's review: %d, does not show the command", st)
	}
	id := itoa(s.ID)
	b.must("POST", "/api/servers/"+id+"/approve", map[string]any{"fingerprint": s.Fingerprint, "enable": true}, 200, &s)
	b.must("POST", "/api/servers/"+id+"/test", nil, 200, &s)
	if s.Status != servers.StatusOK || len(s.Tools) == 0 {
		t.Fatalf("test: %+v", s)
	}
	cs, _ := ts.mcpClient(agent.token)
	if text, isErr := callText(t, cs, "filesystem__read_text_file", map[string]any{"path": filepath.Join(folder, "hello.txt")}); isErr ||
		!strings.Contains(text, "hello from the registry") {
		t.Fatalf("the call through /mcp: %q %v", text, isErr)
	}

	records, err := ts.w.audit.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(records, func(r audit.Record) bool { return r.Action == "server.from_registry" })
	if i < 0 || records[i].Fingerprint != c.Server.Fingerprint || records[i].Detail["name"] != "io.github.zero-test/filesystem" ||
		records[i].Detail["entry_sha256"] != det.SHA256 || records[i-1].Action != "server.draft" {
		t.Fatalf("the audit records: %+v", records)
	}
}

// TestRegistryRefusals: each refusal says why, and saves nothing: a
// deleted entry, a version range or latest, an oci image without a
// digest, an http remote, a required input missing, a server.json over
// its bound, a request that sends a configuration.
func TestRegistryRefusals(t *testing.T) {
	entry := func(v map[string]any) registryEntry {
		data, _ := json.Marshal(v)
		return registryEntry{Server: data, IsLatest: true}
	}
	deleted := entry(map[string]any{"name": "io.github.zero-test/gone", "version": "1.0.0", "description": "Gone.",
		"remotes": []any{map[string]any{"type": "streamable-http", "url": "https://example.com/mcp"}}})
	deleted.Status = "deleted"
	huge := entry(map[string]any{"name": "io.github.zero-test/huge", "version": "1.0.0", "description": strings.Repeat("x", 1<<20),
		"remotes": []any{map[string]any{"type": "streamable-http", "url": "https://example.com/mcp"}}})
	reg := newTestRegistry(t, append(officialEntries(t), deleted, huge,
		entry(map[string]any{"name": "io.github.zero-test/image", "version": "1.0.0", "description": "A tag only.",
			"packages": []any{map[string]any{"registryType": "oci", "identifier": "docker.io/zero/test:1.0.0", "transport": map[string]any{"type": "stdio"}}}}),
		entry(map[string]any{"name": "io.github.zero-test/plain", "version": "1.0.0", "description": "Plain http.",
			"remotes": []any{map[string]any{"type": "streamable-http", "url": "http://example.com/mcp"}}}),
	)...)
	ts := start(t, Options{RegistryURL: reg.srv.URL})
	b := ts.browser
	zero := 0
	for _, tc := range []struct {
		name, version string
		remote        bool
		status        int
		code, says    string
	}{
		{"io.github.zero-test/gone", "1.0.0", true, 410, "entry_deleted", "deleted"},
		{"io.modelcontextprotocol.anonymous/brave-search", "latest", false, 400, "unpinned_version", "exact version"},
		{"io.modelcontextprotocol.anonymous/brave-search", "^1.0.2", false, 400, "unpinned_version", "exact version"},
		{"io.github.zero-test/image", "1.0.0", false, 400, "unpinned_image", "digest"},
		{"io.github.zero-test/plain", "1.0.0", true, 400, "", "http"},
		{"io.modelcontextprotocol.anonymous/brave-search", "1.0.2", false, 400, "missing_required_input", "BRAVE_API_KEY"},
		{"io.github.zero-test/huge", "1.0.0", true, 502, "", "bytes"},
	} {
		body := map[string]any{"name": tc.name, "version": tc.version, "package": &zero}
		if tc.remote {
			body = map[string]any{"name": tc.name, "version": tc.version, "remote": &zero}
		}
		st, data := b.do("POST", "/api/registry/drafts", body)
		var e struct {
			Error apiError `json:"error"`
		}
		json.Unmarshal(data, &e)
		if st != tc.status || tc.code != "" && e.Error.Code != tc.code || !strings.Contains(e.Error.Message, tc.says) {
			t.Errorf("%s %s: %d %s", tc.name, tc.version, st, data)
		}
	}
	// The browser names an entry and the values of its inputs, never a
	// configuration: a draft that sends one is refused.
	withConfig := map[string]any{"name": "io.modelcontextprotocol.anonymous/brave-search", "version": "1.0.2", "package": 0,
		"secrets": map[string]string{"env:BRAVE_API_KEY": "k"}, "config": map[string]any{"command": "/bin/sh", "args": []string{"-c", "id"}}}
	if st, data := b.do("POST", "/api/registry/drafts", withConfig); st != 400 || errorCode(data) != "bad_request" || !strings.Contains(string(data), `unknown field \"config\"`) {
		t.Errorf("a draft that sends a configuration: %d %s", st, data)
	}
	var list []servers.Server
	b.must("GET", "/api/servers", nil, 200, &list)
	if len(list) != 0 {
		t.Errorf("a refusal saved %d servers", len(list))
	}
	// A deleted entry is not listed.
	var found registryListing
	b.must("GET", "/api/registry/servers?search=zero-test/gone", nil, 200, &found)
	if len(found.Servers) != 0 {
		t.Errorf("a deleted entry is listed: %+v", found.Servers)
	}
}

// TestRegistryAllVersions: a listing holds each server's latest version;
// every version only on request (versions=all), on the API and the page.
func TestRegistryAllVersions(t *testing.T) {
	version := func(v string, latest bool) registryEntry {
		data, _ := json.Marshal(map[string]any{"name": "io.github.zero-test/versions", "version": v, "description": "Versions.",
			"remotes": []any{map[string]any{"type": "streamable-http", "url": "https://example.com/mcp"}}})
		return registryEntry{Server: data, IsLatest: latest}
	}
	reg := newTestRegistry(t, version("1.0.0", false), version("2.0.0", true))
	ts := start(t, Options{RegistryURL: reg.srv.URL})
	for _, tc := range []struct {
		query string
		want  []string
	}{{"", []string{"2.0.0"}}, {"?versions=all", []string{"1.0.0", "2.0.0"}}} {
		var list registryListing
		ts.browser.must("GET", "/api/registry/servers"+tc.query, nil, 200, &list)
		var got []string
		for _, s := range list.Servers {
			got = append(got, s.Version)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: versions %q, want %q", tc.query, got, tc.want)
		}
	}
	_, page, _ := ts.browser.page("GET", "/registry?versions=all", nil)
	if !strings.Contains(page, "version 1.0.0") || !strings.Contains(page, `id="all-versions" checked`) {
		t.Errorf("the page with every version: %s", page)
	}
}

// tlsOrigin starts an https test server on loopback with handler, and
// returns it with a pool that trusts it: the workspace reaches it only as
// an allowed local origin (ZERO_ALLOWED_LOCAL_ORIGINS), with no name to
// resolve.
func tlsOrigin(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *x509.CertPool) {
	t.Helper()
	srv := httptest.NewTLSServer(handler)
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv, pool
}

// bundleServerJS is an MCP server in plain node, as a bundle ships one:
// one tool, whose answer says where it runs from and what its manifest set.
const bundleServerJS = `const rl = require('readline').createInterface({input: process.stdin});
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === 'initialize') {
    send({jsonrpc: '2.0', id: m.id, result: {protocolVersion: m.params.protocolVersion, capabilities: {tools: {}}, serverInfo: {name: 'weather', version: '1.0.0'}}});
  } else if (m.method === 'tools/list') {
    send({jsonrpc: '2.0', id: m.id, result: {tools: [{name: 'forecast', description: 'The forecast.', inputSchema: {type: 'object', properties: {city: {type: 'string'}}}}]}});
  } else if (m.method === 'tools/call') {
    const text = 'sunny in ' + m.params.arguments.city + ', ' + process.env.UNITS + ', from ' + __dirname + ' with ' + process.argv.slice(2).join(' ');
    send({jsonrpc: '2.0', id: m.id, result: {content: [{type: 'text', text: text}]}});
  } else {
    send({jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'no such method'}});
  }
});
`

// TestRegistryMCPBBundle: an mcpb package is fetched by the workspace's
// own download client (here from an allowed local origin) and kept only
// when its bytes are the ones its fileSha256 names. Bytes that differ are
// refused with mcpb_sha256_mismatch, and nothing is saved: no server, no
// bundle, no audit record. Before a draft, the entry's page fetches
// nothing and says the command waits on the bundle's manifest. The
// declared bytes are unpacked under $ZERO_HOME and make a draft whose
// review shows the command its manifest gives (node on the bundle's
// server); approved, it is tested and its tool called through /mcp.
func TestRegistryMCPBBundle(t *testing.T) {
	found, err := host.FindNode(context.Background(), "node")
	if err != nil {
		t.Fatalf("node, which scripts/test installs: %v", err)
	}
	node := found.Path
	bundle := zipBundle(t, map[string]string{
		"manifest.json": `{"manifest_version": "0.3", "name": "weather", "version": "1.0.0", "server": {"type": "node", "entry_point": "server/index.js",
			"mcp_config": {"command": "node", "args": ["${__dirname}/server/index.js"], "env": {"UNITS": "metric"}}}}`,
		"server/index.js": bundleServerJS,
	})
	sum := sha256.Sum256(bundle)
	good := hex.EncodeToString(sum[:])
	var hits atomic.Int32
	srv, pool := tlsOrigin(t, func(rw http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		rw.Write(bundle)
	})
	mcpb := func(name, sha string) registryEntry {
		data, _ := json.Marshal(map[string]any{"name": "io.github.zero-test/" + name, "version": "1.0.0", "description": "A bundle.",
			"packages": []any{map[string]any{"registryType": "mcpb", "identifier": srv.URL + "/bundle.mcpb", "fileSha256": sha,
				"transport": map[string]any{"type": "stdio"}, "packageArguments": []any{map[string]any{"type": "positional", "value": "--quiet"}}}}})
		return registryEntry{Server: data, IsLatest: true}
	}
	reg := newTestRegistry(t, mcpb("tampered", strings.Repeat("0", 64)), mcpb("weather", good))
	ts := start(t, Options{RegistryURL: reg.srv.URL, RegistryRuntimes: map[string]string{"node": node},
		AllowedLocalOrigins: []string{srv.URL}, TLS: &tls.Config{RootCAs: pool}})
	b := ts.browser
	dir := filepath.Join(ts.home, "registry", "mcpb")

	var det registryDetail
	b.must("GET", entryPath("io.github.zero-test/weather", "1.0.0"), nil, 200, &det)
	if len(det.Options) != 1 || det.Options[0].Config != nil || det.Options[0].BundlePending == "" || det.Options[0].Problem != "" || hits.Load() != 0 {
		t.Fatalf("the entry before a draft, %d requests: %+v", hits.Load(), det.Options)
	}
	if st, page := b.do("GET", entryPagePath("io.github.zero-test/weather", "1.0.0"), nil); st != 200 || !strings.Contains(string(page), "bundle-pending") {
		t.Fatalf("the entry's page: %d %s", st, page)
	}

	st, data := b.do("POST", "/api/registry/drafts", map[string]any{"name": "io.github.zero-test/tampered", "version": "1.0.0", "package": 0})
	if st != 400 || errorCode(data) != "mcpb_sha256_mismatch" || !strings.Contains(string(data), good) || !strings.Contains(string(data), "nothing was saved") {
		t.Errorf("a bundle whose bytes differ: %d %s", st, data)
	}
	if hits.Load() != 1 {
		t.Errorf("%d requests for the bundle, want 1", hits.Load())
	}
	var list []servers.Server
	b.must("GET", "/api/servers", nil, 200, &list)
	if files, _ := os.ReadDir(dir); len(list) != 0 || len(files) != 0 {
		t.Errorf("a refused bundle saved %d servers and kept %v", len(list), files)
	}
	records, err := ts.w.audit.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(records, func(r audit.Record) bool { return r.Action == "server.from_registry" }) {
		t.Errorf("a refused bundle was audited as a draft: %+v", records)
	}

	var c created
	b.must("POST", "/api/registry/drafts", map[string]any{"name": "io.github.zero-test/weather", "version": "1.0.0", "package": 0}, 201, &c)
	if kept, err := os.ReadFile(filepath.Join(dir, good+".mcpb")); err != nil || !bytes.Equal(kept, bundle) {
		t.Errorf("the bundle kept: %v", err)
	}
	unpacked := filepath.Join(dir, good)
	wantArgs := []string{filepath.Join(unpacked, "server", "index.js"), "--quiet"}
	s := c.Server
	if s.Approved || s.Enabled || s.Config.Command != node || !slices.Equal(s.Config.Args, wantArgs) || !slices.Equal(s.Config.Env, []string{"UNITS"}) {
		t.Fatalf("the draft of a bundle: %+v", s)
	}
	if st, page := b.do("GET", "/servers/"+itoa(s.ID), nil); st != 200 || !strings.Contains(string(page), html.EscapeString(web.CommandLine(node, wantArgs))) {
		t.Fatalf("the draft's review: %d, does not show the command", st)
	}
	id := itoa(s.ID)
	b.must("POST", "/api/servers/"+id+"/approve", map[string]any{"fingerprint": s.Fingerprint, "enable": true}, 200, &s)
	b.must("POST", "/api/servers/"+id+"/test", nil, 200, &s)
	if s.Status != servers.StatusOK || len(s.Tools) != 1 {
		t.Fatalf("test: %+v", s)
	}
	cs, _ := ts.mcpClient(ts.bearer().token)
	want := "sunny in Oslo, metric, from " + filepath.Join(unpacked, "server") + " with --quiet"
	if text, isErr := callText(t, cs, "weather__forecast", map[string]any{"city": "Oslo"}); isErr || text != want {
		t.Fatalf("the call through /mcp: %q %v, want %q", text, isErr, want)
	}
}

// zipBundle is the bytes of a zip archive holding files.
func zipBundle(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, files[name]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestRegistryIcons: the workspace fetches each entry's icon itself,
// through its own client. A good PNG is listed as a data: URL; an icon
// over 32 KiB, of another type (declared, or in its bytes), on a private
// host or behind a redirect leaves its entry listed without an icon, the
// reason logged. The listing and the Explore page never carry an icon's
// URL.
func TestRegistryIcons(t *testing.T) {
	var png16 bytes.Buffer
	if err := png.Encode(&png16, image.NewGray(image.Rect(0, 0, 16, 16))); err != nil {
		t.Fatal(err)
	}
	good := png16.Bytes()
	big := append(slices.Clone(good), make([]byte, logo.MaxBytes)...) // over the bound before it is decoded
	var gif bytes.Buffer
	if err := gifpkg.Encode(&gif, image.NewPaletted(image.Rect(0, 0, 16, 16), palette.Plan9), nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	hits := map[string]int{}
	icons, pool := tlsOrigin(t, func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/good.png":
			rw.Header().Set("Content-Type", "image/png")
			rw.Write(good)
		case "/big.png":
			rw.Header().Set("Content-Type", "image/png")
			rw.Write(big)
		case "/gif.png":
			rw.Header().Set("Content-Type", "image/png")
			rw.Write(gif.Bytes())
		case "/redirect":
			http.Redirect(rw, r, "/good.png", http.StatusFound)
		default:
			http.NotFound(rw, r)
		}
	})
	var privateHits atomic.Int32
	// Trusted, so that only the private-host rule can keep it out.
	private, _ := tlsOrigin(t, func(http.ResponseWriter, *http.Request) { privateHits.Add(1) })
	pool.AddCert(private.Certificate())

	withIcon := func(name string, icon map[string]any) registryEntry {
		data, _ := json.Marshal(map[string]any{"name": "io.github.zero-test/icon-" + name, "version": "1.0.0", "description": "An icon.",
			"icons":   []any{icon},
			"remotes": []any{map[string]any{"type": "streamable-http", "url": "https://example.com/mcp"}}})
		return registryEntry{Server: data, IsLatest: true}
	}
	reg := newTestRegistry(t,
		withIcon("good", map[string]any{"src": icons.URL + "/good.png", "mimeType": "image/png", "sizes": []string{"16x16"}}),
		withIcon("big", map[string]any{"src": icons.URL + "/big.png", "mimeType": "image/png"}),
		withIcon("webp", map[string]any{"src": icons.URL + "/good.png", "mimeType": "image/webp"}),
		withIcon("gif", map[string]any{"src": icons.URL + "/gif.png", "mimeType": "image/png"}),
		withIcon("private", map[string]any{"src": private.URL + "/icon.png"}),
		withIcon("redirect", map[string]any{"src": icons.URL + "/redirect"}),
	)
	ts := start(t, Options{RegistryURL: reg.srv.URL, AllowedLocalOrigins: []string{icons.URL}, TLS: &tls.Config{RootCAs: pool}})

	st, raw := ts.browser.do("GET", "/api/registry/servers?search=zero-test/icon-", nil)
	var page registryListing
	if err := json.Unmarshal(raw, &page); st != 200 || err != nil {
		t.Fatalf("the listing: %d %s", st, raw)
	}
	listed := map[string]string{}
	for _, s := range page.Servers {
		listed[strings.TrimPrefix(s.Name, "io.github.zero-test/icon-")] = s.Icon
	}
	wantGood, _ := logo.DataURL(good)
	if listed["good"] != wantGood {
		t.Errorf("the good icon is listed as %.60q, want its data: URL", listed["good"])
	}
	log := ts.log.String()
	for name, reason := range map[string]string{
		"big":      "icon too large",
		"webp":     "is image/webp: Zero shows PNG and SVG icons only",
		"gif":      "invalid SVG icon",
		"private":  "127.0.0.1 is loopback",
		"redirect": "redirects are not followed",
	} {
		if icon, ok := listed[name]; !ok || icon != "" {
			t.Errorf("%s: listed %t with icon %.40q; want it listed without one", name, ok, icon)
		}
		said := func(line string) bool {
			return strings.Contains(line, "name=io.github.zero-test/icon-"+name+" ") && strings.Contains(line, reason)
		}
		if !slices.ContainsFunc(strings.Split(log, "\n"), said) {
			t.Errorf("%s: the log does not say %q:\n%s", name, reason, log)
		}
	}
	if strings.Contains(string(raw), icons.URL) || strings.Contains(string(raw), private.URL) {
		t.Error("the listing carries an icon's URL")
	}
	st, body := ts.browser.do("GET", "/registry?search=zero-test/icon-", nil)
	shown := strings.Contains(string(body), `src="`+strings.ReplaceAll(wantGood, "+", "&#43;")+`"`)
	if showsURL := strings.Contains(string(body), icons.URL) || strings.Contains(string(body), private.URL); st != 200 || !shown || showsURL {
		t.Errorf("the Explore page: %d, with the data: URL %t, with an icon's URL %t", st, shown, showsURL)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["/good.png"] != 1 || hits["/redirect"] != 1 || privateHits.Load() != 0 {
		t.Errorf("requests: %v, %d to the private host; want /good.png once (a redirect or a declared webp never followed), the private host never",
			hits, privateHits.Load())
	}
}

// TestRegistryExploreAndUnreachable: the Explore page shows a deprecated
// entry with its message. When the registry cannot be reached, a listing
// answers the entries cached, saying why and when they were fetched, and
// a draft is refused (it is made only from the entry as the registry
// serves it now), saving nothing.
func TestRegistryExploreAndUnreachable(t *testing.T) {
	old := fsEntry(t.TempDir())
	old.Status, old.Message = "deprecated", "Use io.github.zero-test/other instead."
	reg := newTestRegistry(t, old)
	ts := start(t, Options{RegistryURL: reg.srv.URL})
	b := ts.browser
	page := b.mustPage("GET", "/registry", nil, 200)
	if !strings.Contains(page, ">deprecated<") || !strings.Contains(page, "Use io.github.zero-test/other instead.") {
		t.Errorf("the Explore page does not show the deprecated entry with its message:\n%s", page)
	}

	reg.mu.Lock()
	reg.down = true
	reg.mu.Unlock()
	var l registryListing
	b.must("GET", "/api/registry/servers?search=filesystem", nil, 200, &l) // not a cached page: the registry is asked
	if len(l.Servers) != 1 || l.Servers[0].Name != "io.github.zero-test/filesystem" || !strings.Contains(l.Stale, "503") || l.FetchedAt.IsZero() {
		t.Errorf("the listing while the registry is down: %+v", l)
	}
	page = b.mustPage("GET", "/registry?search=filesystem", nil, 200)
	if !strings.Contains(page, "Shown from the cache, as fetched") || !strings.Contains(page, `id="problem"`) || !strings.Contains(page, "Zero test filesystem") {
		t.Errorf("the Explore page while the registry is down:\n%s", page)
	}
	st, data := b.do("POST", "/api/registry/drafts", map[string]any{"name": "io.github.zero-test/filesystem", "version": "1.0.0", "package": 0})
	if st != 502 || errorCode(data) != "registry_unreachable" {
		t.Errorf("a draft while the registry is down: %d %s", st, data)
	}
	var list []servers.Server
	b.must("GET", "/api/servers", nil, 200, &list)
	if len(list) != 0 {
		t.Errorf("a refused draft saved %d servers", len(list))
	}
}

// TestRegistryEditDropsReference: an edit is a typed configuration, which
// cannot claim a registry reference, so editing a server Zero derived
// from an entry saves it without one: its fingerprint is the plain
// configuration's, and the audit record names the field.
func TestRegistryEditDropsReference(t *testing.T) {
	reg := newTestRegistry(t, fsEntry(t.TempDir()))
	program, err := exec.LookPath("true") // an edit needs a program that resolves; nothing runs
	if err != nil {
		t.Fatal(err)
	}
	ts := start(t, Options{RegistryURL: reg.srv.URL, RegistryRuntimes: map[string]string{"npx": program}})
	b := ts.browser
	var c created
	b.must("POST", "/api/registry/drafts", map[string]any{"name": "io.github.zero-test/filesystem", "version": "1.0.0", "package": 0}, 201, &c)
	if c.Server.Config.Registry == nil {
		t.Fatalf("the draft has no registry reference: %+v", c.Server.Config)
	}
	edited := c.Server.Config
	edited.Registry = nil
	var p servers.Preview
	b.must("POST", "/api/servers/preview", map[string]any{"config": edited, "id": c.Server.ID}, 200, &p)
	var s servers.Server
	b.must("PUT", "/api/servers/"+itoa(c.Server.ID), map[string]any{"config": edited, "fingerprint": p.Fingerprint, "base_fingerprint": c.Server.Fingerprint}, 200, &s)
	if s.Config.Registry != nil || s.Fingerprint != p.Fingerprint || s.Fingerprint == c.Server.Fingerprint {
		t.Errorf("after the edit: registry %+v, fingerprint %s (the draft's %s, the preview's %s)", s.Config.Registry, s.Fingerprint, c.Server.Fingerprint, p.Fingerprint)
	}
	records, err := ts.w.audit.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	last := records[len(records)-1]
	if last.Action != "server.edit" || last.Detail["changed"] != "registry" {
		t.Errorf("the edit's record: %+v", last)
	}
}

// TestCheckRegistryURL: ZERO_REGISTRY_URL is https (or http to a loopback
// address), without credentials, a query or a fragment.
func TestCheckRegistryURL(t *testing.T) {
	for _, u := range []string{"https://registry.modelcontextprotocol.io", "https://registry.example.com/sub", "http://127.0.0.1:8080"} {
		if err := CheckRegistryURL(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"http://registry.example.com", "https://user:pw@registry.example.com", "https://registry.example.com/?q=1",
		"https://registry.example.com/#top", "ftp://registry.example.com", "registry.example.com", ""} {
		if err := CheckRegistryURL(u); err == nil {
			t.Errorf("%q was accepted", u)
		}
	}
}

// TestRegistryRefreshesBehind: a listing cached less than refreshAfter ago
// is answered from the cache without asking the registry; an older one is
// still answered from the cache at once, and refreshed behind it, so the
// next listing shows what the registry serves now.
func TestRegistryRefreshesBehind(t *testing.T) {
	reg := newTestRegistry(t, fsEntry(t.TempDir()))
	ts := start(t, Options{RegistryURL: reg.srv.URL})
	b := ts.browser
	names := func() []string {
		var l registryListing
		b.must("GET", "/api/registry/servers", nil, 200, &l)
		var out []string
		for _, s := range l.Servers {
			out = append(out, s.Name)
		}
		return out
	}
	hits := func() int {
		reg.mu.Lock()
		defer reg.mu.Unlock()
		return reg.hits
	}
	first := []string{"io.github.zero-test/filesystem"}
	if got := names(); !slices.Equal(got, first) {
		t.Fatalf("the first listing: %v", got)
	}
	asked := hits()
	data, _ := json.Marshal(map[string]any{"name": "io.github.zero-test/added", "version": "1.0.0", "description": "Added later.",
		"remotes": []any{map[string]any{"type": "streamable-http", "url": "https://example.com/mcp"}}})
	reg.add(t, registryEntry{Server: data, IsLatest: true})

	if got := names(); !slices.Equal(got, first) || hits() != asked {
		t.Fatalf("a fresh cached listing: %v, the registry asked %d more times", got, hits()-asked)
	}
	old := time.Now().Add(-refreshAfter - time.Minute).UTC().Format(time.RFC3339Nano)
	if _, err := ts.w.db.ExecContext(context.Background(), `UPDATE registry_pages SET fetched_at = ?`, old); err != nil {
		t.Fatal(err)
	}
	if got := names(); !slices.Equal(got, first) {
		t.Fatalf("an old cached listing is answered from the cache: %v", got)
	}
	ts.w.registry.wg.Wait() // the refresh behind it
	if hits() != asked+1 {
		t.Errorf("the registry was asked %d more times, want once", hits()-asked)
	}
	if got := names(); !slices.Equal(got, []string{"io.github.zero-test/added", "io.github.zero-test/filesystem"}) || hits() != asked+1 {
		t.Errorf("after the refresh: %v", got)
	}
}

// TestRegistryPostInstallShown: the instructions an entry and its package
// declare are shown on the entry's page as text, escaped, and answered by
// its route and by the draft; nothing runs them.
func TestRegistryPostInstallShown(t *testing.T) {
	folder := t.TempDir()
	canary := filepath.Join(folder, "ran")
	data, _ := json.Marshal(map[string]any{"name": "io.github.zero-test/instructed", "version": "1.0.0", "description": "With instructions.",
		"postInstallInstructions": "Run <b>touch " + canary + "</b> first.",
		"packages": []any{map[string]any{"registryType": "npm", "identifier": "@zero-test/instructed", "version": "1.0.0",
			"transport": map[string]any{"type": "stdio"}, "postInstallInstructions": "$(touch " + canary + ")"}}})
	reg := newTestRegistry(t, registryEntry{Server: data, IsLatest: true})
	ts := start(t, Options{RegistryURL: reg.srv.URL})
	b := ts.browser
	want := []string{"Run <b>touch " + canary + "</b> first.", "$(touch " + canary + ")"}

	var det registryDetail
	b.must("GET", entryPath("io.github.zero-test/instructed", "1.0.0"), nil, 200, &det)
	if len(det.Options) != 1 || !slices.Equal(det.Options[0].PostInstall, want) {
		t.Fatalf("the entry's route: %+v", det.Options)
	}
	page := b.mustPage("GET", entryPagePath("io.github.zero-test/instructed", "1.0.0"), nil, 200)
	if !strings.Contains(page, `id="post-install"`) || !strings.Contains(page, html.EscapeString(want[0])) || strings.Contains(page, "<b>touch") {
		t.Errorf("the entry's page does not show the instructions as text:\n%s", page)
	}
	var c struct {
		Post []string `json:"post_install_instructions"`
	}
	b.must("POST", "/api/registry/drafts", map[string]any{"name": "io.github.zero-test/instructed", "version": "1.0.0", "package": 0}, 201, &c)
	if !slices.Equal(c.Post, want) {
		t.Errorf("the draft's instructions: %q", c.Post)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Error("an instruction ran")
	}
}
