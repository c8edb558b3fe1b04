package workspace

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/testgit"
	"github.com/zero-dev/zero/internal/workspace/plugins"
)

// pluginManifest is the hello plugin's plugin.json: one tool, and one
// secret.
const pluginManifest = `{
  "name": "hello",
  "version": "1.0.0",
  "description": "Says hello.",
  "extensions": {"dev.zero.plugin": {
    "entry": "plugin.js",
    "capabilities": {"secrets": ["API_KEY"]},
    "tools": [{"name": "greet", "description": "Greets someone.",
      "parameters": {"type": "object", "properties": {"who": {"type": "string"}}}, "required": ["who"], "capabilities": {}}]
  }}
}`

// pluginRepo serves acme/plugins with the hello plugin on a real local git
// server, and returns the server and its checkout.
func pluginRepo(t *testing.T) (*testgit.Server, string) {
	g := testgit.NewServer(t)
	work, _ := g.Repo(t, "acme/plugins", map[string]string{
		"LICENSE":                   mitLicence,
		"plugins/hello/plugin.json": pluginManifest,
		"plugins/hello/plugin.js":   "export async function greet({who}, ctx) { return 'hello ' + who; }\n",
	})
	return g, work
}

// TestPluginsAPI: the owner in a browser previews, installs (201, not
// enabled), sets a secret (write-only), enables with the fingerprint and
// removes a plugin; a bearer caller gets 403 browser_only on each of
// those routes, and a viewer 403; an install after a force-push is 409
// preview_again with the fresh preview, an enable with a stale
// fingerprint 409 approval_required with the plugin as it is, and a
// second install 409 plugin_exists.
func TestPluginsAPI(t *testing.T) {
	g, work := pluginRepo(t)
	ts := start(t, Options{GitHubURL: g.URL, Team: true})
	b := ts.browser
	req := map[string]string{"repo": "acme/plugins", "ref": "main", "folder": "plugins/hello"}
	var p plugins.Preview
	b.must("POST", "/api/plugins/preview", req, 200, &p)
	if p.Name != "hello" || !p.Installable() || len(p.Tools) != 1 || p.PermissionHash == "" || p.SetHash == "" {
		t.Fatalf("preview: %+v", p)
	}
	install := map[string]any{"repo": "acme/plugins", "ref": "main", "folder": "plugins/hello", "commit": p.Commit,
		"permission_hash": p.PermissionHash, "set_hash": p.SetHash}

	bearer := ts.bearer()
	var viewer struct {
		ID int64 `json:"id"`
	}
	b.must("POST", "/api/users", map[string]string{"name": "vic", "role": "viewer"}, 201, &viewer)
	v := ts.login(viewer.ID)
	for _, c := range []struct {
		method, path string
		body         any
	}{{"POST", "/api/plugins/preview", req}, {"POST", "/api/plugins", install}, {"POST", "/api/plugins/1/enable", map[string]string{"fingerprint": p.Fingerprint}},
		{"DELETE", "/api/plugins/1", nil}, {"PUT", "/api/plugins/1/secrets/API_KEY", map[string]string{"value": "x"}}} {
		if st, data := bearer.do(c.method, c.path, c.body); st != 403 || errorCode(data) != "browser_only" {
			t.Errorf("a bearer's %s %s: %d %s", c.method, c.path, st, data)
		}
		if st, data := v.do(c.method, c.path, c.body); st != 403 || errorCode(data) != "owner_required" {
			t.Errorf("a viewer's %s %s: %d %s", c.method, c.path, st, data)
		}
	}

	var in plugins.Installed
	b.must("POST", "/api/plugins", install, 201, &in)
	id := itoa(in.Plugin.ID)
	if in.Plugin.Enabled || in.Plugin.Approved || in.Plugin.Commit != p.Commit {
		t.Errorf("installed: %+v", in.Plugin)
	}
	if st, data := b.do("POST", "/api/plugins", install); st != 409 || errorCode(data) != "plugin_exists" {
		t.Errorf("a second install: %d %s", st, data)
	}
	const canary = "plugin-secret-canary-9d1"
	var pl plugins.Plugin
	b.must("PUT", "/api/plugins/"+id+"/secrets/API_KEY", map[string]string{"value": canary}, 200, &pl)
	if len(pl.Secrets) != 1 || !pl.Secrets[0].Set || pl.Secrets[0].SetBy != "user:owner" {
		t.Errorf("secrets: %+v", pl.Secrets)
	}
	if st, data := b.do("PUT", "/api/plugins/"+id+"/secrets/OTHER", map[string]string{"value": "x"}); st != 400 || errorCode(data) != "unknown_secret" {
		t.Errorf("an undeclared secret: %d %s", st, data)
	}
	st, data := b.do("POST", "/api/plugins/"+id+"/enable", map[string]string{"fingerprint": "sha256:00"})
	var refusal struct {
		Error struct {
			Code   string         `json:"code"`
			Plugin plugins.Plugin `json:"plugin"`
		} `json:"error"`
	}
	json.Unmarshal(data, &refusal)
	if st != 409 || refusal.Error.Code != "approval_required" || refusal.Error.Plugin.Fingerprint != p.Fingerprint {
		t.Errorf("a stale fingerprint: %d %s", st, data)
	}
	b.must("POST", "/api/plugins/"+id+"/enable", map[string]string{"fingerprint": p.Fingerprint}, 200, &pl)
	if !pl.Enabled || !pl.Approved {
		t.Errorf("enabled: %+v", pl)
	}
	run, err := ts.w.plugins.Runnable(t.Context(), in.Plugin.ID)
	if err != nil || run.Env["API_KEY"] != canary {
		t.Errorf("runnable: %v", err)
	}
	b.must("GET", "/api/plugins", nil, 200, nil)
	b.must("GET", "/api/plugins/"+id, nil, 200, nil)
	bearer.must("POST", "/api/plugins/"+id+"/disable", nil, 200, &pl)
	if pl.Enabled {
		t.Error("still enabled after disable")
	}

	// A force-push between a preview and its install.
	var p2 plugins.Preview
	b.must("POST", "/api/plugins/preview", req, 200, &p2)
	os.WriteFile(filepath.Join(work, "plugins/hello/plugin.js"), []byte("export async function greet() { return 'other'; }\n"), 0o644)
	testgit.Run(t, work, "commit", "-q", "--amend", "-am", "amended")
	testgit.Run(t, work, "push", "-q", "-f", filepath.Join(g.Root, "acme/plugins.git"), "main")
	update := map[string]any{"repo": "acme/plugins", "ref": "main", "folder": "plugins/hello", "commit": p2.Commit,
		"permission_hash": p2.PermissionHash, "set_hash": p2.SetHash, "replace_existing": true}
	st, data = b.do("POST", "/api/plugins", update)
	var stale struct {
		Error struct {
			Code   string          `json:"code"`
			Plugin plugins.Preview `json:"plugin"`
		} `json:"error"`
	}
	json.Unmarshal(data, &stale)
	newSHA := testgit.Run(t, work, "rev-parse", "HEAD")
	if st != 409 || stale.Error.Code != "preview_again" || stale.Error.Plugin.Commit != newSHA || stale.Error.Plugin.Update == nil ||
		strings.Join(stale.Error.Plugin.Update.Changed, ",") != "" {
		t.Errorf("after a force-push: %d %s", st, data)
	}
	if strings.Contains(ts.seen.String(), canary) {
		t.Error("a secret's value was in an answer")
	}
	b.must("DELETE", "/api/plugins/"+id, nil, 200, nil)
	for _, action := range []string{"plugin.install", "plugin.enable", "plugin.disable", "plugin.remove", "plugin.secret.set"} {
		if len(ts.records(action)) != 1 {
			t.Errorf("%s records: %d", action, len(ts.records(action)))
		}
	}
	if st, data := b.do("GET", "/api/plugins/"+id, nil); st != 404 {
		t.Errorf("after remove: %d %s", st, data)
	}
}

// TestPluginPages walks the pages a person uses: the plugins page, the
// preview (tools with their hashes and capabilities in words, the
// permission hash, the set hash), the install (redirected to the plugin's
// page, not enabled), a secret set (never shown again), the enable with
// the fingerprint, and the update preview's diff after a new commit.
func TestPluginPages(t *testing.T) {
	g, work := pluginRepo(t)
	ts := start(t, Options{GitHubURL: g.URL})
	b := ts.browser
	if page := b.mustPage("GET", "/plugins", nil, 200); !strings.Contains(page, `id="plugin-preview"`) || !strings.Contains(page, `id="no-plugins"`) {
		t.Errorf("the plugins page: %s", page)
	}
	form := url.Values{"repo": {"acme/plugins"}, "ref": {"main"}, "folder": {"plugins/hello"}}
	preview := b.mustPage("POST", "/plugins/preview", form, 200)
	p, err := ts.w.plugins.Preview(t.Context(), plugins.Request{Repo: "acme/plugins", Ref: "main", Folder: "plugins/hello"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{p.Tools[0].Hash, p.PermissionHash, p.SetHash, p.Fingerprint, "receives the secret API_KEY", `id="install-plugin"`} {
		if !strings.Contains(preview, want) {
			t.Errorf("the preview lacks %q", want)
		}
	}
	install := url.Values{}
	for _, k := range []string{"repo", "ref", "folder", "commit", "permission_hash", "set_hash"} {
		install.Set(k, hidden(t, preview, k))
	}
	st, _, loc := b.page("POST", "/plugins/install", install)
	if st != 303 || !strings.HasSuffix(loc, "?done=plugin_installed") {
		t.Fatalf("install: %d %s", st, loc)
	}
	path := strings.TrimSuffix(loc, "?done=plugin_installed")
	page := b.mustPage("GET", loc, nil, 200)
	if !strings.Contains(page, `id="enable"`) || !strings.Contains(page, "Disabled") {
		t.Errorf("the installed plugin's page: %s", page)
	}
	const canary = "page-secret-canary-31f"
	if st, _, _ := b.page("POST", path+"/secrets", url.Values{"name": {"API_KEY"}, "value": {canary}}); st != 303 {
		t.Errorf("set a secret: %d", st)
	}
	page = b.mustPage("GET", path, nil, 200)
	if strings.Contains(page, canary) || !strings.Contains(page, "set by user:owner") {
		t.Errorf("the secret on the page: %s", page)
	}
	if st, body, _ := b.page("POST", path+"/enable", url.Values{"fingerprint": {"sha256:00"}}); st != 409 || !strings.Contains(body, `id="conflict"`) {
		t.Errorf("enable with a stale fingerprint: %d", st)
	}
	if st, _, loc := b.page("POST", path+"/enable", url.Values{"fingerprint": {hidden(t, page, "fingerprint")}}); st != 303 || !strings.HasSuffix(loc, "done=plugin_enabled") {
		t.Errorf("enable: %d %s", st, loc)
	}

	os.WriteFile(filepath.Join(work, "plugins/hello/plugin.json"), []byte(strings.Replace(pluginManifest, "Greets someone.", "Greets anyone.", 1)), 0o644)
	testgit.Run(t, work, "commit", "-q", "-am", "two")
	testgit.Run(t, work, "push", "-q", filepath.Join(g.Root, "acme/plugins.git"), "main")
	diff := b.mustPage("POST", "/plugins/preview", form, 200)
	if !strings.Contains(diff, `<dd id="changed-tools">greet</dd>`) || !strings.Contains(diff, `name="replace_existing"`) {
		t.Errorf("the update's preview: %s", diff)
	}
}
