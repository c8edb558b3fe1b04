package workspace

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/pin"
	"github.com/zero-dev/zero/internal/workspace/secrets"
	"github.com/zero-dev/zero/internal/workspace/servers"
)

// evilProgram writes an executable script named name in dir that leaves
// marker behind when it runs.
func evilProgram(t *testing.T, dir, name, marker string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func warningCodes(ws []servers.Warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Code)
	}
	return out
}

// TestDrafterCannotChooseTheProgram is the attack of issue 11, end to end:
// an agent with a bearer token drafts "git mcp" and tries to make its own
// git run, through PATH or any other variable whose value steers which code
// runs, each hidden in a write-only secret. Every such draft is refused
// before anything is saved; the draft it can make shows the owner the
// absolute program that would run and flags the value the agent set; and
// after the owner approves and tests it, the agent's program has never run.
func TestDrafterCannotChooseTheProgram(t *testing.T) {
	ts := start(t, Options{})
	agent := ts.bearer()
	evilDir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "the-agents-program-ran")
	evilProgram(t, evilDir, "git", marker)
	os.WriteFile(filepath.Join(evilDir, ".gitconfig"), []byte("[core]\n\tpager = touch "+marker+"\n"), 0o600)

	for _, name := range []string{"PATH", "HOME", "XDG_CONFIG_HOME", "GIT_EXEC_PATH", "GIT_SSH_COMMAND", "GIT_CONFIG_COUNT",
		"GIT_CONFIG_KEY_0", "PYTHONPATH", "NODE_PATH", "PERL5LIB", "RUBYLIB", "GEM_PATH", "GCONV_PATH", "npm_config_script_shell"} {
		draft := servers.Config{Name: "git", Kind: servers.KindStdio, Command: "git", Args: []string{"mcp"}, Env: []string{name}}
		st, data := agent.do("POST", "/api/servers", map[string]any{"config": draft,
			"secrets": map[string]any{"env": map[string]string{name: evilDir}}})
		if st != 400 || errorCode(data) != "invalid_config" || !strings.Contains(string(data), name) || strings.Contains(string(data), evilDir) {
			t.Errorf("a draft hiding %s in a secret: %d %s", name, st, data)
		}
		if strings.Contains(string(data), "env environment") {
			t.Errorf("doubled wording in %s", data)
		}
	}
	var list []servers.Server
	ts.browser.must("GET", "/api/servers", nil, 200, &list)
	if len(list) != 0 {
		t.Fatalf("a refused draft was saved: %+v", list)
	}

	// The draft the agent can make: its secret is flagged as the agent's,
	// and the owner sees the program's absolute path.
	draft := servers.Config{Name: "git", Kind: servers.KindStdio, Command: "git", Args: []string{"mcp"}, Env: []string{"API_KEY"}}
	var c created
	agent.must("POST", "/api/servers", map[string]any{"config": draft, "secrets": map[string]any{"env": map[string]string{"API_KEY": "the-agents-value"}}}, 201, &c)
	found, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	gitPath := must(filepath.EvalSymlinks(found))
	s := c.Server
	if s.Config.Program != gitPath || len(s.Secrets) != 1 || !strings.HasPrefix(s.Secrets[0].SetBy, "token:") {
		t.Fatalf("the draft: program %q (want %q), secrets %+v", s.Config.Program, gitPath, s.Secrets)
	}
	page := ts.browser.mustPage("GET", "/servers/"+itoa(s.ID), nil, 200)
	for _, want := range []string{`id="program">` + gitPath + `<`, "(secret-set-by-other)", "set by " + s.Secrets[0].SetBy} {
		if !strings.Contains(page, want) {
			t.Errorf("the owner's review lacks %q", want)
		}
	}
	if strings.Contains(page, "the-agents-value") {
		t.Error("the review shows the secret's value")
	}
	ts.browser.must("POST", "/api/servers/"+itoa(s.ID)+"/approve", map[string]any{"fingerprint": s.Fingerprint}, 200, &s)
	ts.browser.must("POST", "/api/servers/"+itoa(s.ID)+"/test", nil, 200, &s)
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the agent's program ran: %v", err)
	}

	// A draft saved before this rule (written here straight into the
	// database) is refused when the owner approves or tests it.
	old := draft
	old.Env = []string{"PATH"}
	data, _ := json.Marshal(old)
	ts.w.db.Exec(`UPDATE servers SET config = ?, approved_fingerprint = '' WHERE id = ?`, string(data), s.ID)
	ts.browser.must("GET", "/api/servers/"+itoa(s.ID), nil, 200, &s)
	for _, route := range []string{"/approve", "/test"} {
		st, body := ts.browser.do("POST", "/api/servers/"+itoa(s.ID)+route, map[string]any{"fingerprint": s.Fingerprint})
		if st != 400 || errorCode(body) != "invalid_config" || !strings.Contains(string(body), "PATH") {
			t.Errorf("%s of a stored draft declaring PATH: %d %s", route, st, body)
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the agent's program ran: %v", err)
	}
}

// TestProgramPinnedByPath: the approval covers the absolute path the
// command resolved to. When something earlier in PATH starts answering to
// the same name, the server is no longer approved: Test and Enable are
// refused and the new program does not run, until the owner approves it,
// which keeps the stored secrets (sealed again) and says what changed.
func TestProgramPinnedByPath(t *testing.T) {
	server := envserver(t) // built before PATH changes, so the build is shared
	first, second := t.TempDir(), t.TempDir()
	t.Setenv("PATH", first+string(os.PathListSeparator)+second+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err := os.Symlink(server, filepath.Join(second, "zero-mcp-tool")); err != nil {
		t.Fatal(err)
	}
	ts := start(t, Options{})
	b := ts.browser
	cfg := servers.Config{Name: "tool", Kind: servers.KindStdio, Command: "zero-mcp-tool", Env: []string{"API_KEY"}}
	var p servers.Preview
	b.must("POST", "/api/servers/preview", map[string]any{"config": cfg}, 200, &p)
	if p.Config.Program != must(filepath.EvalSymlinks(envserver(t))) {
		t.Fatalf("the preview's program is %q, want the link's target %q", p.Config.Program, envserver(t))
	}
	var c created
	b.must("POST", "/api/servers", map[string]any{"config": cfg, "fingerprint": p.Fingerprint,
		"secrets": map[string]any{"env": map[string]string{"API_KEY": "kept-through-the-move"}}}, 201, &c)
	id := itoa(c.Server.ID)
	var s servers.Server
	b.must("POST", "/api/servers/"+id+"/test", nil, 200, &s)
	if s.Status != servers.StatusOK {
		t.Fatalf("the first test: %+v", s)
	}

	marker := filepath.Join(t.TempDir(), "ran")
	moved := evilProgram(t, first, "zero-mcp-tool", marker)
	b.must("GET", "/api/servers/"+id, nil, 200, &s)
	if s.Approved || s.Config.Program != moved || s.PinnedProgram != p.Config.Program {
		t.Fatalf("after the move: approved %v, program %q, pinned %q", s.Approved, s.Config.Program, s.PinnedProgram)
	}
	if st, data := b.do("POST", "/api/servers/"+id+"/test", nil); st != 409 || errorCode(data) != "approval_required" {
		t.Errorf("a test after the move: %d %s", st, data)
	}
	if st, data := b.do("POST", "/api/servers/"+id+"/enable", map[string]any{"fingerprint": s.Fingerprint}); st != 409 {
		t.Errorf("an enable after the move: %d %s", st, data)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the moved program ran without an approval: %v", err)
	}
	page := b.mustPage("GET", "/servers/"+id, nil, 200)
	if !strings.Contains(page, "(program-changed)") || !strings.Contains(page, moved) {
		t.Error("the server's page does not show that the program moved")
	}

	b.must("POST", "/api/servers/"+id+"/approve", map[string]any{"fingerprint": s.Fingerprint}, 200, &s)
	if !s.Approved || s.PinnedProgram != moved || s.Status != servers.StatusUntested {
		t.Fatalf("after approving the move: %+v", s)
	}
	// 200, not 409 secret_unavailable: the secret was sealed again for the
	// new fingerprint and opened for the run.
	b.must("POST", "/api/servers/"+id+"/test", nil, 200, &s)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the approved program did not run: %v", err)
	}
	records, _ := ts.w.audit.ReadAll()
	approve := records[len(records)-2]
	if approve.Action != "server.approve" || approve.Detail["changed"] != "program" || approve.Detail["name"] != "tool" {
		t.Errorf("the approval's record: %+v", approve)
	}
}

// TestRelativeAndWorkspacePrograms: a relative command is flagged, and a
// program inside the thread workspace (where servers and threads write) is
// a danger; the review names the absolute path either way.
func TestRelativeAndWorkspacePrograms(t *testing.T) {
	ts := start(t, Options{})
	tools := filepath.Join(ts.home, threadsDir, "tools")
	os.MkdirAll(tools, 0o700)
	planted := evilProgram(t, tools, "srv", filepath.Join(t.TempDir(), "ran"))
	var p servers.Preview
	cfg := servers.Config{Name: "local", Kind: servers.KindStdio, Command: "./srv", Cwd: "tools"}
	ts.browser.must("POST", "/api/servers/preview", map[string]any{"config": cfg}, 200, &p)
	codes := warningCodes(p.Warnings)
	if p.Config.Program != must(filepath.EvalSymlinks(planted)) || !slices.Contains(codes, "relative-command") || !slices.Contains(codes, "program-in-workspace") {
		t.Errorf("a relative command in the workspace: program %q, warnings %v", p.Config.Program, codes)
	}
	cfg.Command = "./missing"
	p = servers.Preview{}
	ts.browser.must("POST", "/api/servers/preview", map[string]any{"config": cfg}, 200, &p)
	if p.Config.Program != "" || !slices.Contains(warningCodes(p.Warnings), "not-runnable") {
		t.Errorf("a command that resolves to nothing: %q %v", p.Config.Program, warningCodes(p.Warnings))
	}
}

// TestUpgradeFromTheFirstEncoding: a workspace saved before programs were
// pinned keeps its secrets (sealed again under the new fingerprint) and
// its servers wait for a new approval, which then runs them with their
// secrets.
func TestUpgradeFromTheFirstEncoding(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	ts := start(t, Options{Home: home})
	cfg := stdioConfig(t, "old", "API_KEY")
	data, _ := json.Marshal(cfg)
	v1 := pin.FingerprintV1(pin.ServerConfig{Kind: cfg.Kind, Command: cfg.Command, Args: cfg.Args, EnvNames: cfg.Env})
	sealed, err := ts.w.box.Seal(secrets.Slot{ServerID: 7, Kind: "env", Name: "API_KEY", Fingerprint: v1}, "sealed-under-v1")
	if err != nil {
		t.Fatal(err)
	}
	ts.w.db.Exec(`INSERT INTO servers (id, name, config, approved_fingerprint, enabled, encoding, created_at, updated_at) VALUES (7, 'old', ?, ?, 1, 1, 'now', 'now')`, string(data), v1)
	ts.w.db.Exec(`INSERT INTO secrets (server_id, kind, name, sealed, set_by) VALUES (7, 'env', 'API_KEY', ?, 'user:owner')`, sealed)
	ts.w.Close()

	ts = start(t, Options{Home: home})
	var s servers.Server
	ts.browser.must("GET", "/api/servers/7", nil, 200, &s)
	if s.Approved || s.Config.Program != must(filepath.EvalSymlinks(envserver(t))) || len(s.Secrets) != 1 {
		t.Fatalf("after the upgrade: %+v", s)
	}
	if st, data := ts.browser.do("POST", "/api/servers/7/test", nil); st != 409 || errorCode(data) != "approval_required" {
		t.Errorf("a test before the new approval: %d %s", st, data)
	}
	ts.browser.must("POST", "/api/servers/7/approve", map[string]any{"fingerprint": s.Fingerprint}, 200, nil)
	ts.browser.must("POST", "/api/servers/7/test", nil, 200, &s)
	if envOf(t, s)["API_KEY"] != shortHash("sealed-under-v1") {
		t.Error("the secret sealed under the first encoding did not survive the upgrade")
	}
	records, _ := ts.w.audit.ReadAll()
	if !slices.ContainsFunc(records, func(r audit.Record) bool { return r.Action == "server.upgrade" && r.Target == "server:7" }) {
		t.Error("the upgrade left no audit record")
	}
}
