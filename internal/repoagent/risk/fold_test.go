package risk

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// TestFoldedPaths checks that every spelling a file system may fold onto a
// protected path (case, Unicode case folding, NFC and NFD, compatibility
// forms such as fullwidth) is as protected as the path itself: each was
// applied as config or docs before paths were folded.
func TestFoldedPaths(t *testing.T) {
	cases := map[string]Class{
		".github/workflowſ/ci.yml":           CI,           // U+017F LATIN SMALL LETTER LONG S folds to s
		".GITHUB/Workflows/x.yml":            CI,           // case
		".github/workflows/ci.ym\u217c":      CI,           // U+217C SMALL ROMAN NUMERAL FIFTY is l
		"．ｇｉｔｈｕｂ/ｗｏｒｋｆｌｏｗｓ/ci.yml":           CI,           // fullwidth
		".vſcode/tasks.json":                 InstallHooks, // long s
		".VSCODE/tasks.json":                 InstallHooks,
		".hu\u017fky/pre-commit":             InstallHooks,
		"CODEOWNER\u017f":                    AgentPolicy,
		"\u212aubernetes/svc.yaml":           InfraDeploy, // U+212A KELVIN SIGN folds to k
		"AGENT\u017f.md":                     AgentPolicy,
		".ENV":                               Secrets,
		"id_r\u017fa":                        Secrets,
		"Make\ufb01le":                       Verification, // U+FB01 LATIN SMALL LIGATURE FI
		norm.NFD.String("Dockérfile"):        InfraDeploy,  // marks are dropped: erring towards protecting
		norm.NFD.String("docs/café.md"):      Docs,
		".github/workflows/ci\u0307.yml":     CI, // a combining mark stays: still under workflows/
		"ſecurity.md":                        AgentPolicy,
		".agent-zero.yml":                    AgentPolicy,
		".Agent-Zero.YML":                    AgentPolicy,
		".agent-zero.ym\u029f":               Unclassified, // U+029F is a small capital, not l: no fold
		"pkg/ı_test.go":                      Tests,        // dotless i stays a test
		".github/dependabot.yml":             CI,
		".github/DEPENDABOT.YML":             CI,
		".github/dependabot.\u0443ml":        Unclassified, // Cyrillic у is another letter: no rule knows .уml
		"docs/\u0130ndex.md":                 Docs,
		".\u0261ithub/workflows/ci.yml":      Config, // U+0261 is not g: not a fold, and not protected
		"release/\u212a.txt":                 ReleasePublish,
		"\uff24ockerfile":                    InfraDeploy, // fullwidth D
		"vendor/x/\u017f.go":                 DependencySource,
		"conftest.py":                        Verification,
		"CONFTE\u017fT.PY":                   Verification,
		"tests/\u0441onftest.py":             Tests, // Cyrillic с: another name, a test file by directory
		strings.ToUpper("setup.cfg"):         InstallHooks,
		norm.NFD.String(".github/wörkflows"): Unclassified,
	}
	for p, want := range cases {
		if !utf8.ValidString(p) {
			t.Fatalf("bad case %q", p)
		}
		if got := oneLine(p).classify(); got.Class != want {
			t.Errorf("%q (key %q): %s (%q), want %s", p, keyOf(p), got.Class, got.Reasons, want)
		}
	}
}

// variants spells p as the file systems that fold it would: upper and
// lower case, NFC and NFD, long s for s, the Kelvin sign for k, fullwidth
// for ASCII letters.
func variants(p string) []string {
	full := strings.Map(func(r rune) rune {
		if r >= '!' && r <= '~' && r != '/' {
			return r - '!' + '！'
		}
		return r
	}, p)
	return []string{
		strings.ToUpper(p), strings.ToLower(p), norm.NFD.String(p), norm.NFC.String(p), norm.NFKD.String(p),
		strings.ReplaceAll(p, "s", "ſ"), strings.ReplaceAll(strings.ToLower(p), "k", "\u212a"), full,
	}
}

// FuzzPathVariants checks the folding property: a path and each of its
// case and normalization variants get the same class, and folding is a
// fixed point.
func FuzzPathVariants(f *testing.F) {
	for _, p := range []string{".github/workflows/ci.yml", ".vscode/tasks.json", "docs/guide.md", "Makefile", "a_test.go",
		"package.json", ".env", "CODEOWNERS", "Straße/ß.md", "İstanbul/ı.go", "ﬁle.txt", "docs/ǅ.md", "x/ΐ.rs"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if !utf8.ValidString(p) || len(p) > 200 {
			return
		}
		k := keyOf(p)
		if again := keyOf(string(k)); again != k {
			t.Fatalf("keyOf(%q) = %q, but keyOf of that is %q", p, k, again)
		}
		want := oneLine(p).classify().Class
		for _, v := range variants(p) {
			if !utf8.ValidString(v) {
				continue
			}
			if keyOf(v) != k {
				t.Fatalf("%q and its variant %q fold to %q and %q", p, v, k, keyOf(v))
			}
			if got := oneLine(v).classify().Class; got != want {
				t.Fatalf("%q is %s, its variant %q %s", p, want, v, got)
			}
		}
	})
}
