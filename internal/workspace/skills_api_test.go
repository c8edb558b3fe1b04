package workspace

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/testgit"
	"github.com/zero-dev/zero/internal/workspace/skills"
)

const mitLicence = "MIT License\n\nCopyright (c) 2026 Acme\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\nof this software and associated documentation files (the \"Software\"), to deal\nin the Software without restriction, including without limitation the rights\nto use, copy, modify, merge, publish, distribute, sublicense, and/or sell\ncopies of the Software, and to permit persons to whom the Software is\nfurnished to do so, subject to the following conditions:\n\nThe above copyright notice and this permission notice shall be included in all\ncopies or substantial portions of the Software.\n\nTHE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR\nIMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,\nFITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE\nAUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER\nLIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,\nOUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE\nSOFTWARE.\n"

// skillRepo serves acme/skills with the pdf skill on a real local git
// server.
func skillRepo(t *testing.T) *testgit.Server {
	g := testgit.NewServer(t)
	g.Repo(t, "acme/skills", map[string]string{
		"LICENSE":                 mitLicence,
		"skills/pdf/SKILL.md":     "---\nname: pdf\ndescription: Read PDFs.\n---\n<script>alert(1)</script> Read them.\n",
		"skills/pdf/scripts/a.sh": "exec:#!/bin/sh\necho hi\n",
	})
	g.Repo(t, "private/skills", map[string]string{"skills/pdf/SKILL.md": "x"})
	return g
}

// TestSkillsAPI: the owner in a browser previews and adds a skill, which
// is then listed and removable; a bearer caller gets 403 browser_only on
// each of those routes and a viewer cannot add; a missing repository, ref
// or folder, a private repository without credentials and an unreachable
// host each get a clear error, and nothing is installed.
func TestSkillsAPI(t *testing.T) {
	g := skillRepo(t)
	ts := start(t, Options{GitHubURL: g.URL, Team: true})
	b := ts.browser
	req := map[string]string{"repo": "acme/skills", "ref": "main", "folder": "skills/pdf"}
	var p skills.Preview
	b.must("POST", "/api/skills/preview", req, 200, &p)
	if p.Name != "pdf" || !p.Installable() || len(p.Files) != 2 || p.Licence.SPDX != "MIT" {
		t.Fatalf("preview: %+v", p)
	}
	bearer := ts.bearer()
	for _, c := range []struct{ method, path string }{{"POST", "/api/skills/preview"}, {"POST", "/api/skills"}, {"DELETE", "/api/skills/pdf"}} {
		if st, data := bearer.do(c.method, c.path, req); st != 403 || errorCode(data) != "browser_only" {
			t.Errorf("a bearer's %s %s: %d %s", c.method, c.path, st, data)
		}
	}
	var viewer struct {
		ID int64 `json:"id"`
	}
	b.must("POST", "/api/users", map[string]string{"name": "vic", "role": "viewer"}, 201, &viewer)
	v := ts.login(viewer.ID)
	add := map[string]string{"repo": "acme/skills", "ref": "main", "folder": "skills/pdf", "commit": p.Commit, "set_hash": p.SetHash}
	if st, data := v.do("POST", "/api/skills", add); st != 403 {
		t.Errorf("a viewer's add: %d %s", st, data)
	}
	if page := v.mustPage("GET", "/skills", nil, 200); strings.Contains(page, `id="skill-preview"`) {
		t.Error("a viewer is shown the add form")
	}

	for _, c := range []struct {
		name   string
		body   map[string]string
		status int
		code   string
	}{
		{"no repository", map[string]string{"repo": "acme/nope", "ref": "main", "folder": "skills/pdf"}, 404, "not_found"},
		{"no ref", map[string]string{"repo": "acme/skills", "ref": "nope", "folder": "skills/pdf"}, 404, "not_found"},
		{"no folder", map[string]string{"repo": "acme/skills", "ref": "main", "folder": "skills/nope"}, 404, "not_found"},
		{"a ref left empty", map[string]string{"repo": "acme/skills", "folder": "skills/pdf"}, 400, "invalid_skill"},
		{"a bad repository", map[string]string{"repo": "acme", "ref": "main"}, 400, "invalid_skill"},
		{"private, no credentials", map[string]string{"repo": "private/skills", "ref": "main", "folder": "skills/pdf"}, 403, "repository_refused"},
	} {
		if st, data := b.do("POST", "/api/skills/preview", c.body); st != c.status || errorCode(data) != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, st, data, c.status, c.code)
		}
	}

	var prov skills.Provenance
	b.must("POST", "/api/skills", add, 201, &prov)
	if prov.Name != "pdf" || prov.Commit != p.Commit || prov.AddedBy != "user:owner" {
		t.Errorf("added: %+v", prov)
	}
	if st, data := b.do("POST", "/api/skills", add); st != 409 || errorCode(data) != "skill_exists" {
		t.Errorf("a second add: %d %s", st, data)
	}
	var list []skills.Provenance
	b.must("GET", "/api/skills", nil, 200, &list)
	if len(list) != 1 || len(ts.records("skill.install")) != 1 {
		t.Errorf("installed: %+v", list)
	}
	if _, err := os.Stat(filepath.Join(ts.home, "skills", "pdf", "SKILL.md")); err != nil {
		t.Error(err)
	}
	b.must("DELETE", "/api/skills/pdf", nil, 200, nil)
	if len(ts.records("skill.remove")) != 1 {
		t.Error("no skill.remove record")
	}

	down := start(t, Options{GitHubURL: "http://127.0.0.1:1"})
	if st, data := down.browser.do("POST", "/api/skills/preview", req); st != 502 || errorCode(data) != "host_unreachable" {
		t.Errorf("an unreachable host: %d %s", st, data)
	}
}

// TestSkillsPages: the preview page shows the real SKILL.md as text, the
// files, the licence, the commit and the set hash; its Add form adds the
// skill and the skills page lists it; a bad repository shows the form
// again with what was typed.
func TestSkillsPages(t *testing.T) {
	g := skillRepo(t)
	ts := start(t, Options{GitHubURL: g.URL})
	b := ts.browser
	form := url.Values{"repo": {"acme/skills"}, "ref": {"main"}, "folder": {"skills/pdf"}}
	page := b.mustPage("POST", "/skills/preview", form, 200)
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "scripts/a.sh", "never run", "MIT", `id="add-skill"`, `name="set_hash"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the preview lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>alert(1)") {
		t.Error("the preview holds the skill's markup")
	}
	var p skills.Preview
	b.must("POST", "/api/skills/preview", map[string]string{"repo": "acme/skills", "ref": "main", "folder": "skills/pdf"}, 200, &p)
	form.Set("commit", p.Commit)
	form.Set("set_hash", p.SetHash)
	b.mustPage("POST", "/skills/add", form, 303)
	if page := b.mustPage("GET", "/skills", nil, 200); !strings.Contains(page, `id="skill-pdf"`) || !strings.Contains(page, p.Commit) {
		t.Error("the skills page does not list the added skill")
	}
	bad := b.mustPage("POST", "/skills/preview", url.Values{"repo": {"acme/nope"}, "ref": {"main"}, "folder": {"x"}}, 404)
	if !strings.Contains(bad, `value="acme/nope"`) || !strings.Contains(bad, `id="problem"`) {
		t.Error("a bad repository does not show the form again with the problem")
	}
}
