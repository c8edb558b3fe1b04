// Package testgit makes git repositories for tests: it runs git with no
// global or system config and a fixed author, makes a checkout whose origin
// is a local bare repository, hashes a tree to prove that nothing in it
// changed, and serves bare repositories over HTTP as a real git server
// (git http-backend through Go's CGI handler, NewServer). Only tests
// import it.
package testgit

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Run runs git in dir and returns its output, trimmed. An error fails the
// test.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Repo makes a bare repository and a checkout whose origin it is, in a
// temporary directory. The checkout's main holds files (path to content) in
// one commit, pushed to the remote, and origin/HEAD names main.
func Repo(t testing.TB, files map[string]string) (checkout, remote string) {
	t.Helper()
	root := t.TempDir()
	remote = filepath.Join(root, "remote.git")
	checkout = filepath.Join(root, "checkout")
	Run(t, root, "init", "--quiet", "--bare", "--initial-branch=main", remote)
	Run(t, root, "init", "--quiet", "--initial-branch=main", checkout)
	for name, content := range files {
		path := filepath.Join(checkout, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Run(t, checkout, "add", ".")
	Run(t, checkout, "commit", "--quiet", "-m", "first")
	Run(t, checkout, "remote", "add", "origin", remote)
	Run(t, checkout, "push", "--quiet", "origin", "main")
	Run(t, checkout, "fetch", "--quiet", "origin")
	Run(t, checkout, "remote", "set-head", "origin", "main")
	return checkout, remote
}

// TreeHash hashes the name and mode of every file, link and directory
// under dir, .git included, with each file's content and each link's
// target: two equal hashes mean that nothing changed.
func TreeHash(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		line := rel + " " + info.Mode().String()
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			line += " -> " + target
		case d.Type().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			line += " " + hex.EncodeToString(sum[:])
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}
