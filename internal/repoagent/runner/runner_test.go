package runner

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/repoagent/policy"
	"github.com/zero-dev/zero/internal/testgit"
	"github.com/zero-dev/zero/internal/testnet"
)

const readmeDiff = `diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1 +1 @@
-hello
+hello, world
`

// TestWorkLeavesTheRepositoryUntouched reads, clones, applies, exports,
// commits and pushes: the repository's files and .git stay byte-identical,
// and the branch lands on the remote.
func TestWorkLeavesTheRepositoryUntouched(t *testing.T) {
	checkout, remote := testgit.Repo(t, map[string]string{"README.md": "hello\n"})
	before := testgit.TreeHash(t, checkout)
	ctx := context.Background()
	r, err := OpenRepo(checkout)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	branch, err := r.DefaultBranch(ctx, "origin")
	if err != nil || branch != "main" {
		t.Fatalf("default branch %q, %v", branch, err)
	}
	sha, err := r.BranchSHA(ctx, "origin", branch)
	if err != nil {
		t.Fatal(err)
	}
	url, _ := r.RemoteURL(ctx, "origin")
	if remoteSHA, err := r.RemoteHead(ctx, url, "main", ""); err != nil || remoteSHA != sha {
		t.Fatalf("RemoteHead = %s, %v; want %s", remoteSHA, err, sha)
	}
	s, err := r.NewScratch(ctx, t.TempDir(), sha, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if data, ok, err := s.FileAt(ctx, sha, "README.md"); err != nil || !ok || string(data) != "hello\n" {
		t.Fatalf("FileAt = %q %v %v", data, ok, err)
	}
	if _, ok, err := s.FileAt(ctx, sha, ".agent-zero.yml"); ok || err != nil {
		t.Fatalf("a missing file: %v %v", ok, err)
	}
	tree, err := s.Apply(ctx, readmeDiff)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := s.Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(data) != "hello, world\n" {
		t.Errorf("the exported files: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); !os.IsNotExist(err) {
		t.Error("the checks' copy holds .git")
	}
	commit, err := s.Commit(ctx, tree, sha, "Fix the greeting")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Push(ctx, url, commit, BranchPrefix+"task-1", branch, ""); err != nil {
		t.Fatal(err)
	}
	if got := testgit.Run(t, remote, "rev-parse", "refs/heads/agent-zero/task-1"); got != commit {
		t.Errorf("the remote branch is %s, want %s", got, commit)
	}
	if got := testgit.Run(t, remote, "show", "refs/heads/agent-zero/task-1:README.md"); got != "hello, world" {
		t.Errorf("the pushed file: %q", got)
	}
	if after := testgit.TreeHash(t, checkout); after != before {
		t.Error("the repository changed")
	}
}

// TestPushOnlyToNewAgentBranches: the default branch, another prefix, an
// option-like name and an existing branch are all refused.
func TestPushOnlyToNewAgentBranches(t *testing.T) {
	checkout, remote := testgit.Repo(t, map[string]string{"README.md": "hello\n"})
	ctx := context.Background()
	r, _ := OpenRepo(checkout)
	defer r.Close()
	sha, _ := r.BranchSHA(ctx, "origin", "main")
	s, err := r.NewScratch(ctx, t.TempDir(), sha, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tree, _ := s.Apply(ctx, readmeDiff)
	commit, _ := s.Commit(ctx, tree, sha, "x")
	for _, branch := range []string{"main", "feature", "agent-zero/../main", "-f", "agent-zero/x.lock"} {
		if err := s.Push(ctx, remote, commit, branch, "main", ""); err == nil {
			t.Errorf("pushed to %q", branch)
		}
	}
	if err := s.Push(ctx, remote, commit, "agent-zero/main", "agent-zero/main", ""); err == nil {
		t.Error("pushed to a default branch named like an agent branch")
	}
	if err := s.Push(ctx, remote, commit, "agent-zero/t", "main", ""); err != nil {
		t.Fatal(err)
	}
	other, _ := s.Commit(ctx, tree, sha, "other")
	if err := s.Push(ctx, remote, other, "agent-zero/t", "main", ""); err == nil {
		t.Error("an existing branch was overwritten")
	}
	if got := testgit.Run(t, remote, "rev-parse", "refs/heads/main"); got != sha {
		t.Error("main moved")
	}
}

// TestDefaultBranchNamesAsGitReadsThem: a remote whose default branch git
// accepts (fix/ümlaut, a+b) is read as such, by the same rules as the
// webhook parser (package gitref); before, the runner's own rules refused
// them.
func TestDefaultBranchNamesAsGitReadsThem(t *testing.T) {
	for _, branch := range []string{"fix/ümlaut", "a+b"} {
		checkout, _ := testgit.Repo(t, map[string]string{"README.md": "hello\n"})
		testgit.Run(t, checkout, "branch", "-m", "main", branch)
		testgit.Run(t, checkout, "push", "-q", "origin", branch)
		testgit.Run(t, checkout, "remote", "set-head", "origin", branch)
		r, err := OpenRepo(checkout)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.DefaultBranch(context.Background(), "origin")
		r.Close()
		if err != nil || got != branch {
			t.Errorf("default branch %q: got %q, %v", branch, got, err)
		}
	}
}

// TestChecksStrictAndClean: shell operators in a check are refused, and a
// check sees no credential from Zero's environment.
func TestChecksStrictAndClean(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := RunChecks(ctx, dir, [][]string{{"echo", "a", "&&", "touch", "x"}}, CheckOptions{}); !errors.Is(err, spawn.ErrStrict) {
		t.Errorf("&& in a check: %v", err)
	}
	t.Setenv("AGENT_ZERO_MODEL_API_KEY", "model-key-canary")
	t.Setenv("AGENT_ZERO_GITHUB_TOKEN", "github-token-canary")
	res, err := RunChecks(ctx, dir, [][]string{{"env"}}, CheckOptions{})
	if err != nil || !res.Passed || res.Isolation != policy.Local {
		t.Fatalf("env: %+v %v", res, err)
	}
	if strings.Contains(res.Results[0].Output, "canary") || !strings.Contains(res.Results[0].Output, "PATH=") {
		t.Errorf("a check's environment: %s", res.Results[0].Output)
	}
	res, err = RunChecks(ctx, dir, [][]string{{"true"}, {"false"}, {"touch", "never"}}, CheckOptions{})
	if err != nil || res.Passed || len(res.Results) != 2 {
		t.Errorf("a failing check: %+v %v", res, err)
	}
}

// TestContainedChecksCannotReachLoopback: a check in the container cannot
// connect to a server the test runs on loopback, which the same check
// reaches without it.
func TestContainedChecksCannotReachLoopback(t *testing.T) {
	if err := spawn.IsolationAvailable(); err != nil {
		if os.Getenv("ZERO_REQUIRE_BWRAP") != "" {
			t.Fatalf("bubblewrap is required: %v", err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "dial"), "./testdata/dial").CombinedOutput()
	if err != nil {
		t.Fatalf("build dial: %v\n%s", err, out)
	}
	ln := testnet.Listen(t)
	dial := [][]string{{filepath.Join(dir, "dial"), ln.Addr}}
	ctx := context.Background()
	contained, err := RunChecks(ctx, dir, dial, CheckOptions{Contained: true})
	if err != nil || contained.Isolation != policy.Container || contained.Passed || ln.Accepted() != 0 {
		t.Fatalf("contained: %+v %v, %d accepted", contained, err, ln.Accepted())
	}
	open, err := RunChecks(ctx, dir, dial, CheckOptions{})
	if n := ln.WaitAccepted(1, 5*time.Second); err != nil || !open.Passed || n != 1 {
		t.Fatalf("not contained: %+v %v, %d accepted", open, err, n)
	}
}

// TestExportReverted: the second export takes back the files it is told
// of as the head has them (an edited test restored, an added one removed,
// a renamed script put back under its old name with its mode, a deleted
// one restored) and keeps every other change; the scratch clone's index,
// what a commit holds, does not change.
func TestExportReverted(t *testing.T) {
	checkout, _ := testgit.Repo(t, map[string]string{
		"add.go": "old code\n", "add_test.go": "old test\n", "gone_test.go": "gone\n", "check.sh": "old harness\n",
	})
	testgit.Run(t, checkout, "update-index", "--chmod=+x", "check.sh")
	testgit.Run(t, checkout, "commit", "--quiet", "-m", "executable")
	head := testgit.Run(t, checkout, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(checkout, "add.go"), []byte("new code\n"), 0o644)
	os.WriteFile(filepath.Join(checkout, "add_test.go"), []byte("new test\n"), 0o644)
	os.WriteFile(filepath.Join(checkout, "main_test.go"), []byte("added test\n"), 0o644)
	testgit.Run(t, checkout, "mv", "check.sh", "run.sh")
	testgit.Run(t, checkout, "rm", "--quiet", "gone_test.go")
	testgit.Run(t, checkout, "add", ".")
	diff := testgit.Run(t, checkout, "diff", "--cached", "-M", "--binary", "HEAD") + "\n"
	testgit.Run(t, checkout, "reset", "--quiet", "--hard", "HEAD")

	ctx := context.Background()
	r, err := OpenRepo(checkout)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, err := r.NewScratch(ctx, t.TempDir(), head, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tree, err := s.Apply(ctx, diff)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := s.ExportReverted(ctx, tree, head, []Revert{
		{OldPath: "add_test.go", NewPath: "add_test.go"}, {NewPath: "main_test.go"},
		{OldPath: "check.sh", NewPath: "run.sh"}, {OldPath: "gone_test.go"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"add.go": "new code\n", "add_test.go": "old test\n", "gone_test.go": "gone\n", "check.sh": "old harness\n"}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(want) {
		t.Errorf("exported %d files, want %d: %v", len(entries), len(want), entries)
	}
	for name, content := range want {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != content {
			t.Errorf("%s: %q %v, want %q", name, got, err, content)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "check.sh")); err != nil || fi.Mode()&0o100 == 0 {
		t.Errorf("check.sh lost its executable bit: %v %v", fi, err)
	}
	if again, err := git(ctx, s.roots, s.Dir, nil, nil, "write-tree"); err != nil || strings.TrimSpace(string(again)) != tree {
		t.Errorf("the scratch index changed: %s %v", again, err)
	}
	if _, err := s.ExportReverted(ctx, tree, "HEAD", nil); err == nil {
		t.Error("a head that is not a commit id was accepted")
	}
}

// TestChecksTimeoutAndCancel: a check that runs past its timeout is
// reported as timed out, not as a plain failure; a check running when the
// context is cancelled returns the context's error, promptly.
func TestChecksTimeoutAndCancel(t *testing.T) {
	dir := t.TempDir()
	res, err := RunChecks(context.Background(), dir, [][]string{{"sleep", "10"}, {"touch", "never"}}, CheckOptions{Timeout: 300 * time.Millisecond})
	if err != nil || res.Passed || !res.TimedOut || len(res.Results) != 1 || !res.Results[0].TimedOut {
		t.Errorf("a check past its timeout: %+v %v", res, err)
	}
	res, err = RunChecks(context.Background(), dir, [][]string{{"true"}}, CheckOptions{Timeout: 5 * time.Second})
	if err != nil || !res.Passed || res.TimedOut {
		t.Errorf("a check within its timeout: %+v %v", res, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err = RunChecks(ctx, dir, [][]string{{"sleep", "30"}}, CheckOptions{})
	if !errors.Is(err, context.Canceled) || time.Since(start) > 10*time.Second {
		t.Errorf("a cancelled check: %v after %v", err, time.Since(start))
	}
}

// TestContainedChecksSeeReadOnlyDirs: a contained check whose program lies
// outside /usr is not found in the sandbox, and runs once its directory is
// among the operator's read-only directories.
func TestContainedChecksSeeReadOnlyDirs(t *testing.T) {
	if err := spawn.IsolationAvailable(); err != nil {
		if os.Getenv("ZERO_REQUIRE_BWRAP") != "" {
			t.Fatalf("bubblewrap is required: %v", err)
		}
		t.Skip(err)
	}
	tools, dir := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(tools, "lint"), []byte("#!/bin/sh\necho linted\n"), 0o755)
	check := [][]string{{filepath.Join(tools, "lint")}}
	if _, err := RunChecks(context.Background(), dir, check, CheckOptions{Contained: true}); !errors.Is(err, ErrNotFound) {
		t.Errorf("without the directory: %v", err)
	}
	res, err := RunChecks(context.Background(), dir, check, CheckOptions{Contained: true, ReadOnly: []string{tools}})
	if err != nil || !res.Passed || res.Isolation != policy.Container || !strings.Contains(res.Results[0].Output, "linted") {
		t.Errorf("with the directory: %+v %v", res, err)
	}
}

// TestContainedChecksLimited: a contained check that goes past the memory
// limit is killed by the kernel, and the result says so: it did not pass,
// and it is not a failing test.
func TestContainedChecksLimited(t *testing.T) {
	if err := IsolationAvailable(); err != nil {
		t.Skipf("no container isolation here: %v", err)
	}
	dir := t.TempDir()
	res, err := RunChecks(context.Background(), dir, [][]string{{"tail", "/dev/zero"}},
		CheckOptions{Contained: true, Limits: policy.Limits{MemoryMiB: 64, CPUPercent: 100, Pids: 32}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || len(res.Results) != 1 || !res.Results[0].MemoryKilled || res.Results[0].TimedOut {
		t.Fatalf("a check over its memory limit: %+v", res)
	}
	res, err = RunChecks(context.Background(), dir, [][]string{{"true"}}, CheckOptions{Contained: true, Limits: policy.DefaultCheckLimits})
	if err != nil || !res.Passed || res.Results[0].MemoryKilled {
		t.Fatalf("a check under its limits: %+v %v", res, err)
	}
}
