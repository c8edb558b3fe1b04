// Package glob matches relative slash-separated paths against
// minimatch-style patterns (dot files included), giving the same answers as
// the npm package minimatch 10.2.6 called with { dot: true }, which is how the
// reference MCP filesystem server matches search_files and exclude patterns.
//
// Supported: *, ?, [...] classes (ranges, [!x], [^x], POSIX classes such as
// [[:alpha:]]), ** segments, brace expansion ({a,b}, nesting, {1..3}, {a..e..2}),
// backslash escapes, extglobs @(..) *(..) +(..) ?(..) !(..), a leading !
// (negation) and a leading # (a comment, which matches nothing), with
// minimatch's quirks. Patterns are untrusted: Compile bounds their size and
// the work they can cause, and Match runs in time polynomial in the sizes of
// the pattern and the path.
package glob

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

const (
	maxPatternLen   = 4096 // bytes
	maxAlternatives = 1024 // brace-expansion results
)

type compileErr struct{ err error }

// fail aborts compilation with an error; Compile recovers it.
func fail(format string, args ...any) {
	panic(compileErr{fmt.Errorf("glob: "+format, args...)})
}

type patternKind uint8

const (
	kindNormal  patternKind = iota
	kindComment             // starts with #: matches nothing
	kindEmpty               // "": matches only ""
)

type segKind uint8

const (
	segLiteral segKind = iota
	segNever
	segGlobstar
	segStar        // *, ***, ...: minimatch's fast tests replace the regexp
	segStarExt     // *<ext>
	segQmarks      // ?..?<ext>
	segStarDotStar // *.*
	segDotStar     // .*
	segRegex
)

// segment matches one path segment.
type segment struct {
	kind segKind
	lit  string // literal, or the extension of a fast test
	n    int    // segQmarks: the UTF-16 length of the segment glob
	re   *regex
}

// alternative is one brace-expanded pattern, split into segments.
type alternative struct {
	segs     []*segment
	firstGS  int // -1 without **
	lastGS   int
	sections [][]*segment // the parts between the first and last **, split at **
	sumRev   []int        // per section k: nonGsPartsSums[len-1-k] + len(section k), as minimatch computes it
}

// Pattern is a compiled glob. Match is safe for concurrent use.
type Pattern struct {
	kind   patternKind
	negate bool
	alts   []*alternative
}

// Compile parses pattern once; Match is then safe for concurrent use. It
// returns an error for patterns that minimatch rejects, for patterns over
// 4096 bytes or with more than 1024 brace alternatives, for invalid UTF-8 or
// NUL bytes, and for patterns whose expansion is too large to match cheaply.
func Compile(pattern string) (p *Pattern, err error) {
	if len(pattern) > maxPatternLen {
		return nil, fmt.Errorf("glob: pattern is too long (%d bytes, max %d)", len(pattern), maxPatternLen)
	}
	if !utf8.ValidString(pattern) {
		return nil, fmt.Errorf("glob: pattern is not valid UTF-8")
	}
	if strings.IndexByte(pattern, 0) >= 0 {
		return nil, fmt.Errorf("glob: pattern contains a NUL byte")
	}
	defer func() {
		if r := recover(); r != nil {
			p = nil
			if ce, ok := r.(compileErr); ok {
				err = ce.err
			} else {
				// a bug: fail closed rather than crash on untrusted input
				err = fmt.Errorf("glob: internal error: %v", r)
			}
		}
	}()
	return compile(toJS(pattern)), nil
}

func compile(pat jstr) *Pattern {
	p := &Pattern{}
	if len(pat) > 0 && pat[0] == '#' {
		p.kind = kindComment
		return p
	}
	if len(pat) == 0 {
		p.kind = kindEmpty
		return p
	}
	// parseNegate
	neg := 0
	for neg < len(pat) && pat[neg] == '!' {
		neg++
	}
	p.negate = neg%2 == 1
	pat = pat[neg:]

	c := &compiler{
		ast:   astBuilder{nodes: astNodeBudget, units: astUnitBudget},
		insts: maxProgramInsts,
		cache: map[string]*segment{},
	}
	seen := map[string]bool{}
	for _, g := range braceExpand(pat) {
		k := jkey(g)
		if seen[k] {
			continue
		}
		seen[k] = true
		parts := levelOneOptimize(slashSplit(g))
		a := &alternative{firstGS: -1, lastGS: -1}
		for i, part := range parts {
			s := c.parse(part)
			if s.kind == segGlobstar {
				if a.firstGS < 0 {
					a.firstGS = i
				}
				a.lastGS = i
			}
			a.segs = append(a.segs, s)
		}
		if a.firstGS >= 0 && a.firstGS < a.lastGS {
			var sec []*segment
			for _, s := range a.segs[a.firstGS+1 : a.lastGS] {
				if s.kind == segGlobstar {
					a.sections = append(a.sections, sec)
					sec = nil
					continue
				}
				sec = append(sec, s)
			}
			a.sections = append(a.sections, sec)
			sums := make([]int, len(a.sections))
			for k := 1; k < len(a.sections); k++ {
				sums[k] = sums[k-1] + len(a.sections[k-1])
			}
			for k := range a.sections {
				a.sumRev = append(a.sumRev, sums[len(a.sections)-1-k]+len(a.sections[k]))
			}
		}
		p.alts = append(p.alts, a)
	}
	return p
}

// slashSplit is p.split(/\/+/).
func slashSplit(p jstr) []jstr {
	var out []jstr
	start := 0
	for i := 0; i < len(p); {
		if p[i] != '/' {
			i++
			continue
		}
		out = append(out, p[start:i])
		for i < len(p) && p[i] == '/' {
			i++
		}
		start = i
	}
	return append(out, p[start:])
}

// levelOneOptimize drops adjacent ** and resolves <p>/.. portions.
func levelOneOptimize(parts []jstr) []jstr {
	var set []jstr
	for _, part := range parts {
		var prev jstr
		hasPrev := len(set) > 0
		if hasPrev {
			prev = set[len(set)-1]
		}
		if jis(part, "**") && hasPrev && jis(prev, "**") {
			continue
		}
		if jis(part, "..") && len(prev) > 0 && !jis(prev, "..") && !jis(prev, ".") && !jis(prev, "**") {
			set = set[:len(set)-1]
			continue
		}
		set = append(set, part)
	}
	if len(set) == 0 {
		return []jstr{{}}
	}
	return set
}

type compiler struct {
	ast   astBuilder
	insts int
	cache map[string]*segment
}

// parse is Minimatch.parse for one segment.
func (c *compiler) parse(glob jstr) *segment {
	k := jkey(glob)
	if s, ok := c.cache[k]; ok {
		return s
	}
	s := c.parseUncached(glob)
	c.cache[k] = s
	return s
}

func (c *compiler) parseUncached(glob jstr) *segment {
	if jis(glob, "**") {
		return &segment{kind: segGlobstar}
	}
	if len(glob) == 0 {
		return &segment{kind: segLiteral}
	}
	fast := fastTest(glob)
	lit, src, u, isRegexp := c.ast.segmentSource(glob)
	if !isRegexp {
		s, ok := fromJS(lit)
		if !ok {
			return &segment{kind: segNever}
		}
		return &segment{kind: segLiteral, lit: s}
	}
	re := compileRegex(src, u, glob, &c.insts)
	if fast != nil {
		return fast
	}
	return &segment{kind: segRegex, re: re}
}

func noExtMagic(c uint16) bool {
	switch c {
	case '+', '@', '!', '?', '*', '[', '(':
		return false
	}
	return true
}

// fastTest returns minimatch's replacement test for the common segment
// shapes, which it uses instead of the regexp (and which differs from it).
func fastTest(g jstr) *segment {
	lead := func(c uint16) int {
		i := 0
		for i < len(g) && g[i] == c {
			i++
		}
		return i
	}
	restOK := func(i int) bool {
		for _, c := range g[i:] {
			if !noExtMagic(c) {
				return false
			}
		}
		return true
	}
	ext := func(i int) (string, bool) { return fromJS(g[i:]) }
	stars := lead('*')
	switch {
	case stars == len(g): // ^\*+$
		return &segment{kind: segStar}
	case stars > 0 && restOK(stars): // ^\*+([^+@!?*[(]*)$
		e, ok := ext(stars)
		if !ok {
			return &segment{kind: segNever}
		}
		return &segment{kind: segStarExt, lit: e}
	}
	if q := lead('?'); q > 0 && restOK(q) { // ^\?+([^+@!?*[(]*)?$
		e, ok := ext(q)
		if !ok {
			return &segment{kind: segNever}
		}
		return &segment{kind: segQmarks, lit: e, n: len(g)}
	}
	if stars > 0 && stars < len(g) && g[stars] == '.' { // ^\*+\.\*+$
		rest := g[stars+1:]
		all := len(rest) > 0
		for _, c := range rest {
			all = all && c == '*'
		}
		if all {
			return &segment{kind: segStarDotStar}
		}
	}
	if len(g) >= 2 && g[0] == '.' { // ^\.\*+$
		all := true
		for _, c := range g[1:] {
			all = all && c == '*'
		}
		if all {
			return &segment{kind: segDotStar}
		}
	}
	return nil
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// Match reports whether name, a relative slash-separated path such as
// "a/b/c.txt", matches the pattern. Names that are not valid UTF-8 are
// matched as if each invalid byte were U+FFFD.
func (p *Pattern) Match(name string) bool {
	var steps int
	return p.match(name, &steps)
}
