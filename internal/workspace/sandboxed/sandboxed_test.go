package sandboxed

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/plugin/host"
	"github.com/zero-dev/zero/internal/sandbox"
	"github.com/zero-dev/zero/internal/sandbox/dockertest"
	"github.com/zero-dev/zero/internal/sandbox/guest/guesttest"
	"github.com/zero-dev/zero/internal/testnet"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dockertest.Stop()
	os.Exit(code)
}

// backends are the backends the tests run on: each gives its runner, or
// skips where it is unusable (fails where its environment variable says it
// is required).
var backends = []struct {
	name   sandbox.Backend
	runner func(t testing.TB) sandbox.Runner
}{
	{sandbox.Bubblewrap, hostRunner(sandbox.BubblewrapRunner{}, "ZERO_REQUIRE_BWRAP")},
	{sandbox.Runsc, hostRunner(sandbox.RunscRunner{}, "ZERO_REQUIRE_RUNSC")},
	{sandbox.Docker, dockerRunner("")},
	{sandbox.DockerRunsc, dockerRunner("runsc")},
}

func hostRunner(r sandbox.Runner, env string) func(t testing.TB) sandbox.Runner {
	return func(t testing.TB) sandbox.Runner {
		requireRunner(t, r, env)
		return r
	}
}

// dockerRunner is a runner of the test run's daemon whose image is made of
// node and the test helper, as Zero's is of node and itself.
func dockerRunner(runtime string) func(t testing.TB) sandbox.Runner {
	return func(t testing.TB) sandbox.Runner {
		d := dockertest.Require(t)
		node := requireNode(t)
		r := sandbox.DockerRunner{Host: d.Host, Runtime: runtime, Programs: []string{node, guesttest.Helper(t)},
			ProbeArgv: []string{node, "--version"}}
		requireRunner(t, r, "ZERO_REQUIRE_DOCKER")
		return r
	}
}

// eachBackend runs f as a subtest on each usable backend.
func eachBackend(t *testing.T, f func(t *testing.T, r sandbox.Runner)) {
	for _, b := range backends {
		t.Run(string(b.name), func(t *testing.T) {
			f(t, b.runner(t))
		})
	}
}

func requireRunner(t testing.TB, r sandbox.Runner, env string) {
	t.Helper()
	if err := r.Probe(context.Background()); err != nil {
		if os.Getenv(env) != "" {
			t.Fatalf("%s is set but %s is unusable: %v", env, r.Backend(), err)
		}
		t.Skipf("%s unusable here: %v", r.Backend(), err)
	}
}

// requireNode returns node's path, or skips (fails under ZERO_REQUIRE_NODE).
func requireNode(t testing.TB) string {
	t.Helper()
	node, err := host.FindNode(context.Background(), "node")
	if err != nil {
		if os.Getenv("ZERO_REQUIRE_NODE") != "" {
			t.Fatalf("ZERO_REQUIRE_NODE is set but node is unusable: %v", err)
		}
		t.Skipf("node unusable here: %v", err)
	}
	return node.Path
}

// recorder keeps what Record heard.
type recorder struct {
	mu    sync.Mutex
	calls []Call
}

func (r *recorder) record(_ context.Context, c Call) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	return nil
}

func (r *recorder) last(t *testing.T) Call {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) == 0 {
		t.Fatal("Record heard no call")
	}
	return r.calls[len(r.calls)-1]
}

// newBox is a toolbox on r over a fresh workspace, with the test helper.
func newBox(t testing.TB, r sandbox.Runner, copyMode bool, node string) (*Toolbox, *recorder) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A Docker guest is user 65534 of the host: the workspace is open to it,
	// as a thread's is (the folder that holds it is not).
	if err := os.Chmod(ws, 0o777); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	return New(Options{Runner: r, Workspace: ws, Copy: copyMode, Helper: guesttest.Helper(t), Node: node,
		Limits: sandbox.Limits{Wall: 60 * time.Second}, Thread: 7, Record: rec.record}), rec
}

// tool is the tool named name as b offers it now.
func tool(t testing.TB, b *Toolbox, name string) threads.Tool {
	t.Helper()
	tools, err := b.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range tools {
		if x.Name == name {
			return x
		}
	}
	t.Fatalf("%s is not offered", name)
	return threads.Tool{}
}

// call calls the tool named name with args, and checks that the result and
// Record name the backend.
func call(t *testing.T, b *Toolbox, rec *recorder, name string, args any) threads.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Call(context.Background(), tool(t, b, name), raw, "owner")
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	backend := b.o.Runner.Backend()
	if res.Backend != string(backend) {
		t.Errorf("%s: the result names backend %q, want %q", name, res.Backend, backend)
	}
	if c := rec.last(t); c.Tool != name || c.Backend != backend {
		t.Errorf("%s: Record heard %+v", name, c)
	}
	return res
}

// TestBuiltins: write, then read, list and search the file written, and
// run programs: a bare name, and a static program in the workspace.
func TestBuiltins(t *testing.T) {
	eachBackend(t, func(t *testing.T, r sandbox.Runner) {
		b, rec := newBox(t, r, false, "")
		names := []string{}
		tools, _ := b.Tools(context.Background())
		for _, x := range tools {
			names = append(names, x.Name)
			if !x.Ref.Sandbox || x.Ref.Fingerprint != string(r.Backend()) || !strings.HasPrefix(x.Ref.Hash, "sha256:") {
				t.Errorf("%s: ref %+v", x.Name, x.Ref)
			}
		}
		if want := []string{"run", "read_file", "write_file", "list_files", "search_files"}; !slices.Equal(names, want) {
			t.Errorf("tools %q, want %q", names, want)
		}
		if res := call(t, b, rec, "write_file", map[string]string{"path": "notes/a.txt", "content": "one\nneedle two\n"}); res.IsError {
			t.Fatalf("write_file: %s", res.Text)
		}
		if data, err := os.ReadFile(filepath.Join(b.o.Workspace, "notes", "a.txt")); string(data) != "one\nneedle two\n" {
			t.Errorf("the file written (bound workspace): %q %v", data, err)
		}
		var file struct{ Content string }
		res := call(t, b, rec, "read_file", map[string]string{"path": "/work/notes/a.txt"})
		if json.Unmarshal([]byte(res.Text), &file); res.IsError || file.Content != "one\nneedle two\n" {
			t.Errorf("read_file: %s", res.Text)
		}
		res = call(t, b, rec, "list_files", map[string]string{"path": "notes"})
		if res.IsError || !strings.Contains(res.Text, `{"name":"a.txt","kind":"file","size":15}`) {
			t.Errorf("list_files: %s", res.Text)
		}
		res = call(t, b, rec, "search_files", map[string]string{"text": "needle"})
		if res.IsError || !strings.Contains(res.Text, `{"path":"/work/notes/a.txt","line":2,"text":"needle two"}`) {
			t.Errorf("search_files: %s", res.Text)
		}
		if res := call(t, b, rec, "read_file", map[string]string{"path": "/etc/passwd"}); !res.IsError || rec.last(t).Outcome != threads.OutcomeError {
			t.Errorf("read_file /etc/passwd: %s (outcome %s)", res.Text, rec.last(t).Outcome)
		}

		// A Docker guest's root is its image: node and the helper, not the
		// host's /usr.
		docker := r.Backend() == sandbox.Docker || r.Backend() == sandbox.DockerRunsc
		if res := call(t, b, rec, "run", map[string]any{"argv": []string{"true"}}); docker == (!res.IsError && rec.last(t).Outcome == threads.OutcomeOK) {
			t.Errorf("run true (docker %v): %s", docker, res.Text)
		}
		if res := call(t, b, rec, "run", map[string]any{"argv": []string{"node", "-e", "process.exit(3)"}}); !res.IsError || !strings.Contains(res.Text, `"exit_code":3`) {
			t.Errorf("run node, exit 3: %s", res.Text)
		}
		// A static program of the workspace's, with stdin.
		helper, err := os.ReadFile(guesttest.Helper(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(b.o.Workspace, "helper"), helper, 0o755); err != nil {
			t.Fatal(err)
		}
		res = call(t, b, rec, "run", map[string]any{"argv": []string{"/work/helper", "write", "piped.txt"}, "stdin": "from stdin"})
		var out RunResult
		if json.Unmarshal([]byte(res.Text), &out); res.IsError || out.ExitCode != 0 || !strings.Contains(out.Stdout, `"path":"/work/piped.txt"`) {
			t.Errorf("run /work/helper: %s", res.Text)
		}
		if data, _ := os.ReadFile(filepath.Join(b.o.Workspace, "piped.txt")); string(data) != "from stdin" {
			t.Errorf("run with stdin wrote %q", data)
		}
		if res := call(t, b, rec, "run", map[string]any{"argv": []string{"../x"}}); !res.IsError {
			t.Errorf("run ../x: %s", res.Text)
		}
	})
}

// TestCopyMode: with Copy, what a built-in writes is thrown away with its
// guest; with a bind, it stays.
func TestCopyMode(t *testing.T) {
	eachBackend(t, func(t *testing.T, r sandbox.Runner) {
		for _, copyMode := range []bool{true, false} {
			b, rec := newBox(t, r, copyMode, "")
			if res := call(t, b, rec, "write_file", map[string]string{"path": "x.txt", "content": "x"}); res.IsError {
				t.Fatalf("copy %v: write_file: %s", copyMode, res.Text)
			}
			_, err := os.Stat(filepath.Join(b.o.Workspace, "x.txt"))
			if kept := err == nil; kept == copyMode {
				t.Errorf("copy %v: the file written is kept: %v", copyMode, kept)
			}
			res := call(t, b, rec, "read_file", map[string]string{"path": "x.txt"})
			if res.IsError == !copyMode {
				t.Errorf("copy %v: a later read_file: %s", copyMode, res.Text)
			}
		}
	})
}

// TestRefusals: a tool not offered, or offered with another hash or
// backend, is refused before anything runs, and Record hears it.
func TestRefusals(t *testing.T) {
	b, rec := newBox(t, sandbox.BubblewrapRunner{}, false, "")
	read := tool(t, b, "read_file")
	for _, bad := range []threads.Tool{
		{Name: "fetch__fetch", Ref: threads.ToolRef{ServerID: 1, Tool: "fetch"}},
		{Name: "shell__run", Ref: threads.ToolRef{Plugin: true, ServerID: 1, Tool: "run"}},
		{Name: "read_file", Ref: threads.ToolRef{Sandbox: true, Tool: "read_file", Hash: "sha256:00", Fingerprint: read.Ref.Fingerprint}},
		{Name: "read_file", Ref: threads.ToolRef{Sandbox: true, Tool: "read_file", Hash: read.Ref.Hash, Fingerprint: "runsc"}},
	} {
		res, err := b.Call(context.Background(), bad, json.RawMessage(`{"path":"x"}`), "owner")
		if err == nil || res.Backend != "bubblewrap" || rec.last(t).Outcome != threads.OutcomeRefused {
			t.Errorf("%s %+v: %v, %+v, record %+v", bad.Name, bad.Ref, err, res, rec.last(t))
		}
	}
}

// pluginManifest is a model-authored plugin's manifest asking for all it
// could: network, secrets, processes, files. None of it is given.
const pluginManifest = `{
  "name": "probe",
  "version": "1.0.0",
  "extensions": {
    "dev.zero.plugin": {
      "entry": "plugin.js",
      "capabilities": {"fs.write": ["."], "network.hosts": ["127.0.0.1:1"], "process": true, "secrets": ["PROBE_TOKEN"]},
      "tools": [
        {"name": "touch", "description": "Write /work/marker, saying whether it was there.", "parameters": {"type": "object", "properties": {}}},
        {"name": "dial", "description": "Connect to 127.0.0.1:PORT.", "parameters": {"type": "object", "properties": {"port": {"type": "integer"}}}, "required": ["port"]},
        {"name": "env", "description": "What the plugin sees of secrets.", "parameters": {"type": "object", "properties": {}}, "capabilities": {"secrets": ["PROBE_TOKEN"]}}
      ]
    }
  }
}`

const pluginJS = `'use strict';
const fs = require('node:fs');
const net = require('node:net');
exports.touch = async () => {
  const was = fs.existsSync('/work/marker');
  fs.writeFileSync('/work/marker', 'written');
  return was ? 'present' : 'absent';
};
exports.dial = (args) => new Promise((resolve) => {
  const s = net.connect({ host: '127.0.0.1', port: args.port });
  s.setTimeout(5000, () => { s.destroy(); resolve('timeout'); });
  s.on('connect', () => { s.destroy(); resolve('connected'); });
  s.on('error', (err) => resolve('refused: ' + err.code));
});
exports.env = async (args, ctx) => JSON.stringify({ env: process.env, secrets: ctx.secrets });
`

// writePlugin writes a model-authored plugin under plugins/name.
func writePlugin(t testing.TB, ws, name, manifest, code string) {
	t.Helper()
	dir := filepath.Join(ws, PluginsDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.js"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestModelAuthoredPlugin: a plugin the model wrote is offered as
// NAME__TOOL; each call is a fresh guest on a scratch copy (what one call
// writes, the next does not see, nor the workspace); it reaches no
// loopback server and sees no secret, though its manifest asks for both;
// the result and Record name the backend, Record with ModelAuthored.
func TestModelAuthoredPlugin(t *testing.T) {
	node := requireNode(t)
	t.Setenv("PROBE_TOKEN", "canary-env-81b3")
	eachBackend(t, func(t *testing.T, r sandbox.Runner) {
		b, rec := newBox(t, r, false, node)
		writePlugin(t, b.o.Workspace, "probe", pluginManifest, pluginJS)
		writePlugin(t, b.o.Workspace, "broken", `{"name": "broken", "extensions": {"dev.zero.plugin": {"entry": "../x.js", "tools": []}}}`, "")
		tools, err := b.Tools(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, x := range tools {
			names = append(names, x.Name)
		}
		if want := []string{"run", "read_file", "write_file", "list_files", "search_files", "probe__touch", "probe__dial", "probe__env"}; !slices.Equal(names, want) {
			t.Errorf("tools %q, want %q", names, want)
		}
		if _, refused := b.Authored(); len(refused) != 1 || refused[0].Plugin != "broken" || !strings.Contains(refused[0].Reason, "invalid plugin.json") {
			t.Errorf("refused: %+v, want broken's reason", refused)
		}

		for i := range 2 {
			if res := call(t, b, rec, "probe__touch", map[string]any{}); res.IsError || res.Text != "absent" {
				t.Errorf("call %d of touch: %q (error %v), want absent", i+1, res.Text, res.IsError)
			}
			want := Call{Tool: "probe__touch", Plugin: "probe", ModelAuthored: true, Backend: r.Backend(), Outcome: threads.OutcomeOK, Caller: "owner"}
			if c := rec.last(t); c != want {
				t.Errorf("Record heard %+v, want %+v", c, want)
			}
		}
		if _, err := os.Stat(filepath.Join(b.o.Workspace, "marker")); err == nil {
			t.Error("the plugin's write reached the workspace")
		}

		ln := testnet.Listen(t)
		res := call(t, b, rec, "probe__dial", map[string]any{"port": json.Number(ln.Port)})
		if res.Text == "connected" || !strings.HasPrefix(res.Text, "refused") && res.Text != "timeout" {
			t.Errorf("dial 127.0.0.1:%s: %q", ln.Port, res.Text)
		}
		if n := ln.WaitAccepted(1, time.Second); n != 0 {
			t.Errorf("the loopback server accepted %d connections from the plugin", n)
		}

		res = call(t, b, rec, "probe__env", map[string]any{})
		if res.IsError || strings.Contains(res.Text, "canary-env-81b3") || strings.Contains(res.Text, "PROBE_TOKEN") || !strings.Contains(res.Text, `"secrets":{}`) {
			t.Errorf("env: %s", res.Text)
		}

		// Arguments that do not fit are not sent.
		if res := call(t, b, rec, "probe__dial", map[string]any{"port": "x"}); !res.IsError || rec.last(t).Outcome != threads.OutcomeError {
			t.Errorf("dial with a string port: %q", res.Text)
		}
		// A plugin changed since it was offered is refused: its hash.
		touch := tool(t, b, "probe__touch")
		writePlugin(t, b.o.Workspace, "probe", pluginManifest, pluginJS+"// changed\n")
		if _, err := b.Call(context.Background(), touch, json.RawMessage(`{}`), "owner"); err == nil || rec.last(t).Outcome != threads.OutcomeRefused {
			t.Errorf("a call of a changed plugin: %v, record %+v", err, rec.last(t))
		}
	})
}

// TestNoNodeNoPlugins: without node, no model-authored plugin is offered.
func TestNoNodeNoPlugins(t *testing.T) {
	b, _ := newBox(t, sandbox.BubblewrapRunner{}, false, "")
	writePlugin(t, b.o.Workspace, "probe", pluginManifest, pluginJS)
	tools, err := b.Tools(context.Background())
	if err != nil || len(tools) != len(builtins) {
		t.Errorf("Tools without node: %d tools, %v", len(tools), err)
	}
}
