package risk

import (
	"testing"
)

// wholeClass recomputes, from a result, what the whole-change rules give:
// Unclassified for a change with no files, MassChange for too many files or
// lines, and nothing ("") otherwise.
func wholeClass(r Result) Class {
	var v verdict
	if len(r.Files) == 0 {
		v.raise(Unclassified, "")
	}
	if len(r.Files) > maxFiles || r.Added+r.Removed > maxLines {
		v.raise(MassChange, "")
	}
	return v.class
}

// checkResult checks the invariants of any result: one File per Change
// with git's paths and modes, Class the highest of the files' classes and
// the whole-change rules, every file with a declared class and a reason,
// a Surface file Verification or higher, and a reason for Class.
func checkResult(t *testing.T, changes []Change, r Result) {
	t.Helper()
	if len(r.Files) != len(changes) {
		t.Fatalf("%d files for %d changes", len(r.Files), len(changes))
	}
	var top verdict
	if w := wholeClass(r); w != "" {
		top.raise(w, "")
	}
	for i, f := range r.Files {
		c := changes[i]
		if f.Path != c.path() || f.OldPath != c.OldPath || f.Status != c.Status || f.OldMode != c.OldMode || f.NewMode != c.NewMode {
			t.Fatalf("file %+v does not carry change %+v", f, c)
		}
		if _, ok := Known(string(f.Class)); !ok || f.Reason == "" {
			t.Fatalf("file %+v has an undeclared class or no reason", f)
		}
		if f.Surface && f.Class.Rank() < Verification.Rank() {
			t.Fatalf("file %+v is surface but %s", f, f.Class)
		}
		top.raise(f.Class, "")
	}
	if r.Class != top.class {
		t.Fatalf("class %s, but the files and whole-change rules give %s: %+v", r.Class, top.class, r.Files)
	}
	if len(r.Reasons) == 0 {
		t.Fatalf("no reason for class %s", r.Class)
	}
}

var fuzzModes = []string{modeNone, modeFile, modeExec, modeSymlink, modeGitlink, "100664"}

// FuzzClassify checks, for one arbitrary change (status, modes, paths,
// contents, counts), that classification never panics (it calls classify,
// which has no recover), keeps the invariants, is deterministic, and is
// monotone: adding a workflow edit after or before it gives a high class,
// and never a lower one than the change alone.
func FuzzClassify(f *testing.F) {
	for _, tc := range classifyCases {
		if len(tc.fx.changes) == 0 {
			continue
		}
		c := tc.fx.changes[0]
		f.Add(c.Status, modeIndex(c.OldMode), modeIndex(c.NewMode), c.OldPath, c.NewPath, tc.fx.trees.old[c.OldPath], tc.fx.trees.new[c.NewPath], c.Added, c.Removed)
	}
	checks := [][]string{{"make", "test"}, {"go", "test", "./..."}}
	f.Fuzz(func(t *testing.T, status, oldMode, newMode byte, oldPath, newPath, old, new string, added, removed int) {
		c := Change{Status: status, OldMode: fuzzModes[int(oldMode)%len(fuzzModes)], NewMode: fuzzModes[int(newMode)%len(fuzzModes)],
			OldPath: oldPath, NewPath: newPath, Added: max(min(added, maxLineCount), -1), Removed: max(min(removed, maxLineCount), -1)}
		trees := memTrees{old: map[string]string{oldPath: old}, new: map[string]string{newPath: new}}
		one := []Change{c}
		r := classify(one, trees, checks)
		checkResult(t, one, r)
		if again := classify(one, trees, checks); again.Class != r.Class || len(again.Files) != len(r.Files) {
			t.Fatalf("not deterministic: %s then %s", r.Class, again.Class)
		}
		both := join(fx{changes: one, trees: trees}, workflowEdit)
		for _, changes := range [][]Change{both.changes, {both.changes[1], both.changes[0]}} {
			after := classify(changes, both.trees, checks)
			checkResult(t, changes, after)
			if !after.Class.HighImpact() || after.Class.Rank() < r.Class.Rank() {
				t.Fatalf("with a workflow edit: %s, alone %s", after.Class, r.Class)
			}
		}
	})
}

func modeIndex(m string) byte {
	for i, x := range fuzzModes {
		if x == m {
			return byte(i)
		}
	}
	return 0
}

// FuzzManifests runs every manifest and lockfile reader on arbitrary old
// and new contents: no panic, a deterministic class, never below
// Dependencies, and the same file on both sides never above it.
func FuzzManifests(f *testing.F) {
	for _, tc := range manifestSeeds {
		f.Add(tc[0], tc[1], tc[2])
	}
	f.Fuzz(func(t *testing.T, name, old, new string) {
		if len(old)+len(new) > 1<<16 {
			return
		}
		for _, m := range manifests {
			file := m.names[0]
			if file == "requirements*.txt" {
				file = "requirements.txt"
			}
			c := fileChange{Change: Change{Status: 'M', OldMode: modeFile, NewMode: modeFile, OldPath: file, NewPath: file},
				old: side{[]byte(old), true}, new: side{[]byte(new), true}}
			v, _ := m.verdict(c, file, readChecks(nil))
			if w, _ := m.verdict(c, file, readChecks(nil)); w.class != v.class {
				t.Fatalf("%s: not deterministic: %s then %s", file, v.class, w.class)
			}
			if v.class.Rank() < Dependencies.Rank() {
				t.Fatalf("%s: %s, below dependencies", file, v.class)
			}
			c.new = c.old
			if same, _ := m.verdict(c, file, readChecks(nil)); same.class != Dependencies && same.class != DependencySource {
				t.Fatalf("%s: the same file on both sides is %s (%s)", file, same.class, same.reason)
			}
		}
		_ = name
	})
}

// manifestSeeds are (name, old, new) seeds for FuzzManifests.
var manifestSeeds = [][3]string{
	{"go.mod", goMod("example.com/m", "github.com/a/b v1.0.0"), goMod("example.com/m", "github.com/a/b v1.1.0")},
	{"package.json", pkgJSON(`"scripts": {"test": "jest"}`), pkgJSON(`"scripts": {"test": "true"}`)},
	{"pyproject.toml", "[project]\ndependencies = [\"a>=1\"]\n", "[tool.pytest.ini_options]\naddopts = \"-q\"\n"},
	{"Cargo.toml", "[dependencies]\nserde = \"1\"\n", "[[test]]\nname = \"x\"\nharness = false\n"},
	{"pom.xml", "<project><version>1</version></project>", "<project><build/></project>"},
	{"build.gradle", "dependencies {\n  implementation 'a:b:1'\n}\n", "test {\n}\n"},
	{"Gemfile", "gem 'a', '1.0'\n", "gem 'a', git: 'x'\n"},
	{"requirements.txt", "a==1\n", "-e git+https://x\n"},
	{"package-lock.json", `{"packages": {}}`, `{"packages": {"node_modules/x": {"link": true}}}`},
	{"pnpm-lock.yaml", "a: &x b\n", "c: *x\n"},
	{"Cargo.lock", "[[package]]\n", "[[[[x]]]]"},
}
