package risk

import (
	"fmt"
	"strings"
)

// Whole-change rules: a change larger than this is MassChange, however low
// its files are, because no reviewer reads it as one change.
const (
	maxFiles = 50   // files in one change
	maxLines = 1500 // added plus removed lines in one change
)

// Reading budget: a blob larger than maxBlob, or reading more than maxRead
// over one change, leaves the file Unclassified.
const (
	maxBlob = 8 << 20
	maxRead = 64 << 20
)

// Trees reads blobs: Old from the reviewed head, New from the index after
// the apply. A false second result means the tree has no such file.
type Trees interface {
	Old(path string) ([]byte, bool, error)
	New(path string) ([]byte, bool, error)
}

// File is one changed file and its class.
type File struct {
	// Path is the file's path after the change, or before it for a
	// deletion; OldPath is its path before the change ("" for an added
	// file). Status, OldMode and NewMode are git's (see Change).
	Path, OldPath    string
	Status           byte
	OldMode, NewMode string
	Class            Class
	Reason           string // why the file has its class
	// Test: the path is a test file or test data by the classifier's
	// rules, on either side.
	Test bool
	// Surface: the file is part of the verification surface, what the
	// checks execute or read (see surface.go), and the change touches that
	// part of it.
	Surface bool
}

// Result is the class of a change, with the files and reasons behind it.
type Result struct {
	Class   Class
	Files   []File   // one for each Change, in order
	Reasons []string // what gave Class: "path: reason" per file, and whole-change rules
	Added   int      // added lines over all text files
	Removed int      // removed lines over all text files
}

// Classify judges the change git applied: changes is git's record of it
// (ParseRecord), trees reads the files' contents before and after, and
// checks are the policy's check argvs (for the verification surface). It
// returns the highest class over the files and the whole-change rules. An
// empty change, a file no rule can classify, or a file that cannot be read
// is Unclassified. It never errors or panics: every failure is a high
// class.
func Classify(changes []Change, trees Trees, checks [][]string) (r Result) {
	defer func() {
		// A bug must not turn into a crash of the caller, nor into a low
		// class: it is Unclassified.
		if e := recover(); e != nil {
			r = Result{
				Class:   Unclassified,
				Files:   []File{{Class: Unclassified, Reason: "the classifier failed"}},
				Reasons: []string{fmt.Sprintf("the classifier failed: %v", e)},
			}
		}
	}()
	return classify(changes, trees, checks)
}

func classify(changes []Change, trees Trees, checks [][]string) Result {
	var r Result
	in := &input{trees: trees, checks: readChecks(checks)}
	seen := map[string]bool{}
	for _, c := range changes {
		f := in.file(c)
		if p := c.path(); seen[p] {
			f.Class, f.Reason = Unclassified, "git recorded this file more than once"
		} else {
			seen[p] = true
		}
		r.Files = append(r.Files, f)
		r.Added += max(c.Added, 0)
		r.Removed += max(c.Removed, 0)
	}

	var whole []verdict
	if len(r.Files) == 0 {
		whole = append(whole, verdict{Unclassified, "the change is empty"})
	}
	if len(r.Files) > maxFiles {
		whole = append(whole, verdict{MassChange, fmt.Sprintf("the change has %d files, more than %d", len(r.Files), maxFiles)})
	}
	if n := r.Added + r.Removed; n > maxLines {
		whole = append(whole, verdict{MassChange, fmt.Sprintf("the change has %d lines, more than %d", n, maxLines)})
	}

	var top verdict
	for _, w := range whole {
		top.add(w)
	}
	for _, f := range r.Files {
		top.raise(f.Class, f.Reason)
	}
	r.Class = top.class
	for _, w := range whole {
		if w.class == r.Class {
			r.Reasons = append(r.Reasons, w.reason)
		}
	}
	for _, f := range r.Files {
		if f.Class == r.Class {
			if f.Path == "" {
				r.Reasons = append(r.Reasons, f.Reason)
			} else {
				r.Reasons = append(r.Reasons, f.Path+": "+f.Reason)
			}
		}
	}
	return r
}

// input is what one classification reads from: the trees, within the
// reading budget, and what the checks run.
type input struct {
	trees  Trees
	checks checkInfo
	read   int
}

// side is one side of a file's change: its content, when it has one.
type side struct {
	data []byte
	ok   bool // the file exists on this side and was read
}

// blob reads a file's content on one side; a failure says why.
func (in *input) blob(new bool, p string) (side, string) {
	if in.trees == nil {
		return side{}, "no trees to read the file from"
	}
	read := in.trees.Old
	if new {
		read = in.trees.New
	}
	data, ok, err := read(p)
	switch {
	case err != nil:
		return side{}, "the file cannot be read"
	case !ok:
		return side{}, "git recorded the file, but its tree does not hold it"
	case len(data) > maxBlob:
		return side{}, fmt.Sprintf("the file is over %d MiB, too large to read", maxBlob>>20)
	case in.read+len(data) > maxRead:
		return side{}, fmt.Sprintf("the change is over %d MiB, too large to read", maxRead>>20)
	}
	in.read += len(data)
	return side{data, true}, ""
}

// file gives one change its class: every high-impact path rule, mode rule,
// binary rule, content rule, manifest rule and surface rule that applies,
// and, for the paths no high-impact path rule matched, their low class;
// the highest wins. (A file a high-impact rule matched is classified, even
// if no low rule knows its kind.)
func (in *input) file(c Change) File {
	f := File{Path: c.path(), OldPath: c.OldPath, Status: c.Status, OldMode: c.OldMode, NewMode: c.NewMode}
	f.Test = isTestPath(c.OldPath) || isTestPath(c.NewPath)
	var v verdict
	if !isKnownStatus(c.Status) {
		v.raise(Unclassified, fmt.Sprintf("git recorded the status %q, which no rule knows", c.Status))
	}

	// The paths the change touches: the new one, and the old one when the
	// file is deleted or moved away from it (a workflow renamed to docs is
	// a workflow removed). A copy leaves its source as it was.
	var paths []string
	if c.NewPath != "" {
		paths = append(paths, c.NewPath)
	}
	if c.OldPath != "" && (c.Status == 'D' || c.Status == 'R') {
		paths = append(paths, c.OldPath)
	}
	if len(paths) == 0 {
		v.raise(Unclassified, "cannot tell which file this is")
	}
	var lowKeys []pathKey // paths no high-impact path rule matched
	for _, p := range paths {
		if why := badPath(p); why != "" {
			v.raise(Unclassified, why)
			continue
		}
		if h := highPath(keyOf(p)); h.class != "" {
			v.add(h)
		} else {
			lowKeys = append(lowKeys, keyOf(p))
		}
	}
	v.add(modeVerdict(c))
	v.add(testLoss(c))

	gitlink := c.OldMode == modeGitlink || c.NewMode == modeGitlink
	if gitlink {
		// A submodule has no content and no file type: the mode rule
		// classes it.
		f.Class, f.Reason = v.class, v.reason
		return f
	}
	var old, new side
	if c.Status != 'A' && c.OldPath != "" {
		var why string
		if old, why = in.blob(false, c.OldPath); why != "" {
			v.raise(Unclassified, why)
		}
	}
	if c.Status != 'D' && c.NewPath != "" {
		var why string
		if new, why = in.blob(true, c.NewPath); why != "" {
			v.raise(Unclassified, why)
		}
	}
	ch := fileChange{Change: c, old: old, new: new, binary: c.Added < 0}
	if ch.binary {
		v.add(binaryVerdict(paths))
	} else {
		v.add(contentVerdict(ch))
	}
	m, ms := manifestVerdict(ch, in.checks)
	v.add(m)
	s := surfaceVerdict(ch, in.checks)
	s.add(ms)
	f.Surface = s.class != ""
	v.add(s)
	if !f.Surface {
		// A surface file is classed by the surface rule, as a file a
		// high-impact path rule matched is.
		v.add(lowVerdict(lowKeys))
	}

	f.Class, f.Reason = v.class, v.reason
	return f
}

// fileChange is a change with the contents of both sides.
type fileChange struct {
	Change
	old, new side
	binary   bool
}

// modeVerdict applies the mode rules. A submodule on either side is
// DependencySource. A type change (between file, link and submodule) and a
// symbolic link on the new side are Unclassified: a link's content is a
// place, not a kind of file the rules know. A file that becomes executable,
// new or not, is Executable. Any other mode change is at least Config, and
// an executable file at least Code. A mode git does not write is
// Unclassified.
func modeVerdict(c Change) verdict {
	var v verdict
	for _, m := range []string{c.OldMode, c.NewMode} {
		switch m {
		case modeNone, modeFile, modeExec, modeSymlink, modeGitlink:
		default:
			v.raise(Unclassified, "git recorded a mode no rule knows")
		}
	}
	if c.OldMode == modeGitlink || c.NewMode == modeGitlink {
		v.raise(DependencySource, "changes a git submodule")
	}
	if c.Status == 'T' {
		v.raise(Unclassified, "changes the file's type (file, link or submodule)")
	}
	if c.NewMode == modeSymlink {
		v.raise(Unclassified, "adds or changes a symbolic link")
	}
	if c.NewMode == modeExec && c.OldMode != modeExec {
		if c.OldMode == modeNone {
			v.raise(Executable, "adds an executable file")
		} else {
			v.raise(Executable, "makes the file executable")
		}
	}
	if c.OldMode != c.NewMode && c.OldMode != modeNone && c.NewMode != modeNone {
		v.raise(Config, "changes the file's mode")
	}
	if c.NewMode == modeExec {
		v.raise(Code, "changes an executable file")
	}
	return v
}

// binaryVerdict: a binary change is Unclassified, unless it is an image
// under docs/ or doc/.
func binaryVerdict(paths []string) verdict {
	for _, p := range paths {
		if !isDocsImage(keyOf(p)) {
			return verdict{Unclassified, "changes a binary file"}
		}
	}
	return verdict{Docs, "changes an image under docs/"}
}

// testLoss applies the test-file rules: deleting a test file is
// DeletedTests, and so is renaming one so that it is no longer a test
// (a_test.go to a.go) or no longer found by the test runner (into
// testdata/, or for Go into a directory starting with "_" or ".").
func testLoss(c Change) verdict {
	from, to := c.OldPath, c.NewPath
	switch {
	case c.Status == 'D' && isTestPath(from):
		return verdict{DeletedTests, "deletes a test file"}
	case c.Status == 'R' && isTestPath(from) && !isTestPath(to):
		return verdict{DeletedTests, "renames a test file to a name that is not a test"}
	case c.Status == 'R' && isTestFile(from) && !isTestFile(to):
		return verdict{DeletedTests, "moves a test file where its tests no longer run"}
	}
	return verdict{}
}

// lowVerdict gives the low class of the paths that are not manifests and
// that no high-impact path rule matched: the first low path rule that
// matches, or Unclassified.
func lowVerdict(keys []pathKey) verdict {
	var v verdict
	for _, k := range keys {
		if findManifest(k) == nil {
			v.add(lowPath(k))
		}
	}
	return v
}

// lines splits content into lines without their line ends.
func lines(data []byte) []string {
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		return nil
	}
	out := strings.Split(s, "\n")
	for i, l := range out {
		out[i] = strings.TrimSuffix(l, "\r")
	}
	return out
}

// addedLines returns the lines of new that old does not have, counting
// repeats: what the change added, whatever git's diff would align.
func addedLines(old, new []byte) []string {
	have := map[string]int{}
	for _, l := range lines(old) {
		have[l]++
	}
	var out []string
	for _, l := range lines(new) {
		if have[l] > 0 {
			have[l]--
			continue
		}
		out = append(out, l)
	}
	return out
}
