package glob

import (
	"strings"
	"unicode/utf8"
)

// matcher holds the state of one Match call.
type matcher struct {
	file []string
	// sc is the scratch from the pool, taken on first need. It is a pointer
	// to a local of match so that escape analysis keeps file on the stack.
	sc    **scratch
	steps int // work done, for tests of the complexity bounds
}

// match is Match; it adds the work done to *steps.
func (p *Pattern) match(name string, steps *int) bool {
	switch p.kind {
	case kindComment:
		return false
	case kindEmpty:
		return name == ""
	}
	if !utf8.ValidString(name) {
		name = string([]rune(name))
	}
	var buf [32]string
	var sc *scratch
	m := matcher{file: splitPath(buf[:0], name), sc: &sc}
	hit := false
	for _, a := range p.alts {
		if m.matchAlt(a) {
			hit = true
			break
		}
	}
	if sc != nil {
		scratchPool.Put(sc)
	}
	*steps += m.steps
	return hit != p.negate
}

func (m *matcher) scratch() *scratch {
	if *m.sc == nil {
		*m.sc = scratchPool.Get().(*scratch)
	}
	return *m.sc
}

// splitPath is f.split(/\/+/).
func splitPath(dst []string, name string) []string {
	start := 0
	for i := 0; i < len(name); {
		if name[i] != '/' {
			i++
			continue
		}
		dst = append(dst, name[start:i])
		for i < len(name) && name[i] == '/' {
			i++
		}
		start = i
	}
	return append(dst, name[start:])
}

func isDotSeg(f string) bool { return f == "." || f == ".." }

func utf16Len(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			n = 0
			for _, r := range s {
				if r >= 0x10000 {
					n += 2
				} else {
					n++
				}
			}
			return n
		}
		n++
	}
	return n
}

// test matches one segment.
func (m *matcher) test(s *segment, f string) bool {
	m.steps++
	switch s.kind {
	case segLiteral:
		return f == s.lit
	case segStar:
		return f != "" && !isDotSeg(f)
	case segStarExt:
		return strings.HasSuffix(f, s.lit)
	case segQmarks:
		return !isDotSeg(f) && strings.HasSuffix(f, s.lit) && utf16Len(f) == s.n
	case segStarDotStar:
		return !isDotSeg(f) && strings.Contains(f, ".")
	case segDotStar:
		return !isDotSeg(f) && strings.HasPrefix(f, ".")
	case segRegex:
		return s.re.test(f, m.scratch, &m.steps)
	}
	return false // segNever, and ** where minimatch's #matchOne refuses it
}

// matchOne is minimatch's #matchOne(file.slice(0, fl), pat, false, fi, 0).
func (m *matcher) matchOne(fl int, pat []*segment, fi int) bool {
	pi := 0
	for ; fi < fl && pi < len(pat); fi, pi = fi+1, pi+1 {
		if !m.test(pat[pi], m.file[fi]) {
			return false
		}
	}
	switch {
	case fi == fl && pi == len(pat):
		return true
	case fi == fl:
		return false // ran out of file
	default:
		// ran out of pattern: only a trailing "" from a trailing slash may be left
		return fi == fl-1 && m.file[fi] == ""
	}
}

func (m *matcher) matchAlt(a *alternative) bool {
	if a.firstGS < 0 {
		return m.matchOne(len(m.file), a.segs, 0)
	}
	return m.matchGlobstar(a)
}

// matchGlobstar is minimatch's #matchGlobstar with partial false.
func (m *matcher) matchGlobstar(a *alternative) bool {
	file := m.file
	F := len(file)
	head := a.segs[:a.firstGS]
	tail := a.segs[a.lastGS+1:]
	fileIndex := 0
	if len(head) > 0 {
		if !m.matchOne(min(len(head), F), head, 0) {
			return false
		}
		fileIndex = len(head)
	}
	fileTailMatch := 0
	if len(tail) > 0 {
		if len(tail)+fileIndex > F {
			return false
		}
		tailStart := F - len(tail)
		if m.matchOne(F, tail, tailStart) {
			fileTailMatch = len(tail)
		} else {
			// affordance for stuff like a/**/* matching a/b/
			if file[F-1] != "" || fileIndex+len(tail) == F {
				return false
			}
			if !m.matchOne(F, tail, tailStart-1) {
				return false
			}
			fileTailMatch = len(tail) + 1
		}
	}
	if len(a.sections) == 0 {
		sawSome := fileTailMatch > 0
		for i := fileIndex; i < F-fileTailMatch; i++ {
			sawSome = true
			if isDotSeg(file[i]) {
				return false
			}
		}
		return sawSome
	}
	return m.bodySections(a, fileIndex, fileTailMatch)
}

// Results of minimatch's #matchGlobStarBodySections.
const (
	resFalse uint8 = iota
	resNull        // "walked off": stops every caller
	resTrue
)

// maxGlobstarRecursion is minimatch's default: body sections at this depth
// or deeper never match.
const maxGlobstarRecursion = 200

// bodySections computes minimatch's recursive #matchGlobStarBodySections
// bottom-up. R_k[j] is the result of the call for section k at file index j;
// it depends only on R_{k+1}, so two rows over j suffice and the time is
// O(sections * segments * section length) segment tests instead of the
// exponential recursion.
func (m *matcher) bodySections(a *alternative, fileIndex, fileTailMatch int) bool {
	file := m.file
	F := len(file)
	var small [2 * 33]uint8
	var rows []uint8
	if 2*(F+1) <= len(small) {
		rows = small[:2*(F+1)]
	} else {
		sc := m.scratch()
		sc.rows = grow(sc.rows, 2*(F+1))
		rows = sc.rows
	}
	next, cur := rows[:F+1], rows[F+1:]
	// past the last section: no bad dots may be left
	sawTail := fileTailMatch > 0
	dotLeft := false
	for j := F; j >= fileIndex; j-- {
		m.steps++
		if j < F && isDotSeg(file[j]) {
			dotLeft = true
		}
		switch {
		case dotLeft:
			next[j] = resFalse
		case sawTail || j < F:
			next[j] = resTrue
		default:
			next[j] = resFalse
		}
	}
	fileLength := F - fileTailMatch
	for k := len(a.sections) - 1; k >= 0; k-- {
		sec := a.sections[k]
		L := len(sec)
		after := fileLength - a.sumRev[k]
		firstGood := -1 // first q >= j where the section matches and the rest is not false
		dot := F + 1    // first bad dot at or after j
		for j := F; j >= fileIndex; j-- {
			m.steps++
			if j < F && isDotSeg(file[j]) {
				dot = j
			}
			if j <= after && k < maxGlobstarRecursion && j+L <= F && next[j+L] != resFalse && m.matchOne(j+L, sec, j) {
				firstGood = j
			}
			switch {
			case j > after:
				cur[j] = resNull
			case firstGood >= 0 && firstGood <= dot:
				cur[j] = next[firstGood+L]
			case dot <= after:
				cur[j] = resFalse
			default:
				cur[j] = resNull
			}
		}
		next, cur = cur, next
	}
	return next[fileIndex] == resTrue
}
