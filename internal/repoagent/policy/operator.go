package policy

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Operator is the deployment's configuration. Only an operator sets it, in
// a file of their own: nothing in a repository or an event can change it.
type Operator struct {
	Ceiling      Mode            // the highest mode any run may have; default Observe
	Isolation    []string        // isolation levels this deployment can provide: Local, Container; default [Local]
	EventModes   map[string]Mode // what each webhook event kind asks for; an event kind not here asks for Observe
	Repositories []OperatorRepo  // the repositories Agent Zero may work on; none by default
	CheckTimeout time.Duration   // how long each check may run; default DefaultCheckTimeout
	// SandboxReadOnly are host directories the container shows read-only to
	// the checks, besides /usr and /etc: a toolchain installed elsewhere
	// (/opt/go, a pyenv root). Absolute and clean; none by default.
	SandboxReadOnly []string
	// CheckLimits bound each check that runs in the container, under
	// cgroups; default DefaultCheckLimits.
	CheckLimits Limits
}

// Limits bound one check's resources in the container.
type Limits struct {
	MemoryMiB  int // memory, swap included, in MiB
	CPUPercent int // CPU time, in percent of one CPU
	Pids       int // processes and threads at once
}

// DefaultCheckLimits are the operator's check limits unless set:
// 2 GiB, two CPUs, 1024 processes.
var DefaultCheckLimits = Limits{MemoryMiB: 2048, CPUPercent: 200, Pids: 1024}

// Bounds of the operator's check limits.
var (
	MinCheckLimits = Limits{MemoryMiB: 16, CPUPercent: 1, Pids: 8}
	MaxCheckLimits = Limits{MemoryMiB: 1 << 20, CPUPercent: 12800, Pids: 1 << 16}
)

// limits reads a limits mapping over base; name is its field, for errors.
func (f *limitsFile) limits(base Limits, name string) (Limits, error) {
	for _, l := range []struct {
		name     string
		v        *floatField
		to       *int
		min, max int
	}{
		{"memoryMiB", f.MemoryMiB, &base.MemoryMiB, MinCheckLimits.MemoryMiB, MaxCheckLimits.MemoryMiB},
		{"cpuPercent", f.CPUPercent, &base.CPUPercent, MinCheckLimits.CPUPercent, MaxCheckLimits.CPUPercent},
		{"pids", f.Pids, &base.Pids, MinCheckLimits.Pids, MaxCheckLimits.Pids},
	} {
		if l.v == nil {
			continue
		}
		n := float64(*l.v)
		if n != float64(int(n)) || int(n) < l.min || int(n) > l.max {
			return Limits{}, fmt.Errorf("%s.%s %v: want a whole number from %d to %d", name, l.name, n, l.min, l.max)
		}
		*l.to = int(n)
	}
	return base, nil
}

// LimitsFor returns the limits of p's checks: the operator's, each lowered
// to p's runner.limits where that is lower; a repository never raises one.
func (o Operator) LimitsFor(p Repo) Limits {
	l := o.CheckLimits
	lower := func(to *int, v int) {
		if v > 0 && v < *to {
			*to = v
		}
	}
	lower(&l.MemoryMiB, p.Runner.Limits.MemoryMiB)
	lower(&l.CPUPercent, p.Runner.Limits.CPUPercent)
	lower(&l.Pids, p.Runner.Limits.Pids)
	return l
}

// Bounds of the operator's checkTimeout.
const (
	DefaultCheckTimeout = 10 * time.Minute
	MinCheckTimeout     = time.Second
	MaxCheckTimeout     = time.Hour
)

// MaxSandboxReadOnly bounds the operator's sandboxReadOnly list.
const MaxSandboxReadOnly = 32

// OperatorRepo is one enabled repository.
type OperatorRepo struct {
	Name   string // "owner/name", or "group/sub/name" on GitLab
	Path   string // the absolute, clean path of its local checkout
	Remote string // the git remote to push to; default "origin"
}

// eventKinds are the webhook event kinds eventModes may name.
var eventKinds = []string{"pull_request", "push", "issue", "issue_comment"}

// DefaultOperator is the configuration of a deployment without a file:
// ceiling Observe, local isolation only, every event observed, no
// repository enabled, checks cut after DefaultCheckTimeout, and nothing
// shown to the container beyond /usr and /etc.
func DefaultOperator() Operator {
	return Operator{Ceiling: Observe, Isolation: []string{Local}, CheckTimeout: DefaultCheckTimeout, CheckLimits: DefaultCheckLimits}
}

// The decoding form of the operator's file: nil is absent.
type (
	operatorFile struct {
		Ceiling      *modeField           `yaml:"ceiling"`
		Isolation    *[]stringField       `yaml:"isolation"`
		EventModes   map[string]modeField `yaml:"eventModes"`
		Repositories []operatorRepoFile   `yaml:"repositories"`
		CheckTimeout *stringField         `yaml:"checkTimeout"`
		ReadOnly     *[]stringField       `yaml:"sandboxReadOnly"`
		CheckLimits  *limitsFile          `yaml:"checkLimits"`
	}
	limitsFile struct {
		MemoryMiB  *floatField `yaml:"memoryMiB"`
		CPUPercent *floatField `yaml:"cpuPercent"`
		Pids       *floatField `yaml:"pids"`
	}
	operatorRepoFile struct {
		Name   *stringField `yaml:"name"`
		Path   *stringField `yaml:"path"`
		Remote *stringField `yaml:"remote"`
	}
)

var segmentRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]+$`) })

const (
	maxName = 1024 // bytes in a repository name
	maxPath = 4096 // bytes in a checkout path
)

// ParseOperator parses the operator's configuration, as strictly as
// ParseRepo parses .agent-zero.yml. An empty file is DefaultOperator().
// Fields left out, or set to null, take DefaultOperator()'s values; a
// repository's remote defaults to "origin".
//
// A repository name is two or more segments of [A-Za-z0-9._-], none "." or
// "..", none starting with "-"; names are unique ignoring case. A path is
// absolute and clean, not the root, and no checkout lies inside another.
// A remote is [A-Za-z0-9._-]+, not starting with "-" or ".", without "..",
// not ending in ".lock".
func ParseOperator(data []byte) (Operator, error) {
	empty, err := readDocument(data, "ceiling, isolation, eventModes, repositories, checkTimeout, sandboxReadOnly, checkLimits")
	if err != nil || empty {
		return DefaultOperator(), err
	}
	var f operatorFile
	if err := decodeStrict(data, &f); err != nil {
		return DefaultOperator(), err
	}
	o, err := f.operator()
	if err != nil {
		return DefaultOperator(), err
	}
	return o, nil
}

func (f operatorFile) operator() (Operator, error) {
	o := DefaultOperator()
	if f.Ceiling != nil {
		o.Ceiling = Mode(*f.Ceiling)
	}
	if f.Isolation != nil {
		if len(*f.Isolation) == 0 {
			return Operator{}, fmt.Errorf("isolation: list at least one of local, container")
		}
		o.Isolation = nil
		for _, s := range *f.Isolation {
			iso := string(s)
			if iso != Local && iso != Container {
				return Operator{}, fmt.Errorf("isolation %s: must be local or container", quoteShort(iso))
			}
			if slices.Contains(o.Isolation, iso) {
				return Operator{}, fmt.Errorf("isolation: %s is listed twice", iso)
			}
			o.Isolation = append(o.Isolation, iso)
		}
	}
	if f.CheckTimeout != nil {
		d, err := time.ParseDuration(string(*f.CheckTimeout))
		if err != nil || d < MinCheckTimeout || d > MaxCheckTimeout {
			return Operator{}, fmt.Errorf("checkTimeout %s: want a duration from %v to %v, like 10m", quoteShort(string(*f.CheckTimeout)), MinCheckTimeout, MaxCheckTimeout)
		}
		o.CheckTimeout = d
	}
	if f.CheckLimits != nil {
		var err error
		if o.CheckLimits, err = f.CheckLimits.limits(o.CheckLimits, "checkLimits"); err != nil {
			return Operator{}, err
		}
	}
	if f.ReadOnly != nil {
		if len(*f.ReadOnly) > MaxSandboxReadOnly {
			return Operator{}, fmt.Errorf("sandboxReadOnly: %d directories, at most %d", len(*f.ReadOnly), MaxSandboxReadOnly)
		}
		for _, s := range *f.ReadOnly {
			dir := string(s)
			if err := checkAbsPath(dir); err != nil {
				return Operator{}, fmt.Errorf("sandboxReadOnly: %w", err)
			}
			if slices.Contains(o.SandboxReadOnly, dir) {
				return Operator{}, fmt.Errorf("sandboxReadOnly: %s is listed twice", quoteShort(dir))
			}
			o.SandboxReadOnly = append(o.SandboxReadOnly, dir)
		}
	}
	for _, kind := range slices.Sorted(maps.Keys(f.EventModes)) {
		if !slices.Contains(eventKinds, kind) {
			return Operator{}, fmt.Errorf("eventModes: unknown event kind %s (want pull_request, push, issue or issue_comment)", quoteShort(kind))
		}
		if o.EventModes == nil {
			o.EventModes = map[string]Mode{}
		}
		o.EventModes[kind] = Mode(f.EventModes[kind])
	}
	names := map[string]bool{}
	paths := map[string]string{}
	for i, rf := range f.Repositories {
		r, err := rf.repo()
		if err != nil {
			return Operator{}, fmt.Errorf("repositories[%d]: %w", i, err)
		}
		key := strings.ToLower(r.Name)
		if names[key] {
			return Operator{}, fmt.Errorf("repositories[%d]: %s is listed twice", i, quoteShort(r.Name))
		}
		names[key] = true
		if other, ok := paths[r.Path]; ok {
			return Operator{}, fmt.Errorf("repositories[%d]: path %s is also %s's", i, quoteShort(r.Path), other)
		}
		paths[r.Path] = r.Name
		o.Repositories = append(o.Repositories, r)
	}
	// No checkout inside another: a run on one could change the other.
	for _, r := range o.Repositories {
		for d := filepath.Dir(r.Path); ; d = filepath.Dir(d) {
			if other, ok := paths[d]; ok {
				return Operator{}, fmt.Errorf("repositories: %s's path %s is inside %s's", r.Name, quoteShort(r.Path), other)
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return o, nil
}

func (rf operatorRepoFile) repo() (OperatorRepo, error) {
	if rf.Name == nil || rf.Path == nil {
		return OperatorRepo{}, fmt.Errorf("name and path are required")
	}
	r := OperatorRepo{Name: string(*rf.Name), Path: string(*rf.Path), Remote: "origin"}
	if rf.Remote != nil {
		r.Remote = string(*rf.Remote)
	}
	if err := checkRepoName(r.Name); err != nil {
		return OperatorRepo{}, err
	}
	if err := checkAbsPath(r.Path); err != nil {
		return OperatorRepo{}, err
	}
	if err := checkRemote(r.Remote); err != nil {
		return OperatorRepo{}, err
	}
	return r, nil
}

func checkRepoName(name string) error {
	segs := strings.Split(name, "/")
	if len(name) > maxName || len(segs) < 2 {
		return fmt.Errorf("name %s: want owner/name or group/sub/name", quoteShort(name))
	}
	for _, s := range segs {
		if !segmentRE().MatchString(s) || s == "." || s == ".." || strings.HasPrefix(s, "-") {
			return fmt.Errorf("name %s: segment %s must be [A-Za-z0-9._-]+, not . or .., not starting with -", quoteShort(name), quoteShort(s))
		}
	}
	return nil
}

func checkAbsPath(p string) error {
	if bad := plainText(p); bad != "" {
		return fmt.Errorf("path %s", bad)
	}
	if len(p) > maxPath || !filepath.IsAbs(p) || filepath.Clean(p) != p || filepath.Dir(p) == p {
		return fmt.Errorf("path %s: must be an absolute, clean path below the root", quoteShort(p))
	}
	return nil
}

func checkRemote(remote string) error {
	if !segmentRE().MatchString(remote) || len(remote) > 255 || strings.HasPrefix(remote, "-") ||
		strings.HasPrefix(remote, ".") || strings.Contains(remote, "..") || strings.HasSuffix(remote, ".lock") {
		return fmt.Errorf("remote %s: want a git remote name like origin", quoteShort(remote))
	}
	return nil
}

// Repository returns the enabled repository called name, ignoring case as
// GitHub and GitLab do.
func (o Operator) Repository(name string) (OperatorRepo, bool) {
	for _, r := range o.Repositories {
		if strings.EqualFold(r.Name, name) {
			return r, true
		}
	}
	return OperatorRepo{}, false
}

// EventMode returns the mode an event of this kind asks for: Observe unless
// the operator configured one.
func (o Operator) EventMode(kind string) Mode {
	if m, ok := o.EventModes[kind]; ok && m.valid() {
		return m
	}
	return Observe
}

// Provides reports whether this deployment can provide the isolation level.
func (o Operator) Provides(isolation string) bool {
	return slices.Contains(o.Isolation, isolation)
}

// MarshalYAML writes o in the shape of the operator's file, so that
// ParseOperator reads back o.
func (o Operator) MarshalYAML() (any, error) {
	type repo struct {
		Name   string `yaml:"name"`
		Path   string `yaml:"path"`
		Remote string `yaml:"remote"`
	}
	type file struct {
		Ceiling         string            `yaml:"ceiling"`
		Isolation       []string          `yaml:"isolation"`
		EventModes      map[string]string `yaml:"eventModes,omitempty"`
		Repositories    []repo            `yaml:"repositories,omitempty"`
		CheckTimeout    string            `yaml:"checkTimeout"`
		SandboxReadOnly []string          `yaml:"sandboxReadOnly,omitempty"`
		CheckLimits     map[string]int    `yaml:"checkLimits"`
	}
	if !o.Ceiling.valid() {
		return nil, fmt.Errorf("marshal operator: ceiling %v is not a mode", o.Ceiling)
	}
	f := file{Ceiling: o.Ceiling.String(), Isolation: o.Isolation, CheckTimeout: o.CheckTimeout.String(), SandboxReadOnly: o.SandboxReadOnly,
		CheckLimits: map[string]int{"memoryMiB": o.CheckLimits.MemoryMiB, "cpuPercent": o.CheckLimits.CPUPercent, "pids": o.CheckLimits.Pids}}
	for kind, m := range o.EventModes {
		if !m.valid() {
			return nil, fmt.Errorf("marshal operator: event mode %v is not a mode", m)
		}
		if f.EventModes == nil {
			f.EventModes = map[string]string{}
		}
		f.EventModes[kind] = m.String()
	}
	for _, r := range o.Repositories {
		f.Repositories = append(f.Repositories, repo(r))
	}
	return f, nil
}
