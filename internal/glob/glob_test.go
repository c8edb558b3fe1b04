package glob

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// matchSteps is Match that also reports the work done (segment tests,
// regexp program steps and globstar iterations).
func (p *Pattern) matchSteps(name string) (bool, int) {
	var steps int
	ok := p.match(name, &steps)
	return ok, steps
}

type goldenFile struct {
	Minimatch string `json:"minimatch"`
	Cases     []struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
		Match   bool   `json:"match"`
	} `json:"cases"`
	Errors []struct {
		Pattern   string `json:"pattern"`
		Minimatch string `json:"minimatch"`
	} `json:"errors"`
	Rejected []struct {
		Pattern string `json:"pattern"`
		Reason  string `json:"reason"`
	} `json:"rejected"`
}

// TestMinimatchCases checks the golden cases that testdata/gen_cases.mjs
// computed with the real minimatch.
func TestMinimatchCases(t *testing.T) {
	data, err := os.ReadFile("testdata/minimatch_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if g.Minimatch != "10.2.6" || len(g.Cases) < 300 || len(g.Errors) == 0 || len(g.Rejected) == 0 {
		t.Fatalf("unexpected golden file: minimatch %q, %d cases, %d errors, %d rejected",
			g.Minimatch, len(g.Cases), len(g.Errors), len(g.Rejected))
	}
	compiled := map[string]*Pattern{}
	for _, c := range g.Cases {
		p, ok := compiled[c.Pattern]
		if !ok {
			p, err = Compile(c.Pattern)
			if err != nil {
				t.Errorf("Compile(%q): %v", c.Pattern, err)
				continue
			}
			compiled[c.Pattern] = p
		}
		if p == nil {
			continue
		}
		if got := p.Match(c.Path); got != c.Match {
			t.Errorf("Compile(%q).Match(%q) = %v, minimatch says %v", c.Pattern, c.Path, got, c.Match)
		}
	}
	for _, e := range g.Errors {
		if _, err := Compile(e.Pattern); err == nil || !strings.HasPrefix(err.Error(), "glob: invalid pattern") {
			t.Errorf("Compile(%q) error = %v; minimatch throws %q", e.Pattern, err, e.Minimatch)
		}
	}
	for _, r := range g.Rejected {
		if _, err := Compile(r.Pattern); err == nil {
			t.Errorf("Compile(%.40q...) succeeded; want an error (%s)", r.Pattern, r.Reason)
		}
	}
}

func TestMatchTable(t *testing.T) {
	names := []string{"", "a", ".a", "a.go", "x/a.go", "x/.y/a.go", "x/../a.go", "a/", "a/b/c", "src/main_test.go"}
	tests := []struct {
		pattern string
		want    []string // the names that match
	}{
		{"**/*.go", []string{"a.go", "x/a.go", "x/.y/a.go", "src/main_test.go"}},
		{"*.go", []string{"a.go"}},
		{"!*.go", []string{"", "a", ".a", "x/a.go", "x/.y/a.go", "x/../a.go", "a/", "a/b/c", "src/main_test.go"}},
		{"*", []string{"a", ".a", "a.go", "a/"}},
		{"**", []string{"", "a", ".a", "a.go", "x/a.go", "x/.y/a.go", "a/", "a/b/c", "src/main_test.go"}},
		{"a/**", []string{"a/", "a/b/c"}},
		{"**/*_test.go", []string{"src/main_test.go"}},
		{"{a,x}/**/{c,*.go}", []string{"x/a.go", "x/.y/a.go", "a/b/c"}},
		{".*", []string{".a"}},
		{"?(.)a*", []string{"a", ".a", "a.go", "a/"}},
		{"#*", nil},
		{"", []string{""}},
		{"[[:alpha:]]", []string{"a", "a/"}},
		{"a/b/c/", nil},
		{"x/*/a.go", []string{"x/.y/a.go"}},
	}
	for _, tc := range tests {
		p, err := Compile(tc.pattern)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.pattern, err)
		}
		var got []string
		for _, n := range names {
			if p.Match(n) {
				got = append(got, n)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("names matching %q (-want +got):\n%s", tc.pattern, diff)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		pattern string
		want    string
	}{
		{strings.Repeat("a", 4097), "glob: pattern is too long"},
		{"a\xffb", "glob: pattern is not valid UTF-8"},
		{"a\x00b", "glob: pattern contains a NUL byte"},
		{strings.Repeat("{a,b}", 11), "glob: brace expansion has more than 1024 alternatives"},
		{"{1..1025}", "glob: brace expansion has more than 1024 alternatives"},
		{"{0..9007199254740993}", "glob: unsupported: brace sequence number"},
		{"[[:alpha:]]-", "glob: invalid pattern: minimatch cannot compile segment"},
		{"x" + strings.Repeat("!(a|b)", 40), "glob: pattern is too complex"},
		{strings.Repeat("{", 1500) + "a,b" + strings.Repeat("}", 1500), "glob: brace expansion is too complex"},
	}
	for _, tc := range tests {
		p, err := Compile(tc.pattern)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || p != nil {
			t.Errorf("Compile(%.40q) = %v, %v; want error starting %q", tc.pattern, p, err, tc.want)
		}
	}
	// The limits are inclusive.
	for _, ok := range []string{strings.Repeat("a", 4096), strings.Repeat("{a,b}", 10), "{1..1024}"} {
		if _, err := Compile(ok); err != nil {
			t.Errorf("Compile(%.40q): %v", ok, err)
		}
	}
}

func TestInvalidUTF8Name(t *testing.T) {
	p, err := Compile("a?b")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Match("a\xffb") || p.Match("a\xff\xffb") {
		t.Error("invalid bytes should each count as one U+FFFD")
	}
}

// TestPathological checks that patterns that make backtracking matchers
// exponential do polynomial work here, counted in steps.
func TestPathological(t *testing.T) {
	as := strings.Repeat("a", 2000)
	deep := strings.Repeat("a/", 300) + "b"
	tests := []struct {
		pattern, name string
		want          bool
		maxSteps      int
	}{
		// the classic *a*a*a...b against a run of a's: O(n*m)
		{strings.Repeat("*a", 30) + "*b", as, false, 2_000_000},
		{strings.Repeat("*a", 30) + "*b", as + "b", true, 2_000_000},
		// nested quantifiers
		{"x+(+(a|aa)|a)b", "x" + as, false, 2_000_000},
		{"x*(*(a)*(a))b", "x" + as, false, 2_000_000},
		// negated extglobs: one lookahead table per negation
		{"x!(a)!(a)!(a)!(a)c", "x" + as, false, 5_000_000},
		// many ** sections against a deep path: bottom-up, not recursive
		{strings.Repeat("**/a/", 100) + "**/c", deep, false, 2_000_000},
		{strings.Repeat("**/a/", 100) + "**/b", deep, true, 2_000_000},
		// more sections than minimatch's recursion limit (200) never match
		{strings.Repeat("**/a/", 250) + "**/b", strings.Repeat("a/", 300) + "b", false, 5_000_000},
		// many alternatives
		{"{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}/*a*a*a*b", "ab/" + as[:200], false, 5_000_000},
	}
	for _, tc := range tests {
		p, err := Compile(tc.pattern)
		if err != nil {
			t.Fatalf("Compile(%.40q): %v", tc.pattern, err)
		}
		start := time.Now()
		got, steps := p.matchSteps(tc.name)
		if got != tc.want {
			t.Errorf("Match(%.40q, %.20q...) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
		if steps > tc.maxSteps {
			t.Errorf("Match(%.40q) took %d steps, want at most %d", tc.pattern, steps, tc.maxSteps)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("Match(%.40q) took %v", tc.pattern, d)
		}
	}
}

var allocPatterns = []struct{ pattern, name string }{
	{"**/*.go", "internal/glob/match.go"},
	{"*.txt", "notes.txt"},
	{"src/**/*.ts", "src/a/b/c.ts"},
	{"**/node_modules/**", "web/node_modules/react/index.js"},
	{"**/test_*.py", "pkg/tests/test_glob.py"},
	{"{cmd,internal}/**/*.{go,mod}", "internal/glob/glob.go"},
	{"**/a/**/b/**/c", "x/a/y/b/z/c"},
}

func TestMatchAllocs(t *testing.T) {
	for _, tc := range allocPatterns {
		p, err := Compile(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Match(tc.name) {
			t.Errorf("Compile(%q).Match(%q) = false", tc.pattern, tc.name)
		}
		if n := testing.AllocsPerRun(200, func() { p.Match(tc.name) }); n != 0 {
			t.Errorf("Compile(%q).Match(%q) allocates %v times per call", tc.pattern, tc.name, n)
		}
	}
}

func TestConcurrentMatch(t *testing.T) {
	p, err := Compile("**/[a-c]*.{go,txt}")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	for g := 0; g < 8; g++ {
		go func() {
			ok := true
			for i := 0; i < 500; i++ {
				ok = ok && p.Match("x/y/b1.go") && !p.Match("x/y/d1.go")
			}
			done <- ok
		}()
	}
	for g := 0; g < 8; g++ {
		if !<-done {
			t.Error("concurrent Match gave a wrong answer")
		}
	}
}

func BenchmarkMatch(b *testing.B) {
	for _, tc := range allocPatterns {
		p, err := Compile(tc.pattern)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.pattern, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Match(tc.name)
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile("{cmd,internal}/**/*.{go,mod}"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRegexEnginesAgree checks the three ways a segment regexp is evaluated
// against each other: the bit-parallel simulation for small programs, the
// forward simulation, and the backward table used for lookaheads.
func TestRegexEnginesAgree(t *testing.T) {
	patterns := []string{
		"*a*b", "[a-c]*.go", "x!(a|b)*", "@(a|b)+(c)", "?(.)a", "*(a|!(b))c", "[[:alpha:]]*",
		"x+(?(a)|b)", "a*\\|b*c", "!(.)x", "x@(.|..)", "[^.]??", "[😀]?", "*😀*",
	}
	names := []string{"", ".", "..", "a", "ab", "abc", "xa", "xb", "xab", "xc", "a.go", "c.go",
		".a", "aab", "ccc", "x.", "x..", "a|b", "a|bc", "😀", "x😀y", "é", "aaaaaaaaaab"}
	checked := 0
	for _, pat := range patterns {
		p, err := Compile(pat)
		if err != nil {
			t.Fatalf("Compile(%q): %v", pat, err)
		}
		for _, a := range p.alts {
			for _, s := range a.segs {
				if s.kind != segRegex {
					continue
				}
				for _, name := range names {
					var steps int
					sc := new(scratch)
					got := s.re.test(name, func() *scratch { return sc }, &steps)
					units := toUnits(nil, name, s.re.u)
					sc2 := new(scratch)
					n := len(units)
					posWords := (n + 64) / 64
					sc2.looks = make([]uint64, posWords*len(s.re.looks))
					for k, lp := range s.re.looks {
						lp.eval(units, s.re, sc2.looks[k*posWords:(k+1)*posWords], sc2, &steps)
					}
					fwd := s.re.main.forward(units, sc2, &steps)
					back := s.re.main.eval(units, s.re, nil, sc2, &steps)
					if got != fwd || got != back {
						t.Errorf("segment of %q on %q: test %v, forward %v, backward %v", pat, name, got, fwd, back)
					}
					checked++
				}
			}
		}
	}
	if checked < 200 {
		t.Fatalf("only %d checks", checked)
	}
}
