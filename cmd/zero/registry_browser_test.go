package main

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"image"
	"image/color"
	"image/png"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// browserRegistry is a local MCP Registry (the v0.1 API's two routes) on
// 127.0.0.1 holding entries, each the latest version, active unless its
// deprecation message is set; it counts the requests it answers.
type browserRegistry struct {
	*httptest.Server
	mu   sync.Mutex
	hits int
}

// registryTestEntry is one entry of a browserRegistry: its server.json
// and, when deprecated, its status message.
type registryTestEntry struct {
	server     map[string]any
	deprecated string
}

func newBrowserRegistry(t *testing.T, entries ...registryTestEntry) *browserRegistry {
	t.Helper()
	reg := &browserRegistry{}
	answer := func(e registryTestEntry) map[string]any {
		official := map[string]any{"status": "active", "isLatest": true, "publishedAt": "2025-09-16T16:43:44Z", "updatedAt": "2025-09-16T16:43:44Z"}
		if e.deprecated != "" {
			official["status"], official["statusMessage"] = "deprecated", e.deprecated
		}
		return map[string]any{"server": e.server, "_meta": map[string]any{"io.modelcontextprotocol.registry/official": official}}
	}
	reg.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		reg.mu.Lock()
		reg.hits++
		reg.mu.Unlock()
		rw.Header().Set("Content-Type", "application/json")
		if rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/v0.1/servers/"); ok {
			escName, escVersion, _ := strings.Cut(rest, "/versions/")
			name, _ := url.PathUnescape(escName)
			version, _ := url.PathUnescape(escVersion)
			for _, e := range entries {
				if e.server["name"] == name && e.server["version"] == version {
					json.NewEncoder(rw).Encode(answer(e))
					return
				}
			}
			http.Error(rw, `{"title":"Not Found","status":404}`, http.StatusNotFound)
			return
		}
		page := []map[string]any{}
		for _, e := range entries {
			if strings.Contains(e.server["name"].(string), r.URL.Query().Get("search")) {
				page = append(page, answer(e))
			}
		}
		json.NewEncoder(rw).Encode(map[string]any{"servers": page, "metadata": map[string]any{"count": len(page)}})
	}))
	t.Cleanup(reg.Close)
	return reg
}

func (reg *browserRegistry) requests() int {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	return reg.hits
}

// TestBrowserRegistryIcons: the Explore page of zero serve, pointed at a
// local registry (ZERO_REGISTRY_URL), shows an entry's icon, which an
// https server at an allowed local origin (ZERO_ALLOWED_LOCAL_ORIGINS,
// its CA in --local-ca) serves, as a same-origin data: image: the
// server fetched it, and the browser, its network watched, never asks the
// icon's host or the registry for anything. The entry's page shows the
// command Zero derives from it, exactly.
func TestBrowserRegistryIcons(t *testing.T) {
	tab := browser(t)
	var pic bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 24, 24))
	for i := range 24 {
		img.Set(i, i, color.RGBA{10, 88, 202, 255})
	}
	if err := png.Encode(&pic, img); err != nil {
		t.Fatal(err)
	}
	var iconMu sync.Mutex
	var iconPaths []string
	icons := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		iconMu.Lock()
		iconPaths = append(iconPaths, r.URL.Path)
		iconMu.Unlock()
		w.Header().Set("Content-Type", "image/png")
		w.Write(pic.Bytes())
	}))
	cert, iconCA := ownCA(t)
	icons.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	icons.Config.ErrorLog = log.New(io.Discard, "", 0)
	icons.StartTLS()
	t.Cleanup(icons.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: iconCA.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	reg := newBrowserRegistry(t,
		registryTestEntry{server: map[string]any{
			"$schema": "https://static.modelcontextprotocol.io/schemas/2025-10-17/server.schema.json",
			"name":    "io.github.zero-test/weather", "title": "Weather", "version": "1.2.3",
			"description": "Forecasts for a place.",
			"icons":       []any{map[string]any{"src": icons.URL + "/weather.png", "mimeType": "image/png", "sizes": []string{"24x24"}}},
			"packages": []any{map[string]any{"registryType": "npm", "identifier": "@zero-test/weather", "version": "1.2.3",
				"transport": map[string]any{"type": "stdio"},
				"packageArguments": []any{map[string]any{"type": "positional", "valueHint": "cache", "value": "/srv/weather cache"},
					map[string]any{"type": "named", "name": "--units", "value": "metric"}}}},
		}},
		registryTestEntry{server: map[string]any{
			"name": "io.github.zero-test/plain", "version": "0.1.0", "description": "A remote server without an icon.",
			"remotes": []any{map[string]any{"type": "streamable-http", "url": "https://example.com/mcp"}},
		}, deprecated: "Use io.github.zero-test/weather instead."},
	)
	srv := startServe(t, []string{"ZERO_REGISTRY_URL=" + reg.URL, "ZERO_ALLOWED_LOCAL_ORIGINS=" + icons.URL}, "--local-ca", caFile)

	// chromedp enables the network domain when it attaches; enabling it
	// here as well keeps this test's watch independent of that.
	if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	seen := record(t, tab)
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")),
		chromedp.Navigate(srv.base+"/registry"), chromedp.WaitVisible(chromedp.ID("entries")))

	weather := `#entries li[data-name="io.github.zero-test/weather"]`
	src := run(t, tab, chromedp.AttributeValue(chromedp.CSS(weather+" img.logo"), "src"))
	if data, ok := strings.CutPrefix(src.Value, "data:image/png;base64,"); !ok {
		t.Errorf("the icon's src is %.80q, want a data: PNG", src.Value)
	} else if got, err := base64.StdEncoding.DecodeString(data); err != nil || !bytes.Equal(got, pic.Bytes()) {
		t.Errorf("the icon shown is not the one the icon server serves (%v)", err)
	}
	// The browser has drawn it: a broken image has no natural width.
	if w := run(t, tab, chromedp.Evaluate[int](`document.querySelector('`+weather+` img.logo').naturalWidth`)); w != 24 {
		t.Errorf("the icon's natural width is %d, want 24", w)
	}
	if n := run(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('#entries li[data-name="io.github.zero-test/plain"] .logo.letter').length`)); n != 1 {
		t.Errorf("the entry without an icon shows %d letters, want 1", n)
	}
	if msg := run(t, tab, chromedp.Text(chromedp.CSS(`#entries li[data-name="io.github.zero-test/plain"] .status-message`))); msg != "Use io.github.zero-test/weather instead." {
		t.Errorf("the deprecated entry's message: %q", msg)
	}
	screenshot(t, tab, "registry-explore")

	do(t, tab, chromedp.Click(chromedp.CSS(weather+" a.entry-link")), chromedp.WaitVisible(chromedp.CSS("pre.derived-command")))
	if got, want := run(t, tab, chromedp.Text(chromedp.CSS("pre.derived-command"))), "npx -y @zero-test/weather@1.2.3 '/srv/weather cache' --units metric"; got != want {
		t.Errorf("the entry's page shows the command\n%s\nwant\n%s", got, want)
	}
	if big := run(t, tab, chromedp.Evaluate[string](`(document.querySelector("img.logo.big") || {}).src || ""`)); !strings.HasPrefix(big, "data:image/png;base64,") {
		t.Errorf("the entry's page icon is %.80q, want a data: PNG", big)
	}
	screenshot(t, tab, "registry-entry")

	iconMu.Lock()
	fetched := append([]string(nil), iconPaths...)
	iconMu.Unlock()
	if len(fetched) == 0 || fetched[0] != "/weather.png" {
		t.Errorf("the icon server got %q, want the server's fetch of /weather.png", fetched)
	}
	if reg.requests() == 0 {
		t.Error("the registry was never asked")
	}
	seen.mu.Lock()
	urls := append([]string(nil), seen.urls...)
	seen.mu.Unlock()
	for _, u := range urls {
		if strings.HasPrefix(u, icons.URL) || strings.HasPrefix(u, reg.URL) {
			t.Errorf("the browser requested %s", u)
		}
	}
	if foreign := seen.foreign(srv.base); len(foreign) > 0 {
		t.Errorf("the pages requested other origins: %q", foreign)
	}
	if !containsPrefix(urls, srv.base+"/registry") || !containsPrefix(urls, srv.base+"/registry/servers/") {
		t.Errorf("the watch did not see the pages' own requests: %q", urls)
	}
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
