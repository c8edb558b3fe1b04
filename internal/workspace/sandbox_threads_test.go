package workspace

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/plugin/host/hosttest"
	"github.com/zero-dev/zero/internal/sandbox"
	"github.com/zero-dev/zero/internal/sandbox/guest/guesttest"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

var (
	payloadOnce sync.Once
	payloadPath string
	payloadErr  error
	payloadOut  []byte
)

// payload builds, once, the sandbox tests' static probe program
// (internal/sandbox/testdata/runscpayload), and returns its path.
func payload(t testing.TB) string {
	t.Helper()
	payloadOnce.Do(func() {
		dir, err := os.MkdirTemp("", "zero-payload-")
		if err != nil {
			payloadErr = err
			return
		}
		payloadPath = filepath.Join(dir, "payload")
		cmd := exec.Command("go", "build", "-o", payloadPath, "github.com/zero-dev/zero/internal/sandbox/testdata/runscpayload")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		payloadOut, payloadErr = cmd.CombinedOutput()
	})
	if payloadErr != nil {
		t.Fatalf("build the payload: %v\n%s", payloadErr, payloadOut)
	}
	return payloadPath
}

// loopback is a TCP server on 127.0.0.1 that counts the connections it
// accepts.
func loopback(t testing.TB) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().String(), &n
}

// sandboxedThread starts a workspace whose sandboxed threads run on r,
// with small guest limits and the owner's default "allow" for them, and
// makes one (its work folder bound), with an MCP server and an installed
// plugin approved and enabled, as host threads are offered them.
func sandboxedThread(t *testing.T, r sandbox.Runner) (*threadFixture, threads.Thread) {
	t.Helper()
	hosttest.Require(t)
	ts := start(t, Options{SandboxRunners: []sandbox.Runner{r}, SandboxHelper: guesttest.Helper(t), GitHubURL: exampleRepo(t)})
	ts.w.sandboxLimits = sandbox.Limits{MemoryBytes: 64 << 20, Pids: 16, Wall: 30 * time.Second}
	f := threadFixtureOn(ts, false)
	ts.installExample()
	ts.browser.must("PUT", "/api/sandbox/settings", map[string]string{"approval": "allow"}, 200, nil)
	var th threads.Thread
	ts.browser.must("POST", "/api/threads", map[string]any{"title": "boxed", "provider": "local", "runtime": "sandbox"}, 201, &th)
	if th.Backend != string(r.Backend()) {
		t.Fatalf("thread: %+v", th)
	}
	f.thread = itoa(th.ID)
	return f, th
}

// toolResults returns a thread's tool results by call id, and its call
// events.
func toolResults(g threadGot) (map[string]string, []threads.CallEvent) {
	results := map[string]string{}
	var calls []threads.CallEvent
	for _, e := range g.Events {
		switch e.Kind {
		case threads.KindMessage:
			var m model.Message
			if json.Unmarshal(e.Body, &m) == nil && m.Role == model.RoleTool {
				results[m.ToolCallID] = m.Content
			}
		case threads.KindCall:
			var c threads.CallEvent
			json.Unmarshal(e.Body, &c)
			calls = append(calls, c)
		}
	}
	return results, calls
}

var builtins = []string{"run", "read_file", "write_file", "list_files", "search_files"}

// TestSandboxedThreadRuns: a sandboxed thread's run, with the scripted
// model, on each backend available here: the model is offered the
// built-ins alone, though an MCP server and a plugin are approved and
// enabled for host threads, and a forged call of either's tool is refused
// before anything runs; the program it runs cannot reach a loopback
// server the test started, cannot read a canary in $ZERO_HOME, sees no
// secret of the workspace's environment, and is stopped at its memory and
// process limits; each call's event and audit record name the backend.
func TestSandboxedThreadRuns(t *testing.T) {
	for _, b := range []sandbox.Backend{sandbox.Bubblewrap, sandbox.Runsc, sandbox.Docker, sandbox.DockerRunsc} {
		t.Run(string(b), func(t *testing.T) {
			r := usableRunners(t, b)[0]
			f, th := sandboxedThread(t, r)
			home := f.ts.home
			if err := os.WriteFile(filepath.Join(home, "canary.txt"), []byte("canary-file-5d1e"), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("ZERO_SANDBOX_SECRET", "canary-env-7f20")
			addr, dialled := loopback(t)
			prog, err := os.ReadFile(payload(t))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, "workspace", "threads", f.thread, threads.WorkFolder, "payload"), prog, 0o755); err != nil {
				t.Fatal(err)
			}
			run := func(id string, args ...string) model.ToolCall {
				argv, _ := json.Marshal(map[string]any{"argv": append([]string{"/work/payload"}, args...)})
				return modeltest.Call(id, "run", string(argv))
			}
			f.ms.Push(modeltest.Reply{Calls: []model.ToolCall{
				run("dial", "dial", addr),
				run("read", "read", filepath.Join(home, "canary.txt")),
				run("env", "env"),
				run("alloc", "alloc", "256"),
				run("spawn", "spawn", "64"),
				modeltest.Call("mcp", "drifter__echo", `{"x": 1}`),
				modeltest.Call("plugin", "notes-helper__check_status", `{"path": "/"}`),
			}}, modeltest.Reply{Text: "done"})
			f.run("probe the guest")
			g := f.ended()
			if g.Run.Status != threads.Completed {
				t.Fatalf("run: %+v", g.Run)
			}
			var offered []string
			for _, tool := range f.ms.Requests()[0].Tools {
				offered = append(offered, tool.Function.Name)
			}
			if !slices.Equal(offered, builtins) {
				t.Errorf("offered %q, want the built-ins alone", offered)
			}
			results, calls := toolResults(g)
			for _, c := range []struct{ id, bad string }{
				{"dial", "connected"}, {"read", "canary-file-5d1e"}, {"env", "canary-env-7f20"}, {"env", "ZERO_SANDBOX_SECRET"},
			} {
				if res := results[c.id]; res == "" || strings.Contains(res, c.bad) {
					t.Errorf("%s: %s", c.id, res)
				}
			}
			if n := dialled.Load(); n != 0 {
				t.Errorf("the loopback server had %d connections", n)
			}
			if res := results["alloc"]; !strings.Contains(res, `"memory_killed":true`) {
				t.Errorf("alloc 256 MiB under 64: %s", res)
			}
			spawned := results["spawn"]
			if i := strings.Index(spawned, "started "); i < 0 {
				t.Errorf("spawn: %s", spawned)
			} else if n, _ := strconv.Atoi(strings.Fields(spawned[i+len("started "):])[0]); n >= 16 {
				t.Errorf("spawn 64 under a limit of 16 processes started %d: %s", n, spawned)
			}
			for _, name := range []string{"drifter__echo", "notes-helper__check_status"} {
				id := map[string]string{"drifter__echo": "mcp", "notes-helper__check_status": "plugin"}[name]
				if res := results[id]; !strings.Contains(res, `there is no tool "`+name+`" offered`) {
					t.Errorf("a forged call of %s: %s", name, res)
				}
			}
			if len(calls) != 5 {
				t.Fatalf("call events: %+v", calls)
			}
			for _, c := range calls {
				want := threads.OutcomeOK
				switch c.CallID {
				case "alloc":
					want = "memory_killed"
				case "dial", "read":
					want = threads.OutcomeError
				}
				if c.Backend != string(b) || c.Name != "run" || c.Outcome != want {
					t.Errorf("call event %+v, want backend %s, outcome %s", c, b, want)
				}
			}
			recs := f.ts.records("sandbox.call")
			if len(recs) != 5 {
				t.Fatalf("sandbox.call records: %+v", recs)
			}
			for _, rec := range recs {
				if rec.Target != threadTarget(th.ID) || rec.Detail["backend"] != string(b) || rec.Detail["tool"] != "run" {
					t.Errorf("record %+v", rec)
				}
			}
		})
	}
}

// authoredManifest and authoredJS are a plugin the scripted model writes:
// its manifest asks for network and a secret, which it does not get.
const authoredManifest = `{"name": "notes", "version": "1.0.0", "extensions": {"dev.zero.plugin": {"entry": "plugin.js",
  "capabilities": {"network.hosts": ["127.0.0.1:1"], "secrets": ["NOTES_TOKEN"]},
  "tools": [{"name": "probe", "description": "Marks the workspace, dials a port, tells its environment.",
    "parameters": {"type": "object", "properties": {"addr": {"type": "string"}}}, "required": ["addr"]}]}}}`

const authoredJS = `'use strict';
const fs = require('node:fs');
const net = require('node:net');
exports.probe = (args, ctx) => new Promise((resolve) => {
  const marked = fs.existsSync('/work/marker');
  fs.writeFileSync('/work/marker', 'x');
  const [host, port] = args.addr.split(':');
  const s = net.connect({ host, port: Number(port) });
  const done = (dial) => { s.destroy(); resolve(JSON.stringify({ marked, dial, env: process.env, secrets: ctx.secrets })); };
  s.setTimeout(3000, () => done('timeout'));
  s.on('connect', () => done('connected'));
  s.on('error', (err) => done('error ' + err.code));
});
`

// TestModelAuthoredPluginInThread: the scripted model writes a plugin
// with write_file and calls its tool twice: each call is a fresh guest
// (the file the first wrote is absent in the second), reaches no loopback
// server and sees no secret, though its manifest asks for both; each is
// audited as plugin.model_authored.call with the backend.
func TestModelAuthoredPluginInThread(t *testing.T) {
	for _, b := range []sandbox.Backend{sandbox.Bubblewrap, sandbox.Runsc, sandbox.Docker, sandbox.DockerRunsc} {
		t.Run(string(b), func(t *testing.T) { modelAuthoredPluginInThread(t, b) })
	}
}

func modelAuthoredPluginInThread(t *testing.T, b sandbox.Backend) {
	r := usableRunners(t, b)[0]
	f, th := sandboxedThread(t, r)
	t.Setenv("NOTES_TOKEN", "canary-env-7f20")
	addr, dialled := loopback(t)
	write := func(id, path, content string) model.ToolCall {
		args, _ := json.Marshal(map[string]string{"path": path, "content": content})
		return modeltest.Call(id, "write_file", string(args))
	}
	probe := `{"addr": "` + addr + `"}`
	f.ms.Push(modeltest.Reply{Calls: []model.ToolCall{write("w1", "plugins/notes/plugin.json", authoredManifest), write("w2", "plugins/notes/plugin.js", authoredJS)}},
		modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("p1", "notes__probe", probe)}},
		modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("p2", "notes__probe", probe)}},
		modeltest.Reply{Text: "done"})
	f.run("write a plugin and call it")
	g := f.ended()
	if g.Run.Status != threads.Completed {
		t.Fatalf("run: %+v", g.Run)
	}
	reqs := f.ms.Requests()
	var offered []string
	for _, tool := range reqs[1].Tools {
		offered = append(offered, tool.Function.Name)
	}
	if !slices.Equal(offered, append(slices.Clone(builtins), "notes__probe")) {
		t.Errorf("offered after the plugin was written: %q", offered)
	}
	results, calls := toolResults(g)
	for _, id := range []string{"p1", "p2"} {
		res := results[id]
		if !strings.Contains(res, `"marked":false`) || strings.Contains(res, "connected") || strings.Contains(res, "canary-env-7f20") ||
			!strings.Contains(res, `"secrets":{}`) {
			t.Errorf("%s: %s", id, res)
		}
	}
	if n := dialled.Load(); n != 0 {
		t.Errorf("the loopback server had %d connections", n)
	}
	if _, err := os.Stat(filepath.Join(th.Dir, threads.WorkFolder, "marker")); err == nil {
		t.Error("a plugin's write reached the work folder")
	}
	if len(calls) != 4 || calls[2].Name != "notes__probe" || calls[2].Backend != string(b) || calls[2].Outcome != threads.OutcomeOK {
		t.Errorf("call events: %+v", calls)
	}
	// Never offered outside its thread: not to host threads, not on /mcp,
	// though the installed plugin and the MCP server are.
	hostTools, err := f.ts.w.endpoint.Threads().Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := f.ts.mcpClient(f.ts.bearer().token)
	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var elsewhere []string
	for _, tool := range hostTools {
		elsewhere = append(elsewhere, "thread:"+tool.Name)
	}
	for _, tool := range listed.Tools {
		elsewhere = append(elsewhere, "mcp:"+tool.Name)
	}
	if len(hostTools) == 0 || len(listed.Tools) == 0 || slices.Contains(elsewhere, "thread:notes__probe") || slices.Contains(elsewhere, "mcp:notes__probe") {
		t.Errorf("offered outside the sandboxed thread: %q", elsewhere)
	}
	recs := f.ts.records("plugin.model_authored.call")
	if len(recs) != 2 || recs[0].Detail["backend"] != string(b) || !strings.HasPrefix(recs[0].Actor, threadTarget(th.ID)+":") || recs[0].Detail["plugin"] != "notes" || recs[0].Detail["tool"] != "notes__probe" ||
		recs[0].Detail["outcome"] != "ok" || recs[0].Target != threadTarget(th.ID) {
		t.Errorf("audit: %+v", recs)
	}
}
