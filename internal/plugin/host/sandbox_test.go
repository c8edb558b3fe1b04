package host

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/plugin"
	"github.com/zero-dev/zero/internal/testnet"
)

// denied are the errors a refused file operation gives: Node's permission
// model, or the sandbox, where the path is not there or read-only.
var denied = []string{"ERR_ACCESS_DENIED", "Access to this API has been restricted", "ENOENT", "EROFS",
	"No such file or directory", "Read-only file system"}

// TestPluginReadsGrantedPaths: a plugin reads the directories and files of
// fs.read, below them too.
func TestPluginReadsGrantedPaths(t *testing.T) {
	w := newWorld(t)
	writeFiles(t, w.ws, map[string]string{"notes/a.txt": "note a", "notes/deep/b.txt": "note b", "config.json": "{}"})
	r := start(t, w.options(w.plugin(t, "probe", probe), plugin.Capabilities{FSRead: []string{"notes", "config.json"}}))
	for name, want := range map[string]string{"notes/a.txt": "note a", "notes/deep/b.txt": "note b", "config.json": "{}"} {
		if got := r.mustSucceed(t, "read", map[string]any{"path": filepath.Join(w.ws, name)}); got != want {
			t.Errorf("read %s: %q, want %q", name, got, want)
		}
	}
}

// TestPluginCannotReadOutsideGrantedPaths: a plugin cannot read a file of
// the workspace outside fs.read, a file outside the workspace, the
// system's files, or a file a link inside a granted directory leads to;
// and, given child processes, neither can a child: those files are not in
// the sandbox at all.
func TestPluginCannotReadOutsideGrantedPaths(t *testing.T) {
	w := newWorld(t)
	outside := tempDir(t)
	writeFiles(t, w.ws, map[string]string{"notes/a.txt": "note a", "private.txt": "s3cr3t-workspace"})
	writeFiles(t, outside, map[string]string{"secret.txt": "s3cr3t-outside"})
	if err := os.Symlink(filepath.Join(w.ws, "private.txt"), filepath.Join(w.ws, "notes", "link")); err != nil {
		t.Fatal(err)
	}
	for _, process := range []bool{false, true} {
		r := start(t, w.options(w.plugin(t, "probe"+strconv.FormatBool(process), probe), plugin.Capabilities{FSRead: []string{"notes"}, Process: process}))
		for _, p := range []string{filepath.Join(w.ws, "private.txt"), filepath.Join(w.ws, "notes/../private.txt"),
			filepath.Join(outside, "secret.txt"), "/etc/hostname", filepath.Join(w.ws, "notes", "link")} {
			if text := r.mustFail(t, "read", map[string]any{"path": p}, denied...); strings.Contains(text, "s3cr3t") {
				t.Errorf("read %s: %q", p, text)
			}
			if process && p != "/etc/hostname" { // the sandbox shows /etc
				if text := r.mustFail(t, "run", map[string]any{"argv": []string{"/bin/cat", p}}, "No such file"); strings.Contains(text, "s3cr3t") {
					t.Errorf("cat %s: %q", p, text)
				}
			}
		}
		if process {
			if got := r.mustSucceed(t, "run", map[string]any{"argv": []string{"/bin/ls", "-A", w.ws}}); got != "notes\n" {
				t.Errorf("the workspace, seen from the sandbox: %q, want only notes", got)
			}
		}
	}
}

// TestPluginWritesGrantedPaths: a plugin writes in the directories and
// files of fs.write, which it may read too, and what it writes is in the
// workspace.
func TestPluginWritesGrantedPaths(t *testing.T) {
	w := newWorld(t)
	writeFiles(t, w.ws, map[string]string{"out/.keep": "", "log.txt": "old"})
	r := start(t, w.options(w.plugin(t, "probe", probe), plugin.Capabilities{FSWrite: []string{"out", "log.txt"}}))
	for name, text := range map[string]string{"out/new.txt": "new", "log.txt": "appended"} {
		p := filepath.Join(w.ws, name)
		r.mustSucceed(t, "write", map[string]any{"path": p, "text": text})
		if got, err := os.ReadFile(p); err != nil || string(got) != text {
			t.Errorf("%s on the host: %q, %v; want %q", name, got, err, text)
		}
		if got := r.mustSucceed(t, "read", map[string]any{"path": p}); got != text {
			t.Errorf("read back %s: %q", name, got)
		}
	}
}

// TestPluginCannotWriteOutsideFSWrite: a plugin cannot write to an fs.read
// path, the workspace beside its fs.write paths, its own folder or the
// system; given child processes, a child cannot either.
func TestPluginCannotWriteOutsideFSWrite(t *testing.T) {
	w := newWorld(t)
	writeFiles(t, w.ws, map[string]string{"notes/a.txt": "note a", "out/.keep": ""})
	for _, process := range []bool{false, true} {
		dir := w.plugin(t, "probe"+strconv.FormatBool(process), probe)
		r := start(t, w.options(dir, plugin.Capabilities{FSRead: []string{"notes"}, FSWrite: []string{"out"}, Process: process}))
		targets := []string{filepath.Join(w.ws, "notes/a.txt"), filepath.Join(w.ws, "notes/new.txt"), filepath.Join(w.ws, "new.txt"),
			filepath.Join(dir, "plugin.js"), filepath.Join(w.data, "new.txt"), "/etc/zero-test"}
		for _, p := range targets {
			r.mustFail(t, "write", map[string]any{"path": p, "text": "changed"}, denied...)
			if process {
				r.mustFail(t, "run", map[string]any{"argv": []string{"/bin/sh", "-c", "echo changed > " + p}}, denied...)
			}
		}
		for _, p := range targets[1:] {
			if p != filepath.Join(dir, "plugin.js") {
				if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was written on the host", p)
				}
			}
		}
		if got, _ := os.ReadFile(filepath.Join(w.ws, "notes/a.txt")); string(got) != "note a" {
			t.Errorf("an fs.read file changed: %q", got)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "plugin.js")); string(got) != probe {
			t.Error("the plugin's own code changed")
		}
	}
}

// TestPluginNoChildProcessWithoutGrant: without "process" a plugin cannot
// start a child process, nor a worker thread; with it, it can.
func TestPluginNoChildProcessWithoutGrant(t *testing.T) {
	w := newWorld(t)
	r := start(t, w.options(w.plugin(t, "probe", probe), plugin.Capabilities{}))
	r.mustFail(t, "run", map[string]any{"argv": []string{"/bin/echo", "ran"}}, "ERR_ACCESS_DENIED", "restricted")
	r.mustFail(t, "worker", nil, "ERR_ACCESS_DENIED", "restricted")
	granted := start(t, w.options(w.plugin(t, "granted", probe), plugin.Capabilities{Process: true}))
	if got := granted.mustSucceed(t, "run", map[string]any{"argv": []string{"/bin/echo", "ran"}}); got != "ran\n" {
		t.Errorf("with process granted: %q", got)
	}
}

// httpServer serves on 127.0.0.1 and answers with what it was sent.
func httpServer(t *testing.T) (*httptest.Server, string) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s host=%s probe=%s body=%s", r.Method, r.URL.RequestURI(), r.Host, r.Header.Get("X-Probe"), body)
	}))
	t.Cleanup(srv.Close)
	return srv, strings.TrimPrefix(srv.URL, "http://")
}

var loopbackAllowed = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

// TestPluginFetchesGrantedHost: ctx.fetch reaches a granted host (here on
// 127.0.0.1, allowed for the test through the allow-list) through the
// broker, with its method, path, headers and body; an https URL goes
// through the tunnel as TLS, and the server's certificate is checked.
func TestPluginFetchesGrantedHost(t *testing.T) {
	w := newWorld(t)
	_, host := httpServer(t)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "over TLS") }))
	defer tlsSrv.Close()
	tlsHost := strings.TrimPrefix(tlsSrv.URL, "https://")
	o := w.options(w.plugin(t, "probe", probe), plugin.Capabilities{NetworkHosts: []string{host, tlsHost}})
	o.Allow = loopbackAllowed
	r := start(t, o)
	got := r.mustSucceed(t, "fetch", map[string]any{"url": "http://" + host + "/path?q=1"})
	if want := "200 GET /path?q=1 host=" + host + " probe=yes body="; got != want {
		t.Errorf("GET: %q, want %q", got, want)
	}
	got = r.mustSucceed(t, "fetch", map[string]any{"url": "http://" + host + "/post", "method": "POST", "body": "data"})
	if want := "200 POST /post host=" + host + " probe=yes body=data"; got != want {
		t.Errorf("POST: %q, want %q", got, want)
	}
	r.mustFail(t, "fetch", map[string]any{"url": tlsSrv.URL + "/"}, "TLS: self-signed certificate", "TLS: unable to verify")
	if refused := r.sb.Refusals(); len(refused) != 0 {
		t.Errorf("refusals: %v", refused)
	}
}

// TestPluginFetchHostNotListed: ctx.fetch to a host that network.hosts
// does not list is refused by the broker and reaches nothing, and the
// refusal is kept for the call's result; connecting past the broker finds
// no network at all.
func TestPluginFetchHostNotListed(t *testing.T) {
	w := newWorld(t)
	_, granted := httpServer(t)
	other := testnet.Listen(t)
	o := w.options(w.plugin(t, "probe", probe), plugin.Capabilities{NetworkHosts: []string{granted}})
	o.Allow = loopbackAllowed
	r := start(t, o)
	r.mustFail(t, "fetch", map[string]any{"url": "http://" + other.Addr + "/"}, "refused by Zero (403): "+other.Addr+" is not among the hosts granted")
	r.mustFail(t, "connect", map[string]any{"port": other.Port}, "ECONNREFUSED")
	if n := other.Accepted(); n != 0 {
		t.Errorf("the host not listed accepted %d connections", n)
	}
	refused := r.sb.Refusals()
	if len(refused) != 1 || refused[0].Status != http.StatusForbidden || !strings.Contains(refused[0].Target, other.Addr) {
		t.Errorf("refusals: %v", refused)
	}
}

// TestPluginFetchLoopbackRefused: a granted host on the loopback address is
// still refused when the allow-list does not hold it.
func TestPluginFetchLoopbackRefused(t *testing.T) {
	w := newWorld(t)
	ln := testnet.Listen(t)
	r := start(t, w.options(w.plugin(t, "probe", probe), plugin.Capabilities{NetworkHosts: []string{ln.Addr}}))
	r.mustFail(t, "fetch", map[string]any{"url": "http://" + ln.Addr + "/"}, "refused by Zero (403): address blocked: 127.0.0.1 is loopback")
	if n := ln.Accepted(); n != 0 {
		t.Errorf("the loopback listener accepted %d connections", n)
	}
}

// TestPluginNoNetworkWithoutGrant: without network.hosts a plugin has no
// network: ctx.fetch says so, and a connection of its own reaches nothing.
func TestPluginNoNetworkWithoutGrant(t *testing.T) {
	w := newWorld(t)
	ln := testnet.Listen(t)
	r := start(t, w.options(w.plugin(t, "probe", probe), plugin.Capabilities{}))
	r.mustFail(t, "fetch", map[string]any{"url": "http://" + ln.Addr + "/"}, "this plugin has no network")
	r.mustFail(t, "connect", map[string]any{"port": ln.Port}, "ECONNREFUSED")
	if n := ln.Accepted(); n != 0 {
		t.Errorf("the listener accepted %d connections", n)
	}
	if r.sb.Cmd.Socket != "" {
		t.Errorf("a socket is bound in: %s", r.sb.Cmd.Socket)
	}
}

// TestPluginSecrets: a plugin receives its granted secret in ctx.secrets,
// and no longer in its environment nor its children's; another plugin
// running at the same time never sees it: not in its environment, nor in
// /proc, nor in a file it can reach. A secret that is not granted is never
// given.
func TestPluginSecrets(t *testing.T) {
	w := newWorld(t)
	b := make([]byte, 16)
	rand.Read(b)
	canary := "canary-" + hex.EncodeToString(b)
	oa := w.options(w.plugin(t, "a", probe), plugin.Capabilities{Secrets: []string{"CANARY_TOKEN"}, Process: true})
	oa.Secrets = map[string]string{"CANARY_TOKEN": canary}
	a := start(t, oa)
	other := start(t, w.options(w.plugin(t, "b", probe), plugin.Capabilities{Process: true}))

	if got := a.mustSucceed(t, "env", nil); !strings.Contains(got, `"secrets":{"CANARY_TOKEN":"`+canary+`"}`) || strings.Count(got, canary) != 1 {
		t.Errorf("the granted plugin: %s", got)
	}
	if got := a.mustSucceed(t, "run", map[string]any{"argv": []string{"/usr/bin/env"}}); strings.Contains(got, canary) {
		t.Errorf("the granted plugin's child inherited the secret: %s", got)
	}

	looks := map[string][]string{
		"env":                   nil,
		"/proc":                 {"/bin/sh", "-c", "ls /proc; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline | tr '\\0' '\\n'"},
		"files":                 {"/bin/sh", "-c", "grep -rlsF --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr --exclude-dir=dev \"$ZERO_LOOK\" / ; echo searched"},
		"a's scratch directory": {"/bin/ls", "-A", a.sb.run},
	}
	for what, argv := range looks {
		var got string
		if argv == nil {
			got, _ = other.call(t, "env", nil)
		} else {
			argv = append([]string(nil), argv...)
			argv[len(argv)-1] = strings.ReplaceAll(argv[len(argv)-1], "$ZERO_LOOK", canary)
			got, _ = other.call(t, "run", map[string]any{"argv": argv})
		}
		if strings.Contains(got, canary) {
			t.Errorf("the other plugin found the canary in %s: %s", what, got)
		}
		if what == "files" && got != "searched\n" {
			t.Errorf("the other plugin's search found files: %q", got)
		}
	}

	ob := w.options(w.plugin(t, "c", probe), plugin.Capabilities{})
	ob.Secrets = map[string]string{"CANARY_TOKEN": canary}
	if _, err := Command(t.Context(), ob); err == nil || !strings.Contains(err.Error(), `secret "CANARY_TOKEN" is not granted`) {
		t.Errorf("a secret not granted: %v", err)
	}
}

// TestPluginMemoryLimit: a plugin that goes past limits.memory_mib is
// killed by the kernel, and the sandbox says so for the call's error.
func TestPluginMemoryLimit(t *testing.T) {
	w := newWorld(t)
	r := start(t, w.options(w.plugin(t, "probe", probe), plugin.Capabilities{Limits: &plugin.Limits{MemoryMiB: 128}}))
	r.mustSucceed(t, "text", nil)
	_, _, err := r.tryCall("hog", nil)
	if err == nil {
		t.Fatal("the hog's call returned")
	}
	select {
	case <-r.proc.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the hog still runs")
	}
	res := r.stop()
	why := r.sb.Ended(res)
	if !res.MemoryKilled || !errors.Is(why, ErrMemoryLimit) || !strings.Contains(why.Error(), "over 128 MiB") {
		t.Errorf("the call: %v; the process: %+v; why: %v", err, res, why)
	}
}

// nodeOf finds the pid of the node process running plugin dir, on the
// host.
func nodeOf(t *testing.T, dir string) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := strings.Split(string(cmdline), "\x00")
		if len(args) > 3 && strings.HasSuffix(args[0], "node") && strings.Contains(string(cmdline), "\x00"+dir+"\x00") {
			return pid
		}
	}
	t.Fatalf("no node process runs %s", dir)
	return 0
}

// pidsGroup returns the directory of pid's group in the v1 pids hierarchy.
func pidsGroup(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && (parts[1] == "pids" || parts[1] == "") && parts[2] != "/" {
			dir := filepath.Join("/sys/fs/cgroup", parts[1], parts[2])
			if _, err := os.Stat(filepath.Join(dir, "pids.max")); err == nil {
				return dir
			}
		}
	}
	t.Skipf("no pids group found for %d in %s", pid, data)
	return ""
}

func readInt(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("%s: %q", path, data)
	}
	return n
}

// TestPluginForkBomb: a fork bomb started by a plugin with "process"
// granted stays within limits.processes (and the host's own few): the
// kernel refuses the rest, the host still answers, and stopping the plugin
// ends every process of the bomb.
func TestPluginForkBomb(t *testing.T) {
	w := newWorld(t)
	dir := w.plugin(t, "probe", probe)
	r := start(t, w.options(dir, plugin.Capabilities{Process: true, Limits: &plugin.Limits{Processes: 8}}))
	group := pidsGroup(t, nodeOf(t, dir))
	if limit := readInt(t, filepath.Join(group, "pids.max")); limit != 8+hostTasks {
		t.Fatalf("pids.max %d, want %d", limit, 8+hostTasks)
	}
	r.mustSucceed(t, "bomb", nil)
	most := 0
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		most = max(most, readInt(t, filepath.Join(group, "pids.current")))
		events, _ := os.ReadFile(filepath.Join(group, "pids.events"))
		if f := strings.Fields(string(events)); len(f) == 2 && f[1] != "0" {
			break // the kernel refused a fork at the limit
		}
	}
	if events, _ := os.ReadFile(filepath.Join(group, "pids.events")); strings.TrimSpace(string(events)) == "max 0" {
		t.Fatalf("the bomb never reached the limit (most %d)", most)
	}
	if most > 8+hostTasks {
		t.Errorf("the group held %d tasks, over its limit of %d", most, 8+hostTasks)
	}
	if got := r.mustSucceed(t, "text", nil); got != "plain" {
		t.Errorf("the host during the bomb: %q", got)
	}
	procs, _ := os.ReadFile(filepath.Join(group, "cgroup.procs"))
	r.stop()
	for _, p := range strings.Fields(string(procs)) {
		pid, _ := strconv.Atoi(p)
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if !strings.Contains(string(stat), ") Z") {
				t.Errorf("process %d of the bomb is left: %s", pid, stat)
			}
		}
	}
	if _, err := os.Stat(group); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the group is left: %v", err)
	}
}
