package workspace

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/zero-dev/zero/internal/plugin/host"
	"github.com/zero-dev/zero/internal/sandbox"
	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// sandboxRoutes are the routes of the owner's sandbox settings: the owner
// reads them; only the owner in a browser changes them, as the approval
// timeout, since "allow" lets sandboxed calls run without asking.
func (w *Workspace) sandboxRoutes(mux *http.ServeMux) {
	mux.Handle("GET /api/sandbox/settings", w.api(owner, w.sandboxSettings))
	mux.Handle("PUT /api/sandbox/settings", w.api(approval, w.setSandboxSettings))
}

func (w *Workspace) sandboxSettings(r *http.Request, _ *auth.Caller) (any, error) {
	return w.threads.SandboxSettings(r.Context())
}

func (w *Workspace) setSandboxSettings(r *http.Request, c *auth.Caller) (any, error) {
	var req struct {
		Pin      string `json:"pin"`
		Minimum  string `json:"minimum"`
		Approval string `json:"approval"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	return w.saveSandboxSettings(r.Context(), c, threads.SandboxSettings{Pin: req.Pin, Minimum: req.Minimum, Approval: req.Approval})
}

// saveSandboxSettings saves set for c, and records it; settings refused
// are a 400 that says why.
func (w *Workspace) saveSandboxSettings(ctx context.Context, c *auth.Caller, set threads.SandboxSettings) (threads.SandboxSettings, error) {
	saved, err := w.threads.SetSandboxSettings(ctx, c.Actor(), set)
	if errors.Is(err, threads.ErrInvalid) {
		return saved, fail(http.StatusBadRequest, "invalid_settings", "%v", err)
	}
	if err != nil {
		return saved, err
	}
	return saved, w.record(c, "sandbox.settings", "sandbox", map[string]string{"pin": saved.Pin, "minimum": saved.Minimum, "approval": saved.Approval})
}

// sandboxes are the sandbox backends' runners, made once: Options'
// SandboxRunners, else sandbox.DefaultRunners with the guest helper and
// node (when found) as the programs of Docker's images.
type sandboxes struct {
	once    sync.Once
	runners []sandbox.Runner
	node    string // node's path, "" when there is none that runs plugins
}

// sandboxRunners returns the runners, and node's path.
func (w *Workspace) sandboxRunners(ctx context.Context) ([]sandbox.Runner, string) {
	s := &w.sandboxes
	s.once.Do(func() {
		if n, err := host.FindNode(context.WithoutCancel(ctx), "node"); err == nil {
			s.node = n.Path
		}
		s.runners = w.opts.SandboxRunners
		if s.runners == nil {
			// A Docker guest's image is made of node and the helper, and
			// its probe lists /work with the helper: what every file tool
			// needs.
			var programs []string
			for _, p := range []string{w.opts.SandboxHelper, s.node} {
				if p != "" {
					programs = append(programs, p)
				}
			}
			probe := append(append([]string{w.opts.SandboxHelper}, w.opts.SandboxHelperArgs...), "list", sandbox.WorkDir)
			s.runners = sandbox.DefaultRunners(w.opts.SandboxDockerHost, probe, programs...)
		}
	})
	return s.runners, s.node
}

// chooseBackend returns the strongest runner p allows whose probe passes;
// none is a 409 sandbox_unavailable with the reason.
func (w *Workspace) chooseBackend(ctx context.Context, p sandbox.Policy) (sandbox.Runner, error) {
	runners, _ := w.sandboxRunners(ctx)
	r, err := sandbox.Choose(ctx, runners, p)
	if err != nil {
		return nil, fail(http.StatusConflict, "sandbox_unavailable", "%v", err)
	}
	return r, nil
}

// A backendProbe is one backend as the settings page shows it: whether a
// runner of it is here, and its probe's answer.
type backendProbe struct {
	Backend   sandbox.Backend
	Provided  bool
	Problem   string // "" when its probe passed
	Isolation string // what keeps its guest apart, for the page
}

// probeWall bounds the settings page's probes, which run at once.
const probeWall = 20 * time.Second

// probeBackends probes every backend, in sandbox.Tiers' order.
func (w *Workspace) probeBackends(ctx context.Context) []backendProbe {
	runners, _ := w.sandboxRunners(ctx)
	ctx, cancel := context.WithTimeout(ctx, probeWall)
	defer cancel()
	out := make([]backendProbe, len(sandbox.Tiers))
	var wg sync.WaitGroup
	for i, b := range sandbox.Tiers {
		out[i] = backendProbe{Backend: b, Problem: "not provided by this build"}
		for _, r := range runners {
			if r.Backend() != b {
				continue
			}
			out[i] = backendProbe{Backend: b, Provided: true}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := r.Probe(ctx); err != nil {
					out[i].Problem = err.Error()
				}
			}()
			break
		}
	}
	wg.Wait()
	return out
}
