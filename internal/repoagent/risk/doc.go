// Package risk guards step 4 of Agent Zero's authorization chain for writes:
// it computes the change-risk class of a change from what git applied,
// never from anything a model says about the change, and never from a
// second parse of the model's diff text.
//
// The input is git's own record of the change after the apply in the
// scratch clone ([ParseRecord] reads `git diff --cached -z -M --raw
// --numstat --no-abbrev HEAD`: status, renames, modes, old and new paths,
// line counts) and the files' contents on both sides ([Trees]: the reviewed
// head and the index). [Classify] judges exactly the files git changed,
// with the modes git recorded.
//
// A repository may allow-list the low classes (Docs, Tests, Code, Config,
// Dependencies) for automatic changes. Every other class is high impact: it
// always needs a human and can never be allow-listed. Classify is
// deterministic and fails closed: an empty change, a file it cannot read,
// or a file it has no rule for gives [Unclassified], the highest class.
//
// The rules live in tables, each entry with its reason: rules.go (paths,
// compared as file systems compare them: folded for case, Unicode case
// folding and normalization, see fold.go), content.go (credentials in added
// lines, test definitions lost, skips gained, files made scripts),
// manifest*.go (dependency manifests and lockfiles, parsed whole on both
// sides) and surface.go (the verification surface: what the checks execute
// or read, class [Verification]); classify.go holds the mode rules and the
// whole-change rules. For one file, every high-impact rule applies, then,
// for a path no high-impact path rule matched, the first low rule that
// matches; the file's class is the highest of these. The class of the
// change is the highest over its files and the whole-change rules (an empty
// change; a mass change). Each [File] also says whether it is a test
// (File.Test) and whether the change touches the verification surface
// (File.Surface), for the step that runs the head's tests on the new code.
//
// What it cannot see: what a change means to the code that runs it (a
// harmful change inside ordinary code is Code), files that influence the
// checks without being tests or a known part of the surface, and anything
// git does not record, such as the repository's git config or the checks'
// environment.
package risk
