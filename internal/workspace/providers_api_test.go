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

	"github.com/zero-dev/zero/internal/testnet"
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
	// A new base URL without a key drops the key. Nothing answers there:
	// it is saved, with a warning that says so.
	closed := "https://" + testnet.ClosedAddr(t) + "/v1"
	var saved struct {
		providers.Provider
		Warning string `json:"warning"`
	}
	ts.browser.must("PUT", "/api/providers/"+itoa(p.ID), map[string]any{"name": "local", "base_url": closed}, 200, &saved)
	if saved.KeySet || saved.BaseURL != closed {
		t.Errorf("the key survived a new base URL: %+v", saved)
	}
	if !strings.Contains(saved.Warning, "the endpoint did not answer: "+closed+": nothing is listening there (connection refused)") {
		t.Errorf("the warning of an endpoint that does not answer: %q", saved.Warning)
	}
	p = saved.Provider
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
// listed, picks from them on its edit form, changes it and deletes it; the
// key typed is in no page, the one showing a refusal included, which keeps
// the rest of what was typed. Removing a key is offered only for a saved
// one; a provider that does not answer is saved with a warning.
func TestProvidersPage(t *testing.T) {
	const key = "sk-page-canary-5d20"
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":[{"id":"a"},{"id":"b"}]}`)
	}))
	defer model.Close()
	ts := start(t, Options{})
	b := ts.browser
	if page := b.mustPage("GET", "/providers", nil, 200); !strings.Contains(page, `id="save-provider"`) || !strings.Contains(page, "No providers.") ||
		strings.Contains(page, "Remove the saved key") {
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
	if _, _, loc := b.page("POST", "/providers/"+id+"/models", url.Values{}); loc != "/providers/"+id+"/edit?done=models_listed" {
		t.Fatalf("models: Location %q", loc)
	}
	page = b.mustPage("GET", "/providers", nil, 200)
	if strings.Contains(page, key) || !strings.Contains(page, "set by user:owner") || !strings.Contains(page, `id="provider-`+id+`"`) ||
		!strings.Contains(page, `href="/providers/`+id+`/edit"`) {
		t.Errorf("the page:\n%s", page)
	}
	// Its edit form: the settings but the key, the models listed offered
	// for the model field, and the key's removal.
	page = b.mustPage("GET", "/providers/"+id+"/edit", nil, 200)
	for _, want := range []string{`name="id" value="` + id + `"`, `value="` + model.URL + `/v1"`, `list="provider-models"`,
		`<datalist id="provider-models"><option value="a"></option><option value="b"></option></datalist>`, `id="provider-clear-key"`, "Edit local"} {
		if !strings.Contains(page, want) {
			t.Errorf("the edit form lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, key) {
		t.Error("the edit form holds the key")
	}
	// An edit, no key, no stream, a new name: that provider changes, and its key stays.
	if _, _, loc := b.page("POST", "/providers", url.Values{"id": {id}, "name": {"renamed"}, "base_url": {model.URL + "/v1"}}); loc != "/providers?done=provider_saved" {
		t.Fatalf("edit: Location %q", loc)
	}
	if list, _ = ts.w.providers.List(context.Background()); len(list) != 1 || !list[0].KeySet || list[0].Stream || list[0].Name != "renamed" {
		t.Errorf("after a change: %+v", list)
	}
	// A new provider of a taken name is refused, and says to use Edit.
	page = b.mustPage("POST", "/providers", url.Values{"name": {"renamed"}, "base_url": {model.URL + "/v1"}}, 409)
	if !strings.Contains(page, "A provider named renamed exists: use Edit in its row") {
		t.Errorf("a taken name:\n%s", page)
	}
	// A provider whose endpoint does not answer is saved, with a warning
	// that says why.
	closed := "http://" + testnet.ClosedAddr(t) + "/v1"
	page = b.mustPage("POST", "/providers", url.Values{"name": {"later"}, "base_url": {closed}}, 200)
	if !strings.Contains(page, `id="warning"`) || !strings.Contains(page, "Saved, but the endpoint did not answer: "+closed+": nothing is listening there (connection refused)") {
		t.Errorf("the warning:\n%s", page)
	}
	if list, _ = ts.w.providers.List(context.Background()); len(list) != 2 {
		t.Errorf("the provider that does not answer was not saved: %+v", list)
	}
	if _, _, loc := b.page("POST", "/providers/"+id+"/delete", url.Values{}); loc != "/providers?done=provider_deleted" {
		t.Fatalf("delete: Location %q", loc)
	}
	if code, _, _ := ts.bearer().page("GET", "/providers", nil); code == 200 {
		t.Errorf("a bearer caller got the providers page")
	}
}
