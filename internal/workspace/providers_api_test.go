package workspace

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/workspace/providers"
)

// TestProvidersAPI: the owner, in a browser, saves a provider with a key
// and has its models listed from the endpoint, which gets the key; anyone
// signed in lists providers and never sees a key; a bearer caller cannot
// change one (403 browser_only); bad input gets a clear error.
func TestProvidersAPI(t *testing.T) {
	const key = "sk-provider-canary-77e1"
	var gotAuth string
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":[{"id":"qwen-7b"}]}`)
	}))
	defer model.Close()
	ts := start(t, Options{})
	var p providers.Provider
	ts.browser.must("POST", "/api/providers", map[string]any{"name": "local", "base_url": model.URL + "/v1", "stream": false, "api_key": key}, 201, &p)
	if p.ID == 0 || !p.KeySet || p.Stream {
		t.Fatalf("saved: %+v", p)
	}
	ts.browser.must("POST", "/api/providers/"+itoa(p.ID)+"/models", nil, 200, &p)
	if strings.Join(p.Models, ",") != "qwen-7b" || gotAuth != "Bearer "+key {
		t.Errorf("models %v, the endpoint got %q", p.Models, gotAuth)
	}
	bearer := ts.bearer()
	var list []providers.Provider
	if code, data := bearer.do("GET", "/api/providers", nil); code != 200 || strings.Contains(string(data), key) || json.Unmarshal(data, &list) != nil || len(list) != 1 || !list[0].KeySet {
		t.Errorf("a bearer's list: %d %s", code, data)
	}
	for _, route := range []string{"POST /api/providers", "PUT /api/providers/" + itoa(p.ID), "DELETE /api/providers/" + itoa(p.ID), "POST /api/providers/" + itoa(p.ID) + "/models"} {
		method, path, _ := strings.Cut(route, " ")
		if code, data := bearer.do(method, path, map[string]any{"name": "x", "base_url": "https://api.example.com/v1"}); code != 403 || errorCode(data) != "browser_only" {
			t.Errorf("a bearer's %s: %d %s", route, code, data)
		}
	}
	for _, tc := range []struct {
		body map[string]any
		code string
	}{
		{map[string]any{"name": "remote", "base_url": "http://api.example.com/v1"}, "invalid_provider"},
		{map[string]any{"name": "local", "base_url": "https://api.example.com/v1"}, "name_taken"},
		{map[string]any{"name": "x", "base_url": "https://api.example.com/v1", "api_key": 7}, "bad_request"},
	} {
		if code, data := ts.browser.do("POST", "/api/providers", tc.body); errorCode(data) != tc.code {
			t.Errorf("%v: %d %s, want %s", tc.body, code, data, tc.code)
		}
	}
	// A new base URL without a key drops the key.
	ts.browser.must("PUT", "/api/providers/"+itoa(p.ID), map[string]any{"name": "local", "base_url": "https://api.example.com/v1"}, 200, &p)
	if p.KeySet {
		t.Errorf("the key survived a new base URL: %+v", p)
	}
	ts.browser.must("DELETE", "/api/providers/"+itoa(p.ID), nil, 200, nil)
	if code, data := ts.browser.do("POST", "/api/providers/"+itoa(p.ID)+"/models", nil); code != 404 {
		t.Errorf("models of a deleted provider: %d %s", code, data)
	}
	log, _ := os.ReadFile(filepath.Join(ts.w.opts.Home, "audit.log"))
	if strings.Contains(string(log), key) || !strings.Contains(string(log), `"provider.create"`) || !strings.Contains(string(log), `"provider.delete"`) {
		t.Errorf("the audit log:\n%s", log)
	}
}
