package plugins

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/database/databasetest"
	"github.com/zero-dev/zero/internal/gitsource"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/testgit"
	"github.com/zero-dev/zero/internal/workspace/runtime"
	"github.com/zero-dev/zero/internal/workspace/secrets"
	"github.com/zero-dev/zero/internal/workspace/servers"
	"github.com/zero-dev/zero/internal/workspace/skills"
	"github.com/zero-dev/zero/internal/workspace/store"
)

// fixture is a manager on a real local git server, a real SQLite
// database, a real audit log and real skills and servers managers.
type fixture struct {
	t       *testing.T
	g       *testgit.Server
	baseURL string
	m       *Manager
	home    string
	db      *sql.DB
	box     *secrets.Box
	log     *audit.Log
	logPath string
	roots   *fsroot.Set
	skills  *skills.Manager
	servers *servers.Manager
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	g := testgit.NewServer(t)
	f := &fixture{t: t, g: g, home: t.TempDir(), baseURL: g.URL}
	f.setup()
	f.m = f.open()
	return f
}

// setup opens the fixture's database, key and thread workspace under its
// home.
func (f *fixture) setup() {
	t := f.t
	t.Helper()
	var err error
	f.db = databasetest.OpenAt(t, filepath.Join(f.home, "zero.db"), store.Migrations())
	if f.box, err = secrets.LoadKey(filepath.Join(f.home, secrets.KeyFile)); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(f.home, "workspace")
	os.MkdirAll(work, 0o700)
	if f.roots, err = fsroot.Open([]string{work}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.roots.Close() })
	f.logPath = filepath.Join(f.home, "audit.log")
}

// open opens a manager on the fixture's home, as a workspace that starts
// does.
func (f *fixture) open() *Manager {
	f.t.Helper()
	if f.log != nil {
		f.log.Close()
	}
	log, err := audit.Open(f.logPath)
	if err != nil {
		f.t.Fatal(err)
	}
	f.log = log
	f.t.Cleanup(func() { log.Close() })
	src := &gitsource.Source{BaseURL: f.baseURL}
	if f.skills, err = skills.New(skills.Options{Dir: filepath.Join(f.home, "skills"), Source: src, Audit: log}); err != nil {
		f.t.Fatal(err)
	}
	rt := runtime.New(runtime.Options{Roots: f.roots, Audit: log})
	f.t.Cleanup(func() { rt.Close() })
	f.servers = servers.NewManager(servers.Options{DB: f.db, Box: f.box, Audit: log, Workspace: f.roots, Runtime: rt})
	m, err := New(context.Background(), Options{Dir: filepath.Join(f.home, "plugins"), DB: f.db, Box: f.box, Audit: log, Source: src,
		Skills: f.skills, Servers: f.servers, Runtime: rt})
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

func (f *fixture) records(action string) []audit.Record {
	f.t.Helper()
	all, err := audit.ReadAll(f.logPath)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []audit.Record
	for _, r := range all {
		if r.Action == action {
			out = append(out, r)
		}
	}
	return out
}

// left lists what is in the plugins' folder, and the plugins' rows.
func (f *fixture) left() (entries []string, rows int) {
	f.t.Helper()
	list, _ := os.ReadDir(filepath.Join(f.home, "plugins"))
	for _, e := range list {
		entries = append(entries, e.Name())
	}
	f.db.QueryRow(`SELECT count(*) FROM plugins`).Scan(&rows)
	return entries, rows
}

// nothingLeft fails the test unless no plugin is installed and nothing is
// staged.
func (f *fixture) nothingLeft() {
	f.t.Helper()
	if entries, rows := f.left(); len(entries) != 0 || rows != 0 {
		f.t.Errorf("left behind: %v, %d rows", entries, rows)
	}
}

// tool is a tool of a manifest.
type tool struct {
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	Parameters   map[string]any `json:"parameters"`
	Required     []string       `json:"required,omitempty"`
	Capabilities map[string]any `json:"capabilities"`
}

func newTool(name, description string) tool {
	return tool{Name: name, Description: description, Capabilities: map[string]any{},
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}}
}

// manifest is a plugin.json named name, with Zero's part: plugin.js, caps
// and tools.
func manifest(name string, caps map[string]any, tools ...tool) string {
	if caps == nil {
		caps = map[string]any{}
	}
	data, err := json.MarshalIndent(map[string]any{
		"name": name, "version": "1.0.0", "description": "The " + name + " plugin.",
		"extensions": map[string]any{"dev.zero.plugin": map[string]any{"entry": "plugin.js", "capabilities": caps, "tools": tools}},
	}, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(data)
}

const pluginJS = "export async function greet({text}) { return 'hello ' + text; }\n"

// helloFiles is the hello plugin, in the folder plugins/hello of its
// repository, with the MIT licence at the root.
func helloFiles(caps map[string]any, tools ...tool) map[string]string {
	if len(tools) == 0 {
		tools = []tool{newTool("greet", "Greets someone.")}
	}
	return map[string]string{
		"LICENSE":                   mitLicence,
		"plugins/hello/plugin.json": manifest("hello", caps, tools...),
		"plugins/hello/plugin.js":   pluginJS,
		"plugins/hello/README.md":   "# hello\n",
	}
}

var hello = Request{Repo: "acme/plugins", Ref: "main", Folder: "plugins/hello"}

// push commits files (path to content; "" removes a file) on top of the
// checkout work and pushes them to acme/plugins; force amends the last
// commit instead, and force-pushes.
func (f *fixture) push(work string, files map[string]string, force bool) string {
	f.t.Helper()
	for p, content := range files {
		full := filepath.Join(work, p)
		if content == "" {
			os.Remove(full)
			continue
		}
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	testgit.Run(f.t, work, "add", "-A")
	bare := filepath.Join(f.g.Root, "acme/plugins.git")
	if force {
		testgit.Run(f.t, work, "commit", "-q", "--amend", "-m", "amended")
		testgit.Run(f.t, work, "push", "-q", "-f", bare, "main")
	} else {
		testgit.Run(f.t, work, "commit", "-q", "-m", "more")
		testgit.Run(f.t, work, "push", "-q", bare, "main")
	}
	return testgit.Run(f.t, work, "rev-parse", "HEAD")
}

// install previews r and installs it as previewed.
func (f *fixture) install(r Request, replace bool) (*Preview, Installed) {
	f.t.Helper()
	ctx := context.Background()
	p, err := f.m.Preview(ctx, r)
	if err != nil {
		f.t.Fatal(err)
	}
	if !p.Installable() {
		f.t.Fatalf("not installable: %v", p.Problems)
	}
	in, err := f.m.Install(ctx, "user:owner", r, p.Commit, p.PermissionHash, p.SetHash, replace)
	if err != nil {
		f.t.Fatal(err)
	}
	return p, in
}

// refusedAtPreview checks that files, a plugin in acme/NAME's root,
// preview with a problem holding want, that its install is refused with
// ErrInvalid, and that nothing is left behind.
func refusedAtPreview(t *testing.T, name string, files map[string]string, want string) {
	t.Helper()
	f := newFixture(t)
	f.g.Repo(t, "acme/"+name, files)
	r := Request{Repo: "acme/" + name, Ref: "main"}
	ctx := context.Background()
	p, err := f.m.Preview(ctx, r)
	if err != nil {
		t.Fatalf("preview: %v", err)
	}
	if p.Installable() || !strings.Contains(strings.Join(p.Problems, "\n"), want) {
		t.Fatalf("the preview's problems: %q, want one holding %q", p.Problems, want)
	}
	_, err = f.m.Install(ctx, "user:owner", r, p.Commit, p.PermissionHash, p.SetHash, false)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
		t.Errorf("install: %v, want ErrInvalid holding %q", err, want)
	}
	f.nothingLeft()
	if recs := f.records("plugin.install"); len(recs) != 0 {
		t.Errorf("plugin.install records: %v", recs)
	}
}

const mitLicence = "MIT License\n\nCopyright (c) 2026 Acme\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\nof this software and associated documentation files (the \"Software\"), to deal\nin the Software without restriction, including without limitation the rights\nto use, copy, modify, merge, publish, distribute, sublicense, and/or sell\ncopies of the Software, and to permit persons to whom the Software is\nfurnished to do so, subject to the following conditions:\n\nThe above copyright notice and this permission notice shall be included in all\ncopies or substantial portions of the Software.\n\nTHE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR\nIMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,\nFITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE\nAUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER\nLIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,\nOUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE\nSOFTWARE.\n"
