package risk

import (
	"strings"
	"testing"
)

// wholeDiffClass recomputes, from a result, what the whole-diff rules give:
// Unclassified for a diff with no files, MassChange for too many files or
// lines, and nothing ("") otherwise.
func wholeDiffClass(r Result) Class {
	var v verdict
	if len(r.Files) == 0 {
		v.raise(Unclassified, "")
	}
	if len(r.Files) > maxFiles || r.Added+r.Removed > maxLines {
		v.raise(MassChange, "")
	}
	return v.class
}

// checkResult checks the invariants of any result: Class is the highest of
// the files' classes and the whole-diff rules, every file has a declared
// class and a reason, and there is a reason for Class.
func checkResult(t *testing.T, r Result) {
	t.Helper()
	var top verdict
	if w := wholeDiffClass(r); w != "" {
		top.raise(w, "")
	}
	for _, f := range r.Files {
		if _, ok := Known(string(f.Class)); !ok || f.Reason == "" {
			t.Fatalf("file %+v has an undeclared class or no reason", f)
		}
		top.raise(f.Class, "")
	}
	if r.Class != top.class {
		t.Fatalf("class %s, but the files and whole-diff rules give %s: %+v", r.Class, top.class, r.Files)
	}
	if len(r.Reasons) == 0 {
		t.Fatalf("no reason for class %s", r.Class)
	}
}

// FuzzClassify checks that classification never panics (it calls classify,
// which has no recover), that results keep their invariants, that it is
// deterministic, and that it is monotone: adding a CI file's diff after any
// diff gives a high class and never a lower one than before, and adding it
// before any diff gives a high class.
func FuzzClassify(f *testing.F) {
	for _, tc := range classifyCases {
		f.Add(tc.diff)
	}
	f.Add(docsEdit[:len(docsEdit)-5])
	f.Add("diff --git a/x b/x\n@@ -1 +1 @@\n")
	f.Add("diff --git \"a/\\")
	f.Fuzz(func(t *testing.T, diff string) {
		r := classify(diff)
		checkResult(t, r)
		if again := classify(diff); again.Class != r.Class || len(again.Files) != len(r.Files) {
			t.Fatalf("not deterministic: %s then %s", r.Class, again.Class)
		}

		sep := ""
		if diff != "" && !strings.HasSuffix(diff, "\n") {
			sep = "\n"
		}
		after := classify(diff + sep + workflowEdit)
		checkResult(t, after)
		if !after.Class.HighImpact() {
			t.Fatalf("diff + workflow edit gave low class %s: %+v", after.Class, after.Files)
		}
		if len(r.Files) > 0 && after.Class.Rank() < r.Class.Rank() {
			t.Fatalf("adding a workflow edit lowered the class from %s to %s", r.Class, after.Class)
		}

		before := classify(workflowEdit + diff)
		checkResult(t, before)
		if !before.Class.HighImpact() {
			t.Fatalf("workflow edit + diff gave low class %s: %+v", before.Class, before.Files)
		}
	})
}
