package workspace

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/workspace/plugins"
)

// TestPluginCannotRunWithoutNode: on a host where zero serve's PATH holds
// no node program (a real empty folder as PATH, nothing stood in), the
// preview and the plugin's page say the plugin cannot run and why, the
// plugin's page offers no Enable, and the API's enable is refused
// not_runnable; with node back in the PATH, the same page offers Enable
// and says nothing of it.
func TestPluginCannotRunWithoutNode(t *testing.T) {
	g, _ := pluginRepo(t)
	ts := start(t, Options{GitHubURL: g.URL})
	b := ts.browser
	path := os.Getenv("PATH")
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir() // git, which reads the repository, and no node
	if err := os.Symlink(git, filepath.Join(bin, "git")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	const why = "no node program is found in the PATH zero serve passes on"
	preview := b.mustPage("POST", "/plugins/preview", url.Values{"repo": {"acme/plugins"}, "ref": {"main"}, "folder": {"plugins/hello"}}, 200)
	if !strings.Contains(preview, `id="cannot-run"`) || !strings.Contains(preview, why) || !strings.Contains(preview, `id="install-plugin"`) {
		t.Errorf("the preview without node does not say it cannot run, or offers no install:\n%s", preview)
	}
	var p plugins.Preview
	b.must("POST", "/api/plugins/preview", map[string]string{"repo": "acme/plugins", "ref": "main", "folder": "plugins/hello"}, 200, &p)
	var in plugins.Installed
	b.must("POST", "/api/plugins", map[string]any{"repo": "acme/plugins", "ref": "main", "folder": "plugins/hello", "commit": p.Commit,
		"permission_hash": p.PermissionHash, "set_hash": p.SetHash}, 201, &in)
	id := itoa(in.Plugin.ID)
	page := b.mustPage("GET", "/plugins/"+id, nil, 200)
	if !strings.Contains(page, `id="cannot-run"`) || !strings.Contains(page, why) || strings.Contains(page, `id="enable"`) {
		t.Errorf("the plugin's page without node does not say it cannot run, or offers Enable:\n%s", page)
	}
	if st, data := b.do("POST", "/api/plugins/"+id+"/enable", map[string]string{"fingerprint": in.Plugin.Fingerprint}); st != 409 || errorCode(data) != "not_runnable" {
		t.Errorf("an enable without node: %d %s", st, data)
	}

	t.Setenv("PATH", path)
	page = b.mustPage("GET", "/plugins/"+id, nil, 200)
	if strings.Contains(page, `id="cannot-run"`) || !strings.Contains(page, `id="enable"`) {
		t.Errorf("with node, the plugin's page says it cannot run, or offers no Enable:\n%s", page)
	}
}
