package threads

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/model/modeltest"
)

// TestCreateSandboxed: a sandboxed thread needs a known backend, and gets
// a work folder in its folder; a host thread takes no sandbox settings;
// both are read back as made, and a fork keeps the backend and copy mode.
func TestCreateSandboxed(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	th, err := s.Create(ctx, Thread{Title: "box", Runtime: RuntimeSandbox, Backend: "bubblewrap", WorkspaceCopy: true})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(th.WorkDir()); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the work folder %s: %v %v", th.WorkDir(), fi, err)
	}
	got, err := s.Get(ctx, th.ID)
	if err != nil || got.Runtime != RuntimeSandbox || got.Backend != "bubblewrap" || !got.WorkspaceCopy {
		t.Errorf("get: %+v %v", got, err)
	}
	say(t, s, th.ID, 0, "hello")
	fork, err := s.Fork(ctx, th.ID, 1)
	if err != nil || fork.Runtime != RuntimeSandbox || fork.Backend != "bubblewrap" || !fork.WorkspaceCopy {
		t.Errorf("fork: %+v %v", fork, err)
	}
	if _, err := os.Lstat(fork.WorkDir()); err != nil {
		t.Errorf("the fork's work folder: %v", err)
	}
	host, err := s.Create(ctx, Thread{Title: "host"})
	if err != nil || host.Backend != "" || host.WorkspaceCopy {
		t.Fatalf("host: %+v %v", host, err)
	}
	if _, err := os.Lstat(host.WorkDir()); !os.IsNotExist(err) {
		t.Errorf("a host thread has a work folder: %v", err)
	}
	for _, bad := range []Thread{
		{Title: "x", Runtime: RuntimeSandbox},
		{Title: "x", Runtime: RuntimeSandbox, Backend: "firecracker"},
		{Title: "x", Runtime: RuntimeHost, Backend: "runsc"},
		{Title: "x", WorkspaceCopy: true},
		{Title: "x", Runtime: "vm", Backend: "runsc"},
	} {
		if _, err := s.Create(ctx, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// TestSandboxSettings: any backend and ask until set; a pin or a minimum
// of a known backend, and ask or allow, are kept with who set them; an
// unknown backend, both at once, or another default are refused and change
// nothing.
func TestSandboxSettings(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	got, err := s.SandboxSettings(ctx)
	if err != nil || got != (SandboxSettings{Approval: Ask}) {
		t.Fatalf("unset: %+v %v", got, err)
	}
	set, err := s.SetSandboxSettings(ctx, "user:owner", SandboxSettings{Minimum: "runsc", Approval: Allow})
	if err != nil {
		t.Fatal(err)
	}
	got, err = s.SandboxSettings(ctx)
	if err != nil || got != set || got.Minimum != "runsc" || got.Approval != Allow || got.SetBy != "user:owner" || got.SetAt.IsZero() {
		t.Fatalf("set %+v, read %+v %v", set, got, err)
	}
	if p := got.Policy(); p.Minimum != "runsc" || p.Pin != "" {
		t.Errorf("policy: %+v", p)
	}
	for _, bad := range []SandboxSettings{
		{Pin: "qemu", Approval: Ask},
		{Minimum: "qemu", Approval: Ask},
		{Pin: "runsc", Minimum: "docker", Approval: Ask},
		{Approval: "deny"},
		{},
	} {
		if _, err := s.SetSandboxSettings(ctx, "user:owner", bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if now, _ := s.SandboxSettings(ctx); now != got {
		t.Errorf("a refused setting changed them: %+v", now)
	}
}

// TestDecideSandbox: a sandboxed thread's tool is asked by default; an
// allow, the owner's or a thread's, holds for the hash and backend it was
// given for only; the owner's default "allow" allows what no rule decides,
// saying so, but the owner's deny still wins; rules of a server's tool of
// the same name do not hold for it, nor its rules for the server's; an
// answer "thread" saves its allowance, which the list shows and Revoke
// removes.
func TestDecideSandbox(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	addServer(t, s, 1)
	a, _ := s.Create(ctx, Thread{Title: "a", Runtime: RuntimeSandbox, Backend: "runsc"})
	b, _ := s.Create(ctx, Thread{Title: "b", Runtime: RuntimeSandbox, Backend: "runsc"})
	run := ToolRef{Sandbox: true, Tool: "run", Hash: "sha256:h1", Fingerprint: "runsc"}
	other := run
	other.Fingerprint = "bubblewrap"
	changed := run
	changed.Hash = "sha256:h2"
	server := ToolRef{ServerID: 1, Tool: "run", Hash: "sha256:h1", Fingerprint: "runsc"}
	decide, want := decisions(t, s)
	want("by default", decide(a.ID, run), "ask: this tool is not allowed")
	if err := s.SetRule(ctx, "user:owner", server, Allow); err != nil {
		t.Fatal(err)
	}
	want("a server's tool of the same name always allowed", decide(a.ID, run), "ask: this tool is not allowed")
	if err := s.AllowInThread(ctx, "user:owner", a.ID, run); err != nil {
		t.Fatal(err)
	}
	want("allowed in a", decide(a.ID, run), "allow: allowed for this thread")
	want("in b", decide(b.ID, run), "ask: this tool is not allowed")
	want("in a, on another backend", decide(a.ID, other), "ask: the tool or its server changed")
	want("in a, the tool changed", decide(a.ID, changed), "ask: the tool or its server changed")
	if err := s.SetRule(ctx, "user:owner", run, Allow); err != nil {
		t.Fatal(err)
	}
	want("always, in b", decide(b.ID, run), "allow: the workspace owner always allows")
	want("always, on another backend", decide(b.ID, other), "ask: the tool or its server changed")
	s.SetRule(ctx, "user:owner", server, "")
	want("the server's rule removed", decide(b.ID, run), "allow: the workspace owner always allows")

	list, total, err := s.Allowances(ctx, 10)
	if err != nil || total != 2 {
		t.Fatalf("allowances: %d %v", total, err)
	}
	var gotList []string
	for _, al := range list {
		gotList = append(gotList, al.Scope+" "+al.Server+" "+al.Tool+" "+al.Fingerprint+" "+al.ThreadTitle)
	}
	if d := cmp.Diff([]string{"always sandbox run runsc ", "thread sandbox run runsc a"}, gotList); d != "" || !list[0].Sandbox || !list[1].Sandbox {
		t.Errorf("allowances (-want +got):\n%s%+v", d, list)
	}
	gone, err := s.Revoke(ctx, Allowance{Scope: AnswerThread, Thread: a.ID, Sandbox: true, Tool: "run"})
	if err != nil || gone.Server != SandboxServer || gone.Hash != "sha256:h1" {
		t.Errorf("revoke: %+v %v", gone, err)
	}
	if _, err := s.Revoke(ctx, Allowance{Scope: AnswerThread, Thread: a.ID, Sandbox: true, Tool: "run"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("revoked twice: %v", err)
	}
	s.SetRule(ctx, "user:owner", run, "")

	if _, err := s.SetSandboxSettings(ctx, "user:owner", SandboxSettings{Approval: Allow}); err != nil {
		t.Fatal(err)
	}
	v, err := s.Decide(ctx, a.ID, other)
	if err != nil || v.Decision != Allow || !strings.Contains(v.Reason, "the owner's default for sandboxed threads") ||
		v.Allowance == nil || v.Allowance.Scope != ScopeSandboxDefault || v.Allowance.SetBy != "user:owner" {
		t.Errorf("the default allows: %+v %v", v, err)
	}
	want("the default does not reach a server's tool", decide(a.ID, server), "ask: this tool is not allowed")
	if err := s.SetRule(ctx, "user:owner", run, Deny); err != nil {
		t.Fatal(err)
	}
	want("denied, though the default allows", decide(a.ID, run), "deny: ")
	want("a server's tool of the same name", decide(a.ID, server), "ask: ")

	// An approval of a sandboxed tool, answered "thread", saves a
	// sandboxed thread's allowance.
	s.SetRule(ctx, "user:owner", run, "")
	s.SetSandboxSettings(ctx, "user:owner", SandboxSettings{Approval: Ask})
	r, err := s.StartRun(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	ap, err := s.Request(ctx, r.ID, "c1", changed, DefaultApprovalTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.GetApproval(ctx, ap.ID); err != nil || got.Tool != changed {
		t.Errorf("the approval's tool: %+v %v", got.Tool, err)
	}
	if _, err := s.Answer(ctx, "user:owner", ap.ID, AnswerThread); err != nil {
		t.Fatal(err)
	}
	want("answered thread", decide(b.ID, changed), "allow: allowed for this thread")
	want("answered thread, the server's tool", decide(b.ID, server), "ask: ")
}

// backendTools offers one sandboxed tool, "run", whose calls a backend
// runs (the Result names it), and records the calls.
type backendTools struct {
	mu     sync.Mutex
	called []string
}

func (b *backendTools) Tools(context.Context) ([]Tool, error) {
	return []Tool{{Name: "run", Server: SandboxServer, InputSchema: object, Hints: HintsOf(nil),
		Ref: ToolRef{Sandbox: true, Tool: "run", Hash: "sha256:run", Fingerprint: "runsc"}}}, nil
}

func (b *backendTools) Call(_ context.Context, t Tool, args json.RawMessage, _ string) (Result, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.called = append(b.called, t.Name+" "+string(args))
	if string(args) == `{"x":2}` {
		return Result{Text: "killed", IsError: true, Backend: "runsc", Outcome: "memory_killed"}, nil
	}
	return Result{Text: "ran " + string(args), Backend: "runsc"}, nil
}

// TestLoopCallEvent: a call a backend ran is stored with a call event
// that names the run, the call, the tool, the backend and the outcome,
// right before its result (after the allowance it ran under), in one
// append; a call of a tool the toolbox does not offer (a server's, as a
// host thread would have) is refused and nothing runs.
func TestLoopCallEvent(t *testing.T) {
	ctx := context.Background()
	f := newLoop(t,
		calls(modeltest.Call("c1", "run", `{"x":1}`), modeltest.Call("c2", "run", `{"x":2}`), modeltest.Call("c3", "srv__echo", `{"x":3}`)),
	)
	tools := &backendTools{}
	if _, err := f.s.SetSandboxSettings(ctx, "user:owner", SandboxSettings{Approval: Allow}); err != nil {
		t.Fatal(err)
	}
	run, err := f.r.Start(ctx, Start{Thread: f.thread.ID, Prompt: "go", Actor: "owner", Model: f.model, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if r := f.wait(run); r.Status != Completed {
		t.Fatalf("run: %+v", r)
	}
	f.valid()
	if d := cmp.Diff([]string{`run {"x":1}`, `run {"x":2}`}, tools.called); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
	events, _ := f.s.Events(ctx, f.thread.ID, 0)
	var kinds []string
	var calls []CallEvent
	for _, e := range events {
		kinds = append(kinds, e.Kind)
		if e.Kind == KindCall {
			var c CallEvent
			json.Unmarshal(e.Body, &c)
			calls = append(calls, c)
		}
		if e.Kind == KindMessage && strings.Contains(string(e.Body), `"c3"`) && strings.Contains(string(e.Body), `"tool"`) &&
			!strings.Contains(string(e.Body), `there is no tool \"srv__echo\" offered`) {
			t.Errorf("the call of a tool not offered: %s", e.Body)
		}
	}
	want := "message message usage allowance call message allowance call message message message usage run"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	wantCalls := []CallEvent{
		{Run: run.ID, CallID: "c1", Name: "run", Backend: "runsc", Outcome: OutcomeOK},
		{Run: run.ID, CallID: "c2", Name: "run", Backend: "runsc", Outcome: "memory_killed"},
	}
	if d := cmp.Diff(wantCalls, calls); d != "" {
		t.Errorf("call events (-want +got):\n%s", d)
	}
	// In one append: the call event and the result have one time.
	for i, e := range events {
		if e.Kind == KindCall && (i+1 >= len(events) || !events[i+1].Created.Equal(e.Created)) {
			t.Errorf("the call event %d was not stored with its result", e.Seq)
		}
	}
}
