package workspace

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
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
	var page []map[string]any
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
