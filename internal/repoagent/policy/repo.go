package policy

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/zero-dev/zero/internal/guard/spawn"
)

// Limits on a repository's checks.
const (
	MaxChecks   = 20   // checks in .agent-zero.yml
	MaxArgs     = 64   // program and arguments in one check
	MaxArgBytes = 4096 // bytes in one program or argument
)

// DefaultMinConfidence is autofix.minConfidence when the file does not set
// it: a change the model is less than 90% confident in is not applied.
const DefaultMinConfidence = 0.9

// Isolation levels a repository may ask for in runner.isolation, an
// operator may provide, and the runner reports as what ran.
const (
	Local     = "local"     // the runner's own user, no sandbox
	Container = "container" // an ephemeral sandbox: the only level that counts as isolated
)

// Repo is a repository's policy, .agent-zero.yml.
type Repo struct {
	Mode    Mode
	Autofix Autofix
	Checks  [][]string // each an argv array, run without a shell
	Runner  Runner
}

// Autofix says which proposed changes may be applied without a human.
type Autofix struct {
	Enabled            bool
	MinConfidence      float64  // in [0, 1]
	AllowedChangeRisks []string // risk classes; high-impact ones are held whatever this says
	RequireIsolated    bool     // issue and proactive work write only from an isolated runner
}

// Runner says where the repository's checks should run.
type Runner struct {
	Isolation string // Local or Container
	// Limits may lower the operator's check limits (Operator.LimitsFor),
	// never raise them; a zero field leaves the operator's.
	Limits Limits
}

// Default is the policy of a repository without .agent-zero.yml: observe,
// autofix disabled, minConfidence DefaultMinConfidence, no change risk
// allowed, isolation required, the local runner and no checks. Every field
// .agent-zero.yml leaves out takes its value from here.
func Default() Repo {
	return Repo{
		Mode:    Observe,
		Autofix: Autofix{MinConfidence: DefaultMinConfidence, RequireIsolated: true},
		Runner:  Runner{Isolation: Local},
	}
}

// The decoding form of .agent-zero.yml: nil is absent.
type (
	repoFile struct {
		Mode    *modeField   `yaml:"mode"`
		Autofix *autofixFile `yaml:"autofix"`
		Checks  []argvField  `yaml:"checks"`
		Runner  *runnerFile  `yaml:"runner"`
	}
	autofixFile struct {
		Enabled            *boolField    `yaml:"enabled"`
		MinConfidence      *floatField   `yaml:"minConfidence"`
		AllowedChangeRisks []stringField `yaml:"allowedChangeRisks"`
		RequireIsolated    *boolField    `yaml:"requireIsolated"`
	}
	runnerFile struct {
		Isolation *stringField `yaml:"isolation"`
		Limits    *limitsFile  `yaml:"limits"`
	}
)

// ParseRepo parses .agent-zero.yml. An empty file (or one holding only
// comments) is Default(). Fields left out, or set to null, take Default()'s
// values. knownRisk reports whether a change-risk class exists; a nil
// knownRisk knows none. On any error the caller must run in observe mode:
// see ParseRepoOrObserve.
//
// Decoding is strict: unknown fields, wrong types (`enabled: "yes"`,
// `mode: 3`), YAML anchors, aliases and merge keys, more than one document
// and files over MaxSize are errors. So are a key named like a credential
// or an endpoint and any value holding "://", anywhere in the file, even in
// a check's arguments ([ErrEndpointOrCredential]); and a check argument that
// is or holds a shell operator ([ErrShellOperator]).
func ParseRepo(data []byte, knownRisk func(string) bool) (Repo, error) {
	empty, err := readDocument(data, "mode, autofix, checks, runner")
	if err != nil || empty {
		return Default(), err
	}
	var f repoFile
	if err := decodeStrict(data, &f); err != nil {
		return Default(), err
	}
	r, err := f.repo(knownRisk)
	if err != nil {
		return Default(), err
	}
	return r, nil
}

// ParseRepoOrObserve is ParseRepo for a caller about to act on the result:
// on error it returns Default(), whose mode is Observe, with the error to
// report. It is the same as ParseRepo, which also returns Default() on
// error, but says so in its name.
func ParseRepoOrObserve(data []byte, knownRisk func(string) bool) (Repo, error) {
	r, err := ParseRepo(data, knownRisk)
	if err != nil {
		return Default(), err
	}
	return r, nil
}

func (f repoFile) repo(knownRisk func(string) bool) (Repo, error) {
	r := Default()
	if f.Mode != nil {
		r.Mode = Mode(*f.Mode)
	}
	if a := f.Autofix; a != nil {
		if a.Enabled != nil {
			r.Autofix.Enabled = bool(*a.Enabled)
		}
		if a.MinConfidence != nil {
			c := float64(*a.MinConfidence)
			if math.IsNaN(c) || c < 0 || c > 1 {
				return Repo{}, fmt.Errorf("autofix.minConfidence %v: must be between 0 and 1", c)
			}
			r.Autofix.MinConfidence = c
		}
		if a.RequireIsolated != nil {
			r.Autofix.RequireIsolated = bool(*a.RequireIsolated)
		}
		for _, s := range a.AllowedChangeRisks {
			class := string(s)
			if knownRisk == nil || !knownRisk(class) {
				return Repo{}, fmt.Errorf("autofix.allowedChangeRisks: unknown change-risk class %s", quoteShort(class))
			}
			if slices.Contains(r.Autofix.AllowedChangeRisks, class) {
				return Repo{}, fmt.Errorf("autofix.allowedChangeRisks: %s is listed twice", quoteShort(class))
			}
			r.Autofix.AllowedChangeRisks = append(r.Autofix.AllowedChangeRisks, class)
		}
	}
	if len(f.Checks) > MaxChecks {
		return Repo{}, fmt.Errorf("checks: %d checks, at most %d", len(f.Checks), MaxChecks)
	}
	for i, c := range f.Checks {
		if err := checkArgv(i, c.argv); err != nil {
			return Repo{}, fmt.Errorf("line %d: %w", c.line, err)
		}
		r.Checks = append(r.Checks, c.argv)
	}
	if f.Runner != nil && f.Runner.Isolation != nil {
		iso := string(*f.Runner.Isolation)
		if iso != Local && iso != Container {
			return Repo{}, fmt.Errorf("runner.isolation %s: must be local or container", quoteShort(iso))
		}
		r.Runner.Isolation = iso
	}
	if f.Runner != nil && f.Runner.Limits != nil {
		var err error
		if r.Runner.Limits, err = f.Runner.Limits.limits(Limits{}, "runner.limits"); err != nil {
			return Repo{}, err
		}
	}
	return r, nil
}

// checkArgv checks the i-th check (counted from 0).
func checkArgv(i int, argv []string) error {
	if len(argv) == 0 || len(argv) > MaxArgs {
		return fmt.Errorf("checks[%d]: %d elements, want 1 to %d (program and arguments)", i, len(argv), MaxArgs)
	}
	for j, a := range argv {
		what := fmt.Sprintf("checks[%d] argument %d", i, j)
		if j == 0 {
			what = fmt.Sprintf("checks[%d] program", i)
		}
		if len(a) == 0 || len(a) > MaxArgBytes {
			return fmt.Errorf("%s: %d bytes, want 1 to %d", what, len(a), MaxArgBytes)
		}
		// NUL first, then the operators (newline is one), then the rest.
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("%s: contains NUL", what)
		}
		if op := spawn.ShellOperator(a); op != "" {
			return fmt.Errorf("%s %s is or contains the shell operator %q: %w", what, quoteShort(a), op, ErrShellOperator)
		}
		if bad := plainText(a); bad != "" {
			return fmt.Errorf("%s %s", what, bad)
		}
	}
	return nil
}

// MarshalYAML writes r in the shape of .agent-zero.yml, every field
// spelled out, so that ParseRepo reads back r.
func (r Repo) MarshalYAML() (any, error) {
	if !r.Mode.valid() {
		return nil, fmt.Errorf("marshal policy: mode %v is not a mode", r.Mode)
	}
	type autofix struct {
		Enabled            bool     `yaml:"enabled"`
		MinConfidence      float64  `yaml:"minConfidence"`
		AllowedChangeRisks []string `yaml:"allowedChangeRisks,omitempty"`
		RequireIsolated    bool     `yaml:"requireIsolated"`
	}
	type limits struct {
		MemoryMiB  int `yaml:"memoryMiB,omitempty"`
		CPUPercent int `yaml:"cpuPercent,omitempty"`
		Pids       int `yaml:"pids,omitempty"`
	}
	type runner struct {
		Isolation string `yaml:"isolation"`
		Limits    limits `yaml:"limits,omitempty"`
	}
	type file struct {
		Mode    string     `yaml:"mode"`
		Autofix autofix    `yaml:"autofix"`
		Checks  [][]string `yaml:"checks,omitempty"`
		Runner  runner     `yaml:"runner"`
	}
	return file{
		Mode:    r.Mode.String(),
		Autofix: autofix(r.Autofix),
		Checks:  r.Checks,
		Runner:  runner{Isolation: r.Runner.Isolation, Limits: limits(r.Runner.Limits)},
	}, nil
}
