// Package risk guards step 4 of Agent Zero's authorization chain for writes:
// it computes the change-risk class of a change from the final unified diff
// alone (git format, as `git diff` prints it), never from anything a model
// says about the change.
//
// A repository may allow-list the low classes (Docs, Tests, Code, Config,
// Dependencies) for automatic changes. Every other class is high impact: it
// always needs a human and can never be allow-listed. [Classify] is
// deterministic and fails closed: a diff it cannot parse, an empty diff, or a
// file it has no rule for gives [Unclassified], the highest class.
//
// The rules live in tables, each entry with its reason, in rules.go (paths),
// content.go (added and removed lines) and manifest.go (dependency manifests
// and lockfiles); classify.go holds the few rules on modes, binary files,
// test files and the whole diff, and parse.go the reading of the diff. For one file, every high-impact path rule and content rule
// is applied, then the first low rule that matches; the file's class is the
// highest of these. The class of the diff is the highest over its files and
// the whole-diff rules (an empty diff; a mass change).
//
// What it cannot see: the files' contents outside the diff's hunks (so a
// manifest section whose header is outside the hunk is read by the shape of
// its lines, and anything unreadable is high), what a change means to the
// code that runs it, and anything the diff does not carry, such as the
// repository's git config or the environment of the checks.
package risk
