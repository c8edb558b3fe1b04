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
// nothing they do can change what is committed or where it is pushed. Git
// runs without system or global configuration, hooks, prompts or
// credential helpers. Checks run in strict mode (shell operators refused)
// with only the safe default environment: no credential reaches them.
package runner

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/spawn"
)

// Limits.
const (
	gitTimeout   = 2 * time.Minute
	CheckTimeout = 10 * time.Minute // each check
	checkOutput  = 64 << 10         // kept of each check's output
)

// BranchPrefix starts every branch Agent Zero pushes; it never pushes to
// any other ref.
const BranchPrefix = "agent-zero/"

// Isolation levels a check run reports.
const (
	Local     = "local"     // as the user, no sandbox
	Container = "container" // bubblewrap: no network, read-only system, only the work directory writable
)

var (
	shaRE    = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)
	branchRE = regexp.MustCompile(`^[A-Za-z0-9._/-]{1,200}$`)
)

// ValidSHA reports whether s is a full commit id.
func ValidSHA(s string) bool { return shaRE.MatchString(s) }

// ValidBranch reports whether s is a plain branch name: no "..", no
// leading "-" or "/", no control characters, not ending in ".lock" or "/".
func ValidBranch(s string) bool {
	return branchRE.MatchString(s) && !strings.Contains(s, "..") && !strings.HasPrefix(s, "-") &&
		!strings.HasPrefix(s, "/") && !strings.HasSuffix(s, "/") && !strings.HasSuffix(s, ".lock") && !strings.Contains(s, "//")
}

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
		if b, ok := strings.CutPrefix(ref, "refs/remotes/"+remote+"/"); ok && ValidBranch(b) {
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
	if !ValidBranch(branch) {
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
	if err != nil || !ValidSHA(sha) {
		return "", fmt.Errorf("no commit %q", rev)
	}
	return sha, nil
}

// RemoteHead asks the remote at url which commit a branch is at now
// (git ls-remote, which writes nothing).
func (r *Repo) RemoteHead(ctx context.Context, url, branch, token string) (string, error) {
	if !ValidBranch(branch) || url == "" || strings.HasPrefix(url, "-") {
		return "", errors.New("ls-remote: bad branch or remote")
	}
	out, err := git(ctx, r.roots, r.dir, nil, authEnv(url, token), "ls-remote", "--heads", "--", url, "refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	sha, ref, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if ref != "refs/heads/"+branch || !ValidSHA(sha) {
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
	if !ValidSHA(sha) {
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

// authEnv gives git token for an https remote as an HTTP header through
// its environment, never on the command line.
func authEnv(url, token string) map[string]string {
	if token == "" || !strings.HasPrefix(url, "https://") {
		return nil
	}
	header := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	return map[string]string{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "http.extraHeader", "GIT_CONFIG_VALUE_0": header}
}

// Close removes the scratch clone.
func (s *Scratch) Close() error {
	s.roots.Close()
	return os.RemoveAll(s.base)
}

// Ensure makes sure the scratch clone has commit sha, fetching it from url
// (if given) when it does not: into the scratch clone, never into the
// repository it borrows from.
func (s *Scratch) Ensure(ctx context.Context, sha, url, token string) error {
	if !ValidSHA(sha) {
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
	if !ValidSHA(sha) {
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
	if err != nil || !ValidSHA(tree) {
		return "", fmt.Errorf("write-tree: %v", err)
	}
	return tree, nil
}

// Export writes the index's files, without .git, into a new directory for
// the checks, and returns it.
func (s *Scratch) Export(ctx context.Context) (string, error) {
	dir := filepath.Join(s.base, "checks")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	if _, err := git(ctx, s.roots, s.Dir, nil, nil, "checkout-index", "--all", "--prefix="+dir+"/"); err != nil {
		return "", err
	}
	return dir, nil
}

// Commit makes a commit of tree on top of parent, by Agent Zero.
func (s *Scratch) Commit(ctx context.Context, tree, parent, message string) (string, error) {
	if !ValidSHA(tree) || !ValidSHA(parent) {
		return "", errors.New("commit: bad tree or parent id")
	}
	out, err := git(ctx, s.roots, s.Dir, []byte(message), identity, "commit-tree", tree, "-p", parent, "-F", "-")
	sha := strings.TrimSpace(string(out))
	if err != nil || !ValidSHA(sha) {
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
	if !strings.HasPrefix(branch, BranchPrefix) || !ValidBranch(branch) || branch == defaultBranch {
		return fmt.Errorf("branch %q refused: Agent Zero pushes only to new %s... branches", branch, BranchPrefix)
	}
	if !ValidSHA(commit) || url == "" || strings.HasPrefix(url, "-") {
		return errors.New("push: bad commit or remote")
	}
	_, err := git(ctx, s.roots, s.Dir, nil, authEnv(url, token), "push", "--quiet", "--", url, commit+":refs/heads/"+branch)
	return err
}

// git runs git through spawn with no system or global configuration, no
// hooks, no prompts and no credential helper.
func git(ctx context.Context, roots *fsroot.Set, dir string, stdin []byte, extra map[string]string, args ...string) ([]byte, error) {
	env := map[string]string{
		"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0",
		"GIT_ASKPASS": "/bin/false", "SSH_ASKPASS": "/bin/false", "GIT_OPTIONAL_LOCKS": "0",
	}
	for k, v := range extra {
		env[k] = v
	}
	argv := append([]string{"-c", "core.hooksPath=/dev/null", "-c", "credential.helper=", "-c", "core.fsmonitor=false",
		"-c", "protocol.ext.allow=never"}, args...)
	res, err := spawn.Run(ctx, spawn.Cmd{
		Program: "git", Args: argv, Dir: dir, Roots: roots, Stdin: stdin,
		Env: envscrub.Spec{Set: env}, Timeout: gitTimeout,
	})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return res.Stdout, fmt.Errorf("git %s: exit %d: %s", args[0], res.ExitCode, tail(res.Stderr, 500))
	}
	return res.Stdout, nil
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
	TimedOut bool
	Output   string // the end of stdout and stderr, for the report
}

// Checks is what running a repository's checks established.
type Checks struct {
	Ran       bool
	Passed    bool
	Isolation string // Local or Container: what actually ran
	Results   []CheckResult
}

// ErrIsolationUnavailable reports that the container isolation was asked
// for and cannot run here; no check ran.
var ErrIsolationUnavailable = spawn.ErrIsolationUnavailable

// RunChecks runs each check (an argv) in dir, in strict mode, with only
// the safe default environment, in a bubblewrap sandbox when contained is
// true (never falling back), and stops at the first failure.
func RunChecks(ctx context.Context, dir string, checks [][]string, contained bool) (Checks, error) {
	out := Checks{Isolation: Local, Passed: true}
	roots, err := fsroot.Open([]string{dir})
	if err != nil {
		return out, err
	}
	defer roots.Close()
	isolation := spawn.None
	if contained {
		isolation = spawn.Bubblewrap
		out.Isolation = Container
	}
	for _, argv := range checks {
		if len(argv) == 0 {
			return out, errors.New("an empty check")
		}
		res, err := spawn.Run(ctx, spawn.Cmd{
			Program: argv[0], Args: argv[1:], Dir: dir, Roots: roots, Timeout: CheckTimeout,
			OutputLimit: checkOutput, Strict: true, Isolation: isolation,
		})
		if err != nil {
			return out, fmt.Errorf("check %q: %w", argv[0], err)
		}
		out.Ran = true
		if res.Isolation != isolation {
			return out, fmt.Errorf("check %q ran with isolation %q, not %q", argv[0], res.Isolation, isolation)
		}
		r := CheckResult{Argv: argv, ExitCode: res.ExitCode, TimedOut: res.TimedOut, Output: tail(append(res.Stdout, res.Stderr...), 2000)}
		out.Results = append(out.Results, r)
		if res.ExitCode != 0 || res.TimedOut {
			out.Passed = false
			break
		}
	}
	return out, nil
}
