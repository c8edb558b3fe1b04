package risk

import (
	"bytes"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// contentRule is a pattern looked for in the lines a change adds to a file.
type contentRule struct {
	re  *regexp.Regexp
	why string
}

// secretRules find credentials in added lines, in any text file: a change
// that adds one is Secrets, whatever the file is.
var secretRules = sync.OnceValue(func() []contentRule {
	return []contentRule{
		{regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`), "adds a private key"},
		{regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`), "adds an AWS access key id"},
		{regexp.MustCompile(`\b(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{20,}`), "adds a GitHub token"},
		{regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`), "adds a GitHub token"},
		{regexp.MustCompile(`\bxox[abpr]-[A-Za-z0-9-]{10,}`), "adds a Slack token"},
		{regexp.MustCompile(`_authToken=`), "adds a registry auth token"},
		{regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`), "adds a GitLab token"},
		{regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`), "adds an npm token"},
		{regexp.MustCompile(`\bpypi-AgEIcHlwaS5vcmc`), "adds a PyPI token"},
		{regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), "adds a Google API key"},
		{regexp.MustCompile(`\bsk_live_[0-9A-Za-z]{20,}`), "adds a Stripe secret key"},
	}
})

// anySecret matches where some secretRule does: one pass over each line.
var anySecret = sync.OnceValue(func() *regexp.Regexp {
	var parts []string
	for _, r := range secretRules() {
		parts = append(parts, "(?:"+r.re.String()+")")
	}
	return regexp.MustCompile(strings.Join(parts, "|"))
})

// secretHints are literals one of which every secretRule's match holds: a
// fast first test of a line.
var secretHints = []string{"-----BEGIN", "AKIA", "ASIA", "gh", "github_pat_", "xox", "_authToken=", "glpat-", "npm_", "pypi-", "AIza", "sk_live_"}

func mayHoldSecret(l string) bool {
	for _, h := range secretHints {
		if strings.Contains(l, h) {
			return true
		}
	}
	return false
}

// testRule is one language's entry in testRules.
type testRule struct {
	exts        []string
	defs, skips *regexp.Regexp
}

// testRules say, per file extension, what a test definition and a test skip
// look like in that language. A file that loses more test definitions than
// it gains, or gains more skips (including .only and its kin, which skip
// every other test) than it loses, is DeletedTests: the checks that follow
// the change would no longer prove what they proved before.
var testRules = sync.OnceValue(func() []testRule {
	return []testRule{
		{
			[]string{".go"},
			regexp.MustCompile(`^\s*func\s+(?:Test|Benchmark|Fuzz|Example)\w*\s*\(`),
			regexp.MustCompile(goSkips),
		},
		{
			[]string{".py"},
			regexp.MustCompile(`^\s*(?:async\s+)?def\s+test\w*\s*\(|^\s*class\s+Test\w*`),
			regexp.MustCompile(`@pytest\.mark\.(?:skip|xfail)|@unittest\.skip|\bpytest\.skip\(|\.skipTest\(`),
		},
		{
			[]string{".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs"},
			regexp.MustCompile(`^\s*(?:it|test|describe|xit|xtest|xdescribe|fit|fdescribe)(?:\.\w+)*\s*\(`),
			regexp.MustCompile(`\b(?:it|test|describe)\.(?:skip|only|todo)\b|^\s*(?:xit|xtest|xdescribe|fit|fdescribe)\s*\(`),
		},
		{
			[]string{".rs"},
			regexp.MustCompile(`#\[(?:\w+::)*test\]`),
			regexp.MustCompile(`#\[ignore\b`),
		},
		{
			[]string{".java", ".kt"},
			regexp.MustCompile(`@(?:Test|ParameterizedTest|RepeatedTest|TestFactory)\b`),
			regexp.MustCompile(`@(?:Disabled|Ignore)\b`),
		},
		{
			[]string{".rb"},
			regexp.MustCompile(`^\s*(?:it|describe|context|test)\s*(?:\(|['"]|do\b)|^\s*def\s+test_`),
			regexp.MustCompile(`^\s*(?:skip|xit|pending)\b`),
		},
		{
			[]string{".cs"},
			regexp.MustCompile(`\[(?:Test|Fact|Theory|TestMethod|TestCase)\b`),
			regexp.MustCompile(`\[Ignore\b|\bSkip\s*=`),
		},
		{
			[]string{".swift"},
			regexp.MustCompile(`^\s*func\s+test\w*\s*\(`),
			regexp.MustCompile(`\bXCTSkip`),
		},
		{
			[]string{".php"},
			regexp.MustCompile(`function\s+test\w*\s*\(|@test\b|#\[Test\]`),
			regexp.MustCompile(`markTestSkipped\(`),
		},
	}
})

// goTestFileSkips are the skips of a Go test file: those of any Go file,
// and a build constraint, which decides when the file's tests build (in
// other files a constraint is ordinary code).
const goSkips = `\b[tbf]\.Skip(?:Now|f)?\(`

var goTestFileSkips = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(goSkips + `|^//\s*(?:go:build|\+build)\s`)
})

// contentVerdict applies the content rules to a text file's two sides:
// credentials in the lines it adds, test definitions it loses and skips it
// gains (counted over each whole side), and a file that becomes a script.
func contentVerdict(c fileChange) verdict {
	var v verdict
	for _, l := range addedLines(c.old.data, c.new.data) {
		if !mayHoldSecret(l) || !anySecret().MatchString(l) {
			continue
		}
		for _, r := range secretRules() {
			if r.re.MatchString(l) {
				v.raise(Secrets, r.why)
			}
		}
	}
	if c.new.ok && c.old.ok && (c.Status == 'M' || c.Status == 'R') &&
		!bytes.HasPrefix(c.old.data, []byte("#!")) && bytes.HasPrefix(c.new.data, []byte("#!")) {
		v.raise(Executable, "turns the file into a script (#!)")
	}
	name := c.NewPath
	if name == "" {
		name = c.OldPath
	}
	k := keyOf(name)
	ext := path.Ext(string(k))
	var defs, skips *regexp.Regexp
	for _, r := range testRules() {
		if slices.Contains(r.exts, ext) {
			defs, skips = r.defs, r.skips
		}
	}
	if ext == ".go" && isTestPath(name) {
		skips = goTestFileSkips()
	}
	if defs == nil || c.Status == 'D' {
		return v
	}
	if count(defs, c.old.data) > count(defs, c.new.data) {
		v.raise(DeletedTests, "removes more test definitions than it adds")
	}
	if count(skips, c.new.data) > count(skips, c.old.data) {
		v.raise(DeletedTests, "skips or narrows tests")
	}
	return v
}

// count returns how many lines of data re matches.
func count(re *regexp.Regexp, data []byte) int {
	n := 0
	for _, l := range lines(data) {
		if re.MatchString(l) {
			n++
		}
	}
	return n
}
