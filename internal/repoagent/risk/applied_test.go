package risk

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// These tests run real git: the change is made with file operations,
// proposed as git's own diff, applied by git apply --index in a fresh clone
// (as the runner does), and classified from git's record.

// gitIn runs git in dir with no global or system configuration.
func gitIn(t testing.TB, dir string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return out
}

// appliedBase is the repository every case starts from.
var appliedBase = map[string]string{
	"docs/guide.md": "# Guide\n\nRead me.\n", "run.sh": "#!/bin/sh\necho hi\n", "go.mod": "module example.com/m\n\ngo 1.26\n",
	"a_test.go": "package m\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n", "Makefile": "test:\n\tgo test ./...\n",
	"package.json": "{\"name\": \"x\", \"scripts\": {\"test\": \"jest\"}}\n", "ſ.md": "long s\n", "with space.txt": "x\n",
	"-dash.md": "dash\n", "tab\tname.md": "tab\n", "vendor/v/v.go": "package v\n",
}

// template makes the base repository once: files, an executable and a
// symbolic link, in one commit.
func template(t testing.TB) string {
	dir := filepath.Join(t.TempDir(), "template")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, nil, "init", "--quiet", "--initial-branch=main")
	for name, content := range appliedBase {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
	if err := os.Symlink("docs/guide.md", filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, nil, "add", "-A")
	gitIn(t, dir, nil, "commit", "--quiet", "-m", "base")
	return dir
}

// clone copies the template, .git and all.
func clone(t testing.TB, template string) string {
	dir := filepath.Join(t.TempDir(), "c")
	if out, err := exec.Command("cp", "-a", template, dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	// The copy's files have new inodes: let the index see them as clean.
	gitIn(t, dir, nil, "update-index", "-q", "--refresh")
	return dir
}

// diskTrees reads the head from the template's files and the index from
// the clone's files, which git add -A made equal to it.
type diskTrees struct{ old, new string }

func readSide(dir, p string) ([]byte, bool, error) {
	full := filepath.Join(dir, filepath.FromSlash(p))
	fi, err := os.Lstat(full)
	if err != nil {
		return nil, false, nil
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(full)
		return []byte(target), err == nil, err
	}
	data, err := os.ReadFile(full)
	return data, err == nil, err
}

func (d diskTrees) Old(p string) ([]byte, bool, error) { return readSide(d.old, p) }
func (d diskTrees) New(p string) ([]byte, bool, error) { return readSide(d.new, p) }

// fuzzNames are the paths the file operations pick from: the base's files
// and new ones, folded spellings of protected paths among them.
var fuzzNames = []string{
	"docs/guide.md", "run.sh", "go.mod", "a_test.go", "Makefile", "package.json", "ſ.md", "with space.txt", "-dash.md",
	"tab\tname.md", "link.md", "vendor/v/v.go", "new.txt", "docs/new ſ.md", ".github/workflowſ/x.yml", "x/y/z.go",
	"b_test.go", "Docs/Guide.md", "quote\"d.md", "nl\nname.md",
}

// operate applies file operations read from data to dir: each is three
// bytes (operation, path, length) and that many bytes of content.
func operate(t testing.TB, dir string, data []byte) {
	for i, n := 0, 0; i+2 < len(data) && n < 8; n++ {
		op, p := data[i]%6, fuzzNames[int(data[i+1])%len(fuzzNames)]
		size := int(data[i+2]) % 64
		i += 3
		content := data[i:min(i+size, len(data))]
		i += len(content)
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		switch op {
		case 0: // write
			os.Remove(full)
			os.WriteFile(full, content, 0o644)
		case 1: // delete
			os.Remove(full)
		case 2: // rename onto another name
			to := filepath.Join(dir, filepath.FromSlash(fuzzNames[int(size)%len(fuzzNames)]))
			os.MkdirAll(filepath.Dir(to), 0o755)
			os.Rename(full, to)
		case 3: // chmod +x
			os.Chmod(full, 0o755)
		case 4: // chmod -x
			os.Chmod(full, 0o644)
		case 5: // a symbolic link
			os.Remove(full)
			os.Symlink(string(bytes.ReplaceAll(content, []byte{0}, nil))+"x", full)
		}
	}
}

// entries reads git's tree or index listing: path to "mode object".
func entries(out []byte, index bool) map[string]string {
	m := map[string]string{}
	for _, e := range bytes.Split(out, []byte{0}) {
		meta, name, ok := strings.Cut(string(e), "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta) // ls-tree: mode type object; ls-files: mode object stage
		if index {
			m[name] = f[0] + " " + f[1]
		} else {
			m[name] = f[0] + " " + f[2]
		}
	}
	return m
}

// checkApplied classifies what git applied in dir against the template's
// head, and checks that the files judged, with their modes, are exactly
// what git's trees say changed: no more, no fewer.
func checkApplied(t *testing.T, tmpl, dir string, checks [][]string) Result {
	t.Helper()
	raw := gitIn(t, dir, nil, "diff", "--cached", "-z", "-M", "--raw", "--numstat", "--no-abbrev", "HEAD", "--")
	changes, err := ParseRecord(raw)
	if err != nil {
		t.Fatalf("git's record does not parse: %v\n%q", err, raw)
	}
	r := Classify(changes, diskTrees{tmpl, dir}, checks)
	checkResult(t, changes, r)

	head := entries(gitIn(t, dir, nil, "ls-tree", "-r", "-z", "--full-tree", "HEAD"), false)
	index := entries(gitIn(t, dir, nil, "ls-files", "--stage", "-z"), true)
	wantOld, wantNew := map[string]string{}, map[string]string{}
	for p, e := range head {
		if index[p] != e {
			wantOld[p] = strings.Fields(e)[0]
		}
	}
	for p, e := range index {
		if head[p] != e {
			wantNew[p] = strings.Fields(e)[0]
		}
	}
	gotOld, gotNew := map[string]string{}, map[string]string{}
	for _, f := range r.Files {
		if f.OldPath != "" {
			gotOld[f.OldPath] = f.OldMode
		}
		if f.Status != 'D' {
			gotNew[f.Path] = f.NewMode
		}
	}
	if !sameMap(gotOld, wantOld) || !sameMap(gotNew, wantNew) {
		t.Fatalf("judged old %q new %q; git changed old %q new %q", gotOld, gotNew, wantOld, wantNew)
	}
	return r
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// propose makes the operations in a clone of the template, and returns
// git's diff of them and a fresh clone in which git apply --index applied
// that diff; ok is false if git would not apply it.
func propose(t *testing.T, tmpl string, data []byte) (dir string, ok bool) {
	work := clone(t, tmpl)
	operate(t, work, data)
	gitIn(t, work, nil, "add", "-A")
	diff := gitIn(t, work, nil, "diff", "--cached", "--binary", "HEAD")
	dir = clone(t, tmpl)
	cmd := exec.Command("git", "apply", "--index", "--whitespace=nowarn", "-")
	cmd.Dir, cmd.Stdin = dir, bytes.NewReader(diff)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	return dir, cmd.Run() == nil
}

// FuzzClassifyApplied is the differential test: for any diff git applies,
// the paths and modes the classifier judges are exactly those git's trees
// say changed, and the result keeps its invariants. Each input is at most
// eight file operations of at most 63 bytes each.
func FuzzClassifyApplied(f *testing.F) {
	if _, err := exec.LookPath("git"); err != nil {
		f.Skip("no git")
	}
	tmpl := template(f)
	f.Add([]byte{0, 0, 3, 'a', 'b', 'c'})           // edit docs/guide.md
	f.Add([]byte{3, 0, 0})                          // chmod +x docs/guide.md
	f.Add([]byte{2, 0, 13})                         // rename docs/guide.md
	f.Add([]byte{1, 1, 0, 5, 10, 2, 'z', 'z'})      // delete run.sh, link.md becomes a new link
	f.Add([]byte{0, 14, 2, 'o', 'n', 4, 1, 0})      // a workflow under a long s; -x on run.sh
	f.Add([]byte{0, 4, 9, '@', 'e', 'c', 'h', 'o'}) // Makefile
	f.Add([]byte{0, 16, 12, 'p', 'a', 'c', 'k', 'a', 'g', 'e', ' ', 'm', '\n', 'f', 'u'})
	f.Add([]byte{0, 19, 1, 'x', 0, 18, 1, 'y', 0, 9, 0}) // names with a newline and a quote; empty tab file
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1024 {
			return
		}
		dir, ok := propose(t, tmpl, data)
		if !ok {
			return
		}
		checkApplied(t, tmpl, dir, [][]string{{"make", "test"}})
	})
}

// TestClassifyApplied runs the real pipeline on the cases of issue 13 and
// checks git's paths and modes were judged, through the differential check.
func TestClassifyApplied(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	tmpl := template(t)
	cases := []struct {
		name string
		data []byte
		want Class
	}{
		{"docs edit", []byte{0, 0, 3, 'a', 'b', '\n'}, Docs},
		{"chmod +x of docs/guide.md", []byte{3, 0, 0}, Executable},
		{"docs/guide.md rewritten as a script", append([]byte{0, 0, 10}, "#!/bin/sh\n"...), Executable},
		{"a workflow under a long s", append([]byte{0, 14, 9}, "on: push\n"...), CI},
		{"Makefile test target skipped", append([]byte{0, 4, 20}, "test:\n\t@echo skipped\n"...), Verification},
		{"a file replaced by a link", []byte{5, 0, 2, 'a', 'b'}, Unclassified},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, ok := propose(t, tmpl, tc.data)
			if !ok {
				t.Fatal("git did not apply the diff")
			}
			if r := checkApplied(t, tmpl, dir, [][]string{{"make", "test"}}); r.Class != tc.want {
				t.Errorf("%s, want %s (%q)", r.Class, tc.want, r.Reasons)
			}
		})
	}
}
