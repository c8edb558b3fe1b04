package registry

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/database/databasetest"
	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/workspace/logo"
	"github.com/zero-dev/zero/internal/workspace/store"
)

// openDB opens a workspace database: a SQLite file, or PostgreSQL under
// ZERO_TEST_DATABASE=postgres.
func openDB(t testing.TB) *sql.DB {
	t.Helper()
	return databasetest.OpenAt(t, filepath.Join(t.TempDir(), "zero.db"), store.Migrations())
}

// TestStoreServesCacheWhenUnreachable: a listing the registry cannot give
// is the cached one, saying why and when it was fetched; so is an entry.
func TestStoreServesCacheWhenUnreachable(t *testing.T) {
	f := officialRegistry(t)
	c, _ := f.client()
	s := NewStore(StoreOptions{DB: openDB(t), Client: c})
	ctx := context.Background()
	q := Query{Search: "weather", Limit: 3}
	first, err := s.List(ctx, q)
	if err != nil || first.Stale != nil || len(first.Entries) != 3 || first.NextCursor == "" {
		t.Fatalf("List = %d entries, next %q, stale %v, %v", len(first.Entries), first.NextCursor, first.Stale, err)
	}
	got, err := s.Get(ctx, "io.github.example/weather-mcp", "0.5.0")
	if err != nil || got.Stale != nil {
		t.Fatal(got.Stale, err)
	}

	f.down.Store(true)
	cached, err := s.List(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(cached.Stale, ErrUnreachable) || !strings.Contains(cached.Stale.Error(), "503") {
		t.Errorf("Stale = %v; want the registry's 503", cached.Stale)
	}
	if !cached.FetchedAt.Equal(first.FetchedAt) || cached.NextCursor != first.NextCursor {
		t.Errorf("cached page fetched %v, next %q; want %v, %q", cached.FetchedAt, cached.NextCursor, first.FetchedAt, first.NextCursor)
	}
	if d := cmp.Diff(names(first.Entries), names(cached.Entries)); d != "" {
		t.Errorf("cached entries (-fresh +cached):\n%s", d)
	}
	for i := range first.Entries {
		if cached.Entries[i].SHA256 != first.Entries[i].SHA256 || !bytes.Equal(cached.Entries[i].Raw, first.Entries[i].Raw) {
			t.Errorf("%s: the cached bytes differ", first.Entries[i].Entry.Name)
		}
	}

	f.Close() // gone altogether
	entry, err := s.Get(ctx, "io.github.example/weather-mcp", "0.5.0")
	if err != nil || !errors.Is(entry.Stale, ErrUnreachable) || entry.SHA256 != got.SHA256 || !entry.FetchedAt.Equal(got.FetchedAt) {
		t.Errorf("Get from the cache = %s, stale %v, %v", entry.SHA256, entry.Stale, err)
	}
	if _, err := s.List(ctx, Query{Search: "never asked"}); !errors.Is(err, ErrUnreachable) {
		t.Errorf("a listing never cached: %v", err)
	}
	if _, err := s.Get(ctx, "io.github.user/weather", "1.0.2"); !errors.Is(err, ErrUnreachable) {
		t.Errorf("an entry never cached: %v", err)
	}
}

// TestStoreSearch: search over the cached latest versions, by name, title
// or description, case aside, with cursors; LIKE's wildcards are only
// characters; a deleted entry leaves the cache.
func TestStoreSearch(t *testing.T) {
	f := officialRegistry(t)
	f.add("io.test/percent", "1.0.0", `{"name": "io.test/percent", "description": "100% weather", "version": "1.0.0"}`, "active", "", true)
	c, _ := f.client()
	s := NewStore(StoreOptions{DB: openDB(t), Client: c})
	ctx := context.Background()
	listAll(t, func(q Query) (Page, error) { return s.List(ctx, q) }, Query{Limit: 5, AllVersions: true})
	f.down.Store(true) // Search never asks the registry

	search := func(text string) []string {
		all, _ := listAll(t, func(q Query) (Page, error) { return s.Search(ctx, text, q.Cursor, 2) }, Query{})
		return all
	}
	want := []string{"io.github.example/weather-mcp@0.5.0", "io.github.joelverhagen/knapcode-samplemcpserver@0.5.0", // "random weather"
		"io.github.user/local-weather@1.0.0", "io.github.user/remote-weather@2.1.0",
		"io.github.user/weather@1.0.2", "io.test/percent@1.0.0"}
	if d := cmp.Diff(want, search("WEATHER")); d != "" {
		t.Errorf("search WEATHER (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"io.modelcontextprotocol.anonymous/brave-search@1.0.2"}, search("brave search api")); d != "" {
		t.Errorf("search by description, latest only (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"io.test/percent@1.0.0"}, search("%")); d != "" {
		t.Errorf("search %% (-want +got):\n%s", d)
	}
	if got := search("_"); len(got) != 0 {
		t.Errorf("search _ = %q", got)
	}

	// The registry deletes an entry: a listing drops it from the cache.
	f.down.Store(false)
	f.add("io.github.user/weather", "1.0.2", string(official(t, "minimal")), "deleted", "", true)
	p, err := s.List(ctx, Query{Limit: 50})
	if err != nil || !slices.Contains(p.Deleted, Key{"io.github.user/weather", "1.0.2"}) {
		t.Fatalf("deleted: %v, %v", p.Deleted, err)
	}
	if slices.Contains(search("weather"), "io.github.user/weather@1.0.2") {
		t.Error("a deleted entry is still found")
	}
	if _, err := s.Cached(ctx, "io.github.user/weather", "1.0.2"); !errors.Is(err, ErrNotCached) {
		t.Errorf("Cached of a deleted entry: %v", err)
	}
	if _, err := s.Get(ctx, "io.github.user/weather", "1.0.2"); !errors.Is(err, ErrDeleted) {
		t.Errorf("Get of a deleted entry: %v", err)
	}
}

// iconServer serves icons over https on 127.0.0.1, counting requests by
// path.
type iconServer struct {
	*httptest.Server
	hits map[string]*atomic.Int32
}

func newIconServer(t *testing.T, bodies map[string][]byte) *iconServer {
	t.Helper()
	s := &iconServer{hits: map[string]*atomic.Int32{}}
	for p := range bodies {
		s.hits[p] = new(atomic.Int32)
	}
	s.hits["/redirect"] = new(atomic.Int32)
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := s.hits[r.URL.Path]; h != nil {
			h.Add(1)
		}
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/good.png", http.StatusFound)
			return
		}
		b, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

// client is the netguard client the workspace would give Icons: private
// addresses blocked but for the test server's, whose certificate it
// trusts.
func (s *iconServer) client() *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return guarded(netguard.Options{Schemes: netguard.HTTPSOnly, TLS: &tls.Config{RootCAs: pool}})
}

func pngBytes(t *testing.T, side int, noise bool) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = 0xff
		if noise {
			img.Pix[i] = byte(r.Uint32())
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestStoreIcons: a good PNG and SVG are stored as data: URLs; an icon
// over 32 KiB, of another type (declared, or in its bytes), on a private
// host or behind a redirect is refused with its reason logged, and nothing
// is cached for it.
func TestStoreIcons(t *testing.T) {
	good := pngBytes(t, 16, false)
	big := pngBytes(t, 200, true)
	if len(big) <= logo.MaxBytes {
		t.Fatalf("the big icon is only %d bytes", len(big))
	}
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, image.NewGray(image.Rect(0, 0, 16, 16)), nil); err != nil {
		t.Fatal(err)
	}
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="4" fill="#f00"/><script>alert(1)</script></svg>`)
	icons := newIconServer(t, map[string][]byte{"/good.png": good, "/good.svg": svg, "/big.png": big, "/jpeg.png": jpg.Bytes()})

	f := newFakeRegistry(t)
	withIcon := func(name, icon string) {
		f.add("io.test/"+name, "1.0.0", `{"name": "io.test/`+name+`", "description": "d", "version": "1.0.0", "icons": [`+icon+`]}`, "active", "", true)
	}
	withIcon("png", `{"src": "`+icons.URL+`/good.png", "mimeType": "image/png", "sizes": ["16x16"]}`)
	withIcon("svg", `{"src": "`+icons.URL+`/good.svg", "mimeType": "image/svg+xml", "sizes": ["any"]}`)
	withIcon("big", `{"src": "`+icons.URL+`/big.png"}`)
	withIcon("declared-jpeg", `{"src": "`+icons.URL+`/good.png", "mimeType": "image/jpeg"}`)
	withIcon("jpeg-bytes", `{"src": "`+icons.URL+`/jpeg.png", "mimeType": "image/png"}`)
	withIcon("private", `{"src": "https://10.1.2.3/icon.png"}`)
	withIcon("metadata", `{"src": "https://169.254.169.254/icon.png"}`)
	withIcon("redirect", `{"src": "`+icons.URL+`/redirect"}`)

	c, _ := f.client()
	var log bytes.Buffer
	db := openDB(t)
	s := NewStore(StoreOptions{DB: db, Client: c, Icons: NewIcons(icons.client()), Log: slog.New(slog.NewTextHandler(&log, nil))})
	ctx := context.Background()
	if _, err := s.List(ctx, Query{}); err != nil {
		t.Fatal(err)
	}
	stored := map[string]string{}
	rows, err := db.Query(`SELECT name, icon FROM registry_entries`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n, icon string
		rows.Scan(&n, &icon)
		stored[strings.TrimPrefix(n, "io.test/")] = icon
	}
	rows.Close()
	wantPNG, _ := logo.DataURL(good)
	if stored["png"] != wantPNG {
		t.Errorf("png icon stored as %.80q", stored["png"])
	}
	if !strings.HasPrefix(stored["svg"], "data:image/svg+xml;base64,") || strings.Contains(string(mustDecode(t, stored["svg"])), "script") {
		t.Errorf("svg icon stored as %.80q", stored["svg"])
	}
	for _, name := range []string{"big", "declared-jpeg", "jpeg-bytes", "private", "metadata", "redirect"} {
		if icon, ok := stored[name]; !ok || icon != "" {
			t.Errorf("%s: cached %t with icon %.40q; want the entry with no icon", name, ok, icon)
		}
	}
	for name, reason := range map[string]string{
		"big":           "icon too large",
		"declared-jpeg": "is image/jpeg: Zero shows PNG and SVG icons only",
		"jpeg-bytes":    "invalid SVG icon",
		"private":       "10.1.2.3 is private",
		"metadata":      "169.254.169.254 is link-local",
		"redirect":      "status 302, want 200 (redirects are not followed)",
	} {
		if !strings.Contains(logLine(log.String(), "io.test/"+name), reason) {
			t.Errorf("%s: the log does not say %q:\n%s", name, reason, logLine(log.String(), "io.test/"+name))
		}
	}
	if n := icons.hits["/good.png"].Load(); n != 1 {
		t.Errorf("/good.png had %d requests, want 1 (the png entry's): a redirect or a declared JPEG was followed", n)
	}
	if n := icons.hits["/redirect"].Load(); n != 1 {
		t.Errorf("/redirect had %d requests", n)
	}

	// A second listing of unchanged entries reuses the cached icons.
	if _, err := s.List(ctx, Query{}); err != nil {
		t.Fatal(err)
	}
	if n := icons.hits["/good.svg"].Load(); n != 1 {
		t.Errorf("/good.svg fetched %d times", n)
	}
	l, err := s.Cached(ctx, "io.test/png", "1.0.0")
	if err != nil || l.Icon != wantPNG {
		t.Errorf("Cached icon %.40q, %v", l.Icon, err)
	}
}

// logLine returns the log lines that name name.
func logLine(log, name string) string {
	var out []string
	for line := range strings.Lines(log) {
		if strings.Contains(line, "name="+name+" ") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

func mustDecode(t *testing.T, dataURL string) []byte {
	t.Helper()
	_, payload, _ := strings.Cut(dataURL, ",")
	b, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkSearch: a search over 5,000 cached entries. It reports the
// median time of one search (the target is under 20 ms).
func BenchmarkSearch(b *testing.B) {
	db := openDB(b)
	c := &Client{BaseURL: "https://registry.example"}
	s := NewStore(StoreOptions{DB: db, Client: c})
	ctx := context.Background()
	topics := []string{"weather forecasts", "git repositories", "files on disk", "a PostgreSQL database", "the browser", "issue trackers"}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 5000 {
		raw := fmt.Sprintf(`{"name": "io.github.bench%d/server-%04d", "title": "Server %d", "description": "An MCP server for %s, number %d.", "version": "1.0.%d",
			"packages": [{"registryType": "npm", "identifier": "@bench/server-%d", "version": "1.0.%d", "transport": {"type": "stdio"}}]}`,
			i%97, i, i, topics[i%len(topics)], i, i%10, i, i%10)
		l, err := ParseListed([]byte(`{"server": ` + raw + `}`))
		if err != nil {
			b.Fatal(err)
		}
		l.IsLatest, l.FetchedAt = true, time.Now()
		if err := s.saveEntry(ctx, tx, l); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		p, err := s.Search(ctx, "Weather", "", DefaultLimit)
		times = append(times, time.Since(start))
		if err != nil || len(p.Entries) != DefaultLimit || p.NextCursor == "" {
			b.Fatalf("Search = %d entries, next %q, %v", len(p.Entries), p.NextCursor, err)
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
}
