package workspace

import (
	"html"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/workspace/skills"
)

// TestSkillsHostUnreachable: when the git host cannot be reached, the API
// and the page say which skill could not be fetched (repository, ref,
// folder; the catalog entry), from which host, and that ZERO_GITHUB_URL
// sets it, in plain words rather than git's, and never with the token;
// the code stays 502 host_unreachable. The page keeps the add form's values
// (the branch's default included, after a catalog entry's preview), and
// names the real skills folder under $ZERO_HOME.
func TestSkillsHostUnreachable(t *testing.T) {
	const token = "ghs_unreachable-token-canary-5e1"
	ts := start(t, Options{GitHubURL: "https://127.0.0.1:1", GitHubToken: token})
	b := ts.browser
	st, data := b.do("POST", "/api/skills/preview", map[string]string{"repo": "acme/skills", "ref": "dev", "folder": "skills/pdf"})
	msg := string(data)
	for _, want := range []string{"fetch the skill acme/skills (ref dev, folder skills/pdf) from https://127.0.0.1:1",
		"the host could not be reached: Failed to connect to 127.0.0.1 port 1", "ZERO_GITHUB_URL"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the answer lacks %q: %s", want, msg)
		}
	}
	if st != 502 || errorCode(data) != "host_unreachable" || strings.Contains(msg, token) || strings.Contains(msg, "fatal:") || strings.Contains(msg, "unable to access") {
		t.Errorf("an unreachable host: %d %s", st, data)
	}

	page := b.mustPage("POST", "/skills/preview", url.Values{"repo": {"acme/skills"}, "ref": {"dev"}, "folder": {"skills/pdf"}}, 502)
	for _, want := range []string{`id="problem"`, "acme/skills (ref dev, folder skills/pdf)", "ZERO_GITHUB_URL",
		`value="acme/skills"`, `id="skill-ref" name="ref" required maxlength="200" value="dev"`, `value="skills/pdf"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page after a typed preview lacks %s", want)
		}
	}
	catalog, err := skills.Catalog()
	if err != nil || len(catalog) == 0 {
		t.Fatal("no catalog", err)
	}
	e := catalog[0]
	page = b.mustPage("POST", "/skills/preview", url.Values{"catalog_id": {e.ID}}, 502)
	for _, want := range []string{html.EscapeString(e.ID + " of the catalog, " + e.Repo + " (ref " + e.Commit + ", folder " + e.Folder + ")"),
		`id="skill-ref" name="ref" required maxlength="200" value="main"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page after a catalog entry's preview lacks %s", want)
		}
	}
	dir := filepath.Join(ts.home, "skills")
	if !strings.Contains(page, "<code>"+dir+"</code>") || !strings.Contains(page, "zero mcp skills --workspace "+dir) || strings.Contains(page, "~/.zero") {
		t.Error("the skills page does not name the skills folder under ZERO_HOME")
	}
	ts.seenMu.Lock()
	defer ts.seenMu.Unlock()
	if strings.Contains(ts.seen.String(), token) {
		t.Error("an answer holds the token")
	}
}
