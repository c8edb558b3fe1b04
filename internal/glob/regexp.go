package glob

import (
	"math/bits"
	"sort"
	"unicode/utf16"
	"unicode/utf8"
)

// This file interprets the JavaScript regular expressions that minimatch
// builds for magic segments. It parses the subset of JavaScript syntax that
// minimatch can emit (in both plain and "u" mode, rejecting what JavaScript
// rejects), compiles it to Thompson NFAs, and answers RegExp.prototype.test
// without backtracking: each negative lookahead is evaluated for every input
// position by a backward pass, then the main program runs forward (as 64-bit
// masks when it is small). Each pass is O(len(input) * len(program)).

const maxProgramInsts = 32_768 // instructions per Compile, over all segments

type charClass struct {
	neg    bool
	ranges []rune // inclusive lo, hi pairs
	props  [][]uint32
}

func (c *charClass) has(r rune) bool {
	in := false
	for i := 0; i < len(c.ranges); i += 2 {
		if r >= c.ranges[i] && r <= c.ranges[i+1] {
			in = true
			break
		}
	}
	if !in {
		for _, t := range c.props {
			if inTable(t, r) {
				in = true
				break
			}
		}
	}
	return in != c.neg
}

func inTable(t []uint32, r rune) bool {
	n := len(t) / 2
	i := sort.Search(n, func(i int) bool { return rune(t[2*i+1]) >= r })
	return i < n && rune(t[2*i]) <= r
}

type rxKind uint8

const (
	rxEmpty rxKind = iota
	rxChar
	rxCat
	rxAlt
	rxStar
	rxPlus
	rxQuest
	rxBOL
	rxEOL
	rxNegLook
	rxNotDotSeg // minimatch's (?!(?:^|/)\.\.?(?:$|/)) applied to one segment
)

type rxNode struct {
	kind rxKind
	cls  *charClass
	subs []*rxNode
}

type rxParser struct {
	src  []rune
	pos  int
	u    bool
	glob jstr
}

// invalid reports a regexp that JavaScript rejects, so minimatch throws.
func (p *rxParser) invalid(msg string) {
	fail("invalid pattern: minimatch cannot compile segment %q: %s", fromJSLossy(p.glob), msg)
}

// unsupported reports a construct minimatch should never emit.
func (p *rxParser) unsupported(what string) {
	fail("unsupported: regular expression construct %s in segment %q", what, fromJSLossy(p.glob))
}

func (p *rxParser) peek(off int) rune {
	if p.pos+off < len(p.src) {
		return p.src[p.pos+off]
	}
	return -1
}

func (p *rxParser) hasPrefix(s string) bool {
	if p.pos+len(s) > len(p.src) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if p.src[p.pos+i] != rune(s[i]) {
			return false
		}
	}
	return true
}

func (p *rxParser) disj() *rxNode {
	alts := []*rxNode{p.alt()}
	for p.peek(0) == '|' {
		p.pos++
		alts = append(alts, p.alt())
	}
	if len(alts) == 1 {
		return alts[0]
	}
	return &rxNode{kind: rxAlt, subs: alts}
}

func (p *rxParser) alt() *rxNode {
	var terms []*rxNode
	for p.pos < len(p.src) && p.peek(0) != '|' && p.peek(0) != ')' {
		terms = append(terms, p.term())
	}
	switch len(terms) {
	case 0:
		return &rxNode{kind: rxEmpty}
	case 1:
		return terms[0]
	}
	return &rxNode{kind: rxCat, subs: terms}
}

func literal(r rune) *rxNode {
	return &rxNode{kind: rxChar, cls: &charClass{ranges: []rune{r, r}}}
}

func isSyntaxChar(r rune) bool {
	switch r {
	case '^', '$', '\\', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|':
		return true
	}
	return false
}

func (p *rxParser) term() *rxNode {
	var atom *rxNode
	quantifiable := true
	switch c := p.peek(0); c {
	case '^':
		p.pos++
		atom, quantifiable = &rxNode{kind: rxBOL}, false
	case '$':
		p.pos++
		atom, quantifiable = &rxNode{kind: rxEOL}, false
	case '(':
		switch {
		case p.hasPrefix(`(?!(?:^|/)\.\.?(?:$|/))`):
			p.pos += len(`(?!(?:^|/)\.\.?(?:$|/))`) - 1 // up to its ")"
			atom, quantifiable = &rxNode{kind: rxNotDotSeg}, !p.u
		case p.hasPrefix("(?!"):
			p.pos += 3
			atom, quantifiable = &rxNode{kind: rxNegLook, subs: []*rxNode{p.disj()}}, !p.u
		case p.hasPrefix("(?:"):
			p.pos += 3
			atom = p.disj()
		case p.hasPrefix("(?"):
			p.unsupported("(?")
		default:
			p.pos++
			atom = p.disj()
		}
		if p.peek(0) != ')' {
			p.invalid("unterminated group")
		}
		p.pos++
	case '[':
		atom = &rxNode{kind: rxChar, cls: p.class()}
	case '.':
		p.pos++
		atom = &rxNode{kind: rxChar, cls: &charClass{neg: true, ranges: []rune{'\n', '\n', '\r', '\r', 0x2028, 0x2029}}}
	case '\\':
		r, cls := p.escape(false)
		if cls != nil {
			atom = &rxNode{kind: rxChar, cls: cls}
		} else {
			atom = literal(r)
		}
	case '*', '+', '?':
		p.invalid("nothing to repeat")
	case '{':
		p.unsupported("{")
	case '}', ']':
		if p.u {
			p.invalid("lone quantifier brackets")
		}
		p.pos++
		atom = literal(c)
	default:
		p.pos++
		atom = literal(c)
	}
	switch q := p.peek(0); q {
	case '*', '+', '?':
		if !quantifiable {
			p.invalid("nothing to repeat")
		}
		p.pos++
		if p.peek(0) == '?' {
			p.pos++ // lazy: the same language
		}
		kind := rxQuest
		switch q {
		case '*':
			kind = rxStar
		case '+':
			kind = rxPlus
		}
		atom = &rxNode{kind: kind, subs: []*rxNode{atom}}
	case '{':
		p.unsupported("{")
	}
	return atom
}

func hexVal(r rune) int {
	switch {
	case r >= '0' && r <= '9':
		return int(r - '0')
	case r >= 'a' && r <= 'f':
		return int(r-'a') + 10
	case r >= 'A' && r <= 'F':
		return int(r-'A') + 10
	}
	return -1
}

// escape parses a backslash escape, in or out of a class. It returns either
// a character or, for \p{..}, a class.
func (p *rxParser) escape(inClass bool) (rune, *charClass) {
	p.pos++ // the backslash
	e := p.peek(0)
	if e < 0 {
		p.invalid(`\ at end of pattern`)
	}
	p.pos++
	switch {
	case isSyntaxChar(e) || e == '/':
		return e, nil
	case e == '-' && inClass:
		return e, nil
	case e == 'f':
		return '\f', nil
	case e == 'n':
		return '\n', nil
	case e == 'r':
		return '\r', nil
	case e == 't':
		return '\t', nil
	case e == 'v':
		return '\v', nil
	case e == 'b' && inClass:
		return '\b', nil
	case e == 'x':
		if h1, h2 := hexVal(p.peek(0)), hexVal(p.peek(1)); h1 >= 0 && h2 >= 0 {
			p.pos += 2
			return rune(h1<<4 | h2), nil
		}
		if p.u {
			p.invalid("invalid escape")
		}
		return 'x', nil
	case e == '0' && !(p.peek(0) >= '0' && p.peek(0) <= '9'):
		return 0, nil
	case e == 'p' && p.u && inClass:
		if p.peek(0) != '{' {
			p.invalid("invalid property name")
		}
		end := p.pos + 1
		for end < len(p.src) && p.src[end] != '}' {
			end++
		}
		if end >= len(p.src) {
			p.invalid("invalid property name")
		}
		name := string(p.src[p.pos+1 : end])
		t, ok := unicodeProps[name]
		if !ok {
			p.unsupported(`\p{` + name + `}`)
		}
		p.pos = end + 1
		return 0, &charClass{props: [][]uint32{t}}
	case e < 0x80 && (e >= '0' && e <= '9' || e >= 'a' && e <= 'z' || e >= 'A' && e <= 'Z' || e == '_'):
		p.unsupported(`\` + string(e))
	case p.u:
		p.invalid("invalid escape")
	}
	return e, nil // identity escape
}

func (p *rxParser) classAtom() (rune, *charClass) {
	c := p.peek(0)
	if c == '\\' {
		return p.escape(true)
	}
	p.pos++
	return c, nil
}

func (p *rxParser) class() *charClass {
	p.pos++ // [
	cls := &charClass{}
	if p.peek(0) == '^' {
		cls.neg = true
		p.pos++
	}
	add := func(r rune, set *charClass) {
		if set != nil {
			cls.props = append(cls.props, set.props...)
		} else {
			cls.ranges = append(cls.ranges, r, r)
		}
	}
	for {
		switch p.peek(0) {
		case -1:
			p.invalid("unterminated character class")
		case ']':
			p.pos++
			return cls
		}
		a, aset := p.classAtom()
		if p.peek(0) == '-' && p.peek(1) != ']' && p.peek(1) != -1 {
			p.pos++
			b, bset := p.classAtom()
			if aset != nil || bset != nil {
				if p.u {
					p.invalid("invalid character class")
				}
				add(a, aset)
				add('-', nil)
				add(b, bset)
				continue
			}
			if a > b {
				p.invalid("range out of order in character class")
			}
			cls.ranges = append(cls.ranges, a, b)
			continue
		}
		add(a, aset)
	}
}

// Program instructions.
const (
	iMatch uint8 = iota
	iChar
	iSplit
	iJmp
	iBOL
	iEOL
	iLook
	iNotDotSeg
)

type inst struct {
	op   uint8
	out  int32
	out1 int32
	look int32
	cls  *charClass
}

// prog is one compiled (sub)expression. Its language is tested by eval.
type prog struct {
	insts     []inst
	small     *smallClosures // set for programs of at most 64 instructions without lookaheads
	start     int32
	base      []int32 // pcs of iMatch and iChar, the only ones that can start a path
	predStart []int32 // CSR: epsilon predecessors of pc are preds[predStart[pc]:predStart[pc+1]]
	preds     []int32
}

// Position contexts for the epsilon instructions whose condition depends on
// the position: ^ and minimatch's dot guard hold only at 0, $ only at the end.
const (
	ctxStart  = 1 // i == 0
	ctxEnd    = 2 // i == len(input)
	ctxDotSeg = 4 // i == 0 and the input is "." or ".."
)

// smallClosures holds, for each context and each instruction that a thread
// can be at after a character (and the start), the set of character and
// match instructions reachable through epsilon instructions, as a bit mask.
// It turns the simulation into a few word operations per position.
type smallClosures struct {
	cl       [8][]uint64
	matchBit uint64
}

func (p *prog) buildSmall() {
	if len(p.insts) > 64 {
		return
	}
	for _, in := range p.insts {
		if in.op == iLook {
			return
		}
	}
	sm := &smallClosures{}
	targets := []int32{p.start}
	for pc, in := range p.insts {
		switch in.op {
		case iChar:
			targets = append(targets, in.out)
		case iMatch:
			sm.matchBit = 1 << pc
		}
	}
	for ctx := range sm.cl {
		if ctx&ctxDotSeg != 0 && ctx&ctxStart == 0 {
			continue // impossible
		}
		sm.cl[ctx] = make([]uint64, len(p.insts))
		for _, t := range targets {
			sm.cl[ctx][t] = p.staticClosure(t, ctx)
		}
	}
	p.small = sm
}

func (p *prog) staticClosure(pc int32, ctx int) uint64 {
	var seen, out uint64
	stack := []int32{pc}
	for len(stack) > 0 {
		pc = stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen&(1<<pc) != 0 {
			continue
		}
		seen |= 1 << pc
		in := &p.insts[pc]
		switch in.op {
		case iMatch, iChar:
			out |= 1 << pc
		case iSplit:
			stack = append(stack, in.out1, in.out)
		case iJmp:
			stack = append(stack, in.out)
		case iBOL:
			if ctx&ctxStart != 0 {
				stack = append(stack, in.out)
			}
		case iEOL:
			if ctx&ctxEnd != 0 {
				stack = append(stack, in.out)
			}
		case iNotDotSeg:
			if ctx&ctxDotSeg == 0 {
				stack = append(stack, in.out)
			}
		}
	}
	return out
}

func posCtx(i, n int, dotSeg bool) int {
	c := 0
	if i == 0 {
		c = ctxStart
		if dotSeg {
			c |= ctxDotSeg
		}
	}
	if i == n {
		c |= ctxEnd
	}
	return c
}

// step advances the thread set s over the character c at position i.
func (p *prog) step(s uint64, c rune, ctx1 int, steps *int) uint64 {
	sm := p.small
	var next uint64
	for t := s &^ sm.matchBit; t != 0; t &= t - 1 {
		*steps++
		in := &p.insts[bits.TrailingZeros64(t)]
		if in.cls.has(c) {
			next |= sm.cl[ctx1][in.out]
		}
	}
	return next
}

// testASCII is RegExp.test for a small program on an ASCII string, which
// is the same in UTF-16 and code points.
func (p *prog) testASCII(f string, steps *int) bool {
	sm := p.small
	n := len(f)
	dotSeg := f == "." || f == ".."
	var s uint64
	for i := 0; ; i++ {
		*steps++
		s |= sm.cl[posCtx(i, n, dotSeg)][p.start] // a new thread at every position
		if s&sm.matchBit != 0 {
			return true
		}
		if i == n {
			return false
		}
		s = p.step(s, rune(f[i]), posCtx(i+1, n, dotSeg), steps)
	}
}

// testUnits is testASCII for decoded input.
func (p *prog) testUnits(in []rune, steps *int) bool {
	sm := p.small
	n := len(in)
	dotSeg := isDotSegUnits(in)
	var s uint64
	for i := 0; ; i++ {
		*steps++
		s |= sm.cl[posCtx(i, n, dotSeg)][p.start]
		if s&sm.matchBit != 0 {
			return true
		}
		if i == n {
			return false
		}
		s = p.step(s, in[i], posCtx(i+1, n, dotSeg), steps)
	}
}

// regex is a compiled segment regexp: the main program and its lookaheads,
// inner ones first.
type regex struct {
	u     bool
	looks []*prog
	main  *prog
}

type rxCompiler struct {
	insts *int // remaining instruction budget, shared by a Compile
	looks []*prog
	cur   []inst
}

func (c *rxCompiler) emit(in inst) int32 {
	*c.insts--
	if *c.insts < 0 {
		fail("pattern is too complex")
	}
	c.cur = append(c.cur, in)
	return int32(len(c.cur) - 1)
}

// gen emits n so that it continues at next, and returns its entry pc.
func (c *rxCompiler) gen(n *rxNode, next int32) int32 {
	switch n.kind {
	case rxEmpty:
		return next
	case rxChar:
		return c.emit(inst{op: iChar, out: next, cls: n.cls})
	case rxCat:
		for i := len(n.subs) - 1; i >= 0; i-- {
			next = c.gen(n.subs[i], next)
		}
		return next
	case rxAlt:
		s := c.gen(n.subs[len(n.subs)-1], next)
		for i := len(n.subs) - 2; i >= 0; i-- {
			s = c.emit(inst{op: iSplit, out: c.gen(n.subs[i], next), out1: s})
		}
		return s
	case rxQuest:
		return c.emit(inst{op: iSplit, out: c.gen(n.subs[0], next), out1: next})
	case rxStar, rxPlus:
		loop := c.emit(inst{op: iSplit, out1: next})
		body := c.gen(n.subs[0], loop)
		c.cur[loop].out = body
		if n.kind == rxStar {
			return loop
		}
		return body
	case rxBOL:
		return c.emit(inst{op: iBOL, out: next})
	case rxEOL:
		return c.emit(inst{op: iEOL, out: next})
	case rxNotDotSeg:
		return c.emit(inst{op: iNotDotSeg, out: next})
	case rxNegLook:
		k := c.sub(n.subs[0])
		return c.emit(inst{op: iLook, out: next, look: int32(k)})
	}
	panic("unreachable")
}

// sub compiles n as a separate lookahead program and appends it to c.looks.
func (c *rxCompiler) sub(n *rxNode) int {
	saved := c.cur
	c.cur = nil
	p := c.finish(n)
	c.cur = saved
	c.looks = append(c.looks, p)
	return len(c.looks) - 1
}

func (c *rxCompiler) finish(n *rxNode) *prog {
	match := c.emit(inst{op: iMatch})
	start := c.gen(n, match)
	p := &prog{insts: c.cur, start: start}
	defer p.buildSmall()
	count := make([]int32, len(p.insts)+1)
	for pc, in := range p.insts {
		switch in.op {
		case iMatch, iChar:
			p.base = append(p.base, int32(pc))
		case iSplit:
			count[in.out]++
			count[in.out1]++
		default:
			count[in.out]++
		}
	}
	p.predStart = make([]int32, len(p.insts)+1)
	for pc := range p.insts {
		p.predStart[pc+1] = p.predStart[pc] + count[pc]
	}
	p.preds = make([]int32, p.predStart[len(p.insts)])
	fill := append([]int32(nil), p.predStart[:len(p.insts)]...)
	addPred := func(to, from int32) {
		p.preds[fill[to]] = from
		fill[to]++
	}
	for pc, in := range p.insts {
		switch in.op {
		case iMatch, iChar:
		case iSplit:
			addPred(in.out, int32(pc))
			addPred(in.out1, int32(pc))
		default:
			addPred(in.out, int32(pc))
		}
	}
	return p
}

// compileRegex parses the regexp source src (flags "" or "u") that minimatch
// built for the segment glob.
func compileRegex(src jstr, u bool, glob jstr, budget *int) *regex {
	runes := make([]rune, 0, len(src))
	for i := 0; i < len(src); i++ {
		r := rune(src[i])
		// In u mode a surrogate pair is one code point; lone surrogates stay.
		if u && r >= 0xd800 && r < 0xdc00 && i+1 < len(src) && src[i+1] >= 0xdc00 && src[i+1] < 0xe000 {
			r = utf16.DecodeRune(r, rune(src[i+1]))
			i++
		}
		runes = append(runes, r)
	}
	p := &rxParser{src: runes, u: u, glob: glob}
	tree := p.disj()
	if p.pos != len(p.src) {
		p.invalid("unmatched ')'")
	}
	c := &rxCompiler{insts: budget}
	main := c.finish(tree)
	return &regex{u: u, looks: c.looks, main: main}
}

// scratch holds per-Match buffers, reused through a sync.Pool.
type scratch struct {
	units []rune
	bits  []uint64
	stack []int32
	looks []uint64
	rows  []uint8
	marks []uint32 // forward: marks[pc] == gen when pc is in the list being built
	gen   uint32
	list  [2][]int32
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/2)
	}
	return s[:n]
}

// toUnits converts a valid UTF-8 string to what a JavaScript regexp sees:
// UTF-16 code units, or code points in u mode.
func toUnits(dst []rune, s string, u bool) []rune {
	dst = dst[:0]
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			dst = append(dst, rune(c))
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if !u && r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			dst = append(dst, r1, r2)
		} else {
			dst = append(dst, r)
		}
	}
	return dst
}

func isDotSegUnits(in []rune) bool {
	return len(in) == 1 && in[0] == '.' || len(in) == 2 && in[0] == '.' && in[1] == '.'
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// test is RegExp.prototype.test on the segment f. It takes scratch space
// from get only when it needs it.
func (re *regex) test(f string, get func() *scratch, steps *int) bool {
	if re.main.small != nil && isASCII(f) {
		return re.main.testASCII(f, steps)
	}
	sc := get()
	sc.units = toUnits(sc.units, f, re.u)
	if re.main.small != nil {
		return re.main.testUnits(sc.units, steps)
	}
	return re.match(sc.units, sc, steps)
}

// match is RegExp.prototype.test on in.
func (re *regex) match(in []rune, sc *scratch, steps *int) bool {
	n := len(in)
	posWords := (n + 64) / 64 // n+1 positions
	sc.looks = grow(sc.looks, posWords*len(re.looks))
	clear(sc.looks)
	for k, lp := range re.looks {
		lp.eval(in, re, sc.looks[k*posWords:(k+1)*posWords], sc, steps)
	}
	return re.main.forward(in, sc, steps)
}

// forward is RegExp.test by forward simulation of the main program: at each
// position it keeps the set of live character instructions (O(len(program))
// work per position at most, usually far less), starting a new thread at
// every position as an unanchored search does. Lookahead tables must be
// filled in sc.looks.
func (p *prog) forward(in []rune, sc *scratch, steps *int) bool {
	n := len(in)
	m := len(p.insts)
	if len(sc.marks) < m {
		sc.marks = make([]uint32, m+m/2)
		sc.gen = 0
	}
	sc.list[0] = grow(sc.list[0], m)
	sc.list[1] = grow(sc.list[1], m)
	sc.stack = grow(sc.stack, 2*m+1)
	posWords := (n + 64) / 64
	dotSeg := isDotSegUnits(in)
	cur, nxt := sc.list[0][:0], sc.list[1][:0]
	sc.nextGen()
	for i := 0; ; i++ {
		var hit bool
		if cur, hit = p.closure(cur, p.start, i, n, dotSeg, posWords, sc, steps); hit {
			return true
		}
		if i == n {
			return false
		}
		sc.nextGen()
		nxt = nxt[:0]
		c := in[i]
		for _, pc := range cur {
			*steps++
			if in1 := &p.insts[pc]; in1.cls.has(c) {
				if nxt, hit = p.closure(nxt, in1.out, i+1, n, dotSeg, posWords, sc, steps); hit {
					return true
				}
			}
		}
		cur, nxt = nxt, cur
	}
}

func (sc *scratch) nextGen() {
	sc.gen++
	if sc.gen == 0 {
		clear(sc.marks)
		sc.gen = 1
	}
}

// closure adds to list the character instructions reachable from pc through
// epsilon instructions whose conditions hold at position i; it reports
// whether the match instruction is reachable.
func (p *prog) closure(list []int32, pc int32, i, n int, dotSeg bool, posWords int, sc *scratch, steps *int) ([]int32, bool) {
	stack := sc.stack[:0]
	stack = append(stack, pc)
	for len(stack) > 0 {
		pc = stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if sc.marks[pc] == sc.gen {
			continue
		}
		sc.marks[pc] = sc.gen
		*steps++
		in1 := &p.insts[pc]
		switch in1.op {
		case iMatch:
			return list, true
		case iChar:
			list = append(list, pc)
		case iSplit:
			stack = append(stack, in1.out1, in1.out)
		case iJmp:
			stack = append(stack, in1.out)
		case iBOL:
			if i == 0 {
				stack = append(stack, in1.out)
			}
		case iEOL:
			if i == n {
				stack = append(stack, in1.out)
			}
		case iNotDotSeg:
			if i != 0 || !dotSeg {
				stack = append(stack, in1.out)
			}
		case iLook:
			if sc.looks[int(in1.look)*posWords+i>>6]&(1<<(i&63)) == 0 {
				stack = append(stack, in1.out)
			}
		}
	}
	return list, false
}

// eval computes, for every position i, whether p matches some prefix of
// in[i:], recording the answers in out (if not nil); it reports whether any
// position matched, which for the main program is RegExp.test.
func (p *prog) eval(in []rune, re *regex, out []uint64, sc *scratch, steps *int) bool {
	n := len(in)
	m := len(p.insts)
	words := (m + 63) / 64
	posWords := (n + 64) / 64
	sc.bits = grow(sc.bits, 2*words)
	cur, nxt := sc.bits[:words], sc.bits[words:2*words]
	clear(nxt)
	sc.stack = grow(sc.stack, m)
	stack := sc.stack
	any := false
	dotSeg := isDotSegUnits(in)
	for i := n; i >= 0; i-- {
		clear(cur)
		top := 0
		for _, pc := range p.base {
			in1 := &p.insts[pc]
			if in1.op == iMatch || i < n && nxt[in1.out>>6]&(1<<(in1.out&63)) != 0 && in1.cls.has(in[i]) {
				cur[pc>>6] |= 1 << (pc & 63)
				stack[top] = pc
				top++
			}
		}
		*steps += len(p.base)
		for top > 0 {
			top--
			q := stack[top]
			for _, pp := range p.preds[p.predStart[q]:p.predStart[q+1]] {
				*steps++
				if cur[pp>>6]&(1<<(pp&63)) != 0 {
					continue
				}
				ok := true
				switch pi := &p.insts[pp]; pi.op {
				case iBOL:
					ok = i == 0
				case iEOL:
					ok = i == n
				case iNotDotSeg:
					ok = i != 0 || !dotSeg
				case iLook:
					t := sc.looks[int(pi.look)*posWords:]
					ok = t[i>>6]&(1<<(i&63)) == 0
				}
				if ok {
					cur[pp>>6] |= 1 << (pp & 63)
					stack[top] = pp
					top++
				}
			}
		}
		if cur[p.start>>6]&(1<<(p.start&63)) != 0 {
			any = true
			if out != nil {
				out[i>>6] |= 1 << (i & 63)
			}
		}
		cur, nxt = nxt, cur
	}
	return any
}
