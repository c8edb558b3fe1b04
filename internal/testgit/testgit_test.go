package testgit

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRepo: the remote's main is the checkout's one commit, with every file,
// and origin/HEAD names main.
func TestRepo(t *testing.T) {
	checkout, remote := Repo(t, map[string]string{"README.md": "hi\n", "docs/a.md": "a\n"})
	if got, want := Run(t, remote, "rev-parse", "main"), Run(t, checkout, "rev-parse", "HEAD"); got != want {
		t.Errorf("the remote's main is %s, the checkout's HEAD %s", got, want)
	}
	if got := Run(t, remote, "show", "main:docs/a.md"); got != "a" {
		t.Errorf("docs/a.md on the remote: %q", got)
	}
	if got := Run(t, checkout, "symbolic-ref", "refs/remotes/origin/HEAD"); got != "refs/remotes/origin/main" {
		t.Errorf("origin/HEAD: %q", got)
	}
	if got := Run(t, checkout, "status", "--porcelain"); got != "" {
		t.Errorf("the checkout is not clean: %q", got)
	}
}

// TestTreeHash: the hash stays for a rewrite with the same bytes and moves
// for a new content, a new mode, a new link target and a new file.
func TestTreeHash(t *testing.T) {
	dir := t.TempDir()
	file, link := filepath.Join(dir, "f"), filepath.Join(dir, "l")
	write := func(content string) {
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("x")
	if err := os.Symlink("f", link); err != nil {
		t.Fatal(err)
	}
	before := TreeHash(t, dir)
	write("x")
	if TreeHash(t, dir) != before {
		t.Fatal("the same bytes changed the hash")
	}
	changes := []struct {
		name   string
		change func() error
	}{
		{"content", func() error { write("y"); return nil }},
		{"mode", func() error { return os.Chmod(file, 0o600) }},
		{"link target", func() error {
			os.Remove(link)
			return os.Symlink("g", link)
		}},
		{"new file", func() error { return os.WriteFile(filepath.Join(dir, "n"), nil, 0o644) }},
	}
	seen := map[string]string{before: "the start"}
	for _, c := range changes {
		if err := c.change(); err != nil {
			t.Fatal(err)
		}
		h := TreeHash(t, dir)
		if prev, ok := seen[h]; ok {
			t.Errorf("a new %s leaves the hash of %s", c.name, prev)
		}
		seen[h] = c.name
	}
}
