package risk

import (
	"fmt"
	"slices"
	"strings"
)

// Whole-diff rules: a change larger than this is MassChange, however low
// its files are, because no reviewer reads it as one change.
const (
	maxFiles = 50   // files in one diff
	maxLines = 1500 // added plus removed lines in one diff
)

// File is one file's part of a diff and its class.
type File struct {
	// Path is the file's path as on the diff's b/ side, or the a/ side for
	// a deletion. It is empty for text that is not part of any file's diff,
	// and for a file whose name cannot be read.
	Path   string
	Class  Class
	Reason string // why the file has its class
}

// Result is the class of a diff, with the files and reasons behind it.
type Result struct {
	Class   Class
	Files   []File
	Reasons []string // what gave Class: "path: reason" per file, and whole-diff rules
	Added   int      // added lines over all hunks
	Removed int      // removed lines over all hunks
}

// Classify parses diff, a unified diff in git's format, and returns the
// highest class over its files and the whole-diff rules. A diff that does not
// parse, is empty, or has a file no rule can classify is Unclassified. It
// never errors: every failure is a high class.
func Classify(diff string) (r Result) {
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
	return classify(diff)
}

func classify(diff string) Result {
	var r Result
	secs, lead := parse(diff)
	if lead != "" {
		r.Files = append(r.Files, File{Class: Unclassified, Reason: lead})
	}
	seen := map[string]bool{}
	for _, s := range secs {
		f := classifyFile(s)
		if p := s.path(); seen[p] && s.problem == "" {
			f.Class, f.Reason = Unclassified, "the diff has this file more than once"
		} else {
			seen[p] = true
		}
		r.Files = append(r.Files, f)
		r.Added += s.added
		r.Removed += s.removed
	}

	var whole []verdict
	if len(r.Files) == 0 {
		whole = append(whole, verdict{Unclassified, "the diff is empty"})
	}
	if len(r.Files) > maxFiles {
		whole = append(whole, verdict{MassChange, fmt.Sprintf("the diff has %d files, more than %d", len(r.Files), maxFiles)})
	}
	if n := r.Added + r.Removed; n > maxLines {
		whole = append(whole, verdict{MassChange, fmt.Sprintf("the diff changes %d lines, more than %d", n, maxLines)})
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

// classifyFile gives one section its class: every high-impact path rule,
// mode rule, binary rule, content rule and manifest rule that applies, and,
// for a path no high-impact path rule matched, its low class; the highest
// wins. (A file a high-impact rule matched is classified, even if no low
// rule knows its kind.)
func classifyFile(s *section) File {
	f := File{Path: s.path()}
	if s.problem != "" {
		f.Class, f.Reason = Unclassified, s.problem
		return f
	}

	// The paths the change touches: the new one, and the old one when the
	// file is deleted or moved away from it (a workflow renamed to docs is
	// a workflow removed). A copy leaves its source as it was.
	var paths []string
	if p := s.newPath(); p != "" {
		paths = append(paths, p)
	}
	if p := s.oldPath(); p != "" && (s.deleted || s.renamed) {
		paths = append(paths, p)
	}
	var v verdict
	var lowPaths []string // paths no high-impact path rule matched
	for _, p := range paths {
		if why := badPath(p); why != "" {
			v.raise(Unclassified, why)
		}
		if h := highPath(p); h.class != "" {
			v.add(h)
		} else {
			lowPaths = append(lowPaths, p)
		}
	}
	v.add(modeVerdict(s))
	v.add(testLoss(s))
	if s.binary {
		v.add(binaryVerdict(paths))
	} else {
		v.add(contentVerdict(s, f.Path))
	}
	// A submodule has no file type: the mode rule classes it.
	if !s.gitlink() {
		v.add(manifestVerdict(s, paths))
		v.add(lowVerdict(lowPaths))
	}
	if len(paths) == 0 {
		v.raise(Unclassified, "cannot tell which file this is")
	}

	f.Class, f.Reason = v.class, v.reason
	return f
}

// modeVerdict applies the mode rules: a new executable file or symlink is
// Unclassified (its content is not a kind of file the rules know); a change
// to or of a symlink is Unclassified; a submodule is DependencySource; a
// mode change is at least Config; an executable file is at least Code.
func modeVerdict(s *section) verdict {
	var v verdict
	if s.gitlink() {
		v.raise(DependencySource, "changes a git submodule")
	}
	if s.created && s.createMode == modeExec {
		v.raise(Unclassified, "adds an executable file")
	}
	if slices.Contains([]string{s.createMode, s.oldMode, s.newMode, s.indexMode}, modeSymlink) {
		v.raise(Unclassified, "adds or changes a symbolic link")
	}
	if s.oldMode != s.newMode {
		v.raise(Config, "changes the file's mode")
	}
	if s.indexMode == modeExec || s.newMode == modeExec {
		v.raise(Code, "changes an executable file")
	}
	return v
}

// gitlink reports whether the section changes a submodule.
func (s *section) gitlink() bool {
	return slices.Contains([]string{s.createMode, s.deleteMode, s.oldMode, s.newMode, s.indexMode}, modeGitlink)
}

// binaryVerdict: a binary change is Unclassified, unless it is an image
// under docs/ or doc/.
func binaryVerdict(paths []string) verdict {
	for _, p := range paths {
		if !isDocsImage(strings.ToLower(p)) {
			return verdict{Unclassified, "changes a binary file"}
		}
	}
	return verdict{Docs, "changes an image under docs/"}
}

// testLoss applies the test-file rules: deleting a test file is
// DeletedTests, and so is renaming one so that it is no longer a test
// (a_test.go to a.go) or no longer found by the test runner (into
// testdata/, or for Go into a directory starting with "_" or ".").
func testLoss(s *section) verdict {
	from, to := s.oldPath(), s.newPath()
	switch {
	case s.deleted && isTestPath(from):
		return verdict{DeletedTests, "deletes a test file"}
	case s.renamed && isTestPath(from) && !isTestPath(to):
		return verdict{DeletedTests, "renames a test file to a name that is not a test"}
	case s.renamed && isTestFile(from) && !isTestFile(to):
		return verdict{DeletedTests, "moves a test file where its tests no longer run"}
	}
	return verdict{}
}

// manifestVerdict reads the paths that are dependency manifests or
// lockfiles (see manifest.go), whether or not a high-impact path rule also
// matched them. A manifest that is renamed or copied is DependencySource: the
// diff shows its lines relative to another file, so the reader cannot tell
// which dependencies are new.
func manifestVerdict(s *section, paths []string) verdict {
	var v verdict
	for _, p := range paths {
		m := findManifest(p)
		switch {
		case m == nil:
		case s.renamed || s.copied:
			v.raise(DependencySource, "renames or copies a dependency manifest")
		case s.binary:
			v.raise(Unclassified, "a binary dependency manifest")
		default:
			v.add(m.read(s, p))
		}
	}
	return v
}

// lowVerdict gives the low class of the paths that are not manifests and
// that no high-impact path rule matched: the first low path rule that
// matches, or Unclassified.
func lowVerdict(paths []string) verdict {
	var v verdict
	for _, p := range paths {
		if findManifest(p) == nil {
			v.add(lowPath(p))
		}
	}
	return v
}
