package host

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/plugin"
)

// hideEnv, set in the environment of this test binary, makes it hide a
// control of the sandbox in its own mount namespace, then start the plugin
// that controlEnv describes and print the error (see TestMain).
const (
	hideEnv    = "ZERO_HOST_TEST_HIDE"
	controlEnv = "ZERO_HOST_TEST_PLUGIN"
)

func TestMain(m *testing.M) {
	if hide := os.Getenv(hideEnv); hide != "" {
		os.Exit(startHidden(hide))
	}
	os.Exit(m.Run())
}

// startHidden hides bubblewrap ("bwrap") or the cgroup hierarchies
// ("cgroups"), then tries to start the plugin, and prints what happened.
func startHidden(hide string) int {
	var err error
	switch hide {
	case "bwrap":
		err = unix.Mount("/dev/null", "/usr/bin/bwrap", "", unix.MS_BIND, "")
	case "cgroups":
		err = unix.Mount("tmpfs", "/sys/fs/cgroup", "tmpfs", 0, "")
	}
	if err != nil {
		fmt.Println("hide:", err)
		return 1
	}
	var o Options
	if err := json.Unmarshal([]byte(os.Getenv(controlEnv)), &o); err != nil {
		fmt.Println("options:", err)
		return 1
	}
	var roots []string
	json.Unmarshal([]byte(os.Getenv(controlEnv+"_WS")), &roots)
	ws, err := fsroot.Open(roots)
	if err != nil {
		fmt.Println("workspace:", err)
		return 1
	}
	o.Workspace = ws
	sb, err := Command(context.Background(), o)
	if err == nil {
		var p *spawn.Process
		if p, err = spawn.Start(context.Background(), sb.Cmd); err == nil {
			p.Stop()
		}
		sb.Close()
	}
	fmt.Printf("isolation=%v cgroups=%v: %v\n", errors.Is(err, spawn.ErrIsolationUnavailable), errors.Is(err, spawn.ErrNoCgroups), err)
	return 0
}

// TestPluginControlsUnavailable: where bubblewrap or cgroups are missing
// (hidden here in a mount namespace of their own), a plugin does not run,
// and the error says which control is missing: there is no fallback.
func TestPluginControlsUnavailable(t *testing.T) {
	w := newWorld(t)
	if os.Geteuid() != 0 {
		t.Skip("hiding a control takes a mount namespace, which takes root here")
	}
	writeFiles(t, w.ws, map[string]string{"out/.keep": ""})
	marker := filepath.Join(w.ws, "out", "ran")
	dir := w.plugin(t, "marker", fmt.Sprintf("require('node:fs').writeFileSync(%q, 'ran');\nexports.text = async () => 'ran';\n", marker))
	o := w.options(dir, plugin.Capabilities{FSWrite: []string{"out"}})
	o.Workspace = nil
	opts, _ := json.Marshal(o)
	roots, _ := json.Marshal([]string{w.ws})
	for hide, want := range map[string]string{"bwrap": "isolation=true", "cgroups": "cgroups=true"} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), hideEnv+"="+hide, controlEnv+"="+string(opts), controlEnv+"_WS="+string(roots))
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
		out, err := cmd.CombinedOutput()
		t.Logf("with %s hidden: %s", hide, out)
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("with %s hidden: %s (%v), want %s", hide, out, err, want)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("with %s hidden, the plugin ran", hide)
		}
	}
	// The same plugin runs where nothing is hidden: the marker is the
	// plugin's, and the test would see it.
	r := start(t, w.options(dir, plugin.Capabilities{FSWrite: []string{"out"}}))
	r.mustSucceed(t, "text", nil)
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the plugin ran but left no marker: %v", err)
	}
}

// TestCommandEnforcesEveryControl: the command of a plugin asks for
// bubblewrap without a fallback, cgroup limits from the manifest (or Zero's
// defaults), node's permission model with exactly the granted paths, and
// the environment holds the granted secrets only, beside a fixed PATH.
func TestCommandEnforcesEveryControl(t *testing.T) {
	w := newWorld(t)
	writeFiles(t, w.ws, map[string]string{"notes/a.txt": "", "out/.keep": "", "notes/sub/b.txt": "", "out/in/c.txt": ""})
	dir := w.plugin(t, "probe", probe)
	o := w.options(dir, plugin.Capabilities{FSRead: []string{"notes", "notes/sub", "out/in/c.txt", "missing"}, FSWrite: []string{"out"},
		Secrets: []string{"API_KEY", "UNSET"}, Limits: &plugin.Limits{MemoryMiB: 100, Processes: 4}})
	o.Secrets = map[string]string{"API_KEY": "k"}
	sb, err := Command(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	c := sb.Cmd
	if c.Isolation != spawn.Bubblewrap || c.AllowFallback {
		t.Errorf("isolation %q, fallback %v", c.Isolation, c.AllowFallback)
	}
	if diff := cmp.Diff(&spawn.Limits{MemoryBytes: 100 << 20, Pids: 4 + hostTasks, CPUPercent: 100}, c.Limits); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
	hostFile := c.Args[len(c.Args)-4]
	want := []string{"--experimental-permission", "--allow-fs-read=" + dir, "--allow-fs-read=" + hostFile,
		"--allow-fs-read=" + filepath.Join(w.ws, "notes"), "--allow-fs-read=" + filepath.Join(w.ws, "out"),
		"--allow-fs-write=" + filepath.Join(w.ws, "out"), hostFile, dir, "plugin.js"}
	if diff := cmp.Diff(want, c.Args[:len(c.Args)-1]); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{dir, filepath.Join(w.ws, "notes")}, c.ReadOnly); diff != "" {
		t.Errorf("read-only (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{hostFile}, c.ReadOnlyFiles); diff != "" {
		t.Errorf("read-only files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{filepath.Join(w.ws, "out")}, c.Writable); diff != "" {
		t.Errorf("writable (-want +got):\n%s", diff)
	}
	var config map[string]any
	if err := json.Unmarshal([]byte(c.Args[len(c.Args)-1]), &config); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"secrets": []any{"API_KEY", "UNSET"}, "socket": "", "workspace": w.ws}, config); diff != "" {
		t.Errorf("the host's configuration (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"API_KEY": "k"}, c.Env.Secret); diff != "" || len(c.Env.Pass) != 0 || c.Env.Set["PATH"] != "/usr/bin:/bin" || len(c.Env.Set) != 1 {
		t.Errorf("environment: %+v", c.Env)
	}
	if c.Socket != "" || sb.CallTimeout() != plugin.DefaultTimeoutMS*time.Millisecond {
		t.Errorf("socket %q, call timeout %v", c.Socket, sb.CallTimeout())
	}
	if (plugin.Capabilities{}).EffectiveLimits() != (plugin.Limits{TimeoutMS: 30000, MemoryMiB: 256, Processes: 32}) {
		t.Errorf("default limits: %+v", (plugin.Capabilities{}).EffectiveLimits())
	}
}

// TestCommandRefuses: a command is refused, and nothing is started, for an
// entry that is not a .js file inside the plugin's folder, a folder that
// is not canonical, a path that is not relative to the workspace or leads
// out of it, a path node's flags cannot name, and a secret not granted.
func TestCommandRefuses(t *testing.T) {
	w := newWorld(t)
	dir := w.plugin(t, "probe", probe)
	writeFiles(t, w.ws, map[string]string{"a,b/x": "", "star*/x": ""})
	link := filepath.Join(tempDir(t), "link")
	os.Symlink(dir, link)
	if err := os.Symlink("/etc", filepath.Join(w.ws, "etc")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		edit func(*Options)
		want string
	}{
		{"an entry outside", func(o *Options) { o.Entry = "../x.js" }, "not a .js file inside"},
		{"an absolute entry", func(o *Options) { o.Entry = filepath.Join(dir, "plugin.js") }, "not a .js file inside"},
		{"an entry not .js", func(o *Options) { o.Entry = "plugin.json" }, "not a .js file inside"},
		{"a missing entry", func(o *Options) { o.Entry = "missing.js" }, "not a file in the plugin's folder"},
		{"a folder through a link", func(o *Options) { o.Dir = link }, "not an absolute, canonical path"},
		{"an absolute fs.read", func(o *Options) { o.Capabilities.FSRead = []string{"/etc"} }, "not relative to the workspace"},
		{"fs.read with ..", func(o *Options) { o.Capabilities.FSRead = []string{"../x"} }, "not relative to the workspace"},
		{"fs.write with ~", func(o *Options) { o.Capabilities.FSWrite = []string{"~/x"} }, "not relative to the workspace"},
		{"fs.read through a link out", func(o *Options) { o.Capabilities.FSRead = []string{"etc"} }, "outside the allowed directories"},
		{"a comma", func(o *Options) { o.Capabilities.FSRead = []string{"a,b"} }, "comma"},
		{"an asterisk", func(o *Options) { o.Capabilities.FSWrite = []string{"star*"} }, "asterisk"},
		{"a secret not granted", func(o *Options) { o.Secrets = map[string]string{"TOKEN": "x"} }, `secret "TOKEN" is not granted`},
		{"no node", func(o *Options) { o.Node = Node{} }, "no node program"},
	} {
		o := w.options(dir, plugin.Capabilities{})
		c.edit(&o)
		sb, err := Command(context.Background(), o)
		if err == nil {
			sb.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
	}
	if runs, _ := filepath.Glob(filepath.Join(w.data, "plugin-host", "run-*")); len(runs) != 0 {
		t.Errorf("left behind: %v", runs)
	}
}

// TestHostFileIsVerified: host.js is written once, in a 0700 directory of
// the data directory, as read-only bytes whose hash is Hash; a copy there
// that was changed is replaced before the next start, so what node runs is
// always the approved host.
func TestHostFileIsVerified(t *testing.T) {
	data := tempDir(t)
	file, err := Install(data)
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		got, err := os.ReadFile(file)
		sum := sha256.Sum256(got)
		if err != nil || "sha256:"+hex.EncodeToString(sum[:]) != Hash {
			t.Errorf("%s: the host file does not hash to Hash (%v)", when, err)
		}
	}
	check("written")
	if fi, _ := os.Stat(filepath.Dir(file)); fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o400 {
		t.Errorf("file mode %v, want 0400", fi.Mode().Perm())
	}
	os.Chmod(file, 0o600)
	if err := os.WriteFile(file, []byte("process.exit(0)"), 0o600); err != nil {
		t.Fatal(err)
	}
	again, err := Install(data)
	if err != nil || again != file {
		t.Fatalf("install again: %q, %v", again, err)
	}
	check("changed, then installed again")
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the host alone", len(entries))
	}
}

// TestHostProtocol: the host answers initialize with the client's version
// when it knows it, ping, an empty tools/list (the listing is the
// manifest's), and an error for other methods; a tool's result is its
// string as text, its {content} as content, other values as JSON, a thrown
// error as isError; what the plugin prints goes to stderr and never into
// the protocol.
func TestHostProtocol(t *testing.T) {
	w := newWorld(t)
	dir := w.plugin(t, "protocol", `'use strict';
exports.str = async () => 'a string';
exports.obj = async () => ({ content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] });
exports.num = async () => 42;
exports.none = async () => undefined;
exports.fails = async () => { throw new Error('it broke'); };
exports.args = async (args) => JSON.stringify(args);
exports.noisy = async () => { console.log('printed'); process.stdout.write('written\n'); return 'quiet'; };
exports.notfn = 1;
`)
	r := start(t, w.options(dir, plugin.Capabilities{}))
	for _, c := range []struct {
		tool    string
		args    map[string]any
		want    string
		isError bool
	}{
		{"str", nil, "a string", false},
		{"obj", nil, "one\ntwo", false},
		{"num", nil, "42", false},
		{"none", nil, "", false},
		{"fails", nil, "it broke", true},
		{"args", map[string]any{"a": 1, "b": []any{"x"}}, `{"a":1,"b":["x"]}`, false},
		{"noisy", nil, "quiet", false},
		{"notfn", nil, `plugin.js exports no function "notfn"`, true},
		{"missing", nil, `plugin.js exports no function "missing"`, true},
	} {
		got, isError := r.call(t, c.tool, c.args)
		if got != c.want || isError != c.isError {
			t.Errorf("%s: %q (error %v), want %q (error %v)", c.tool, got, isError, c.want, c.isError)
		}
	}
	if err := r.cs.Ping(context.Background(), nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	tools, err := r.cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 0 {
		t.Errorf("tools/list: %+v, %v; want none", tools, err)
	}
	if p := r.cs.InitializeResult().ProtocolVersion; p == "" {
		t.Error("no protocol version")
	}
	if stderr := string(r.proc.Stderr()); !strings.Contains(stderr, "printed\n") || !strings.Contains(stderr, "written\n") {
		t.Errorf("stderr %q, want what the plugin printed", stderr)
	}

	// The same host, spoken to line by line.
	sb, err := Command(context.Background(), w.options(dir, plugin.Capabilities{}))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	p, err := spawn.Start(context.Background(), sb.Cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	lines := bufio.NewReader(p.Stdout)
	for _, c := range []struct{ send, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"zero-plugin-host","version":"1"}}}`},
		{`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}`, `{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"zero-plugin-host","version":"1"}}}`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		{`{"jsonrpc":"2.0","id":"p","method":"ping"}`, `{"jsonrpc":"2.0","id":"p","result":{}}`},
		{`{"jsonrpc":"2.0","id":3,"method":"resources/list"}`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found: resources/list"}}`},
		{`not json`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"str"}}`, `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"a string"}]}}`},
	} {
		if _, err := p.Stdin.Write([]byte(c.send + "\n")); err != nil {
			t.Fatal(err)
		}
		if c.want == "" {
			continue
		}
		got, err := readLine(lines)
		if err != nil || got != c.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", c.send, got, err, c.want)
		}
	}
}

// readLine reads one line, for at most 20 s.
func readLine(r *bufio.Reader) (string, error) {
	type line struct {
		s   string
		err error
	}
	ch := make(chan line, 1)
	go func() {
		s, err := r.ReadString('\n')
		ch <- line{strings.TrimSuffix(s, "\n"), err}
	}()
	select {
	case l := <-ch:
		return l.s, l.err
	case <-time.After(20 * time.Second):
		return "", errors.New("no line in 20 s")
	}
}

// TestEntryThatFailsToLoad: a plugin whose module throws as it loads still
// answers, and every call says why it failed.
func TestEntryThatFailsToLoad(t *testing.T) {
	w := newWorld(t)
	r := start(t, w.options(w.plugin(t, "broken", "throw new Error('broken at load');\n"), plugin.Capabilities{}))
	r.mustFail(t, "anything", nil, "loading plugin.js: broken at load")
}

// TestHashIsOfTheEmbeddedHost: Hash is the SHA-256 of host.js as it is in
// the source tree.
func TestHashIsOfTheEmbeddedHost(t *testing.T) {
	data, err := os.ReadFile("host.js")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != Hash || !slices.Equal(data, source) {
		t.Errorf("Hash %s, host.js hashes to %s", Hash, got)
	}
}

// TestHostAnswersBeforeStdinCloses: a client that sends its requests and
// closes stdin at once gets every answer before the host exits (a call
// waits on the plugin's module, which loads after stdin has ended).
func TestHostAnswersBeforeStdinCloses(t *testing.T) {
	w := newWorld(t)
	dir := w.plugin(t, "closing", "exports.late = async () => { await new Promise((r) => setTimeout(r, 50)); return 'answered'; };\n")
	sb, err := Command(context.Background(), w.options(dir, plugin.Capabilities{}))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	sb.Cmd.Stdin = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"late","arguments":{}}}
`)
	res, err := spawn.Run(context.Background(), sb.Cmd)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"answered"}]}}`
	if !strings.Contains(string(res.Stdout), want) || res.ExitCode != 0 {
		t.Errorf("exit %d, stdout %s; want the call's answer %s", res.ExitCode, res.Stdout, want)
	}
}
