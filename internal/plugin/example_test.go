package plugin

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The example plugin of docs/plugins.md.
const exampleDir = "testdata/example"

func readExample(t *testing.T) *Manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(exampleDir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestExample(t *testing.T) {
	m := readExample(t)
	want := &Manifest{
		Name:        "notes-helper",
		Version:     "1.0.0",
		Description: "Reads your notes and checks a status page.",
		Author:      json.RawMessage(`{"name": "Example Author", "url": "https://example.com"}`),
		Homepage:    "https://example.com/notes-helper",
		Repository:  json.RawMessage(`{"type": "git", "url": "https://github.com/example/notes-helper"}`),
		License:     "MIT",
		Keywords:    []string{"notes", "status"},
		Zero: &Extension{
			Entry: "plugin.js",
			Capabilities: Capabilities{FSRead: []string{"notes"}, NetworkHosts: []string{"status.example.com:443"}, Secrets: []string{"STATUS_TOKEN"},
				Limits: &Limits{TimeoutMS: 10000, MemoryMiB: 128}},
			Tools: []Tool{
				{Name: "check_status", Description: "Fetch a page of status.example.com and report its HTTP status.",
					Parameters: json.RawMessage(`{"additionalProperties":false,"properties":{"path":{"description":"The page's path, for example /api/v2/status.json","pattern":"^/","type":"string"}},"type":"object"}`),
					Required:   []string{"path"}, Capabilities: Capabilities{NetworkHosts: []string{"status.example.com:443"}, Secrets: []string{"STATUS_TOKEN"}}},
				{Name: "read_note", Description: "Read one note, notes/NAME.md, from the thread workspace.",
					Parameters: json.RawMessage(`{"additionalProperties":false,"properties":{"name":{"description":"The note's name, without .md","pattern":"^[A-Za-z0-9][A-Za-z0-9._-]*$","type":"string"}},"type":"object"}`),
					Required:   []string{"name"}, Capabilities: Capabilities{FSRead: []string{"notes"}}},
			},
		},
	}
	if diff := cmp.Diff(want, m, cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })); diff != "" {
		t.Fatalf("Parse (-want +got):\n%s", diff)
	}
	words := append(m.Zero.Capabilities.Words(), m.Zero.Capabilities.EffectiveLimits().Words()...)
	if diff := cmp.Diff([]string{
		"reads files under notes/",
		"connects to status.example.com:443",
		"receives the secret STATUS_TOKEN",
		"stops a call after 10 s",
		"at most 128 MiB of memory",
		"at most 32 processes and threads",
	}, words); diff != "" {
		t.Errorf("what the preview says (-want +got):\n%s", diff)
	}
	hashes, err := m.Zero.ToolHashes()
	if err != nil {
		t.Fatal(err)
	}
	if len(hashes) != 2 || hashes["check_status"] == hashes["read_note"] {
		t.Errorf("ToolHashes = %v", hashes)
	}
}

// exampleDriver loads the example's entry as Zero's host does, with the
// arguments (args, ctx), and calls its tools: ctx.fetch records what it is
// asked and answers 204, ctx.workspace is a thread workspace, and the
// working directory, as under the host, is another, empty folder.
const exampleDriver = `
const entry = require(process.argv[1]);
const fetched = [];
const ctx = {
  secrets: { STATUS_TOKEN: "tok" },
  fetch: async (url, init) => { fetched.push({ url, init }); return { status: 204 }; },
  workspace: process.argv[2],
};
(async () => {
  const out = { exports: Object.keys(entry).sort() };
  out.status = await entry.check_status({ path: "/api/v2/status.json" }, ctx);
  out.fetched = fetched;
  out.note = await entry.read_note({ name: "today" }, { secrets: {}, fetch: ctx.fetch, workspace: ctx.workspace });
  try { await entry.read_note({ name: "../secret" }, ctx); out.escaped = true; } catch (e) { out.refused = e.message; }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
`

// TestExampleRuns runs the example's plugin.js in node: it exports exactly
// the manifest's tools, check_status reaches the network only through
// ctx.fetch with the granted secret, and read_note reads a note of the
// workspace (ctx.workspace, not the working directory) and refuses a name
// that leaves notes/.
func TestExampleRuns(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("ZERO_REQUIRE_NODE") != "" {
			t.Fatalf("node is required (ZERO_REQUIRE_NODE): %v", err)
		}
		t.Skipf("node is not installed: %v", err)
	}
	m := readExample(t)
	entry, err := filepath.Abs(filepath.Join(exampleDir, m.Zero.Entry))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "notes", "today.md"), []byte("# Today\nShip it.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "-e", exampleDriver, "--", entry, work)
	cmd.Dir = t.TempDir() // the host's scratch folder, not the workspace
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var got struct {
		Exports []string `json:"exports"`
		Status  string   `json:"status"`
		Fetched []struct {
			URL  string `json:"url"`
			Init struct {
				Headers map[string]string `json:"headers"`
			} `json:"init"`
		} `json:"fetched"`
		Note    json.RawMessage `json:"note"`
		Escaped bool            `json:"escaped"`
		Refused string          `json:"refused"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var names []string
	for _, tl := range m.Zero.Tools {
		names = append(names, tl.Name)
	}
	if diff := cmp.Diff(names, got.Exports); diff != "" {
		t.Errorf("exports (-manifest's tools +plugin.js's exports):\n%s", diff)
	}
	if got.Status != "/api/v2/status.json: HTTP 204" {
		t.Errorf("check_status = %q", got.Status)
	}
	if len(got.Fetched) != 1 || got.Fetched[0].URL != "https://status.example.com/api/v2/status.json" ||
		got.Fetched[0].Init.Headers["Authorization"] != "Bearer tok" {
		t.Errorf("check_status fetched %+v", got.Fetched)
	}
	if diff := cmp.Diff(`{"content":[{"type":"text","text":"# Today\nShip it.\n"}]}`, string(got.Note)); diff != "" {
		t.Errorf("read_note (-want +got):\n%s", diff)
	}
	if got.Escaped || got.Refused != "not a note name: ../secret" {
		t.Errorf("read_note of ../secret: escaped %v, refused %q", got.Escaped, got.Refused)
	}
}

// TestDocsShowTheExample: docs/plugins.md shows the example's files as
// they are, so the documented plugin is the one the tests read and run.
func TestDocsShowTheExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "plugins.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ name, fence string }{{ManifestFile, "```json\n"}, {"plugin.js", "```js\n"}} {
		body, err := os.ReadFile(filepath.Join(exampleDir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(doc), f.fence+string(body)+"```\n") {
			t.Errorf("docs/plugins.md does not show %s as it is in %s", f.name, exampleDir)
		}
	}
}
