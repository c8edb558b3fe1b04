package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSmolVMRefuses: without a usable KVM device the smolvm probe refuses
// and says why; Run refuses with ErrUnavailable and that reason, and runs
// nothing; Choose with smolvm pinned returns ErrUnavailable naming it,
// even where bubblewrap is usable.
func TestSmolVMRefuses(t *testing.T) {
	ctx := context.Background()
	notKVM := filepath.Join(newWorkspace(t), "kvm")
	must(t, os.WriteFile(notKVM, nil, 0o644))
	for _, c := range []struct {
		r    SmolVMRunner
		want string
	}{
		{SmolVMRunner{KVM: filepath.Join(newWorkspace(t), "absent")}, "no usable"},
		{SmolVMRunner{KVM: notKVM}, "answers no KVM API version"},
		{SmolVMRunner{}, ""}, // this machine: refused, whatever the reason
	} {
		err := c.r.Probe(ctx)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: probe = %v, want %q", c.r, err, c.want)
			continue
		}
		ws := newWorkspace(t)
		res, runErr := c.r.Run(ctx, Guest{Argv: []string{"/bin/sh", "-c", "touch /work/ran"}, Workspace: ws})
		if !errors.Is(runErr, ErrUnavailable) || !strings.Contains(runErr.Error(), err.Error()) || res.Backend != SmolVM {
			t.Errorf("%+v: Run = %+v, %v; want ErrUnavailable with %q", c.r, res, runErr, err)
		}
		if entries, _ := os.ReadDir(ws); len(entries) != 0 {
			t.Errorf("%+v: Run ran the guest", c.r)
		}
	}
	if _, err := os.Stat("/dev/kvm"); errors.Is(err, os.ErrNotExist) {
		err := (SmolVMRunner{}).Probe(ctx)
		if err == nil || !strings.Contains(err.Error(), "no usable /dev/kvm") {
			t.Errorf("probe without /dev/kvm = %v", err)
		}
	}
	r, err := Choose(ctx, []Runner{SmolVMRunner{}, BubblewrapRunner{}}, Policy{Pin: SmolVM})
	if !errors.Is(err, ErrUnavailable) || r != nil || !strings.Contains(err.Error(), "smolvm: ") {
		t.Errorf("Choose pinned to smolvm = %v, %v; want ErrUnavailable naming smolvm's reason", r, err)
	}
	t.Logf("%v", err)
}

// TestChooseBubblewrap: with bubblewrap usable here, a policy that allows
// it gets it, and one with a minimum above it does not.
func TestChooseBubblewrap(t *testing.T) {
	requireBubblewrap(t)
	ctx := context.Background()
	runners := []Runner{SmolVMRunner{}, BubblewrapRunner{}}
	if r, err := Choose(ctx, runners, Policy{}); err != nil || r.Backend() != Bubblewrap {
		t.Errorf("Choose = %v, %v; want bubblewrap", r, err)
	}
	if r, err := Choose(ctx, runners, Policy{Minimum: Docker}); !errors.Is(err, ErrUnavailable) || r != nil {
		t.Errorf("Choose with minimum docker = %v, %v; want ErrUnavailable", r, err)
	}
}
