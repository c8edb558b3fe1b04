// Package runner is Agent Zero's hands: the only part of Agent Zero that
// runs a command or changes a checkout, and it does both through
// internal/guard/spawn, the one execution boundary (argv only, never a
// shell).
//
// It never changes the repository it is pointed at. Git only reads there
// (rev-parse, cat-file, remote get-url); all work happens in a scratch
// clone that borrows the repository's objects. A proposed diff is applied
// in the scratch clone and its tree recorded before the repository's checks
// run, and the checks run in a separate copy of the files without .git, so
// nothing they do can change what is committed or where it is pushed; a
// second copy, with chosen files taken back as the reviewed commit has them
// ([Scratch.ExportReverted]), is for running the checks again. Git
// runs without system or global configuration, hooks, prompts or
// credential helpers. Checks run in strict mode (shell operators refused)
// with only the safe default environment: no credential reaches them.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/zero-dev/zero/internal/gitref"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zero-dev/zero/internal/gitsource"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/repoagent/policy"
)

// Limits.
const (
	checkOutput = 64 << 10 // kept of each check's output
)

// BranchPrefix starts every branch Agent Zero pushes; it never pushes to
// any other ref.
const BranchPrefix = "agent-zero/"

// Repo is a repository Agent Zero only reads.
type Repo struct {
	dir   string
	roots *fsroot.Set
}

// OpenRepo opens the checkout at dir for reading.
func OpenRepo(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	roots, err := fsroot.Open([]string{abs})
	if err != nil {
		return nil, fmt.Errorf("repository %s: %w", dir, err)
	}
	r := &Repo{dir: roots.Roots()[0].Canonical, roots: roots}
	if _, err := r.git(context.Background(), "rev-parse", "--git-dir"); err != nil {
		roots.Close()
		return nil, fmt.Errorf("%s is not a git checkout: %w", dir, err)
	}
	return r, nil
}

// Close releases the repository.
func (r *Repo) Close() error { return r.roots.Close() }

// Dir is the repository's canonical path.
func (r *Repo) Dir() string { return r.dir }

func (r *Repo) git(ctx context.Context, args ...string) (string, error) {
	out, err := git(ctx, r.roots, r.dir, nil, nil, args...)
	return strings.TrimSpace(string(out)), err
}

// DefaultBranch returns the remote's default branch as the checkout knows
// it (refs/remotes/REMOTE/HEAD), else main or master if the checkout has
// one.
func (r *Repo) DefaultBranch(ctx context.Context, remote string) (string, error) {
	if ref, err := r.git(ctx, "symbolic-ref", "--quiet", "refs/remotes/"+remote+"/HEAD"); err == nil {
		if b, ok := strings.CutPrefix(ref, "refs/remotes/"+remote+"/"); ok && gitref.ValidBranch(b) {
			return b, nil
		}
	}
	for _, b := range []string{"main", "master"} {
		if _, err := r.Resolve(ctx, b); err == nil {
			return b, nil
		}
	}
	return "", errors.New("cannot tell the default branch: no refs/remotes/origin/HEAD, main or master")
}

// BranchSHA returns the commit a branch points at: the remote's copy when
// the checkout has one, else the local branch.
func (r *Repo) BranchSHA(ctx context.Context, remote, branch string) (string, error) {
	if !gitref.ValidBranch(branch) {
		return "", fmt.Errorf("branch name %q refused", branch)
	}
	if sha, err := r.Resolve(ctx, "refs/remotes/"+remote+"/"+branch); err == nil {
		return sha, nil
	}
	return r.Resolve(ctx, "refs/heads/"+branch)
}

// Resolve returns the commit id a revision names.
func (r *Repo) Resolve(ctx context.Context, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("revision %q refused", rev)
	}
	sha, err := r.git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil || !gitref.ValidSHA(sha) {
		return "", fmt.Errorf("no commit %q", rev)
	}
	return sha, nil
}

// RemoteHead asks the remote at url which commit a branch is at now
// (git ls-remote, which writes nothing).
func (r *Repo) RemoteHead(ctx context.Context, url, branch, token string) (string, error) {
	if !gitref.ValidBranch(branch) || url == "" || strings.HasPrefix(url, "-") {
		return "", errors.New("ls-remote: bad branch or remote")
	}
	out, err := git(ctx, r.roots, r.dir, nil, authEnv(url, token), "ls-remote", "--heads", "--", url, "refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	sha, ref, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if ref != "refs/heads/"+branch || !gitref.ValidSHA(sha) {
		return "", fmt.Errorf("the remote has no branch %s", branch)
	}
	return sha, nil
}

// RemoteURL returns a remote's URL.
func (r *Repo) RemoteURL(ctx context.Context, remote string) (string, error) {
	return r.git(ctx, "remote", "get-url", "--push", remote)
}

// Scratch is a clone to work in, in a directory of its own.
type Scratch struct {
	Dir   string // the clone's files, at the commit it was made for
	base  string
	roots *fsroot.Set
}

// NewScratch clones r into a new directory under parent, borrowing r's
// objects (git clone --shared, which writes nothing into r), and checks out
// sha. A commit r does not have (a pull request's head, say) is fetched
// into the scratch clone from fetchURL, when one is given, with token as
// for Push.
func (r *Repo) NewScratch(ctx context.Context, parent, sha, fetchURL, token string) (*Scratch, error) {
	if !gitref.ValidSHA(sha) {
		return nil, fmt.Errorf("commit id %q refused", sha)
	}
	base, err := os.MkdirTemp(parent, "agent-zero-")
	if err != nil {
		return nil, err
	}
	roots, err := fsroot.Open([]string{base, r.dir})
	if err != nil {
		os.RemoveAll(base)
		return nil, err
	}
	s := &Scratch{Dir: filepath.Join(roots.Roots()[0].Canonical, "work"), base: roots.Roots()[0].Canonical, roots: roots}
	if _, err := git(ctx, roots, s.base, nil, nil, "clone", "--quiet", "--shared", "--no-checkout", "--", r.dir, s.Dir); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.Ensure(ctx, sha, fetchURL, token); err != nil {
		s.Close()
		return nil, err
	}
	if _, err := git(ctx, roots, s.Dir, nil, nil, "checkout", "--quiet", "--detach", sha); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// authEnv gives git token for an https remote (gitsource.AuthEnv).
func authEnv(url, token string) map[string]string { return gitsource.AuthEnv(url, token) }

// Close removes the scratch clone.
func (s *Scratch) Close() error {
	s.roots.Close()
	return os.RemoveAll(s.base)
}

// Ensure makes sure the scratch clone has commit sha, fetching it from url
// (if given) when it does not: into the scratch clone, never into the
// repository it borrows from.
func (s *Scratch) Ensure(ctx context.Context, sha, url, token string) error {
	if !gitref.ValidSHA(sha) {
		return fmt.Errorf("commit id %q refused", sha)
	}
	if _, err := git(ctx, s.roots, s.Dir, nil, nil, "cat-file", "-e", sha+"^{commit}"); err == nil {
		return nil
	}
	if url == "" || strings.HasPrefix(url, "-") {
		return fmt.Errorf("no commit %s, and no remote to fetch it from", sha)
	}
	if _, err := git(ctx, s.roots, s.Dir, nil, authEnv(url, token), "fetch", "--quiet", "--no-tags", "--", url, sha); err != nil {
		return fmt.Errorf("fetch %s: %w", sha, err)
	}
	return nil
}

// FileAt returns a file's content at a commit the scratch clone has, and
// false when the commit has no such file.
func (s *Scratch) FileAt(ctx context.Context, sha, path string) ([]byte, bool, error) {
	if !gitref.ValidSHA(sha) {
		return nil, false, fmt.Errorf("commit id %q refused", sha)
	}
	if _, err := git(ctx, s.roots, s.Dir, nil, nil, "cat-file", "-e", sha+":"+path); err != nil {
		return nil, false, nil
	}
	out, err := git(ctx, s.roots, s.Dir, nil, nil, "cat-file", "blob", sha+":"+path)
	return out, err == nil, err
}

// Roots confines reading to the scratch clone's files.
func (s *Scratch) Roots() (*fsroot.Set, error) { return fsroot.Open([]string{s.Dir}) }

// Apply applies a unified diff to the clone's files and index and returns
// the resulting tree's id: what a commit will hold, whatever runs later.
func (s *Scratch) Apply(ctx context.Context, diff string) (string, error) {
	if _, err := git(ctx, s.roots, s.Dir, []byte(diff), nil, "apply", "--index", "--whitespace=nowarn", "-"); err != nil {
		return "", fmt.Errorf("the diff does not apply: %w", err)
	}
	out, err := git(ctx, s.roots, s.Dir, nil, nil, "write-tree")
	tree := strings.TrimSpace(string(out))
	if err != nil || !gitref.ValidSHA(tree) {
		return "", fmt.Errorf("write-tree: %v", err)
	}
	return tree, nil
}

// Export writes the index's files, without .git, into a new directory for
// the checks, and returns it.
func (s *Scratch) Export(ctx context.Context) (string, error) {
	return s.exportIndex(ctx, "checks", nil)
}

// exportIndex writes the files of the index env names (the scratch
// clone's with nil) into a new directory called name, and returns it.
func (s *Scratch) exportIndex(ctx context.Context, name string, env map[string]string) (string, error) {
	dir := filepath.Join(s.base, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	if _, err := git(ctx, s.roots, s.Dir, nil, env, "checkout-index", "--all", "--prefix="+dir+"/"); err != nil {
		return "", err
	}
	return dir, nil
}

// A Revert is one changed file to take back as the reviewed head has it:
// NewPath, its path after the change, is removed, and OldPath, its path
// before, is restored from the head. OldPath is empty for a file the
// change added, NewPath for one it deleted; a renamed file has both.
type Revert struct{ OldPath, NewPath string }

// ExportReverted writes tree's files, with each of reverts taken back as
// head has it, into a new directory for a second run of the checks, and
// returns it. It works on an index of its own: the scratch clone's index,
// and what a commit of tree holds, do not change.
func (s *Scratch) ExportReverted(ctx context.Context, tree, head string, reverts []Revert) (string, error) {
	if !gitref.ValidSHA(tree) || !gitref.ValidSHA(head) {
		return "", errors.New("export: bad tree or head id")
	}
	env := map[string]string{"GIT_INDEX_FILE": filepath.Join(s.base, "reverted.index"), "GIT_LITERAL_PATHSPECS": "1"}
	if _, err := git(ctx, s.roots, s.Dir, nil, env, "read-tree", tree); err != nil {
		return "", err
	}
	var info bytes.Buffer
	var old []string
	for _, r := range reverts {
		if r.NewPath != "" {
			fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", len(head)), r.NewPath)
		}
		if r.OldPath != "" {
			old = append(old, r.OldPath)
		}
	}
	if len(old) > 0 {
		out, err := git(ctx, s.roots, s.Dir, nil, env, append([]string{"ls-tree", "-z", "--full-tree", head, "--"}, old...)...)
		if err != nil {
			return "", err
		}
		// "mode type object\tpath", NUL-terminated: files, links and
		// submodules go back into the index as they were; a directory
		// the head has at such a path does not.
		for _, entry := range bytes.Split(out, []byte{0}) {
			if fields := strings.Fields(string(entry)); len(fields) >= 2 && (fields[1] == "blob" || fields[1] == "commit") {
				info.Write(entry)
				info.WriteByte(0)
			}
		}
	}
	if _, err := git(ctx, s.roots, s.Dir, info.Bytes(), env, "update-index", "-z", "--index-info"); err != nil {
		return "", err
	}
	return s.exportIndex(ctx, "checks-reverted", env)
}

// Commit makes a commit of tree on top of parent, by Agent Zero.
func (s *Scratch) Commit(ctx context.Context, tree, parent, message string) (string, error) {
	if !gitref.ValidSHA(tree) || !gitref.ValidSHA(parent) {
		return "", errors.New("commit: bad tree or parent id")
	}
	out, err := git(ctx, s.roots, s.Dir, []byte(message), identity, "commit-tree", tree, "-p", parent, "-F", "-")
	sha := strings.TrimSpace(string(out))
	if err != nil || !gitref.ValidSHA(sha) {
		return "", fmt.Errorf("commit-tree: %v", err)
	}
	return sha, nil
}

// identity is who Agent Zero's commits are by.
var identity = map[string]string{
	"GIT_AUTHOR_NAME": "Agent Zero", "GIT_AUTHOR_EMAIL": "agent-zero@localhost",
	"GIT_COMMITTER_NAME": "Agent Zero", "GIT_COMMITTER_EMAIL": "agent-zero@localhost",
}

// Push pushes commit to a new branch on the remote at url. The branch must
// start with BranchPrefix and must not be defaultBranch; the push never
// forces, so an existing branch is not overwritten. token, if set, goes to
// an https remote as an HTTP header through git's environment, never on the
// command line.
func (s *Scratch) Push(ctx context.Context, url, commit, branch, defaultBranch, token string) error {
	if !strings.HasPrefix(branch, BranchPrefix) || !gitref.ValidBranch(branch) || branch == defaultBranch {
		return fmt.Errorf("branch %q refused: Agent Zero pushes only to new %s... branches", branch, BranchPrefix)
	}
	if !gitref.ValidSHA(commit) || url == "" || strings.HasPrefix(url, "-") {
		return errors.New("push: bad commit or remote")
	}
	_, err := git(ctx, s.roots, s.Dir, nil, authEnv(url, token), "push", "--quiet", "--", url, commit+":refs/heads/"+branch)
	return err
}

// git runs git through gitsource.Run, Zero's one hardened git.
func git(ctx context.Context, roots *fsroot.Set, dir string, stdin []byte, extra map[string]string, args ...string) ([]byte, error) {
	return gitsource.Run(ctx, roots, dir, stdin, extra, args...)
}

func tail(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// A CheckResult is one check's run.
type CheckResult struct {
	Argv     []string
	ExitCode int
	TimedOut bool // the check ran past its timeout and was killed
	// MemoryKilled: the kernel killed the check at its memory limit
	// (CheckOptions.Limits), which is not a failing test.
	MemoryKilled bool
	Output       string // the end of stdout and stderr, for the report
}

// Checks is what running a repository's checks established.
type Checks struct {
	Ran       bool
	Passed    bool
	TimedOut  bool   // the last check ran past its timeout: not a verdict on the change
	Isolation string // policy.Local or policy.Container: what actually ran
	Results   []CheckResult
}

// CheckOptions say how checks run.
type CheckOptions struct {
	Contained bool          // in a bubblewrap sandbox, never falling back
	Timeout   time.Duration // each check's; 0 means policy.DefaultCheckTimeout
	ReadOnly  []string      // with Contained: more host directories shown read-only (spawn.Cmd.ReadOnly)
	// Limits, with Contained, bound each check's memory, CPU and
	// processes under cgroups (the operator's checkLimits, never zero);
	// where they cannot be enforced no check runs and the error wraps
	// ErrIsolationUnavailable. The zero value sets none (tests of the
	// sandbox alone).
	Limits policy.Limits
}

var (
	// ErrIsolationUnavailable reports that the container isolation was
	// asked for and cannot run here; no check ran.
	ErrIsolationUnavailable = spawn.ErrIsolationUnavailable
	// ErrNotFound reports a check whose program is not found, or, in the
	// container, not visible there.
	ErrNotFound = spawn.ErrNotFound
)

// IsolationAvailable reports whether the container isolation runs here:
// nil, or an error wrapping ErrIsolationUnavailable that says why.
func IsolationAvailable() error {
	if err := spawn.IsolationAvailable(); err != nil {
		return err
	}
	if err := spawn.LimitsAvailable(); err != nil {
		return fmt.Errorf("%w: %v", ErrIsolationUnavailable, err)
	}
	return nil
}

// RunChecks runs each check (an argv) in dir, in strict mode, with only
// the safe default environment, and stops at the first failure. When ctx
// ends, it returns an error wrapping ctx's: what ran then is no verdict.
func RunChecks(ctx context.Context, dir string, checks [][]string, o CheckOptions) (Checks, error) {
	out := Checks{Isolation: policy.Local, Passed: true}
	roots, err := fsroot.Open([]string{dir})
	if err != nil {
		return out, err
	}
	defer roots.Close()
	isolation := spawn.None
	if o.Contained {
		isolation = spawn.Bubblewrap
		out.Isolation = policy.Container
	}
	if o.Timeout <= 0 {
		o.Timeout = policy.DefaultCheckTimeout
	}
	for _, argv := range checks {
		if len(argv) == 0 {
			return out, errors.New("an empty check")
		}
		cmd := spawn.Cmd{
			Program: argv[0], Args: argv[1:], Dir: dir, Roots: roots, Timeout: o.Timeout,
			OutputLimit: checkOutput, Strict: true, Isolation: isolation,
		}
		if o.Contained {
			cmd.ReadOnly = o.ReadOnly
			if o.Limits != (policy.Limits{}) {
				cmd.Limits = &spawn.Limits{MemoryBytes: int64(o.Limits.MemoryMiB) << 20, CPUPercent: o.Limits.CPUPercent, Pids: o.Limits.Pids}
			}
		}
		res, err := spawn.Run(ctx, cmd)
		if errors.Is(err, spawn.ErrNoCgroups) {
			return out, fmt.Errorf("check %q: %w: %v", argv[0], ErrIsolationUnavailable, err)
		}
		if err != nil {
			return out, fmt.Errorf("check %q: %w", argv[0], err)
		}
		if ctx.Err() != nil {
			return out, fmt.Errorf("check %q: %w", argv[0], ctx.Err())
		}
		out.Ran = true
		if res.Isolation != isolation {
			return out, fmt.Errorf("check %q ran with isolation %q, not %q", argv[0], res.Isolation, isolation)
		}
		r := CheckResult{Argv: argv, ExitCode: res.ExitCode, TimedOut: res.TimedOut, MemoryKilled: res.MemoryKilled,
			Output: tail(append(res.Stdout, res.Stderr...), 2000)}
		out.Results = append(out.Results, r)
		if res.ExitCode != 0 || res.TimedOut {
			out.Passed, out.TimedOut = false, res.TimedOut
			break
		}
	}
	return out, nil
}
