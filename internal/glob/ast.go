package glob

// A port of minimatch's AST (ast.js, brace-expressions.js, unescape.js) for
// the options {dot: true}. It turns one path segment of a glob into either a
// literal string or the source of a JavaScript regular expression, exactly as
// minimatch does, quirks included; regexp.go then interprets that source.

const (
	astNodeBudget = 20_000    // AST nodes per Compile
	astUnitBudget = 1_000_000 // code units of regexp source and strings built per Compile
)

var (
	startNoTraversal = ascii(`(?!(?:^|/)\.\.?(?:$|/))`)
	negTailEnd       = ascii(`(?:$|\/)`)
	reQmark          = ascii(`[^/]`)
	reStar           = ascii(`[^/]*?`)
	reStarNoEmpty    = ascii(`[^/]+?`)
	reImpossible     = ascii(`$.`)
)

type astBuilder struct {
	nodes int // remaining node budget
	units int // remaining unit budget
}

func (b *astBuilder) spendUnits(n int) {
	b.units -= n
	if b.units < 0 {
		fail("pattern is too complex")
	}
}

type astPart struct {
	s jstr     // used when n is nil
	n *astNode // an AST child
}

type astNode struct {
	b           *astBuilder
	typ         uint16 // 0 for a plain sequence, else one of ! ? + * @
	root        *astNode
	hasMagic    bool
	uflag       bool
	parts       *[]astPart // shared like a JavaScript array (usurp aliases it)
	parent      *astNode
	parentIndex int
	negs        *[]*astNode
	filledNegs  bool
	str         jstr // cached toString
	strOK       bool
	emptyExt    bool
	// flat is set when flatten has finished with nothing left to change, so
	// flattening again would only clear the toString cache. minimatch does
	// re-flatten on each of up to 10 passes, which is exponential in depth.
	flat bool
}

func isExtglobType(c uint16) bool {
	return c == '!' || c == '?' || c == '+' || c == '*' || c == '@'
}

func (b *astBuilder) newAST(typ uint16, parent *astNode) *astNode {
	b.nodes--
	if b.nodes < 0 {
		fail("pattern is too complex")
	}
	n := &astNode{b: b, typ: typ, parent: parent, parts: new([]astPart)}
	n.hasMagic = typ != 0
	if parent != nil {
		n.root = parent.root
		n.negs = n.root.negs
		n.parentIndex = len(*parent.parts)
	} else {
		n.root = n
		n.negs = new([]*astNode)
	}
	if typ == '!' && !n.root.filledNegs {
		*n.negs = append(*n.negs, n)
	}
	return n
}

func (n *astNode) pushStr(s jstr) {
	if len(s) == 0 {
		return
	}
	*n.parts = append(*n.parts, astPart{s: s})
}

func (n *astNode) pushNode(c *astNode) {
	if c.parent != n {
		fail("internal error: invalid AST part")
	}
	*n.parts = append(*n.parts, astPart{n: c})
}

func (n *astNode) toString() jstr {
	if n.strOK {
		return n.str
	}
	var s jstr
	if n.typ != 0 {
		s = append(s, n.typ, '(')
	}
	for i, p := range *n.parts {
		if n.typ != 0 && i > 0 {
			s = append(s, '|')
		}
		if p.n == nil {
			s = append(s, p.s...)
		} else {
			s = append(s, p.n.toString()...)
		}
	}
	if n.typ != 0 {
		s = append(s, ')')
	}
	n.b.spendUnits(len(s))
	n.str, n.strOK = s, true
	return s
}

func (n *astNode) fillNegs() {
	if n.filledNegs {
		return
	}
	n.toString()
	n.filledNegs = true
	for len(*n.negs) > 0 {
		neg := (*n.negs)[len(*n.negs)-1]
		*n.negs = (*n.negs)[:len(*n.negs)-1]
		if neg.typ != '!' {
			continue
		}
		// walk up the tree, appending everything that comes after parentIndex
		p := neg
		pp := p.parent
		for pp != nil {
			for i := p.parentIndex + 1; pp.typ == 0 && i < len(*pp.parts); i++ {
				for k := 0; k < len(*neg.parts); k++ {
					part := (*neg.parts)[k]
					if part.n == nil {
						fail("internal error: string part in extglob")
					}
					part.n.copyIn((*pp.parts)[i])
				}
			}
			p = pp
			pp = p.parent
		}
	}
}

func (n *astNode) isStart() bool {
	if n.root == n {
		return true
	}
	if !n.parent.isStart() {
		return false
	}
	if n.parentIndex == 0 {
		return true
	}
	// if everything ahead of this is a negation, then it's still the start
	p := n.parent
	for i := 0; i < n.parentIndex; i++ {
		if i >= len(*p.parts) {
			return false
		}
		pp := (*p.parts)[i]
		if pp.n == nil || pp.n.typ != '!' {
			return false
		}
	}
	return true
}

func (n *astNode) isEnd() bool {
	if n.root == n {
		return true
	}
	if n.parent.typ == '!' {
		return true
	}
	// minimatch calls parent.isEnd() a second time for a plain node, which is
	// exponential in the nesting depth; the call has no side effects, so once
	// is enough.
	if !n.parent.isEnd() {
		return false
	}
	if n.typ == 0 {
		return true
	}
	return n.parentIndex == len(*n.parent.parts)-1
}

func (n *astNode) copyIn(p astPart) {
	if p.n == nil {
		n.pushStr(p.s)
	} else {
		n.pushNode(p.n.clone(n))
	}
}

func (n *astNode) clone(parent *astNode) *astNode {
	c := n.b.newAST(n.typ, parent)
	for i := 0; i < len(*n.parts); i++ {
		c.copyIn((*n.parts)[i])
	}
	return c
}

// parseAST is AST.#parseAST with maxExtglobRecursion 2.
func (b *astBuilder) parseAST(str jstr, ast *astNode, pos, extDepth int) int {
	const maxDepth = 2
	escaping := false
	inBrace := false
	braceStart := -1
	braceNeg := false
	// brace tracks [...] so that extglob characters inside it are ignored;
	// it reports whether c was consumed.
	brace := func(c uint16, i int, acc *jstr) bool {
		if inBrace {
			if i == braceStart+1 {
				if c == '^' || c == '!' {
					braceNeg = true
				}
			} else if c == ']' && !(i == braceStart+2 && braceNeg) {
				inBrace = false
			}
			*acc = append(*acc, c)
			return true
		} else if c == '[' {
			inBrace = true
			braceStart = i
			braceNeg = false
			*acc = append(*acc, c)
			return true
		}
		return false
	}
	if ast.typ == 0 {
		i := pos
		var acc jstr
		for i < len(str) {
			c := str[i]
			i++
			if escaping || c == '\\' {
				escaping = !escaping
				acc = append(acc, c)
				continue
			}
			if brace(c, i, &acc) {
				continue
			}
			if isExtglobType(c) && jat(str, i) == '(' && extDepth <= maxDepth {
				ast.pushStr(acc)
				acc = nil
				ext := b.newAST(c, ast)
				i = b.parseAST(str, ext, i, extDepth+1)
				ast.pushNode(ext)
				continue
			}
			acc = append(acc, c)
		}
		ast.pushStr(acc)
		return i
	}
	// some kind of extglob, pos is at the (
	i := pos + 1
	part := b.newAST(0, ast)
	var parts []*astNode
	var acc jstr
	for i < len(str) {
		c := str[i]
		i++
		if escaping || c == '\\' {
			escaping = !escaping
			acc = append(acc, c)
			continue
		}
		if brace(c, i, &acc) {
			continue
		}
		if isExtglobType(c) && jat(str, i) == '(' && (extDepth <= maxDepth || ast.canAdoptType(c, adoptionAnyMap)) {
			depthAdd := 1
			if ast.canAdoptType(c, adoptionAnyMap) {
				depthAdd = 0
			}
			part.pushStr(acc)
			acc = nil
			ext := b.newAST(c, part)
			part.pushNode(ext)
			i = b.parseAST(str, ext, i, extDepth+depthAdd)
			continue
		}
		if c == '|' {
			part.pushStr(acc)
			acc = nil
			parts = append(parts, part)
			part = b.newAST(0, ast)
			continue
		}
		if c == ')' {
			if len(acc) == 0 && len(*ast.parts) == 0 {
				ast.emptyExt = true
			}
			part.pushStr(acc)
			for _, p := range parts {
				ast.pushNode(p)
			}
			ast.pushNode(part)
			return i
		}
		acc = append(acc, c)
	}
	// unfinished extglob: not an extglob, but maybe something else in there
	ast.typ = 0
	ast.hasMagic = false
	ast.parts = &[]astPart{{s: str[pos-1:]}}
	return i
}

var (
	adoptionMap = map[uint16]string{
		'!': "@", '?': "?@", '@': "@", '*': "*+?@", '+': "+@",
	}
	adoptionWithSpaceMap = map[uint16]string{
		'!': "?", '@': "?", '+': "?*",
	}
	adoptionAnyMap = map[uint16]string{
		'!': "?@", '?': "?@", '@': "?@", '*': "*+?@", '+': "+@?*",
	}
	// usurpMap[parent][child] is the type the parent takes.
	usurpMap = map[uint16]map[uint16]uint16{
		'!': {'!': '@'},
		'?': {'*': '*', '+': '*'},
		'@': {'!': '!', '?': '?', '@': '@', '*': '*', '+': '+'},
		'+': {'?': '*', '*': '*'},
	}
)

func (n *astNode) canAdoptType(c uint16, m map[uint16]string) bool {
	for _, t := range m[n.typ] {
		if uint16(t) == c {
			return true
		}
	}
	return false
}

func (n *astNode) canAdopt(child *astNode, m map[uint16]string) bool {
	if child.typ != 0 || len(*child.parts) != 1 || n.typ == 0 {
		return false
	}
	gc := (*child.parts)[0].n
	if gc == nil || gc.typ == 0 {
		return false
	}
	return n.canAdoptType(gc.typ, m)
}

func (n *astNode) adoptWithSpace(child *astNode, index int) {
	gc := (*child.parts)[0].n
	blank := n.b.newAST(0, gc)
	*blank.parts = append(*blank.parts, astPart{s: jstr{}})
	gc.pushNode(blank)
	n.adopt(child, index)
}

func (n *astNode) adopt(child *astNode, index int) {
	gc := (*child.parts)[0].n
	old := *n.parts
	parts := make([]astPart, 0, len(old)+len(*gc.parts))
	parts = append(parts, old[:index]...)
	parts = append(parts, *gc.parts...)
	parts = append(parts, old[index+1:]...)
	*n.parts = parts
	for _, p := range *gc.parts {
		if p.n != nil {
			p.n.parent = n
		}
	}
	n.strOK = false
}

func (n *astNode) canUsurp(child *astNode) bool {
	if child.typ != 0 || len(*child.parts) != 1 || n.typ == 0 || len(*n.parts) != 1 {
		return false
	}
	gc := (*child.parts)[0].n
	if gc == nil || gc.typ == 0 {
		return false
	}
	_, ok := usurpMap[n.typ][gc.typ]
	return ok
}

func (n *astNode) usurp(child *astNode) {
	gc := (*child.parts)[0].n
	nt, ok := usurpMap[n.typ][gc.typ]
	if !ok {
		return
	}
	n.parts = gc.parts
	for _, p := range *n.parts {
		if p.n != nil {
			p.n.parent = n
		}
	}
	n.typ = nt
	n.strOK = false
	n.emptyExt = false
}

func (n *astNode) flatten() {
	if n.flat {
		n.strOK = false
		return
	}
	if n.typ == 0 {
		flat := true
		for i := 0; i < len(*n.parts); i++ {
			if p := (*n.parts)[i]; p.n != nil {
				p.n.flatten()
				flat = flat && p.n.flat
			}
		}
		n.flat = flat
	} else {
		// do up to 10 passes to flatten as much as possible
		for iterations := 0; ; {
			done := true
			for i := 0; i < len(*n.parts); i++ {
				c := (*n.parts)[i].n
				if c == nil {
					continue
				}
				c.flatten()
				switch {
				case n.canAdopt(c, adoptionMap):
					done = false
					n.adopt(c, i)
				case n.canAdopt(c, adoptionWithSpaceMap):
					done = false
					n.adoptWithSpace(c, i)
				case n.canUsurp(c):
					done = false
					n.usurp(c)
				}
			}
			iterations++
			if done {
				// nothing changed, and every part was flattened
				n.flat = true
				for _, p := range *n.parts {
					n.flat = n.flat && (p.n == nil || p.n.flat)
				}
				break
			}
			if iterations >= 10 {
				break
			}
		}
	}
	n.strOK = false
}

// toRegExpSource returns the regexp source, the unescaped body (for a
// non-magic pattern), whether it has magic, and whether it needs the u flag.
func (n *astNode) toRegExpSource() (jstr, jstr, bool, bool) {
	if n.root == n {
		n.flatten()
		n.fillNegs()
	}
	if n.typ == 0 {
		noEmpty := n.isStart() && n.isEnd()
		for _, p := range *n.parts {
			if p.n != nil {
				noEmpty = false
			}
		}
		var src jstr
		parts := *n.parts
		for _, p := range parts {
			var re jstr
			var hasMagic, uflag bool
			if p.n == nil {
				re, hasMagic, uflag = parseGlob(p.s, n.hasMagic, noEmpty)
			} else {
				re, _, hasMagic, uflag = p.n.toRegExpSource()
			}
			n.hasMagic = n.hasMagic || hasMagic
			n.uflag = n.uflag || uflag
			src = append(src, re...)
		}
		var start jstr
		if n.isStart() && len(*n.parts) > 0 && (*n.parts)[0].n == nil {
			first := (*n.parts)[0].s
			// '.' and '..' cannot match unless the pattern is that exactly
			dotTravAllowed := len(*n.parts) == 1 && (jis(first, ".") || jis(first, ".."))
			if !dotTravAllowed {
				aps := func(i int) bool { c := jat(src, i); return c == '[' || c == '.' }
				if aps(0) || (jhas(src, `\.`, 0) && aps(2)) || (jhas(src, `\.\.`, 0) && aps(4)) {
					start = startNoTraversal
				}
			}
		}
		var end jstr
		if n.isEnd() && n.root.filledNegs && n.parent != nil && n.parent.typ == '!' {
			end = negTailEnd
		}
		final := jcat(start, src, end)
		n.b.spendUnits(len(final))
		return final, unescape(src), n.hasMagic, n.uflag
	}

	// some kind of extglob
	body := n.partsToRegExp()
	if n.isStart() && n.isEnd() && len(body) == 0 && n.typ != '!' {
		// invalid extglob, has to at least be *something* present, if it's
		// the entire path portion.
		s := n.toString()
		n.parts = &[]astPart{{s: s}}
		n.typ = 0
		n.hasMagic = false
		return s, unescape(n.toString()), false, false
	}
	var final jstr
	if n.typ == '!' && n.emptyExt {
		// an empty !() is exactly equivalent to a starNoEmpty
		final = reStarNoEmpty
	} else {
		open := ascii("(?:")
		var closer jstr
		switch n.typ {
		case '!':
			open = ascii("(?:(?!(?:")
			closer = jcat(ascii("))"), reStar, ascii(")"))
		case '@':
			closer = ascii(")")
		case '?':
			closer = ascii(")?")
		default:
			closer = jstr{')', n.typ}
		}
		final = jcat(open, body, closer)
	}
	n.b.spendUnits(len(final))
	return final, unescape(body), n.hasMagic, n.uflag
}

func (n *astNode) partsToRegExp() jstr {
	res := make([]jstr, 0, len(*n.parts))
	for _, p := range *n.parts {
		if p.n == nil {
			fail("internal error: string part in extglob")
		}
		re, _, _, uflag := p.n.toRegExpSource()
		n.uflag = n.uflag || uflag
		res = append(res, re)
	}
	startEnd := n.isStart() && n.isEnd()
	var out jstr
	first := true
	for _, re := range res {
		if startEnd && len(re) == 0 {
			continue
		}
		if !first {
			out = append(out, '|')
		}
		first = false
		out = append(out, re...)
	}
	return out
}

func isReSpecial(c uint16) bool {
	switch c {
	case '(', ')', '.', '*', '{', '}', '+', '?', '[', ']', '^', '$', '\\', '!':
		return true
	}
	return false
}

// isJSSpace is JavaScript's \s.
func isJSSpace(c rune) bool {
	switch c {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return c >= 0x2000 && c <= 0x200a
}

// appendRegExpEscape appends c escaped like s.replace(/[-[\]{}()*+?.,\\^$|#\s]/g, '\\$&').
func appendRegExpEscape(dst jstr, c uint16) jstr {
	switch c {
	case '-', '[', ']', '{', '}', '(', ')', '*', '+', '?', '.', ',', '\\', '^', '$', '|', '#':
		return append(dst, '\\', c)
	}
	if isJSSpace(rune(c)) {
		return append(dst, '\\', c)
	}
	return append(dst, c)
}

// parseGlob is AST.#parseGlob: one string part to regexp source.
func parseGlob(glob jstr, hasMagic, noEmpty bool) (jstr, bool, bool) {
	escaping := false
	var re jstr
	uflag := false
	inStar := false
	allStars := len(glob) > 0
	for _, c := range glob {
		if c != '*' {
			allStars = false
		}
	}
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		if escaping {
			escaping = false
			if isReSpecial(c) {
				re = append(re, '\\')
			}
			re = append(re, c)
			continue
		}
		if c == '*' {
			if inStar {
				continue
			}
			inStar = true
			if noEmpty && allStars {
				re = append(re, reStarNoEmpty...)
			} else {
				re = append(re, reStar...)
			}
			hasMagic = true
			continue
		}
		inStar = false
		if c == '\\' {
			if i == len(glob)-1 {
				re = append(re, '\\', '\\')
			} else {
				escaping = true
			}
			continue
		}
		if c == '[' {
			src, needU, consumed, magic := parseClass(glob, i)
			if consumed > 0 {
				re = append(re, src...)
				uflag = uflag || needU
				i += consumed - 1
				hasMagic = hasMagic || magic
				continue
			}
		}
		if c == '?' {
			re = append(re, reQmark...)
			hasMagic = true
			continue
		}
		re = appendRegExpEscape(re, c)
	}
	return re, hasMagic, uflag
}

// unescape is minimatch's unescape(s) with default options.
func unescape(s jstr) jstr {
	okc := func(c uint16) bool { return c != '/' && c != '\\' }
	// s.replace(/((?!\\).|^)\[([^/\\])\]/g, '$1$2')
	var a jstr
	for i := 0; i < len(s); {
		if s[i] != '\\' && !isLineTerminator(rune(s[i])) && i+3 < len(s) && s[i+1] == '[' && okc(s[i+2]) && s[i+3] == ']' {
			a = append(a, s[i], s[i+2])
			i += 4
			continue
		}
		if i == 0 && len(s) >= 3 && s[0] == '[' && okc(s[1]) && s[2] == ']' {
			a = append(a, s[1])
			i = 3
			continue
		}
		a = append(a, s[i])
		i++
	}
	// .replace(/\\([^/])/g, '$1')
	var out jstr
	for i := 0; i < len(a); i++ {
		if a[i] == '\\' && i+1 < len(a) && a[i+1] != '/' {
			out = append(out, a[i+1])
			i++
			continue
		}
		out = append(out, a[i])
	}
	return out
}

type posixClass struct {
	name string
	unip string
	u    bool
	neg  bool
}

// posixClasses in the order minimatch tries them.
var posixClasses = []posixClass{
	{"[:alnum:]", `\p{L}\p{Nl}\p{Nd}`, true, false},
	{"[:alpha:]", `\p{L}\p{Nl}`, true, false},
	{"[:ascii:]", `\x00-\x7f`, false, false},
	{"[:blank:]", `\p{Zs}\t`, true, false},
	{"[:cntrl:]", `\p{Cc}`, true, false},
	{"[:digit:]", `\p{Nd}`, true, false},
	{"[:graph:]", `\p{Z}\p{C}`, true, true},
	{"[:lower:]", `\p{Ll}`, true, false},
	{"[:print:]", `\p{C}`, true, false},
	{"[:punct:]", `\p{P}`, true, false},
	{"[:space:]", `\p{Z}\t\r\n\v\f`, true, false},
	{"[:upper:]", `\p{Lu}`, true, false},
	{"[:word:]", `\p{L}\p{Nl}\p{Nd}\p{Pc}`, true, false},
	{"[:xdigit:]", `A-Fa-f0-9`, false, false},
}

func appendBraceEscape(dst jstr, c uint16) jstr {
	if c == '[' || c == ']' || c == '\\' || c == '-' {
		dst = append(dst, '\\')
	}
	return append(dst, c)
}

// parseClass is brace-expressions.js parseClass: it returns the regexp
// source, whether the u flag is needed, how many units were consumed (0 if
// this is not a class) and whether it is magic.
func parseClass(glob jstr, pos int) (jstr, bool, int, bool) {
	var ranges, negs []jstr
	i := pos + 1
	sawStart, uflag, escaping, negate := false, false, false, false
	endPos := pos
	rangeStart := -1
loop:
	for i < len(glob) {
		c := glob[i]
		if (c == '!' || c == '^') && i == pos+1 {
			negate = true
			i++
			continue
		}
		if c == ']' && sawStart && !escaping {
			endPos = i + 1
			break
		}
		sawStart = true
		if c == '\\' && !escaping {
			escaping = true
			i++
			continue
		}
		if c == '[' && !escaping {
			for _, pc := range posixClasses {
				if jhas(glob, pc.name, i) {
					if rangeStart >= 0 {
						return reImpossible, false, len(glob) - pos, true
					}
					i += len(pc.name)
					if pc.neg {
						negs = append(negs, ascii(pc.unip))
					} else {
						ranges = append(ranges, ascii(pc.unip))
					}
					uflag = uflag || pc.u
					continue loop
				}
			}
		}
		escaping = false
		if rangeStart >= 0 {
			if int(c) > rangeStart {
				r := appendBraceEscape(nil, uint16(rangeStart))
				r = append(r, '-')
				ranges = append(ranges, appendBraceEscape(r, c))
			} else if int(c) == rangeStart {
				ranges = append(ranges, appendBraceEscape(nil, c))
			}
			rangeStart = -1
			i++
			continue
		}
		if jhas(glob, "-]", i+1) {
			ranges = append(ranges, appendBraceEscape(appendBraceEscape(nil, c), '-'))
			i += 2
			continue
		}
		if jhas(glob, "-", i+1) {
			rangeStart = int(c)
			i += 2
			continue
		}
		ranges = append(ranges, appendBraceEscape(nil, c))
		i++
	}
	if endPos < i {
		return nil, false, 0, false
	}
	if len(ranges) == 0 && len(negs) == 0 {
		return reImpossible, false, len(glob) - pos, true
	}
	if len(negs) == 0 && len(ranges) == 1 && !negate {
		r := ranges[0]
		single := (len(r) == 1 && !isLineTerminator(rune(r[0]))) ||
			(len(r) == 2 && r[0] == '\\' && !isLineTerminator(rune(r[1])))
		if single {
			return appendRegExpEscape(nil, r[len(r)-1]), false, endPos - pos, false
		}
	}
	join := func(open string, list []jstr) jstr {
		out := ascii(open)
		for _, r := range list {
			out = append(out, r...)
		}
		return append(out, ']')
	}
	sranges, snegs := join("[", ranges), join("[^", negs)
	if negate {
		sranges, snegs = join("[^", ranges), join("[", negs)
	}
	switch {
	case len(ranges) > 0 && len(negs) > 0:
		return jcat(ascii("("), sranges, ascii("|"), snegs, ascii(")")), uflag, endPos - pos, true
	case len(ranges) > 0:
		return sranges, uflag, endPos - pos, true
	default:
		return snegs, uflag, endPos - pos, true
	}
}

// segmentSource compiles one glob segment as minimatch's
// AST.fromGlob(glob).toMMPattern() does: a literal when there is no magic,
// else the regexp source "^...$" and whether it needs the u flag.
func (b *astBuilder) segmentSource(glob jstr) (lit jstr, re jstr, u bool, isRegexp bool) {
	root := b.newAST(0, nil)
	b.parseAST(glob, root, 0, 0)
	src, body, hasMagic, uflag := root.toRegExpSource()
	if !hasMagic && !root.hasMagic {
		return body, nil, false, false
	}
	return nil, jcat(ascii("^"), src, ascii("$")), uflag, true
}
