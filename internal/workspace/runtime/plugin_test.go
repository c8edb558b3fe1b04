package runtime

import (
	"context"
	"errors"
	"github.com/zero-dev/zero/internal/benchstat"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/plugin"
	"github.com/zero-dev/zero/internal/plugin/host"
	"github.com/zero-dev/zero/internal/plugin/host/hosttest"
)

// pluginCode counts the calls of its tools, so a test can tell that a
// refused call never reached it.
const pluginCode = `'use strict';
let calls = 0;
exports.twice = async ({ n }) => { calls++; return String(2 * n); };
exports.calls = async () => String(calls);
exports.fetch = async ({ url }, ctx) => { const r = await ctx.fetch(url); return String(r.status); };
exports.hog = async () => { const keep = []; for (;;) keep.push(Buffer.alloc(16 << 20, 1)); };
`

// pluginSpec writes a plugin whose manifest is capabilities c and the
// tools twice, calls, fetch and hog, and returns its Spec, every tool
// approved as declared. It skips the test where plugins cannot run
// (hosttest.Require).
func (f *fixture) pluginSpec(caps string) Spec {
	f.t.Helper()
	node := hosttest.Require(f.t)
	dir := filepath.Join(f.dir, "plugin")
	os.Mkdir(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "plugin.js"), []byte(pluginCode), 0o644); err != nil {
		f.t.Fatal(err)
	}
	obj := func(props string) string { return `{"type": "object", "properties": {` + props + `}}` }
	m, err := plugin.Parse([]byte(`{"name": "counter", "extensions": {"dev.zero.plugin": {"entry": "plugin.js", "capabilities": ` + caps + `,
		"tools": [
		{"name": "twice", "description": "Doubles n.", "parameters": ` + obj(`"n": {"type": "integer", "maximum": 1000}`) + `, "required": ["n"], "capabilities": {}},
		{"name": "calls", "description": "Counts.", "parameters": ` + obj(``) + `, "capabilities": {}},
		{"name": "fetch", "description": "Fetches.", "parameters": ` + obj(`"url": {"type": "string"}`) + `, "capabilities": {}},
		{"name": "hog", "description": "Eats memory.", "parameters": ` + obj(``) + `, "capabilities": {}}]}}}`))
	if err != nil {
		f.t.Fatal(err)
	}
	dir, err = filepath.EvalSymlinks(dir)
	if err != nil {
		f.t.Fatal(err)
	}
	p := &Plugin{ID: 7, Dir: dir, Entry: "plugin.js", Capabilities: m.Zero.Capabilities, Node: node}
	set := map[string]string{}
	for _, t := range m.Zero.Tools {
		rt, err := PluginTool(t)
		if err != nil {
			f.t.Fatal(err)
		}
		p.Tools = append(p.Tools, rt)
		set[rt.Name] = rt.Hash
	}
	return Spec{Name: "counter", Fingerprint: "fp1", Kind: KindPlugin, Program: node.Path, Plugin: p, ToolSet: set}
}

func newPluginFixture(t testing.TB) *fixture {
	t.Helper()
	return newFixture(t, Options{DataDir: t.TempDir()})
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

// TestPluginCall: a plugin's tool runs in its sandbox and answers; its
// tools are its manifest's, offered without starting it; the call is
// audited under plugin:ID.
func TestPluginCall(t *testing.T) {
	f := newPluginFixture(t)
	s := f.pluginSpec(`{}`)
	tools, err := f.rt.Tools(f.ctx, s)
	if err != nil || len(tools) != 4 || tools[0].Name != "calls" || !strings.Contains(string(tools[3].InputSchema), `"required":["n"]`) {
		t.Fatalf("tools: %+v, %v", tools, err)
	}
	res, err := f.rt.Call(f.ctx, s, "twice", []byte(`{"n": 21}`), "test")
	if err != nil || res.IsError || text(t, res) != "42" {
		t.Fatalf("twice: %+v, %v", res, err)
	}
	if recs := f.records("tool.call"); len(recs) != 1 || recs[0].Target != "plugin:7" {
		t.Errorf("audit: %+v", recs)
	}
}

// TestPluginArgumentsChecked: arguments that do not fit the tool's
// parameters as the manifest declares them are refused before the
// plugin's code sees them.
func TestPluginArgumentsChecked(t *testing.T) {
	f := newPluginFixture(t)
	s := f.pluginSpec(`{}`)
	for _, args := range []string{`{"n": "21"}`, `{}`, `{"n": 1001}`, `{"n": 1.5}`} {
		_, err := f.rt.Call(f.ctx, s, "twice", []byte(args), "test")
		if !errors.Is(err, ErrArguments) {
			t.Errorf("twice(%s): %v, want ErrArguments", args, err)
		}
	}
	res, err := f.rt.Call(f.ctx, s, "calls", nil, "test")
	if err != nil || text(t, res) != "0" {
		t.Errorf("the plugin saw refused calls: %+v, %v", res, err)
	}
}

// TestPluginDrift: a tool whose manifest entry is not the one approved
// is quarantined, and nothing runs.
func TestPluginDrift(t *testing.T) {
	f := newPluginFixture(t)
	s := f.pluginSpec(`{}`)
	s.ToolSet["twice"] = "sha256:" + strings.Repeat("0", 64)
	_, err := f.rt.Call(f.ctx, s, "twice", []byte(`{"n": 1}`), "test")
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Outcome != RefusedQuarantined || !refused.Plugin {
		t.Fatalf("a changed tool: %v", err)
	}
}

// TestPluginRefusalInResult: a connection the broker refused (a loopback
// address, though the host is granted) is said in the call's result, by
// Zero.
func TestPluginRefusalInResult(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	f := newPluginFixture(t)
	s := f.pluginSpec(`{"network.hosts": ["` + hostPort + `"]}`)
	res, err := f.rt.Call(f.ctx, s, "fetch", []byte(`{"url": "`+srv.URL+`/"}`), "test")
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); !res.IsError || !strings.Contains(got, "[zero] the plugin's network request was refused: ") || !strings.Contains(got, hostPort) {
		t.Errorf("result: %q (error %v)", got, res.IsError)
	}
}

// TestPluginMemoryLimitSaid: a plugin killed at its memory limit makes
// the call fail with a reason that says so.
func TestPluginMemoryLimitSaid(t *testing.T) {
	f := newPluginFixture(t)
	s := f.pluginSpec(`{"limits": {"memory_mib": 96}}`)
	_, err := f.rt.Call(context.Background(), s, "hog", nil, "test")
	if !errors.Is(err, ErrCrashed) || !errors.Is(err, host.ErrMemoryLimit) {
		t.Fatalf("hog: %v", err)
	}
}

// BenchmarkPluginCallCold measures a call of a plugin's tool through the
// runtime when the plugin is not running: its sandbox and broker, its
// cgroup, bubblewrap, node and host.js loading the plugin, initialize, the
// argument check, the call and its audit record. Stopping the plugin
// between calls is not counted. It reports the median and the 99th
// percentile.
func BenchmarkPluginCallCold(b *testing.B) {
	f := newPluginFixture(b)
	s := f.pluginSpec(`{}`)
	var samples []time.Duration
	for b.Loop() {
		begin := time.Now()
		if res, err := f.rt.Call(f.ctx, s, "twice", []byte(`{"n": 21}`), "bench"); err != nil || res.IsError {
			b.Fatalf("twice: %+v, %v", res, err)
		}
		samples = append(samples, time.Since(begin))
		b.StopTimer()
		f.rt.Plugins().Stop(s.Plugin.ID)
		s.Epoch = f.rt.Plugins().Epoch(s.Plugin.ID)
		b.StartTimer()
	}
	benchstat.Report(b, samples)
}

// BenchmarkPluginCallWarm measures a call of a plugin's tool through the
// runtime on its running process: the drift gate, the argument check, the
// call over stdio and its audit record.
func BenchmarkPluginCallWarm(b *testing.B) {
	f := newPluginFixture(b)
	s := f.pluginSpec(`{}`)
	if _, err := f.rt.Call(f.ctx, s, "twice", []byte(`{"n": 1}`), "bench"); err != nil {
		b.Fatal(err)
	}
	var samples []time.Duration
	for b.Loop() {
		begin := time.Now()
		if res, err := f.rt.Call(f.ctx, s, "twice", []byte(`{"n": 21}`), "bench"); err != nil || res.IsError {
			b.Fatalf("twice: %+v, %v", res, err)
		}
		samples = append(samples, time.Since(begin))
	}
	benchstat.Report(b, samples)
}
