// Package sandbox runs one program in a fresh, disposable guest, on the
// strongest backend the host really provides: a microVM (smolvm), Docker
// with gVisor, gVisor's runsc alone, Docker, or bubblewrap. Each backend has
// a probe that really starts a guest. A guest has no network at all, a
// cleared environment, the workspace (or a scratch copy of it) at /work and
// nothing else of the host's that the program does not need, read-only; a
// non-root user; a read-only root; memory, process and CPU limits; and a
// wall-time limit. Nothing here ever runs a program on the host instead:
// when no allowed backend is usable, the answer is ErrUnavailable and the
// reason.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A Backend names one way of making a guest.
type Backend string

// The backends, strongest first.
const (
	SmolVM      Backend = "smolvm"       // a microVM: its own kernel; needs a usable /dev/kvm
	DockerRunsc Backend = "docker-runsc" // Docker with the gVisor runtime
	Runsc       Backend = "runsc"        // gVisor's runsc alone, from an OCI bundle, no daemon
	Docker      Backend = "docker"       // Docker with runc: the host's kernel
	Bubblewrap  Backend = "bubblewrap"   // namespaces: the host's kernel
)

// Tiers are the backends, strongest first.
var Tiers = []Backend{SmolVM, DockerRunsc, Runsc, Docker, Bubblewrap}

// Tier is b's place in Tiers, 0 the strongest; -1 for an unknown backend.
func (b Backend) Tier() int { return slices.Index(Tiers, b) }

// ParseBackend reads a backend's name.
func ParseBackend(s string) (Backend, error) {
	if b := Backend(s); b.Tier() >= 0 {
		return b, nil
	}
	names := make([]string, len(Tiers))
	for i, b := range Tiers {
		names[i] = string(b)
	}
	return "", fmt.Errorf("sandbox backend %q: want one of %s", s, strings.Join(names, ", "))
}

// A Guest is one program to run in a fresh guest.
type Guest struct {
	// Argv is the program and its arguments: argv[0] is a path inside the
	// guest. No shell reads it.
	Argv []string
	// Workspace is a host folder, absolute and canonical, that the guest
	// sees at /work: a scratch copy of it when Copy is set (what the
	// program changes is thrown away with the guest), else the folder
	// itself, read-write.
	Workspace string
	Copy      bool
	// ReadOnly are host files or folders the guest also sees, read-only,
	// each at its own path: a program (and what it loads) that is not in
	// the host's /usr, which bubblewrap and runsc guests see anyway. Each
	// is absolute and canonical; see Guest.check for what is refused.
	ReadOnly []string
	// Stdin is the program's standard input.
	Stdin []byte
	// Limits bound the guest; zero fields take the defaults.
	Limits Limits
}

// WorkDir is where a guest sees its workspace.
const WorkDir = "/work"

// Limits bound one guest.
type Limits struct {
	MemoryBytes int64         // 0: DefaultMemory
	Pids        int           // processes and threads at once; 0: DefaultPids
	CPUPercent  int           // of one CPU; 0: DefaultCPUPercent
	Wall        time.Duration // from start to kill; 0: DefaultWall
}

// Defaults of Limits.
const (
	DefaultMemory     = 256 << 20
	DefaultPids       = 64
	DefaultCPUPercent = 100
	DefaultWall       = 60 * time.Second
)

// WithDefaults returns l with the defaults in place of zero fields.
func (l Limits) WithDefaults() Limits {
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = DefaultMemory
	}
	if l.Pids <= 0 {
		l.Pids = DefaultPids
	}
	if l.CPUPercent <= 0 {
		l.CPUPercent = DefaultCPUPercent
	}
	if l.Wall <= 0 {
		l.Wall = DefaultWall
	}
	return l
}

// MaxOutput bounds each of a Result's Stdout and Stderr; past it the rest
// is dropped and the Result says so.
const MaxOutput = 1 << 20

// A Result is how one guest ended.
type Result struct {
	Backend        Backend // what ran it: always set
	ExitCode       int     // -1 when it was killed
	Stdout, Stderr []byte
	OutputCut      bool // Stdout or Stderr reached MaxOutput
	TimedOut       bool // killed at Limits.Wall
	MemoryKilled   bool // killed at Limits.MemoryBytes
	Duration       time.Duration
}

// A Runner makes guests on one backend.
type Runner interface {
	Backend() Backend
	// Probe really starts a guest, and says why the backend is unusable
	// here; nil when it is usable.
	Probe(ctx context.Context) error
	// Run runs g in a fresh guest, destroyed when Run returns.
	Run(ctx context.Context, g Guest) (Result, error)
}

// ErrUnavailable reports that no backend a policy allows is usable here.
var ErrUnavailable = errors.New("sandbox_unavailable")

// A Policy says which backends may run a guest: exactly Pin, or Minimum
// and those stronger, or (both empty) any.
type Policy struct {
	Pin     Backend
	Minimum Backend
}

// Allows reports whether p lets b run a guest.
func (p Policy) Allows(b Backend) bool {
	switch {
	case p.Pin != "":
		return b == p.Pin
	case p.Minimum != "":
		return b.Tier() >= 0 && b.Tier() <= p.Minimum.Tier()
	}
	return b.Tier() >= 0
}

// Choose returns the strongest of runners that p allows and whose probe
// passes. When none does, the error wraps ErrUnavailable and says, for each
// backend p allows, why it cannot be used (a backend with no runner here
// is named as not provided).
func Choose(ctx context.Context, runners []Runner, p Policy) (Runner, error) {
	for _, b := range []Backend{p.Pin, p.Minimum} {
		if b != "" && b.Tier() < 0 {
			_, err := ParseBackend(string(b))
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}
	byBackend := map[Backend]Runner{}
	for _, r := range runners {
		byBackend[r.Backend()] = r
	}
	var why []string
	for _, b := range Tiers {
		if !p.Allows(b) {
			continue
		}
		r, ok := byBackend[b]
		if !ok {
			why = append(why, string(b)+": not provided by this build")
			continue
		}
		err := r.Probe(ctx)
		if err == nil {
			return r, nil
		}
		why = append(why, string(b)+": "+err.Error())
	}
	if len(why) == 0 {
		return nil, fmt.Errorf("%w: the policy allows no backend", ErrUnavailable)
	}
	return nil, fmt.Errorf("%w: %s", ErrUnavailable, strings.Join(why, "; "))
}
