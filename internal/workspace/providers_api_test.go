package workspace

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
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
	log := ts.auditText()
	if strings.Contains(log, key) || !strings.Contains(log, `"provider.create"`) || !strings.Contains(log, `"provider.delete"`) {
		t.Errorf("the audit log:\n%s", log)
	}
}

// TestProvidersPage: the owner adds a provider on its page, has its models
// listed and deletes it; the key typed is in no page, the one showing a
// refusal included, which keeps the rest of what was typed.
func TestProvidersPage(t *testing.T) {
	const key = "sk-page-canary-5d20"
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":[{"id":"a"},{"id":"b"}]}`)
	}))
	defer model.Close()
	ts := start(t, Options{})
	b := ts.browser
	if page := b.mustPage("GET", "/providers", nil, 200); !strings.Contains(page, `id="save-provider"`) || !strings.Contains(page, "No providers.") {
		t.Fatalf("the empty page:\n%s", page)
	}
	page := b.mustPage("POST", "/providers", url.Values{"name": {"remote"}, "base_url": {"http://api.example.com/v1"}, "api_key": {key}}, 400)
	if strings.Contains(page, key) || !strings.Contains(page, `value="http://api.example.com/v1"`) || !strings.Contains(page, "loopback") {
		t.Errorf("the refusal's page:\n%s", page)
	}
	if _, _, loc := b.page("POST", "/providers", url.Values{"name": {"local"}, "base_url": {model.URL + "/v1"}, "stream": {"1"}, "api_key": {key}}); loc != "/providers?done=provider_saved" {
		t.Fatalf("save: Location %q", loc)
	}
	list, _ := ts.w.providers.List(context.Background())
	if len(list) != 1 || !list[0].KeySet || !list[0].Stream {
		t.Fatalf("saved: %+v", list)
	}
	id := itoa(list[0].ID)
	if _, _, loc := b.page("POST", "/providers/"+id+"/models", url.Values{}); loc != "/providers?done=models_listed" {
		t.Fatalf("models: Location %q", loc)
	}
	page = b.mustPage("GET", "/providers", nil, 200)
	if strings.Contains(page, key) || !strings.Contains(page, "set by user:owner") || !strings.Contains(page, `id="provider-`+id+`"`) {
		t.Errorf("the page:\n%s", page)
	}
	// The same name again, no key, no stream: that provider changes, and its key stays.
	b.page("POST", "/providers", url.Values{"name": {"local"}, "base_url": {model.URL + "/v1"}})
	if list, _ = ts.w.providers.List(context.Background()); len(list) != 1 || !list[0].KeySet || list[0].Stream {
		t.Errorf("after a change: %+v", list)
	}
	if _, _, loc := b.page("POST", "/providers/"+id+"/delete", url.Values{}); loc != "/providers?done=provider_deleted" {
		t.Fatalf("delete: Location %q", loc)
	}
	if code, _, _ := ts.bearer().page("GET", "/providers", nil); code == 200 {
		t.Errorf("a bearer caller got the providers page")
	}
}
