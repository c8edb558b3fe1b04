package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/plugin"
)

// probe is a plugin whose tools each try one thing, and say how it went.
const probe = `'use strict';
const fs = require('node:fs');
const cp = require('node:child_process');
const net = require('node:net');

exports.read = async ({ path }) => fs.readFileSync(path, 'utf8');
exports.write = async ({ path, text }) => { fs.writeFileSync(path, text); return 'written'; };
exports.run = async ({ argv }) => cp.execFileSync(argv[0], argv.slice(1), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
exports.worker = async () => { new (require('node:worker_threads').Worker)('1', { eval: true }); return 'started'; };
exports.fetch = async ({ url, method, body }, ctx) => {
  const r = await ctx.fetch(url, { method, body, headers: { 'x-probe': 'yes' } });
  return r.status + ' ' + (await r.text());
};
exports.connect = ({ port }) => new Promise((resolve, reject) => {
  const s = net.connect({ host: '127.0.0.1', port });
  s.on('connect', () => { s.destroy(); resolve('connected'); });
  s.on('error', reject);
});
exports.env = async (args, ctx) => JSON.stringify({ env: process.env, secrets: ctx.secrets });
exports.hog = async () => { const keep = []; for (;;) keep.push(Buffer.alloc(16 << 20, 1)); };
exports.bomb = async () => {
  cp.spawn('/bin/sh', ['-c', 'f() { f | f & }; f'], { detached: true, stdio: 'ignore' }).unref();
  return 'started';
};
exports.text = async () => 'plain';
`

// requireSandbox skips the test where bubblewrap, cgroups or node 20 are
// missing, unless ZERO_REQUIRE_BWRAP or ZERO_REQUIRE_NODE is set (as in
// CI): then it fails.
func requireSandbox(t testing.TB) Node {
	t.Helper()
	skip := func(env string, err error) {
		if os.Getenv(env) != "" {
			t.Fatalf("%s is set but plugins cannot run here: %v", env, err)
		}
		t.Skipf("plugins cannot run here: %v", err)
	}
	if err := spawn.IsolationAvailable(); err != nil {
		skip("ZERO_REQUIRE_BWRAP", err)
	}
	if err := spawn.LimitsAvailable(); err != nil {
		skip("ZERO_REQUIRE_BWRAP", err)
	}
	nodeOnce.Do(func() { node, nodeErr = FindNode(context.Background(), "node") })
	if nodeErr != nil {
		skip("ZERO_REQUIRE_NODE", nodeErr)
	}
	return node
}

var (
	nodeOnce sync.Once
	node     Node
	nodeErr  error
)

// tempDir is a new canonical directory, removed when the test ends. It is
// made outside /tmp where it can be: in the sandbox /tmp is a private,
// writable tmpfs, and a directory under it (where bubblewrap makes the
// mount points of what it shows) would be writable too, where elsewhere it
// is read-only as the rest of the sandbox's root.
func tempDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "zero-host-test-")
	if err != nil {
		d = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	if d, err = filepath.EvalSymlinks(d); err != nil {
		t.Fatal(err)
	}
	return d
}

// writeFiles writes name-to-content files under dir, making directories.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A world is what plugins run in for one test: a thread workspace, a
// folder of installed plugins, Zero's data directory.
type world struct {
	node    Node
	ws      string
	roots   *fsroot.Set
	plugins string
	data    string
}

func newWorld(t testing.TB) *world {
	t.Helper()
	w := &world{node: requireSandbox(t), ws: tempDir(t), plugins: tempDir(t), data: tempDir(t)}
	roots, err := fsroot.Open([]string{w.ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { roots.Close() })
	w.roots = roots
	return w
}

// plugin writes a plugin folder named name whose plugin.js is code.
func (w *world) plugin(t testing.TB, name, code string) string {
	t.Helper()
	dir := filepath.Join(w.plugins, name)
	writeFiles(t, dir, map[string]string{"plugin.js": code})
	return dir
}

// options are the Options of plugin dir with capabilities c in w.
func (w *world) options(dir string, c plugin.Capabilities) Options {
	return Options{Dir: dir, Entry: "plugin.js", Capabilities: c, Workspace: w.roots, Node: w.node, DataDir: w.data,
		SocketDir: os.TempDir()}
}

// A running plugin: its sandbox, its process and an MCP session with it.
type running struct {
	sb   *Sandbox
	proc *spawn.Process
	cs   *mcp.ClientSession
	once sync.Once
	res  spawn.Result
}

// start starts the plugin o describes and opens an MCP session with it,
// over its stdio, with the SDK's client; everything ends with the test.
func start(t testing.TB, o Options) *running {
	t.Helper()
	r, err := tryStart(t, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func tryStart(t testing.TB, o Options) (*running, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, err := Command(context.Background(), o)
	if err != nil {
		return nil, err
	}
	proc, err := spawn.Start(context.Background(), sb.Cmd)
	if err != nil {
		sb.Close()
		return nil, err
	}
	r := &running{sb: sb, proc: proc}
	t.Cleanup(func() { r.stop() })
	client := mcp.NewClient(&mcp.Implementation{Name: "host-test", Version: "0"}, nil)
	r.cs, err = client.Connect(ctx, &mcp.IOTransport{Reader: proc.Stdout, Writer: proc.Stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v; stderr: %s", err, proc.Stderr())
	}
	return r, nil
}

// call calls a tool and returns its text and whether it is an error; a
// failed call (no result) fails the test.
func (r *running) call(t testing.TB, name string, args map[string]any) (string, bool) {
	t.Helper()
	text, isError, err := r.tryCall(name, args)
	if err != nil {
		t.Fatalf("call %s: %v; stderr: %s", name, err, r.proc.Stderr())
	}
	return text, isError
}

func (r *running) tryCall(name string, args map[string]any) (string, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", false, err
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "\n"), res.IsError, nil
}

// mustSucceed calls a tool that must succeed and returns its text.
func (r *running) mustSucceed(t testing.TB, name string, args map[string]any) string {
	t.Helper()
	text, isError := r.call(t, name, args)
	if isError {
		t.Fatalf("%s(%v) failed: %s", name, args, text)
	}
	return text
}

// mustFail calls a tool that must fail, and checks that its error says
// one of want.
func (r *running) mustFail(t testing.TB, name string, args map[string]any, want ...string) string {
	t.Helper()
	text, isError := r.call(t, name, args)
	if !isError {
		t.Errorf("%s(%v) succeeded: %q", name, args, text)
		return text
	}
	for _, w := range want {
		if strings.Contains(text, w) {
			return text
		}
	}
	t.Errorf("%s(%v) failed with %q, want one of %q", name, args, text, want)
	return text
}

// stop ends the session, the process and the sandbox, and returns how the
// process ended.
func (r *running) stop() spawn.Result {
	r.once.Do(func() {
		if r.cs != nil {
			r.cs.Close()
		}
		r.res, _ = r.proc.Stop()
		r.sb.Close()
	})
	return r.res
}
