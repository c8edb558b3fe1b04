package risk

import "strings"

// The builders below make a change as git records it after an apply: a
// Change for each file and the contents of both trees. Line counts are
// those of the lines each side adds, as numstat counts them for a simple
// edit.

// memTrees holds both trees in memory.
type memTrees struct{ old, new map[string]string }

func (m memTrees) Old(p string) ([]byte, bool, error) { s, ok := m.old[p]; return []byte(s), ok, nil }
func (m memTrees) New(p string) ([]byte, bool, error) { s, ok := m.new[p]; return []byte(s), ok, nil }

// fx is a change under construction.
type fx struct {
	changes []Change
	trees   memTrees
}

func newFx() fx { return fx{trees: memTrees{old: map[string]string{}, new: map[string]string{}}} }

// join merges fixtures into one change.
func join(fs ...fx) fx {
	out := newFx()
	for _, f := range fs {
		out.changes = append(out.changes, f.changes...)
		for k, v := range f.trees.old {
			out.trees.old[k] = v
		}
		for k, v := range f.trees.new {
			out.trees.new[k] = v
		}
	}
	return out
}

func (f fx) classify(checks ...[]string) Result { return Classify(f.changes, f.trees, checks) }

func counts(old, new string) (int, int) {
	return len(addedLines([]byte(old), []byte(new))), len(addedLines([]byte(new), []byte(old)))
}

// edit changes a 100644 file from old to new.
func edit(p, old, new string) fx { return editMode(p, modeFile, modeFile, old, new) }

func editMode(p, oldMode, newMode, old, new string) fx {
	f := newFx()
	a, r := counts(old, new)
	f.changes = []Change{{Status: 'M', OldMode: oldMode, NewMode: newMode, OldPath: p, NewPath: p, Added: a, Removed: r}}
	f.trees.old[p], f.trees.new[p] = old, new
	return f
}

// add creates a 100644 file.
func add(p, content string) fx { return addMode(p, modeFile, content) }

func addMode(p, mode, content string) fx {
	f := newFx()
	a, _ := counts("", content)
	f.changes = []Change{{Status: 'A', OldMode: modeNone, NewMode: mode, NewPath: p, Added: a}}
	f.trees.new[p] = content
	return f
}

// del deletes a 100644 file.
func del(p, content string) fx {
	f := newFx()
	f.changes = []Change{{Status: 'D', OldMode: modeFile, NewMode: modeNone, OldPath: p, Removed: len(lines([]byte(content)))}}
	f.trees.old[p] = content
	return f
}

// ren renames a file whose content stays the same.
func ren(from, to, content string) fx { return renEdit(from, to, content, content) }

func renEdit(from, to, old, new string) fx {
	f := newFx()
	a, r := counts(old, new)
	f.changes = []Change{{Status: 'R', Score: 100, OldMode: modeFile, NewMode: modeFile, OldPath: from, NewPath: to, Added: a, Removed: r}}
	f.trees.old[from], f.trees.new[to] = old, new
	return f
}

// cp copies a file.
func cp(from, to, content string) fx {
	f := renEdit(from, to, content, content)
	f.changes[0].Status = 'C'
	f.trees.new[from] = content
	return f
}

// bin changes a binary file (numstat's -1).
func bin(p string, created bool) fx {
	f := newFx()
	c := Change{Status: 'M', OldMode: modeFile, NewMode: modeFile, OldPath: p, NewPath: p, Added: -1, Removed: -1}
	if created {
		c.Status, c.OldMode, c.OldPath = 'A', modeNone, ""
	} else {
		f.trees.old[p] = "\x00old"
	}
	f.trees.new[p] = "\x00new"
	f.changes = []Change{c}
	return f
}

// many joins n fixtures made by g.
func many(n int, g func(i int) fx) fx {
	var fs []fx
	for i := range n {
		fs = append(fs, g(i))
	}
	return join(fs...)
}

// text joins lines with a final newline.
func text(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// oneLine changes one line of a file, for path rules; a Go file stays Go.
func oneLine(p string) fx {
	if strings.HasSuffix(string(keyOf(p)), ".go") {
		return edit(p, "package p\n// a\n", "package p\n// b\n")
	}
	return edit(p, "a\n", "b\n")
}
