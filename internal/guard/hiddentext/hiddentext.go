// Package hiddentext finds content in a text that a person reading it
// rendered would not see, but a model reading it raw would: bidirectional
// controls, zero-width and other invisible characters, Unicode tag
// characters, runs of variation selectors, HTML comments, and long base64 or
// hex runs that may carry an encoded payload.
//
// [Scan] is a heuristic for warning: it reports what it finds and changes
// nothing. Legitimate text can trigger it (a zero-width joiner in an emoji
// sequence or in Persian, a comment in Markdown), and hidden content can
// take forms it does not know. Findings never echo a hidden character raw:
// characters are named by code point (U+200B). [Strip] is the one place that
// removes invisible characters, from untrusted output such as MCP tool
// results; it removes characters only, not comments or encoded runs.
package hiddentext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Kind is a class of hidden content.
type Kind string

const (
	// KindBidi is a run of bidirectional control characters (U+202A–U+202E,
	// U+2066–U+2069, U+200E, U+200F, U+061C), which can reorder how text
	// displays ("Trojan Source").
	KindBidi Kind = "bidi-control"
	// KindZeroWidth is a run of zero-width or invisible characters (U+200B,
	// U+200C, U+200D, U+2060–U+2064, U+180E, and U+FEFF anywhere but at
	// the very start of the text, where it is a byte order mark).
	KindZeroWidth Kind = "zero-width"
	// KindTag is a run of Unicode tag characters (U+E0000–U+E007F), which
	// render as nothing but spell ASCII text a model can read.
	KindTag Kind = "tag-characters"
	// KindVariationSelector is a run of variation selectors that can carry
	// data: any from the supplement (U+E0100–U+E01EF), or two or more in a
	// row (one U+FE0F after an emoji is ordinary and not reported).
	KindVariationSelector Kind = "variation-selectors"
	// KindHTMLComment is an HTML comment, <!-- ... -->, which rendered
	// Markdown does not show; an unterminated one runs to the end.
	KindHTMLComment Kind = "html-comment"
	// KindBase64 is a run of at least [MinBase64Run] characters of the
	// base64 alphabet (standard or URL-safe, optional = padding) holding
	// both upper and lower case letters, so that a rule of hyphens or a
	// long lower-case word is not one. Lines wrapped at 40 characters or
	// more continue the run.
	KindBase64 Kind = "base64"
	// KindHex is a run of at least [MinHexRun] hex digits, after 0x if
	// the run starts with it.
	KindHex Kind = "hex"
	// KindMore closes a list cut at [MaxFindings]: it stands at the first
	// finding left out and says how many were.
	KindMore Kind = "more"
)

const (
	// MaxFindings bounds the findings Scan returns, before the KindMore one.
	MaxFindings = 100
	// MinBase64Run is the shortest run reported as base64.
	MinBase64Run = 200
	// MinHexRun is the shortest run reported as hex; a SHA-256 digest (64)
	// or a color is shorter.
	MinHexRun = 128
	// minWrappedLine is the shortest line a base64 or hex run may be
	// wrapped at and still continue on the next line.
	minWrappedLine = 40
	// maxListed bounds the code points a finding's Detail names.
	maxListed = 8
	// maxPreview bounds the characters of a comment or tag text shown.
	maxPreview = 60
)

// A Finding is one piece of hidden content.
type Finding struct {
	Kind Kind `json:"kind"`
	// Line and Column are where it starts, from 1; Column counts characters
	// (each byte of invalid UTF-8 counts as one).
	Line   int `json:"line"`
	Column int `json:"column"`
	// Offset and Length are its bytes in the text. Offset is always inside
	// the text; for KindMore, Length is 0.
	Offset int `json:"offset"`
	Length int `json:"length"`
	// Detail says what was found, with hidden characters named by code
	// point, never included raw.
	Detail string `json:"detail"`
}

// Scan returns the hidden content in text, in order of position, at most
// [MaxFindings] of it plus, if there was more, one [KindMore] finding.
// Adjacent characters of one kind are reported as one finding. Scan never
// fails: invalid UTF-8 is read as one character per bad byte.
func Scan(text string) []Finding {
	s := &scanner{text: text, line: 1, col: 1}
	s.scan()
	return s.finish()
}

// position is a place in the text.
type position struct{ offset, line, col int }

type scanner struct {
	text      string
	line, col int // of the byte at the current offset

	findings []Finding
	more     int      // findings left out
	firstOut position // where the first one left out starts

	chars      charRun // the run of hidden characters being read
	run        textRun // the run of base64 characters being read
	commentEnd int     // the end of the last HTML comment found
}

// A charRun is a run of hidden characters of one kind.
type charRun struct {
	kind  Kind // "" when no run is open
	start position
	end   int
	runes []rune // the first maxListed+maxPreview of them
	count int
	supp  bool // holds a supplementary variation selector
}

// A textRun is a run of base64-alphabet characters, possibly wrapped over
// several lines.
type textRun struct {
	open      bool
	start     position
	end       int  // one past its last character
	lineStart bool // the current line's part of the run began the line
	lineLen   int  // characters of the run on the current line
}

func (s *scanner) scan() {
	t := s.text
	for i := 0; i < len(t); {
		c := t[i]
		if c == '<' && i >= s.commentEnd && strings.HasPrefix(t[i:], "<!--") {
			s.closeRuns()
			s.comment(i)
		}
		if c == '\n' {
			s.closeChars()
			if !s.continueRun(i) {
				s.closeRun()
			}
			i++
			s.line, s.col = s.line+1, 1
			continue
		}
		if c == '\r' && i+1 < len(t) && t[i+1] == '\n' && s.run.open && s.run.end == i {
			// A CRLF ending a wrapped line: decide at the \n.
			s.closeChars()
			i++
			s.col++
			continue
		}
		if isRunByte(c) || (c == '=' && s.run.open && s.run.end == i) {
			s.closeChars()
			if !s.run.open {
				s.run = textRun{open: true, start: s.pos(i), lineStart: s.col == 1}
			}
			s.run.end = i + 1
			s.run.lineLen++
			i++
			s.col++
			continue
		}
		s.closeRun()
		r, size := utf8.DecodeRuneInString(t[i:])
		if k := hiddenKind(r, i); k != "" {
			s.addChar(k, r, i, size)
		} else {
			s.closeChars()
		}
		i += size
		s.col++
	}
	s.closeRuns()
}

func (s *scanner) pos(offset int) position { return position{offset, s.line, s.col} }

// continueRun reports whether the run open before the newline at i goes on
// after it: a wrapped blob fills whole lines of at least minWrappedLine
// characters, and the next line starts with more of it.
func (s *scanner) continueRun(i int) bool {
	r := &s.run
	if !r.open || !r.lineStart || r.lineLen < minWrappedLine {
		return false
	}
	if r.end != i && !(r.end == i-1 && s.text[i-1] == '\r') {
		return false
	}
	if i+1 >= len(s.text) || !isRunByte(s.text[i+1]) || strings.HasSuffix(s.text[r.start.offset:r.end], "=") {
		return false
	}
	r.lineStart, r.lineLen = true, 0
	return true
}

func (s *scanner) closeRuns() {
	s.closeChars()
	s.closeRun()
}

// comment reports the HTML comment starting at offset i.
func (s *scanner) comment(i int) {
	end := len(s.text)
	terminated := false
	if j := strings.Index(s.text[i+4:], "-->"); j >= 0 {
		end, terminated = i+4+j+3, true
	}
	s.commentEnd = end
	body := s.text[i:end]
	lines := strings.Count(body, "\n") + 1
	what := "HTML comment"
	if !terminated {
		what = "unterminated HTML comment, running to the end of the text,"
	}
	s.add(Finding{
		Kind: KindHTMLComment, Line: s.line, Column: s.col, Offset: i, Length: end - i,
		Detail: fmt.Sprintf("%s of %d bytes on %s, hidden when Markdown is rendered: %s",
			what, end-i, plural(lines, "line"), preview(body)),
	})
}

// hiddenKind classifies one character at offset i.
func hiddenKind(r rune, i int) Kind {
	switch {
	case r == 0x202A || r == 0x202B || r == 0x202C || r == 0x202D || r == 0x202E,
		r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
		return KindBidi
	case r == 0x200B, r == 0x200C, r == 0x200D, r >= 0x2060 && r <= 0x2064, r == 0x180E:
		return KindZeroWidth
	case r == 0xFEFF:
		if i == 0 {
			return "" // a byte order mark
		}
		return KindZeroWidth
	case r >= 0xE0000 && r <= 0xE007F:
		return KindTag
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF:
		return KindVariationSelector
	}
	return ""
}

func (s *scanner) addChar(k Kind, r rune, i, size int) {
	c := &s.chars
	if c.kind != k || c.end != i {
		s.closeChars()
		*c = charRun{kind: k, start: s.pos(i), runes: c.runes[:0]}
	}
	c.end = i + size
	c.count++
	if len(c.runes) < maxListed+maxPreview {
		c.runes = append(c.runes, r)
	}
	if r >= 0xE0100 {
		c.supp = true
	}
}

func (s *scanner) closeChars() {
	c := &s.chars
	if c.kind == "" {
		return
	}
	defer func() { c.kind = "" }()
	if c.kind == KindVariationSelector && c.count < 2 && !c.supp {
		return // one selector after a character, as in an emoji
	}
	var names []string
	for _, r := range c.runes[:min(len(c.runes), maxListed)] {
		names = append(names, fmt.Sprintf("U+%04X", r))
	}
	list := strings.Join(names, " ")
	if c.count > maxListed {
		list += fmt.Sprintf(" and %d more", c.count-maxListed)
	}
	what := map[Kind]string{
		KindBidi:              "bidirectional control character",
		KindZeroWidth:         "zero-width character",
		KindTag:               "Unicode tag character",
		KindVariationSelector: "variation selector",
	}[c.kind]
	detail := fmt.Sprintf("%s: %s", plural(c.count, what), list)
	if c.kind == KindTag {
		detail += ", spelling " + tagText(c.runes, c.count)
	}
	s.add(Finding{Kind: c.kind, Line: c.start.line, Column: c.start.col, Offset: c.start.offset,
		Length: c.end - c.start.offset, Detail: detail})
}

// tagText returns what tag characters spell, quoted with every character
// outside printable ASCII escaped.
func tagText(runes []rune, count int) string {
	var b strings.Builder
	for _, r := range runes[:min(len(runes), maxPreview)] {
		b.WriteRune(r - 0xE0000)
	}
	q := strconv.QuoteToASCII(b.String())
	if count > maxPreview {
		q += "…"
	}
	return q
}

func (s *scanner) closeRun() {
	r := &s.run
	if !r.open {
		return
	}
	r.open = false
	start, text := r.start, s.text[r.start.offset:r.end]
	if len(text) > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') && isHex(text[2]) {
		// 0x and hex digits: the digits alone are the run.
		start, text = position{start.offset + 2, start.line, start.col + 2}, text[2:]
	}
	digits := 0 // characters, leaving out the line breaks of a wrapped run
	hasUpper, hasLower, allHex := false, false, true
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\r' || c == '\n':
			continue
		case c >= 'A' && c <= 'Z':
			hasUpper = true
		case c >= 'a' && c <= 'z':
			hasLower = true
		}
		digits++
		if !isHex(c) {
			allHex = false
		}
	}
	switch {
	case allHex && digits >= MinHexRun:
		s.addRun(KindHex, start, text, digits)
	case digits >= MinBase64Run && hasUpper && hasLower:
		s.addRun(KindBase64, start, text, digits)
	case digits >= MinHexRun:
		s.hexInside(start, text)
	}
}

// hexInside reports the long hex runs inside a run that is not base64, as
// in 0x followed by hex digits.
func (s *scanner) hexInside(start position, text string) {
	p := start
	runStart, n := -1, 0
	var runPos position
	for i := 0; i <= len(text); i++ {
		c := byte(0)
		if i < len(text) {
			c = text[i]
		}
		switch {
		case i < len(text) && isHex(c):
			if runStart < 0 {
				runStart, runPos, n = i, p, 0
			}
			n++
		case i < len(text) && (c == '\r' || c == '\n') && runStart >= 0:
			// a wrapped run goes on
		default:
			if runStart >= 0 && n >= MinHexRun {
				end := i
				for end > runStart && (text[end-1] == '\r' || text[end-1] == '\n') {
					end--
				}
				s.addRun(KindHex, runPos, text[runStart:end], n)
			}
			runStart = -1
		}
		if c == '\n' {
			p.line, p.col = p.line+1, 1
		} else {
			p.col++
		}
		p.offset++
	}
}

func (s *scanner) addRun(k Kind, start position, text string, n int) {
	lines := strings.Count(text, "\n") + 1
	what := "base64 characters"
	if k == KindHex {
		what = "hex digits"
	}
	detail := fmt.Sprintf("run of %d %s", n, what)
	if lines > 1 {
		detail += fmt.Sprintf(" wrapped over %d lines", lines)
	}
	detail += ", which may encode hidden content: " + preview(text)
	s.add(Finding{Kind: k, Line: start.line, Column: start.col, Offset: start.offset, Length: len(text), Detail: detail})
}

// add keeps a finding, or counts it once MaxFindings are kept. Findings
// arrive in order of position: each kind of run closes before another
// starts, and a comment is reported as soon as it opens.
func (s *scanner) add(f Finding) {
	if len(s.findings) < MaxFindings {
		s.findings = append(s.findings, f)
		return
	}
	if s.more == 0 {
		s.firstOut = position{f.Offset, f.Line, f.Column}
	}
	s.more++
}

func (s *scanner) finish() []Finding {
	if s.more > 0 {
		s.findings = append(s.findings, Finding{
			Kind: KindMore, Line: s.firstOut.line, Column: s.firstOut.col, Offset: s.firstOut.offset,
			Detail: fmt.Sprintf("%s more not listed", plural(s.more, "finding")),
		})
	}
	return s.findings
}

// isRunByte reports the characters of base64, standard and URL-safe.
func isRunByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// preview quotes the start of s with every character outside printable
// ASCII escaped, so that nothing hidden passes through.
func preview(s string) string {
	n := 0
	for i := range s {
		if n == maxPreview {
			return strconv.QuoteToASCII(s[:i]) + "…"
		}
		n++
	}
	return strconv.QuoteToASCII(s)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Unprintable reports whether s holds anything that does not show as
// itself in a single line: invalid UTF-8, a control character (line breaks
// and tabs included), or a character that is not printable (bidirectional
// controls, zero-width and other format characters, spaces other than
// U+0020). Configuration values a person approves are checked with it.
func Unprintable(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, c := range s {
		if c != ' ' && !unicode.IsPrint(c) {
			return true
		}
	}
	return false
}
