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

// TestChecksStrictAndClean: shell operators in a check are refused, and a
// check sees no credential from Zero's environment.
func TestChecksStrictAndClean(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := RunChecks(ctx, dir, [][]string{{"echo", "a", "&&", "touch", "x"}}, false); !errors.Is(err, spawn.ErrStrict) {
		t.Errorf("&& in a check: %v", err)
	}
	t.Setenv("AGENT_ZERO_MODEL_API_KEY", "model-key-canary")
	t.Setenv("AGENT_ZERO_GITHUB_TOKEN", "github-token-canary")
	res, err := RunChecks(ctx, dir, [][]string{{"env"}}, false)
	if err != nil || !res.Passed || res.Isolation != Local {
		t.Fatalf("env: %+v %v", res, err)
	}
	if strings.Contains(res.Results[0].Output, "canary") || !strings.Contains(res.Results[0].Output, "PATH=") {
		t.Errorf("a check's environment: %s", res.Results[0].Output)
	}
	res, err = RunChecks(ctx, dir, [][]string{{"true"}, {"false"}, {"touch", "never"}}, false)
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
	contained, err := RunChecks(ctx, dir, dial, true)
	if err != nil || contained.Isolation != Container || contained.Passed || ln.Accepted() != 0 {
		t.Fatalf("contained: %+v %v, %d accepted", contained, err, ln.Accepted())
	}
	open, err := RunChecks(ctx, dir, dial, false)
	if n := ln.WaitAccepted(1, 5*time.Second); err != nil || !open.Passed || n != 1 {
		t.Fatalf("not contained: %+v %v, %d accepted", open, err, n)
	}
}
