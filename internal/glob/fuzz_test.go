package glob

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// programSize is the total number of regexp program instructions of p.
func programSize(p *Pattern) (insts, maxSegs int) {
	for _, a := range p.alts {
		maxSegs = max(maxSegs, len(a.segs))
		for _, s := range a.segs {
			if s.kind == segRegex {
				insts += len(s.re.main.insts)
				for _, l := range s.re.looks {
					insts += len(l.insts)
				}
			}
		}
	}
	return insts, maxSegs
}

// stepBound is a polynomial bound on Match's work: per alternative at most
// (F+1)(2S+3) segment tests (head, tail and the bottom-up ** sections), each
// costing at most 3 steps per program instruction per input position.
func stepBound(p *Pattern, name string) int {
	insts, segs := programSize(p)
	f := strings.Count(name, "/") + 1
	return len(p.alts)*(f+1)*(2*segs+3)*(2+3*insts*(len(name)+1)) + 10
}

// isPlain reports whether pattern has nothing minimatch treats specially, so
// that it must match exactly the paths with the same segments.
func isPlain(pattern string) bool {
	if pattern == "" || strings.ContainsAny(pattern, `*?[]{}()!@+\#`) {
		return false
	}
	for _, seg := range strings.Split(pattern, "/") {
		if seg == ".." {
			return false
		}
	}
	return true
}

func splitSlashes(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '/')
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = strings.TrimLeft(s[i:], "/")
	}
}

// plainMatch: minimatch compares segments one by one, and lets the path have
// one extra empty segment left by a trailing slash.
func plainMatch(pattern, name string) bool {
	ps, fs := splitSlashes(pattern), splitSlashes(name)
	if len(fs) == len(ps)+1 && fs[len(fs)-1] == "" {
		fs = fs[:len(ps)]
	}
	if len(fs) != len(ps) {
		return false
	}
	for i := range ps {
		if ps[i] != fs[i] {
			return false
		}
	}
	return true
}

func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"**/*.go", "a/b/c.go"},
		{"*a*a*a*a*a*b", strings.Repeat("a", 64)},
		{"**/a/**/b/**/c", "a/b/c/a/b/c"},
		{"x!(a|b)*.txt", "xc.txt"},
		{"{a,b{1..3}}/[[:alpha:]]?", "b2/zz"},
		{"!#x", "#x"},
		{"a/b", "a//b/"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		// Compile and Match must terminate: run them under a watchdog.
		done := make(chan struct{})
		go func() {
			defer close(done)
			checkMatch(t, pattern, name)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Compile(%q).Match(%q) did not finish in 10s", pattern, name)
		}
	})
}

// checkMatch checks the properties of one fuzz input. It runs on its own
// goroutine, so it reports with t.Errorf.
func checkMatch(t *testing.T, pattern, name string) {
	p, err := Compile(pattern)
	if err != nil {
		msg := err.Error()
		if p != nil || !strings.HasPrefix(msg, "glob: ") || strings.Contains(msg, "internal error") ||
			strings.HasPrefix(msg, "glob: unsupported: regular expression") {
			t.Errorf("Compile(%q) = %v, %v", pattern, p, err)
		}
		return
	}
	got, steps := p.matchSteps(name)
	if bound := stepBound(p, name); steps > bound {
		t.Errorf("Match(%q, %q) took %d steps, more than the bound %d", pattern, name, steps, bound)
	}
	if again := p.Match(name); again != got {
		t.Errorf("Match(%q, %q) is not deterministic", pattern, name)
	}
	// A leading "!" negates, except after "#", which makes a comment, and
	// for "", which minimatch special-cases before negation ("" and "!" both
	// reject "/").
	if pattern != "" && !strings.HasPrefix(pattern, "#") {
		if q, err := Compile("!" + pattern); err == nil && q.Match(name) == got {
			t.Errorf("Match(%q, %q) = Match(%q, %q) = %v", pattern, name, "!"+pattern, name, got)
		}
	}
	if pattern == "" && got != (name == "") {
		t.Errorf("the empty pattern matched %q: %v", name, got)
	}
	if strings.HasPrefix(pattern, "#") && got {
		t.Errorf("comment %q matched %q", pattern, name)
	}
	if isPlain(pattern) {
		n := name
		if !utf8.ValidString(n) {
			n = string([]rune(n))
		}
		if want := plainMatch(pattern, n); got != want {
			t.Errorf("plain pattern %q: Match(%q) = %v, want %v", pattern, name, got, want)
		}
		if !p.Match(pattern) {
			t.Errorf("plain pattern %q does not match itself", pattern)
		}
	}
}
