package workspace

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/plugin/host"
	"github.com/zero-dev/zero/internal/plugin/host/hosttest"
	"github.com/zero-dev/zero/internal/sandbox"
	"github.com/zero-dev/zero/internal/sandbox/dockertest"
	"github.com/zero-dev/zero/internal/sandbox/guest/guesttest"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// usableRunners returns the runners of the backends named whose probe
// passes here, in order; one that does not is skipped, or fails the test
// where its ZERO_REQUIRE_ variable is set.
func usableRunners(t testing.TB, backends ...sandbox.Backend) []sandbox.Runner {
	t.Helper()
	require := map[sandbox.Backend]string{sandbox.Bubblewrap: "ZERO_REQUIRE_BWRAP", sandbox.Runsc: "ZERO_REQUIRE_RUNSC",
		sandbox.Docker: "ZERO_REQUIRE_DOCKER", sandbox.DockerRunsc: "ZERO_REQUIRE_DOCKER"}
	var out []sandbox.Runner
	for _, b := range backends {
		var r sandbox.Runner
		switch b {
		case sandbox.Bubblewrap:
			r = sandbox.BubblewrapRunner{}
		case sandbox.Runsc:
			r = sandbox.RunscRunner{}
		case sandbox.Docker, sandbox.DockerRunsc:
			// The test run's daemon, with an image of node and the test
			// helper, as Zero's is made of node and itself.
			node, err := host.FindNode(context.Background(), "node")
			if err != nil {
				t.Fatalf("node: %v", err)
			}
			runtime := map[sandbox.Backend]string{sandbox.DockerRunsc: "runsc"}[b]
			r = sandbox.DockerRunner{Host: dockertest.Require(t).Host, Runtime: runtime,
				Programs: []string{node.Path, guesttest.Helper(t)}, ProbeArgv: []string{node.Path, "--version"}}
		default:
			t.Fatalf("no test runner of %s", b)
		}
		if err := r.Probe(context.Background()); err != nil {
			if os.Getenv(require[b]) != "" {
				t.Fatalf("%s is required (%s) but unusable: %v", b, require[b], err)
			}
			t.Skipf("%s is unusable here: %v", b, err)
		}
		out = append(out, r)
	}
	return out
}

// sandboxFixture is a workspace with the runners given, and a provider
// on the scripted model server.
func sandboxFixture(t *testing.T, o Options) (*testServer, *modeltest.Server) {
	t.Helper()
	ts := start(t, o)
	ms := modeltest.New(t)
	ts.browser.must("POST", "/api/providers", map[string]any{"name": "local", "base_url": ms.BaseURL(), "wire_api": ms.WireAPI(),
		"default_model": "scripted-1", "stream": false}, 201, nil)
	return ts, ms
}

// TestSandboxSettingsAPI: the owner reads the settings (any backend, ask,
// until set); only the owner in a browser sets them, not with a token;
// settings refused are a 400 and change nothing; each change is audited.
func TestSandboxSettingsAPI(t *testing.T) {
	ts := start(t, Options{SandboxRunners: []sandbox.Runner{}})
	var got threads.SandboxSettings
	ts.browser.must("GET", "/api/sandbox/settings", nil, 200, &got)
	if got != (threads.SandboxSettings{Approval: threads.Ask}) {
		t.Errorf("unset: %+v", got)
	}
	token := ts.bearer()
	if code, data := token.do("PUT", "/api/sandbox/settings", map[string]string{"approval": "allow"}); code != http.StatusForbidden {
		t.Errorf("a token sets the settings: %d %s", code, data)
	}
	for _, bad := range []map[string]string{{"approval": "sometimes"}, {"pin": "vmware", "approval": "ask"}, {"pin": "runsc", "minimum": "docker", "approval": "ask"}} {
		if code, data := ts.browser.do("PUT", "/api/sandbox/settings", bad); code != 400 || errorCode(data) != "invalid_settings" {
			t.Errorf("%v: %d %s", bad, code, data)
		}
	}
	ts.browser.must("PUT", "/api/sandbox/settings", map[string]string{"minimum": "runsc", "approval": "allow"}, 200, &got)
	if got.Minimum != "runsc" || got.Approval != threads.Allow || got.SetBy == "" {
		t.Errorf("set: %+v", got)
	}
	token.must("GET", "/api/sandbox/settings", nil, 200, &got)
	if got.Minimum != "runsc" || got.Approval != threads.Allow {
		t.Errorf("read back: %+v", got)
	}
	recs := ts.records("sandbox.settings")
	if len(recs) != 1 || recs[0].Detail["minimum"] != "runsc" || recs[0].Detail["approval"] != "allow" {
		t.Errorf("audit: %+v", recs)
	}
}

// TestSandboxedThreadBackend: a sandboxed thread gets the strongest
// backend that the owner's settings allow and that works here (smolvm's
// probe refuses on these machines), kept on the thread, its work folder
// made and the creation audited with it; pinned to smolvm, a thread is
// refused with sandbox_unavailable and the reason, by the API and the
// form, and none is made; a run of a thread whose backend is gone (the
// workspace restarted without it) is refused, never run on another.
func TestSandboxedThreadBackend(t *testing.T) {
	runners := usableRunners(t, sandbox.Runsc, sandbox.Bubblewrap)
	home := filepath.Join(t.TempDir(), "home")
	o := Options{Home: home, SandboxRunners: append([]sandbox.Runner{sandbox.SmolVMRunner{}}, runners...)}
	ts, _ := sandboxFixture(t, o)
	var th threads.Thread
	ts.browser.must("POST", "/api/threads", map[string]any{"title": "boxed", "provider": "local", "runtime": "sandbox", "workspace_copy": true}, 201, &th)
	if th.Runtime != threads.RuntimeSandbox || th.Backend != string(sandbox.Runsc) || !th.WorkspaceCopy {
		t.Fatalf("thread: %+v", th)
	}
	if fi, err := os.Lstat(filepath.Join(home, "workspace", "threads", itoa(th.ID), threads.WorkFolder)); err != nil || !fi.IsDir() {
		t.Errorf("the work folder: %v", err)
	}
	recs := ts.records("thread.create")
	if len(recs) != 1 || recs[0].Detail["runtime"] != "sandbox" || recs[0].Detail["backend"] != "runsc" || recs[0].Detail["workspace"] != "copy" {
		t.Errorf("audit: %+v", recs)
	}

	ts.browser.must("PUT", "/api/sandbox/settings", map[string]string{"pin": "bubblewrap", "approval": "ask"}, 200, nil)
	var bound threads.Thread
	ts.browser.must("POST", "/api/threads", map[string]any{"title": "bound", "provider": "local", "runtime": "sandbox"}, 201, &bound)
	if bound.Backend != string(sandbox.Bubblewrap) || bound.WorkspaceCopy {
		t.Errorf("pinned to bubblewrap: %+v", bound)
	}

	ts.browser.must("PUT", "/api/sandbox/settings", map[string]string{"pin": "smolvm", "approval": "ask"}, 200, nil)
	code, data := ts.browser.do("POST", "/api/threads", map[string]any{"title": "vm", "provider": "local", "runtime": "sandbox"})
	if code != http.StatusConflict || errorCode(data) != "sandbox_unavailable" || !strings.Contains(string(data), "smolvm: ") {
		t.Errorf("pinned to smolvm: %d %s", code, data)
	}
	status, page, _ := ts.browser.page("POST", "/threads/new", url.Values{"title": {"vm"}, "provider": {"local"}, "runtime": {"sandbox"}, "workspace": {"copy"}})
	if status != http.StatusConflict || !strings.Contains(page, "smolvm: ") || !strings.Contains(page, `value="vm"`) {
		t.Errorf("the form, pinned to smolvm: %d %s", status, page)
	}
	var list []threads.Thread
	ts.browser.must("GET", "/api/threads", nil, 200, &list)
	if len(list) != 2 {
		t.Errorf("threads after the refusals: %+v", list)
	}
	code, data = ts.browser.do("POST", "/api/threads", map[string]any{"title": "odd", "provider": "local", "runtime": "vm"})
	if code != 400 || errorCode(data) != "invalid_thread" {
		t.Errorf("an unknown runtime: %d %s", code, data)
	}

	// Restarted with runsc alone, the settings allowing any backend: the
	// bubblewrap thread's run is refused, and nothing runs.
	ts.browser.must("PUT", "/api/sandbox/settings", map[string]string{"approval": "ask"}, 200, nil)
	ts.w.Close()
	o.SandboxRunners = []sandbox.Runner{sandbox.RunscRunner{}}
	again := start(t, o)
	code, data = again.browser.do("POST", "/api/threads/"+itoa(bound.ID)+"/runs", map[string]string{"prompt": "hi"})
	if code != http.StatusConflict || errorCode(data) != "sandbox_unavailable" || !strings.Contains(string(data), "bubblewrap: not provided") {
		t.Errorf("a run without its backend: %d %s", code, data)
	}
	var g threadGot
	again.browser.must("GET", "/api/threads/"+itoa(bound.ID), nil, 200, &g)
	if g.Run != nil || len(g.Events) != 0 {
		t.Errorf("the refused run left %+v %+v", g.Run, g.Events)
	}
}

// TestSandboxedWorkFolderLink: a run of a sandboxed thread whose work
// folder was replaced by a link (to a folder outside the thread's) is
// refused, and nothing runs: a guest is never given what a link points at.
func TestSandboxedWorkFolderLink(t *testing.T) {
	runners := usableRunners(t, sandbox.Bubblewrap)
	ts, _ := sandboxFixture(t, Options{SandboxRunners: runners})
	var th threads.Thread
	ts.browser.must("POST", "/api/threads", map[string]any{"title": "boxed", "provider": "local", "runtime": "sandbox"}, 201, &th)
	work := filepath.Join(ts.home, "workspace", "threads", itoa(th.ID), threads.WorkFolder)
	if err := os.Remove(work); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), work); err != nil {
		t.Fatal(err)
	}
	code, data := ts.browser.do("POST", "/api/threads/"+itoa(th.ID)+"/runs", map[string]string{"prompt": "hi"})
	if code != http.StatusConflict || errorCode(data) != "work_folder_invalid" || !strings.Contains(string(data), "not a folder") {
		t.Errorf("a run on a linked work folder: %d %s", code, data)
	}
	var g threadGot
	ts.browser.must("GET", "/api/threads/"+itoa(th.ID), nil, 200, &g)
	if g.Run != nil || len(g.Events) != 0 {
		t.Errorf("the refused run left %+v %+v", g.Run, g.Events)
	}
}

// TestDefaultDockerRunners: with no runners given, the workspace makes
// every backend's (sandbox.DefaultRunners), Docker's on the daemon of
// SandboxDockerHost with an image made of node and the guest helper, whose
// probe lists /work with the helper; a thread pinned to docker gets it.
func TestDefaultDockerRunners(t *testing.T) {
	hosttest.Require(t)
	ts, _ := sandboxFixture(t, Options{SandboxDockerHost: dockertest.Require(t).Host, SandboxHelper: guesttest.Helper(t)})
	for _, b := range []string{"docker", "docker-runsc"} {
		ts.browser.must("PUT", "/api/sandbox/settings", map[string]string{"pin": b, "approval": "ask"}, 200, nil)
		var th threads.Thread
		ts.browser.must("POST", "/api/threads", map[string]any{"title": b, "provider": "local", "runtime": "sandbox"}, 201, &th)
		if th.Backend != b {
			t.Errorf("pinned to %s: %+v", b, th)
		}
	}
}

// TestSandboxSettingsHoldForRuns: a minimum the owner sets after a thread
// was made on a weaker backend refuses that thread's runs
// (sandbox_unavailable), and nothing runs; once the settings allow its
// backend again, it runs there.
func TestSandboxSettingsHoldForRuns(t *testing.T) {
	runners := usableRunners(t, sandbox.Runsc, sandbox.Bubblewrap)
	ts, ms := sandboxFixture(t, Options{SandboxRunners: runners})
	ts.browser.must("PUT", "/api/sandbox/settings", map[string]string{"pin": "bubblewrap", "approval": "ask"}, 200, nil)
	var th threads.Thread
	ts.browser.must("POST", "/api/threads", map[string]any{"title": "weak", "provider": "local", "runtime": "sandbox"}, 201, &th)
	ts.browser.must("PUT", "/api/sandbox/settings", map[string]string{"minimum": "runsc", "approval": "ask"}, 200, nil)
	code, data := ts.browser.do("POST", "/api/threads/"+itoa(th.ID)+"/runs", map[string]string{"prompt": "hi"})
	if code != http.StatusConflict || errorCode(data) != "sandbox_unavailable" || !strings.Contains(string(data), "not allowed by the sandbox settings now (at least runsc)") {
		t.Errorf("a bubblewrap thread's run under a minimum of runsc: %d %s", code, data)
	}
	var g threadGot
	ts.browser.must("GET", "/api/threads/"+itoa(th.ID), nil, 200, &g)
	if g.Run != nil || len(g.Events) != 0 {
		t.Errorf("the refused run left %+v %+v", g.Run, g.Events)
	}
	ts.browser.must("PUT", "/api/sandbox/settings", map[string]string{"approval": "ask"}, 200, nil)
	ms.Push(modeltest.Reply{Text: "done"})
	ts.browser.must("POST", "/api/threads/"+itoa(th.ID)+"/runs", map[string]string{"prompt": "hi"}, 201, nil)
}
