package glob

// Brace expansion, ported from brace-expansion 5.1.0 (with balanced-match
// 4.0.4), which minimatch 10.2.6 uses. Where the original gives up on a budget
// and leaves text literal, the port returns an error instead, and it stops
// earlier: at maxAlternatives results in any list, or when its step or copy
// budget runs out.

const (
	braceMaxLength   = 4_000_000 // EXPANSION_MAX_LENGTH
	braceMaxDepth    = 1_000     // EXPANSION_MAX_DEPTH
	braceMaxRewrites = 1_000     // EXPANSION_MAX_REWRITES
	braceCallSteps   = 16        // CALL_STEPS
	// braceStepBudget is well under EXPANSION_MAX_STEPS (20M), so the
	// original never runs out of steps on a pattern this port accepts.
	braceStepBudget = 2_000_000
	// braceCopyBudget bounds the code units built; it is at most
	// EXPANSION_MAX_LENGTH, so the original never truncates a list either.
	braceCopyBudget = braceMaxLength
)

// The original masks escaped characters with "\0NAME" + Math.random().toFixed(16)
// + "\0". Patterns may not contain NUL, so fixed digits cannot collide, and
// the lengths, which the budgets count, are the same.
var (
	escSlash  = ascii("\x00SLASH0.0000000000000000\x00")
	escOpen   = ascii("\x00OPEN0.0000000000000000\x00")
	escClose  = ascii("\x00CLOSE0.0000000000000000\x00")
	escComma  = ascii("\x00COMMA0.0000000000000000\x00")
	escPeriod = ascii("\x00PERIOD0.0000000000000000\x00")
)

type braceExpander struct {
	steps int // remaining step budget
	copy  int // remaining copy budget
}

func (b *braceExpander) spend(n int) {
	b.steps -= n
	if b.steps < 0 {
		fail("brace expansion is too complex")
	}
}

// braceExpand is minimatch's braceExpand for a pattern without its "!" prefix.
func braceExpand(pattern jstr) []jstr {
	if !hasBraceSet(pattern) {
		return []jstr{pattern}
	}
	b := &braceExpander{steps: braceStepBudget, copy: braceCopyBudget}
	return b.expand(pattern)
}

// hasBraceSet is /\{(?:(?!\{).)*\}/.test(pattern).
func hasBraceSet(s jstr) bool {
	open := false
	for _, c := range s {
		switch {
		case c == '{':
			open = true
		case c == '}' && open:
			return true
		case isLineTerminator(rune(c)):
			open = false
		}
	}
	return false
}

func (b *braceExpander) expand(str jstr) []jstr {
	if len(str) == 0 {
		return nil
	}
	if jhas(str, "{}", 0) {
		str = jcat(ascii(`\{\}`), str[2:])
	}
	res := b.expandInner(escapeBraces(str), 0, true)
	for i := range res {
		res[i] = unescapeBraces(res[i])
	}
	return res
}

func replaceAll(s, old, repl jstr) jstr {
	var out jstr
	last := 0
	for i := 0; i+len(old) <= len(s); {
		if jeq(s[i:i+len(old)], old) {
			out = append(out, s[last:i]...)
			out = append(out, repl...)
			i += len(old)
			last = i
			continue
		}
		i++
	}
	if last == 0 {
		return s
	}
	return append(out, s[last:]...)
}

func escapeBraces(s jstr) jstr {
	s = replaceAll(s, ascii(`\\`), escSlash)
	s = replaceAll(s, ascii(`\{`), escOpen)
	s = replaceAll(s, ascii(`\}`), escClose)
	s = replaceAll(s, ascii(`\,`), escComma)
	return replaceAll(s, ascii(`\.`), escPeriod)
}

func unescapeBraces(s jstr) jstr {
	s = replaceAll(s, escSlash, ascii(`\`))
	s = replaceAll(s, escOpen, ascii(`{`))
	s = replaceAll(s, escClose, ascii(`}`))
	s = replaceAll(s, escComma, ascii(`,`))
	return replaceAll(s, escPeriod, ascii(`.`))
}

// balancedRange is balanced-match's range('{', '}', str); ok is false for undefined.
func balancedRange(str jstr) (start, end int, ok bool) {
	ai := jindex(str, '{', 0)
	bi := jindex(str, '}', ai+1)
	i := ai
	if ai >= 0 && bi > 0 {
		var begs []int
		left := len(str)
		right := -1
		found := false
		for i >= 0 && !found {
			if i == ai {
				begs = append(begs, i)
				ai = jindex(str, '{', i+1)
			} else if len(begs) == 1 {
				start, end, found = begs[0], bi, true
				begs = begs[:0]
			} else if len(begs) > 0 {
				beg := begs[len(begs)-1]
				begs = begs[:len(begs)-1]
				if beg < left {
					left = beg
					right = bi
				}
				bi = jindex(str, '}', i+1)
			} else {
				bi = jindex(str, '}', i+1)
			}
			if ai < bi && ai >= 0 {
				i = ai
			} else {
				i = bi
			}
		}
		if len(begs) > 0 && right >= 0 {
			return left, right, true
		}
		if found {
			return start, end, true
		}
	}
	return 0, 0, false
}

type braceMatch struct {
	end             int
	pre, body, post jstr
	unmatched       bool
}

// balanced is balancedWithBudget.
func (b *braceExpander) balanced(str, masked jstr) (braceMatch, bool) {
	start, end, ok := balancedRange(masked)
	unmatched := ok && jindex(masked, '{', 0) < start
	if ok && !unmatched {
		b.spend(end + 1)
	} else {
		b.spend(len(str))
	}
	if !ok {
		return braceMatch{}, false
	}
	return braceMatch{
		end:       end,
		pre:       str[:start:start],
		body:      str[start+1 : end : end],
		post:      str[end+1 : len(str) : len(str)],
		unmatched: unmatched,
	}, true
}

func (b *braceExpander) maskUnmatchedOpens(masked jstr) jstr {
	b.spend(len(masked))
	var open []int
	for i, c := range masked {
		if c == '{' {
			open = append(open, i)
		} else if c == '}' && len(open) > 0 {
			open = open[:len(open)-1]
		}
	}
	out := append(jstr(nil), masked...)
	for _, at := range open {
		out[at] = 0
	}
	return out
}

// commaSetFollows is /,(?!,).*\}/.test(str).
func (b *braceExpander) commaSetFollows(str jstr) bool {
	b.spend(len(str))
	closeSeen := false
	for i := len(str) - 1; i >= 0; i-- {
		c := str[i]
		switch {
		case c == '}':
			closeSeen = true
		case isLineTerminator(rune(c)):
			closeSeen = false
		case c == ',' && closeSeen && jat(str, i+1) != ',':
			return true
		}
	}
	return false
}

func (b *braceExpander) parseCommaParts(str jstr) []jstr {
	var parts []jstr
	var carry jstr
	for {
		m, ok := b.balanced(str, str)
		if !ok {
			tail := jsplit(str, ',')
			tail[0] = jcat(carry, tail[0])
			return append(parts, tail...)
		}
		p := jsplit(m.pre, ',')
		p[0] = jcat(carry, p[0])
		p[len(p)-1] = jcat(p[len(p)-1], ascii("{"), m.body, ascii("}"))
		if len(m.post) == 0 {
			return append(parts, p...)
		}
		carry = p[len(p)-1]
		parts = append(parts, p[:len(p)-1]...)
		str = m.post
	}
}

// combine builds acc[a] + pre + values[v] for every combination.
func (b *braceExpander) combine(acc []jstr, pre jstr, values []jstr, dropEmpties bool) []jstr {
	var out []jstr
	length := 0
	var nonEmpty []jstr
	haveNonEmpty := false
outer:
	for _, a := range acc {
		vs := values
		if dropEmpties && len(a)+len(pre) == 0 {
			if !haveNonEmpty {
				for _, v := range values {
					if len(v) > 0 {
						nonEmpty = append(nonEmpty, v)
					}
				}
				haveNonEmpty = true
			}
			vs = nonEmpty
		}
		for _, v := range vs {
			n := len(a) + len(pre) + len(v)
			b.copy -= n
			if b.copy < 0 {
				fail("brace expansion is too large")
			}
			if length+n > braceMaxLength {
				break outer
			}
			if len(out) >= maxAlternatives {
				fail("brace expansion has more than %d alternatives", maxAlternatives)
			}
			out = append(out, jcat(a, pre, v))
			length += n
		}
	}
	b.spend(len(out))
	return out
}

var emptyValue = []jstr{{}}

func (b *braceExpander) expandInner(str jstr, depth int, isTop bool) []jstr {
	b.spend(braceCallSteps)
	if depth > braceMaxDepth {
		return []jstr{str}
	}
	acc := []jstr{{}}
	rewrites := 0
	dropEmpties := false
	firstGroup := true
	masked := str
	for {
		m, ok := b.balanced(str, masked)
		if !ok {
			return b.combine(acc, str, emptyValue, dropEmpties)
		}
		if m.unmatched {
			masked = b.maskUnmatchedOpens(masked)
		}
		pre := m.pre
		if len(pre) > 0 && pre[len(pre)-1] == '$' {
			acc = b.combine(acc, jcat(pre, ascii("{"), m.body, ascii("}")), emptyValue, dropEmpties && len(m.post) == 0)
			firstGroup = false
			if len(m.post) == 0 {
				break
			}
			str = m.post
			masked = masked[m.end+1:]
			continue
		}
		isNumeric := isNumericSequence(m.body)
		isAlpha := isAlphaSequence(m.body)
		isSeq := isNumeric || isAlpha
		isOptions := jindex(m.body, ',', 0) >= 0
		if !isSeq && !isOptions {
			// {a},b}
			if rewrites < braceMaxRewrites && b.commaSetFollows(m.post) {
				rewrites++
				str = jcat(m.pre, ascii("{"), m.body, escClose, m.post)
				masked = jcat(masked[:m.end], escClose, masked[m.end+1:])
				isTop = true
				continue
			}
			return b.combine(acc, jcat(pre, ascii("{"), m.body, ascii("}"), m.post), emptyValue, dropEmpties)
		}
		if firstGroup {
			dropEmpties = isTop && !isSeq
			firstGroup = false
		}
		var values []jstr
		if isSeq {
			values = b.expandSequence(m.body, isAlpha)
		} else {
			n := b.parseCommaParts(m.body)
			if len(n) == 1 {
				// x{{a,b}}y ==> x{a}y x{b}y
				inner := b.expandInner(n[0], depth+1, false)
				n = make([]jstr, len(inner))
				for i, s := range inner {
					n[i] = jcat(ascii("{"), s, ascii("}"))
				}
				if len(n) == 1 {
					acc = b.combine(acc, jcat(pre, n[0]), emptyValue, dropEmpties && len(m.post) == 0)
					if len(m.post) == 0 {
						break
					}
					str = m.post
					masked = masked[m.end+1:]
					continue
				}
			}
			dropsEmpties := dropEmpties && len(m.post) == 0 && len(pre) == 0
			for _, a := range acc {
				if len(a) > 0 {
					dropsEmpties = false
				}
			}
			valuesLength := 0
		outer:
			for _, part := range n {
				for _, v := range b.expandInner(part, depth+1, false) {
					if dropsEmpties && len(v) == 0 {
						continue
					}
					if valuesLength+len(v) > braceMaxLength {
						break outer
					}
					if len(values) >= maxAlternatives {
						fail("brace expansion has more than %d alternatives", maxAlternatives)
					}
					values = append(values, v)
					valuesLength += len(v)
				}
			}
		}
		acc = b.combine(acc, pre, values, dropEmpties && len(m.post) == 0)
		if len(m.post) == 0 {
			break
		}
		str = m.post
		masked = masked[m.end+1:]
	}
	return acc
}

func isDigit(c uint16) bool { return c >= '0' && c <= '9' }

func isLetter(c uint16) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// scanInt matches -?\d+ at s[i:] and returns the index after it, or -1.
func scanInt(s jstr, i int) int {
	if i < len(s) && s[i] == '-' {
		i++
	}
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// isNumericSequence is /^-?\d+\.\.-?\d+(?:\.\.-?\d+)?$/.
func isNumericSequence(s jstr) bool {
	i := scanInt(s, 0)
	if i < 0 || !jhas(s, "..", i) {
		return false
	}
	if i = scanInt(s, i+2); i < 0 {
		return false
	}
	if i == len(s) {
		return true
	}
	if !jhas(s, "..", i) {
		return false
	}
	return scanInt(s, i+2) == len(s)
}

// isAlphaSequence is /^[a-zA-Z]\.\.[a-zA-Z](?:\.\.-?\d+)?$/.
func isAlphaSequence(s jstr) bool {
	if len(s) < 4 || !isLetter(s[0]) || !jhas(s, "..", 1) || !isLetter(s[3]) {
		return false
	}
	if len(s) == 4 {
		return true
	}
	return jhas(s, "..", 4) && scanInt(s, 6) == len(s)
}

// maxSafeSeq bounds sequence numbers so they stay exact as JavaScript
// numbers and format the same way.
const maxSafeSeq = 1 << 53

// seqNumber is brace-expansion's numeric() for a sequence part.
func seqNumber(s jstr) int64 {
	if len(s) == 0 {
		return 0
	}
	if !isDigit(s[0]) && s[0] != '-' {
		return int64(s[0]) // a letter: its char code
	}
	neg := s[0] == '-'
	var v int64
	for _, c := range s {
		if c == '-' {
			continue
		}
		v = v*10 + int64(c-'0')
		if v > maxSafeSeq {
			fail("unsupported: brace sequence number %q is too large", string(fromJSLossy(s)))
		}
	}
	if neg {
		v = -v
	}
	return v
}

func fromJSLossy(s jstr) string {
	out, ok := fromJS(s)
	if !ok {
		return "?"
	}
	return out
}

// isPadded is /^-?0\d/.
func isPadded(s jstr) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	return i+1 < len(s) && s[i] == '0' && isDigit(s[i+1])
}

func splitDots(s jstr) []jstr {
	var out []jstr
	start := 0
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '.' && s[i+1] == '.' {
			out = append(out, s[start:i])
			i++
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func (b *braceExpander) expandSequence(body jstr, isAlpha bool) []jstr {
	n := splitDots(body)
	x := seqNumber(n[0])
	y := seqNumber(n[1])
	width := max(len(n[0]), len(n[1]))
	incr := int64(1)
	if len(n) == 3 {
		incr = max(abs64(seqNumber(n[2])), 1)
	}
	reverse := y < x
	if reverse {
		incr = -incr
	}
	pad := false
	for _, p := range n {
		pad = pad || isPadded(p)
	}
	cost := 1
	if pad {
		cost = width
	}
	count := abs64(y-x)/abs64(incr) + 1
	if count > maxAlternatives {
		fail("brace expansion has more than %d alternatives", maxAlternatives)
	}
	var out []jstr
	length := 0
	for i := x; (!reverse && i <= y) || (reverse && i >= y); i += incr {
		b.spend(cost)
		var c jstr
		if isAlpha {
			if i != '\\' {
				c = jstr{uint16(i)}
			}
		} else {
			c = ascii(itoa(i))
			if pad {
				if need := width - len(c); need > 0 {
					z := make(jstr, need)
					for k := range z {
						z[k] = '0'
					}
					if i < 0 {
						c = jcat(ascii("-"), z, c[1:])
					} else {
						c = jcat(z, c)
					}
				}
			}
		}
		if length+len(c) > braceMaxLength {
			break
		}
		out = append(out, c)
		length += len(c)
	}
	return out
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func itoa(v int64) string {
	if v == 0 {
		return "0"
	}
	var buf [24]byte
	i := len(buf)
	neg := v < 0
	if neg {
		v = -v
	}
	for v > 0 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}
