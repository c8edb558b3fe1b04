// Package spawn is Zero's execution boundary: the only code that starts a
// process. An import test keeps os/exec here.
//
// [Run] runs a program to completion and captures its output; [Start]
// starts a long-running one, such as an MCP server on stdio, and gives
// pipes to its standard input and output, until [Process.Stop]. Both make
// the same checks and give the child the same guarantees.
//
// A command is a program and its arguments as a list (argv), never a shell
// string, and never wrapped in sh -c: shell operators in an argument are
// inert text. In strict mode ([Cmd].Strict) they are refused outright. The
// program is looked up in the child's PATH, not the parent's, its symbolic
// links are resolved, and that absolute path is what runs ([Resolve] tells
// it beforehand; [Cmd].Expect refuses to run anything else).
//
// Every child gets:
//   - an environment built by envscrub: safe defaults plus what the caller
//     declares, with loader and startup-file variables refused;
//   - a working directory checked by fsroot, run in its canonical path;
//   - a time limit (its whole lifetime, with Start), counted from the moment
//     it has started, after which its whole process group is killed;
//   - its own session and process group (no controlling terminal), killed
//     again once the child exits, so that no background process it started
//     survives it unless it left the group;
//   - capped output: each stream Zero keeps (stdout and stderr with Run,
//     stderr with Start) is kept up to a limit and drained beyond it, so a
//     child is never blocked by it;
//   - optionally, a bubblewrap sandbox ([Bubblewrap]): no network (but a
//     Unix socket, [Cmd].Socket), a read-only view of /usr and /etc (and of
//     the paths in [Cmd].ReadOnly and [Cmd].ReadOnlyFiles), a writable work
//     directory (and the paths in [Cmd].Writable) only, its own PID
//     namespace and no capabilities.
//
// The launch (the checks, the lookup of the program, the bubblewrap probe
// and the start of the process) is not counted by the time limit: a command
// that runs out of its time always gets a Result with TimedOut. The launch
// has a bound of its own, [LaunchTimeout], and the caller's context: a
// launch that outlasts either fails with an error ([ErrLaunchTimeout], or
// the context's), and what it started, if anything, is killed.
//
// Without isolation this is not a sandbox: the child runs with the user's
// permissions. docs/security/execution-boundary.md lists what is protected,
// the test that proves each claim, and what is not protected.
package spawn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/fsroot"
)

// Isolation says how a child process is confined beyond the checks every
// child gets.
type Isolation string

const (
	// None runs the child as the user, with no sandbox.
	None Isolation = "none"
	// Bubblewrap runs the child in a bubblewrap sandbox (Linux only).
	Bubblewrap Isolation = "bubblewrap"
)

// LaunchTimeout bounds a launch: the checks of a Cmd, the lookup of its
// program, the bubblewrap probe and the start of the process, which
// [Cmd].Timeout does not count. A launch that takes longer fails with
// [ErrLaunchTimeout].
const LaunchTimeout = 30 * time.Second

// launchTimeout is LaunchTimeout; a test shortens it.
var launchTimeout = LaunchTimeout

// DefaultOutputLimit is how much of each output stream Run keeps (of
// stderr, Start) when [Cmd].OutputLimit is 0.
const DefaultOutputLimit = 1 << 20

// A Cmd describes one process to run.
type Cmd struct {
	Program       string        // a program name (looked up in the child's PATH) or a path; never a shell string
	Args          []string      // the arguments, without the program name
	Dir           string        // working directory; must resolve inside Roots (fsroot rules); required
	Roots         *fsroot.Set   // required: Run refuses a nil set
	Env           envscrub.Spec // what the child's environment holds beyond the defaults
	Stdin         []byte        // nil: the child reads end of file at once; must be nil with Start
	Timeout       time.Duration // required, > 0; counted from the process's start; with Start, its maximum lifetime
	OutputLimit   int           // per stream kept; 0 means DefaultOutputLimit
	Strict        bool          // reject shell operators in Program and Args
	Isolation     Isolation     // requested; "" means None
	AllowFallback bool          // with Isolation set: run without it when bubblewrap is unavailable
	// ReadOnly are more host directories a Bubblewrap sandbox shows, read-only,
	// besides /usr and /etc (a toolchain installed elsewhere): each absolute
	// and bound at the path its links resolve to, so a program found there
	// is visible. Refused: the root, /proc, /dev and /sys and what lies in
	// them, and one the working directory holds (the work directory's
	// writable bind would cover it). Not used without isolation.
	ReadOnly []string
	// ReadOnlyFiles are host files a Bubblewrap sandbox shows read-only,
	// alone: not the directory they are in. Writable are host directories
	// or files it shows read-write besides the working directory. Socket is
	// a Unix socket on the host it shows, the one way out of a sandbox that
	// has no network. Each must exist and be absolute and canonical (no
	// symbolic link on the way: it is bound at that path); refused: the
	// root, /proc, /dev and /sys and what lies in them, one the working
	// directory holds, a writable path in /usr or /etc, and a writable path
	// that holds a read-only one (its bind would cover it). Not used
	// without isolation.
	ReadOnlyFiles []string
	Writable      []string
	Socket        string
	// WorkAt, when set, is where a Bubblewrap sandbox shows the working
	// directory, and runs the program, instead of at its own path (a
	// program in the working directory is run from there): absolute and
	// clean, and neither holding nor within /usr, /etc, /proc, /dev, /sys
	// or a path given to bind. Not used without isolation.
	WorkAt string
	// Nobody, with Bubblewrap, runs the child in a user namespace of its
	// own as user and group 65534 (nobody) instead of the caller's: run as
	// root, the child is otherwise root, without capabilities. Not used
	// without isolation.
	Nobody bool
	// Limits, when set, bound the memory, CPU and processes of the child
	// and everything it starts, under cgroups (v2 where the host has it,
	// v1 otherwise); where no hierarchy is writable nothing runs and the
	// error wraps [ErrNoCgroups]. Linux only.
	Limits *Limits
	// Expect, when set, is the absolute path Program must resolve to (see
	// [Resolve]), such as the one a person approved; if it resolves to
	// anything else, nothing runs and the error wraps [ErrProgramChanged].
	Expect string
}

// A Result is what happened to a process that ran.
type Result struct {
	ExitCode                         int    // -1 when the process was killed by a signal
	Signal                           string // e.g. "killed", empty if it exited
	Stdout, Stderr                   []byte // each up to the output limit
	StdoutTruncated, StderrTruncated bool   // the stream went on beyond the limit
	TimedOut                         bool   // killed because Timeout (from the start) or ctx's deadline passed
	Isolation                        Isolation
	Duration                         time.Duration
	// MemoryKilled reports that the kernel killed a process of the child's
	// group at its memory limit (Cmd.Limits).
	MemoryKilled bool
}

// Limits bound a child's resources; a zero field is no limit.
type Limits struct {
	MemoryBytes int64 // memory (and swap), in bytes
	CPUPercent  int   // CPU time, in percent of one CPU
	Pids        int   // processes and threads at once
}

var (
	// ErrStrict reports a shell operator in strict mode.
	ErrStrict = errors.New("shell operator refused in strict mode")
	// ErrIsolationUnavailable reports that the requested isolation cannot run
	// on this machine.
	ErrIsolationUnavailable = errors.New("isolation unavailable")
	// ErrNotFound reports a program that is not an executable file, or not
	// found in the child's PATH.
	ErrNotFound = errors.New("program not found")
	// ErrProgramChanged reports a program that resolves to another path
	// than [Cmd].Expect.
	ErrProgramChanged = errors.New("program resolves elsewhere")
	// ErrNoCgroups reports that [Cmd].Limits cannot be enforced here: no
	// cgroup hierarchy is writable.
	ErrNoCgroups = errors.New("no writable cgroup hierarchy: resource limits cannot be enforced")
	// ErrLaunchTimeout reports a launch that took longer than
	// [LaunchTimeout]: the command did not run, or was killed at once.
	ErrLaunchTimeout = errors.New("launch timed out")
)

// shellOperators are refused in strict mode, as a whole argument or inside
// one. Longer operators come first, so that the error names "||", not "|".
var shellOperators = []string{"&&", "||", "$(", "|", ";", "`", ">", "<", "\n"}

// waitDelay bounds how long the wait for a child (in Run, or behind a
// Process) lasts, after the child exited and its group was killed, for the
// output pipes os/exec copies from to close. Only a process that left the
// group (setsid) can hold them open that long; they are then closed.
const waitDelay = 500 * time.Millisecond

// Run runs c.Program and waits for it. It returns an error, and runs nothing,
// when the input is bad, the working directory is outside the roots or not a
// directory, an environment variable is refused, the program is not found,
// or the requested isolation is unavailable (without AllowFallback); and
// when ctx ends, or LaunchTimeout passes, before the process has started.
// For a process that ran, it returns a Result and a nil error, whatever the
// exit code, also when the process timed out or ctx was cancelled; the
// caller reads ctx.Err() to tell a cancellation apart.
func Run(ctx context.Context, c Cmd) (Result, error) {
	res, err := runWith(ctx, func() (*prepared, error) { return prepare(c) })
	if err != nil {
		return res, fmt.Errorf("spawn %q: %w", c.Program, err)
	}
	return res, nil
}

// prepared is a Cmd checked and turned into what the operating system runs.
type prepared struct {
	path      string   // the executable: the program, or bwrap
	argv      []string // argv[0] included
	dir       string   // canonical working directory
	env       []string
	stdin     []byte
	timeout   time.Duration
	limit     int
	isolation Isolation
	binds     binds  // what the sandbox shows besides /usr, /etc and dir
	workAt    string // where the sandbox shows dir; "" at its own path
	nobody    bool   // the sandbox runs the child as 65534 in its own user namespace
	limits    *Limits
}

func prepare(c Cmd) (*prepared, error) {
	if err := checkInput(c); err != nil {
		return nil, err
	}
	if c.Strict {
		if err := checkStrict(c); err != nil {
			return nil, err
		}
	}
	iso := c.Isolation
	if iso == "" {
		iso = None
	}
	if iso != None && iso != Bubblewrap {
		return nil, fmt.Errorf("unknown isolation %q", c.Isolation)
	}
	dir, err := workDir(c.Roots, c.Dir)
	if err != nil {
		return nil, err
	}
	env, err := envscrub.Build(c.Env)
	if err != nil {
		return nil, err
	}
	if iso == Bubblewrap {
		if err := IsolationAvailable(); err != nil {
			if !c.AllowFallback {
				return nil, err
			}
			iso = None
		}
	}
	program, err := resolve(c.Program, env, dir)
	if err != nil {
		return nil, err
	}
	if c.Expect != "" && program != c.Expect {
		return nil, fmt.Errorf("%w: %s now resolves to %s, not %s", ErrProgramChanged, c.Program, program, c.Expect)
	}
	limit := c.OutputLimit
	if limit == 0 {
		limit = DefaultOutputLimit
	}
	p := &prepared{
		path:      program,
		argv:      append([]string{c.Program}, c.Args...),
		dir:       dir,
		env:       env,
		stdin:     c.Stdin,
		timeout:   c.Timeout,
		limit:     limit,
		isolation: iso,
		limits:    c.Limits,
	}
	if iso == Bubblewrap {
		if p.binds, err = checkBinds(c); err != nil {
			return nil, err
		}
		p.workAt, p.nobody = c.WorkAt, c.Nobody
		if err := p.sandbox(isolation.bwrap, c.Env.Set); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func checkInput(c Cmd) error {
	switch {
	case c.Program == "":
		return errors.New("no program given")
	case strings.IndexByte(c.Program, 0) >= 0:
		return errors.New("program contains a NUL byte")
	case c.Roots == nil:
		return errors.New("no allowed directories (nil fsroot.Set)")
	case c.Dir == "":
		return errors.New("no working directory given")
	case c.Timeout <= 0:
		return fmt.Errorf("timeout %v is not positive", c.Timeout)
	case c.OutputLimit < 0:
		return fmt.Errorf("output limit %d is negative", c.OutputLimit)
	}
	for i, a := range c.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("argument %d contains a NUL byte", i+1)
		}
	}
	return nil
}

// checkStrict refuses a shell operator anywhere in the program or arguments.
func checkStrict(c Cmd) error {
	if op := ShellOperator(c.Program); op != "" {
		return fmt.Errorf("%w: program %q contains %q", ErrStrict, c.Program, op)
	}
	for i, a := range c.Args {
		if op := ShellOperator(a); op != "" {
			return fmt.Errorf("%w: argument %d %q contains %q", ErrStrict, i+1, a, op)
		}
	}
	return nil
}

// ShellOperator returns the shell operator s is or contains, or "": "&&",
// "||", "|", ";", "$(", a backtick, ">", "<" or a line break anywhere, or
// "&" as the whole of s. Strict mode refuses them; so does every check
// that must read as the command that runs (Agent Zero's policy).
func ShellOperator(s string) string {
	if s == "&" {
		return "&"
	}
	for _, op := range shellOperators {
		if strings.Contains(s, op) {
			return op
		}
	}
	return ""
}

// workDir resolves dir through the roots and checks that it is an existing
// directory. It returns the canonical path the child runs in.
func workDir(roots *fsroot.Set, dir string) (string, error) {
	p, err := roots.Resolve(dir)
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	if !p.Exists {
		return "", fmt.Errorf("working directory %s does not exist", dir)
	}
	fi, err := p.Stat()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("working directory %s is not a directory", dir)
	}
	return p.Abs, nil
}

// Resolve returns the absolute path, with every symbolic link resolved, of
// the program Run or Start would run for c: c.Program looked up in the PATH
// of the environment c gives the child, from c's working directory. It
// makes the same checks of c as Run, runs nothing, and fails as Run would
// for a program that is not found.
func Resolve(c Cmd) (string, error) {
	if err := checkInput(c); err != nil {
		return "", err
	}
	dir, err := workDir(c.Roots, c.Dir)
	if err != nil {
		return "", err
	}
	env, err := envscrub.Build(c.Env)
	if err != nil {
		return "", err
	}
	return resolve(c.Program, env, dir)
}

// resolve finds program as the child would and resolves its links: the
// path that runs.
func resolve(program string, env []string, dir string) (string, error) {
	pathList, _ := lookupEnv(env, "PATH")
	found, err := lookPath(program, pathList, dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(found)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return real, nil
}

// lookPath finds program as the child would: a name with a slash is used as
// is (a relative one is taken from the working directory); a bare name is
// looked up in the child's PATH. Relative PATH entries, the empty one (which
// means ".") included, are skipped: they would find programs in whatever
// directory the child is run in.
func lookPath(program, pathList, dir string) (string, error) {
	if strings.Contains(program, "/") {
		p := program
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("%w: %w", ErrNotFound, err)
		}
		return p, nil
	}
	for _, d := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, program)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w in the child's PATH", ErrNotFound)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

func lookupEnv(env []string, name string) (string, bool) {
	for _, kv := range env {
		if n, v, ok := strings.Cut(kv, "="); ok && n == name {
			return v, true
		}
	}
	return "", false
}

// setEnv replaces or adds name in env.
func setEnv(env []string, name, value string) []string {
	for i, kv := range env {
		if n, _, ok := strings.Cut(kv, "="); ok && n == name {
			env[i] = name + "=" + value
			return env
		}
	}
	return append(env, name+"="+value)
}

// capped keeps the first limit bytes written to it and discards the rest,
// always reporting success so that the copy from the child's pipe goes on.
// It may be read (bytes) while it is written: Process.Stderr does.
type capped struct {
	limit     int
	mu        sync.Mutex
	buf       []byte
	truncated bool
}

func (w *capped) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	room := w.limit - len(w.buf)
	switch {
	case len(p) <= room:
		w.buf = append(w.buf, p...)
	default:
		w.buf = append(w.buf, p[:max(room, 0)]...)
		w.truncated = true
	}
	return len(p), nil
}

// bytes returns a copy of what w kept so far, and whether it discarded any.
func (w *capped) bytes() ([]byte, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf), w.truncated
}

// finish fills the fields of res that do not depend on the platform. stdout
// is nil for a started process, whose stdout was a stream.
func (p *prepared) finish(res *Result, stdout, stderr *capped) {
	if stdout != nil {
		res.Stdout, res.StdoutTruncated = stdout.bytes()
	}
	res.Stderr, res.StderrTruncated = stderr.bytes()
	res.Isolation = p.isolation
}
