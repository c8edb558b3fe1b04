package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/plugin"
	"github.com/zero-dev/zero/internal/plugin/host/hosttest"
	"github.com/zero-dev/zero/internal/testgit"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// requirePlugins skips the test where plugins cannot run or the
// TypeScript SDK is not installed, unless ZERO_REQUIRE_BWRAP or
// ZERO_REQUIRE_NODE is set: then it fails.
func requirePlugins(t *testing.T) {
	t.Helper()
	hosttest.Require(t)
	if _, err := os.Stat("../../node/node_modules/@modelcontextprotocol/sdk"); err != nil {
		if os.Getenv("ZERO_REQUIRE_NODE") != "" {
			t.Fatalf("ZERO_REQUIRE_NODE is set but the npm packages are missing: %v", err)
		}
		t.Skip("npm packages not installed; run: npm ci --prefix node")
	}
}

// examplePlugin reads the example plugin of docs/plugins.md: its files,
// and its manifest as parsed.
func examplePlugin(t *testing.T) (map[string]string, *plugin.Manifest) {
	t.Helper()
	files := map[string]string{}
	for _, name := range []string{plugin.ManifestFile, "plugin.js"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "internal", "plugin", "testdata", "example", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(data)
	}
	m, err := plugin.Parse([]byte(files[plugin.ManifestFile]))
	if err != nil {
		t.Fatal(err)
	}
	return files, m
}

// auditRecords reads the audit log of a stopped zero serve.
func auditRecords(t *testing.T, home string) []struct {
	Actor, Action, Target string
	Detail                map[string]string
} {
	t.Helper()
	f, err := os.Open(filepath.Join(home, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []struct {
		Actor, Action, Target string
		Detail                map[string]string
	}
	lines := bufio.NewScanner(f)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		var r struct {
			Actor, Action, Target string
			Detail                map[string]string
		}
		if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
			t.Fatalf("audit.log: %v: %s", err, lines.Bytes())
		}
		out = append(out, r)
	}
	return out
}

// TestPluginEndToEnd installs the example plugin of docs/plugins.md from a
// real local git server into the real zero serve, as the owner does in a
// browser: preview, install (echoing the commit, permission hash and set
// hash), enable (echoing the fingerprint). Then its read_note, run by real
// Node under real bubblewrap, reads a note of the thread workspace twice:
// called by a thread's model, approved once, its result wrapped as tool
// output; and called by the TypeScript SDK's client through /mcp, whose
// tools/list offers both tools under the plugin's name with the manifest's
// descriptions and schemas. The audit log holds the install, the enable and
// both calls, each with the plugin as target.
func TestPluginEndToEnd(t *testing.T) {
	requirePlugins(t)
	files, manifest := examplePlugin(t)
	g := testgit.NewServer(t)
	_, sha := g.Repo(t, "acme/notes-helper", map[string]string{
		"LICENSE":           mitText,
		"README.md":         "# notes-helper\n",
		plugin.ManifestFile: files[plugin.ManifestFile],
		"plugin.js":         files["plugin.js"],
	})
	ms := modeltest.New(t)
	ms.Push(
		modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("c1", "notes-helper__read_note", `{"name":"hello"}`)}},
		modeltest.Reply{Text: "Your note says hello."},
	)
	p := startServe(t, []string{"ZERO_GITHUB_URL=" + g.URL, "GH_TOKEN=", "GITHUB_TOKEN="})
	browser, headers := owner(t, p, p.link)
	call := func(method, path string, body, out any) {
		t.Helper()
		if out == nil {
			out = &map[string]any{}
		}
		getJSON(t, browser, method, p.base+path, body, headers, out)
	}

	req := map[string]string{"repo": "acme/notes-helper", "ref": "main"}
	var preview struct {
		Commit         string `json:"commit"`
		PermissionHash string `json:"permission_hash"`
		SetHash        string `json:"set_hash"`
		Fingerprint    string `json:"fingerprint"`
		Problems       []string
	}
	call("POST", "/api/plugins/preview", req, &preview)
	if preview.Commit != sha || preview.PermissionHash == "" || preview.SetHash == "" || len(preview.Problems) > 0 {
		t.Fatalf("preview: %+v", preview)
	}
	var installed struct {
		Plugin struct {
			ID      int64 `json:"id"`
			Enabled bool  `json:"enabled"`
		} `json:"plugin"`
	}
	call("POST", "/api/plugins", map[string]any{"repo": "acme/notes-helper", "ref": "main", "commit": preview.Commit,
		"permission_hash": preview.PermissionHash, "set_hash": preview.SetHash}, &installed)
	id := strconv.FormatInt(installed.Plugin.ID, 10)
	if installed.Plugin.ID == 0 || installed.Plugin.Enabled {
		t.Fatalf("installed: %+v", installed)
	}
	var enabled struct {
		Enabled bool `json:"enabled"`
	}
	call("POST", "/api/plugins/"+id+"/enable", map[string]string{"fingerprint": preview.Fingerprint}, &enabled)
	if !enabled.Enabled {
		t.Fatal("not enabled after enable")
	}

	const note = "# Hello\nThe plugin read this from the thread workspace.\n"
	notes := filepath.Join(p.home, "workspace", "notes")
	if err := os.MkdirAll(notes, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, "hello.md"), []byte(note), 0o600); err != nil {
		t.Fatal(err)
	}

	// From a thread: the model calls read_note, the owner approves once.
	call("POST", "/api/providers", map[string]any{"name": "local", "base_url": ms.BaseURL(), "default_model": "scripted-1"}, nil)
	var th struct {
		ID int64 `json:"id"`
	}
	call("POST", "/api/threads", map[string]string{"title": "notes", "provider": "local"}, &th)
	call("POST", "/api/threads/"+strconv.FormatInt(th.ID, 10)+"/runs", map[string]string{"prompt": "What does my hello note say?"}, nil)
	result := threadToolResult(t, call, th.ID)
	if want := "server=\"notes-helper\" tool=\"read_note\">\n" + note + "\n</tool_output nonce="; !strings.HasPrefix(result, "<tool_output nonce=") || !strings.Contains(result, want) {
		t.Errorf("read_note's result as the model read it: %q, want it wrapped, holding %q", result, want)
	}
	offered := map[string]string{}
	if reqs := ms.Requests(); len(reqs) > 0 {
		for _, tl := range reqs[0].Tools {
			offered[tl.Function.Name] = tl.Function.Description
		}
	}
	for _, tl := range manifest.Zero.Tools {
		if d, ok := offered["notes-helper__"+tl.Name]; !ok || d != tl.Description {
			t.Errorf("the thread's model was offered %s as %q (offered: %v)", tl.Name, d, ok)
		}
	}
	if refused := ms.Refused(); len(refused) > 0 {
		t.Errorf("the provider refused: %v", refused)
	}

	// Through /mcp, with the TypeScript SDK's client.
	cmd := exec.Command("node", "../../node/tsplugin.mjs", p.base, "notes-helper__read_note", `{"name":"hello"}`)
	cmd.Env = append(os.Environ(), "ZERO_TOKEN="+wsToken(t, p, browser, headers))
	out, err := cmd.Output()
	var ts struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
		Result struct {
			Content []struct{ Type, Text string } `json:"content"`
			IsError bool                          `json:"isError"`
		} `json:"result"`
	}
	if jerr := json.Unmarshal(out, &ts); err != nil || jerr != nil || !ts.OK {
		t.Fatalf("TypeScript client: %v %v: %s", err, jerr, out)
	}
	listed := map[string]int{}
	for i, tl := range ts.Tools {
		listed[tl.Name] = i
	}
	for _, tl := range manifest.Zero.Tools {
		i, ok := listed["notes-helper__"+tl.Name]
		if !ok {
			t.Errorf("tools/list lacks notes-helper__%s: %+v", tl.Name, ts.Tools)
			continue
		}
		schema, err := tl.InputSchema()
		if err != nil {
			t.Fatal(err)
		}
		var want, got any
		json.Unmarshal(schema, &want)
		json.Unmarshal(ts.Tools[i].InputSchema, &got)
		if ts.Tools[i].Description != tl.Description || !cmp.Equal(want, got) {
			t.Errorf("tools/list's %s: %q %s, want the manifest's %q %s", tl.Name, ts.Tools[i].Description, ts.Tools[i].InputSchema, tl.Description, schema)
		}
	}
	if len(ts.Result.Content) != 1 || ts.Result.IsError || ts.Result.Content[0].Type != "text" || ts.Result.Content[0].Text != note {
		t.Errorf("read_note through /mcp: %+v", ts.Result)
	}

	stopServe(t, p)
	target := "plugin:" + id
	counts := map[string]int{}
	for _, r := range auditRecords(t, p.home) {
		if r.Target == target && (r.Action != "tool.call" || r.Detail["tool"] == "read_note" && r.Detail["outcome"] == "ok") {
			counts[r.Action]++
		}
	}
	if diff := cmp.Diff(map[string]int{"plugin.install": 1, "plugin.enable": 1, "tool.call": 2}, counts); diff != "" {
		t.Errorf("audit records with target %s (-want +got):\n%s", target, diff)
	}
}

// threadToolResult waits for thread id's run to ask for an approval,
// approves the call once, waits for the run to complete and returns the
// tool message the model read.
func threadToolResult(t *testing.T, call func(method, path string, body, out any), id int64) string {
	t.Helper()
	var got struct {
		Events []struct {
			Kind string         `json:"kind"`
			Body map[string]any `json:"body"`
		} `json:"events"`
		Run *struct {
			Status string `json:"status"`
		} `json:"run"`
	}
	wait := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			call(http.MethodGet, "/api/threads/"+strconv.FormatInt(id, 10), nil, &got)
			if done() {
				return
			}
		}
		t.Fatalf("never: %s: %+v", what, got)
	}
	var approval float64
	ended := func() bool {
		return got.Run != nil && got.Run.Status != threads.Running && got.Run.Status != threads.WaitingApproval
	}
	wait("a pending approval", func() bool {
		for _, e := range got.Events {
			if e.Kind == "approval" && e.Body["status"] == "pending" {
				approval, _ = e.Body["approval"].(float64)
				return true
			}
		}
		return ended()
	})
	if approval == 0 {
		t.Fatalf("the run ended %q without asking for an approval: %+v", got.Run.Status, got.Events)
	}
	call(http.MethodPost, "/api/approvals/"+strconv.FormatInt(int64(approval), 10), map[string]string{"answer": "once"}, nil)
	wait("the run's end", ended)
	if got.Run.Status != threads.Completed {
		t.Fatalf("the run ended %q: %+v", got.Run.Status, got.Events)
	}
	for _, e := range got.Events {
		if e.Kind == "message" && e.Body["role"] == "tool" {
			s, _ := e.Body["content"].(string)
			return s
		}
	}
	t.Fatalf("no tool message: %+v", got.Events)
	return ""
}
