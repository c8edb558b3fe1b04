package risk

import (
	"fmt"
	"strconv"
	"strings"
)

// This file reads a diff in git's format, as `git diff` prints it with its
// default a/ and b/ prefixes:
//
//	diff --git a/X b/Y                      starts a file section
//	old mode M / new mode M                 mode change
//	new file mode M / deleted file mode M   creation, deletion
//	rename from X / rename to Y             rename
//	copy from X / copy to Y                 copy
//	similarity index N% / dissimilarity index N%
//	index H..H [M]                          blob ids, and the mode if unchanged
//	--- a/X or /dev/null, +++ b/Y or /dev/null
//	@@ -a[,b] +c[,d] @@ ...                 hunk; b and d lines follow
//	 x / -x / +x                            context, removed, added line
//	\ No newline at end of file
//	Binary files A and B differ
//	GIT binary patch                        followed by literal/delta blocks
//
// Names may be quoted C-style ("a/with \"quote\"", octal escapes for other
// bytes). A `---` or `+++` name that has a space ends in a tab, which is
// dropped. Anything else, a line out of place, or a hunk whose line counts do
// not match, is a problem: the section (or, before the first section, the
// text itself) is Unclassified. The parser never gives up on the rest of the
// diff: it starts again at the next `diff --git` line.

// section is one file's part of a diff.
type section struct {
	line int // 1-based line of the diff --git header

	hdrOld, hdrNew      string // names from the diff --git line, without a/ b/
	minusName           string // from ---, without a/; "" for /dev/null
	plusName            string // from +++, without b/; "" for /dev/null
	sawMinus, sawPlus   bool
	minusNull, plusNull bool
	fromName, toName    string // from rename/copy from/to

	oldMode, newMode string // from old mode / new mode
	createMode       string // from new file mode
	deleteMode       string // from deleted file mode
	indexMode        string // from the index line, when the mode is unchanged

	created, deleted, renamed, copied, binary bool
	meta                                      bool // saw any extended header

	hunks          []hunk
	added, removed int

	problem string // the first thing that did not parse; "" if none
}

// hunk holds a hunk's lines, each starting with ' ', '-' or '+'.
type hunk struct {
	oldStart, newStart int
	lines              []string
}

func (s *section) fail(format string, args ...any) {
	if s.problem == "" {
		s.problem = fmt.Sprintf(format, args...)
	}
}

// oldPath is the name before the change, "" for a created file.
func (s *section) oldPath() string {
	if s.created {
		return ""
	}
	for _, n := range []string{s.fromName, s.minusName, s.hdrOld} {
		if n != "" {
			return n
		}
	}
	return ""
}

// newPath is the name after the change, "" for a deleted file.
func (s *section) newPath() string {
	if s.deleted {
		return ""
	}
	for _, n := range []string{s.toName, s.plusName, s.hdrNew} {
		if n != "" {
			return n
		}
	}
	return ""
}

// path is the name the section is reported under: the b/ side, or the a/
// side for a deletion.
func (s *section) path() string {
	if p := s.newPath(); p != "" {
		return p
	}
	return s.oldPath()
}

type reader struct {
	lines []string
	i     int
}

// parse splits diff into file sections. lead is non-empty when text comes
// before the first section; it says what that text is.
func parse(diff string) (secs []*section, lead string) {
	if diff == "" {
		return nil, ""
	}
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	p := &reader{lines: lines}
	for p.i < len(p.lines) {
		if strings.HasPrefix(p.lines[p.i], "diff --git ") {
			secs = append(secs, p.section())
			continue
		}
		if lead == "" {
			lead = fmt.Sprintf("line %d is not part of any file's diff", p.i+1)
		}
		p.i++
	}
	return secs, lead
}

// states of a section's body.
const (
	stHeader = iota // extended header lines
	stHunks         // after +++, hunks only
	stDone          // after a binary marker, nothing more
)

// section reads one file section, starting at its diff --git line, up to the
// next diff --git line.
func (p *reader) section() *section {
	s := &section{line: p.i + 1}
	if a, b, ok := splitGitHeader(strings.TrimPrefix(p.lines[p.i], "diff --git ")); ok {
		s.hdrOld, s.hdrNew = a, b
	}
	p.i++
	state := stHeader
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		if strings.HasPrefix(line, "diff --git ") {
			break
		}
		switch {
		case state == stHeader && p.header(s, line):
			s.meta = true
			p.i++
		case state == stHeader && strings.HasPrefix(line, "--- "):
			p.names(s)
			state = stHunks
		case state == stHunks && strings.HasPrefix(line, "@@ "):
			p.hunk(s)
		case state == stHeader && strings.HasPrefix(line, "Binary files ") && strings.HasSuffix(line, " differ"):
			s.binary = true
			state = stDone
			p.i++
		case state == stHeader && line == "GIT binary patch":
			s.binary = true
			state = stDone
			p.i++
			p.binaryPatch(s)
		default:
			s.fail("line %d is out of place in the diff of this file", p.i+1)
			p.i++
		}
	}
	p.check(s)
	return s
}

// header reads an extended header line, reporting whether line is one.
func (p *reader) header(s *section, line string) bool {
	key, val, ok := cutHeader(line)
	if !ok {
		return false
	}
	switch key {
	case "old mode":
		s.oldMode = p.mode(s, val)
	case "new mode":
		s.newMode = p.mode(s, val)
	case "new file mode":
		s.created = true
		s.createMode = p.mode(s, val)
	case "deleted file mode":
		s.deleted = true
		s.deleteMode = p.mode(s, val)
	case "rename from", "copy from":
		s.renamed = s.renamed || key == "rename from"
		s.copied = s.copied || key == "copy from"
		s.fromName = p.plainName(s, val)
	case "rename to", "copy to":
		s.renamed = s.renamed || key == "rename to"
		s.copied = s.copied || key == "copy to"
		s.toName = p.plainName(s, val)
	case "similarity index", "dissimilarity index":
		n, err := strconv.Atoi(strings.TrimSuffix(val, "%"))
		if !strings.HasSuffix(val, "%") || err != nil || n < 0 || n > 100 {
			s.fail("line %d: bad %s %q", p.i+1, key, val)
		}
	case "index":
		ids, mode, hasMode := strings.Cut(val, " ")
		a, b, ok := strings.Cut(ids, "..")
		if !ok || !isHex(a) || !isHex(b) {
			s.fail("line %d: bad index line", p.i+1)
		}
		if hasMode {
			s.indexMode = p.mode(s, mode)
		}
	}
	return true
}

// headerKeys are the extended header lines git prints, in a table so that
// a line that merely starts like one is not taken for one.
var headerKeys = []string{
	"old mode", "new mode", "new file mode", "deleted file mode",
	"rename from", "rename to", "copy from", "copy to",
	"similarity index", "dissimilarity index", "index",
}

func cutHeader(line string) (key, val string, ok bool) {
	for _, k := range headerKeys {
		if v, found := strings.CutPrefix(line, k+" "); found {
			return k, v, true
		}
	}
	return "", "", false
}

// The modes git records.
const (
	modeFile    = "100644"
	modeExec    = "100755"
	modeSymlink = "120000"
	modeGitlink = "160000"
)

func (p *reader) mode(s *section, m string) string {
	switch m {
	case modeFile, modeExec, modeSymlink, modeGitlink:
	default:
		s.fail("line %d: unknown file mode %q", p.i+1, m)
	}
	return m
}

func isHex(s string) bool {
	if len(s) < 4 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// plainName reads a rename/copy name, which has no a/ or b/ prefix.
func (p *reader) plainName(s *section, val string) string {
	name, ok := readName(val)
	if !ok || name == "" {
		s.fail("line %d: cannot read the name %q", p.i+1, val)
		return ""
	}
	return name
}

// readName reads a whole field as a name: C-quoted if it starts with a
// quote, else as is.
func readName(val string) (string, bool) {
	if strings.HasPrefix(val, `"`) {
		name, rest, ok := unquote(val)
		return name, ok && rest == ""
	}
	return val, true
}

// names reads the --- and +++ lines.
func (p *reader) names(s *section) {
	minus := strings.TrimPrefix(p.lines[p.i], "--- ")
	s.sawMinus = true
	p.i++
	if p.i >= len(p.lines) || !strings.HasPrefix(p.lines[p.i], "+++ ") {
		s.fail("line %d: a --- line without its +++ line", p.i)
		return
	}
	plus := strings.TrimPrefix(p.lines[p.i], "+++ ")
	s.sawPlus = true
	p.i++
	var ok bool
	if s.minusName, s.minusNull, ok = pairName(minus, "a/"); !ok {
		s.fail("line %d: cannot read the name in the --- line", p.i-1)
	}
	if s.plusName, s.plusNull, ok = pairName(plus, "b/"); !ok {
		s.fail("line %d: cannot read the name in the +++ line", p.i)
	}
}

// pairName reads the name of a --- or +++ line: /dev/null, or the prefix and
// a name, C-quoted or ended by a tab when it holds a space.
func pairName(val, prefix string) (name string, null, ok bool) {
	if val == "/dev/null" {
		return "", true, true
	}
	if strings.HasPrefix(val, `"`) {
		n, rest, ok := unquote(val)
		if !ok || (rest != "" && rest != "\t") {
			return "", false, false
		}
		val = n
	} else if n, tail, found := strings.Cut(val, "\t"); found {
		if tail != "" || !strings.Contains(n, " ") {
			return "", false, false
		}
		val = n
	} else if strings.Contains(val, " ") {
		return "", false, false // git ends such a name with a tab
	}
	name, found := strings.CutPrefix(val, prefix)
	if !found || name == "" {
		return "", false, false
	}
	return name, false, true
}

// splitGitHeader reads the two names of a diff --git line. An unquoted pair
// of names with spaces can be split in more than one place; then the split
// that gives two equal names wins, and if none or several do the names are
// left to the other header lines.
func splitGitHeader(h string) (a, b string, ok bool) {
	if strings.HasPrefix(h, `"`) {
		first, rest, ok := unquote(h)
		if !ok || !strings.HasPrefix(rest, " ") {
			return "", "", false
		}
		second, ok := readName(rest[1:])
		if !ok {
			return "", "", false
		}
		return stripPair(first, second)
	}
	var found, same [][2]string
	for i := 0; i < len(h); i++ {
		if h[i] != ' ' {
			continue
		}
		rest := h[i+1:]
		if !strings.HasPrefix(rest, "b/") && !strings.HasPrefix(rest, `"b/`) {
			continue
		}
		second, ok := readName(rest)
		if !ok {
			continue
		}
		if a, b, ok := stripPair(h[:i], second); ok {
			found = append(found, [2]string{a, b})
			if a == b {
				same = append(same, [2]string{a, b})
			}
		}
	}
	switch {
	case len(found) == 1:
		return found[0][0], found[0][1], true
	case len(same) == 1:
		return same[0][0], same[0][1], true
	}
	return "", "", false
}

func stripPair(first, second string) (a, b string, ok bool) {
	a, okA := strings.CutPrefix(first, "a/")
	b, okB := strings.CutPrefix(second, "b/")
	if !okA || !okB || a == "" || b == "" {
		return "", "", false
	}
	return a, b, true
}

// unquote reads a C-quoted name at the start of s, as git writes it: \a \b
// \t \n \v \f \r \" \\ and three-digit octal escapes for other bytes. It
// returns the name and what follows the closing quote.
func unquote(s string) (name, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], true
		case '\\':
			if i+1 >= len(s) {
				return "", "", false
			}
			i++
			switch e := s[i]; e {
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'v':
				b.WriteByte('\v')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case '"', '\\':
				b.WriteByte(e)
			case '0', '1', '2', '3':
				if i+2 >= len(s) || !isOctal(s[i+1]) || !isOctal(s[i+2]) {
					return "", "", false
				}
				b.WriteByte((e-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
				i += 2
			default:
				return "", "", false
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }

// hunk reads a hunk: its header, then exactly the lines it counts, and any
// "\ No newline at end of file" markers among them or right after them.
func (p *reader) hunk(s *section) {
	h, oldLeft, newLeft, ok := hunkHeader(p.lines[p.i])
	if !ok {
		s.fail("line %d: bad hunk header", p.i+1)
		p.i++
		return
	}
	start := p.i + 1
	p.i++
	for oldLeft > 0 || newLeft > 0 {
		if p.i >= len(p.lines) {
			s.fail("the hunk at line %d is cut short", start)
			s.hunks = append(s.hunks, h)
			return
		}
		line := p.lines[p.i]
		switch {
		case strings.HasPrefix(line, " "):
			oldLeft--
			newLeft--
		case strings.HasPrefix(line, "-"):
			oldLeft--
			s.removed++
		case strings.HasPrefix(line, "+"):
			newLeft--
			s.added++
		case strings.HasPrefix(line, `\ `):
			p.i++
			continue
		default:
			s.fail("the hunk at line %d is cut short", start)
			s.hunks = append(s.hunks, h)
			return
		}
		if oldLeft < 0 || newLeft < 0 {
			s.fail("the hunk at line %d has more lines than its header counts", start)
		}
		h.lines = append(h.lines, line)
		p.i++
	}
	for p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], `\ `) {
		p.i++
	}
	s.hunks = append(s.hunks, h)
}

// hunkHeader reads "@@ -a[,b] +c[,d] @@ ...".
func hunkHeader(line string) (h hunk, oldCount, newCount int, ok bool) {
	rest, found := strings.CutPrefix(line, "@@ -")
	if !found {
		return h, 0, 0, false
	}
	oldRange, rest, found := strings.Cut(rest, " +")
	if !found {
		return h, 0, 0, false
	}
	newRange, rest, found := strings.Cut(rest, " @@")
	if !found || (rest != "" && !strings.HasPrefix(rest, " ")) {
		return h, 0, 0, false
	}
	var okOld, okNew bool
	h.oldStart, oldCount, okOld = hunkRange(oldRange)
	h.newStart, newCount, okNew = hunkRange(newRange)
	if !okOld || !okNew || oldCount+newCount == 0 {
		return h, 0, 0, false
	}
	return h, oldCount, newCount, true
}

// hunkRange reads "start[,count]"; the count is 1 when left out.
func hunkRange(r string) (start, count int, ok bool) {
	a, b, hasCount := strings.Cut(r, ",")
	start, ok = smallNumber(a)
	if !ok {
		return 0, 0, false
	}
	count = 1
	if hasCount {
		if count, ok = smallNumber(b); !ok {
			return 0, 0, false
		}
	}
	return start, count, true
}

// smallNumber reads a decimal number of at most 9 digits.
func smallNumber(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// binaryPatch skips the literal/delta blocks of a GIT binary patch. Their
// data lines are in git's base85 alphabet, which has no space, so a
// diff --git line always ends the patch.
func (p *reader) binaryPatch(s *section) {
	blocks := 0
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		switch {
		case strings.HasPrefix(line, "literal ") || strings.HasPrefix(line, "delta "):
			_, n, _ := strings.Cut(line, " ")
			if _, ok := smallNumber(n); !ok {
				s.fail("line %d: bad binary patch block", p.i+1)
			}
			blocks++
		case line == "" || isBase85Line(line):
		default:
			if blocks == 0 {
				s.fail("line %d: a binary patch without data", p.i+1)
			}
			return
		}
		p.i++
	}
}

const base85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// isBase85Line reports whether line is a binary patch data line: a length
// letter, then groups of five base85 characters.
func isBase85Line(line string) bool {
	if len(line) < 6 || (len(line)-1)%5 != 0 {
		return false
	}
	if c := line[0]; !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
		return false
	}
	for i := 1; i < len(line); i++ {
		if !strings.ContainsRune(base85, rune(line[i])) {
			return false
		}
	}
	return true
}

// check makes sure the section's header lines agree with each other: the
// names the diff --git, rename/copy and ---/+++ lines give for each side, and
// creation and deletion with /dev/null.
func (p *reader) check(s *section) {
	if s.created && s.deleted {
		s.fail("a file both created and deleted")
	}
	if (s.renamed || s.copied) && (s.fromName == "" || s.toName == "") {
		s.fail("a rename or copy without both names")
	}
	if s.renamed && s.copied {
		s.fail("a file both renamed and copied")
	}
	if (s.renamed || s.copied) && (s.created || s.deleted) {
		s.fail("a rename or copy that also creates or deletes the file")
	}
	if (s.oldMode == "") != (s.newMode == "") {
		s.fail("an old mode line without its new mode line, or the reverse")
	}
	if s.sawMinus && s.minusNull != s.created {
		s.fail("--- /dev/null must go with new file mode, and only with it")
	}
	if s.sawPlus && s.plusNull != s.deleted {
		s.fail("+++ /dev/null must go with deleted file mode, and only with it")
	}
	if !s.meta && !s.sawMinus && !s.binary {
		s.fail("a file section with nothing in it")
	}
	if !agree(s.hdrOld, s.fromName, s.minusName) || !agree(s.hdrNew, s.toName, s.plusName) {
		s.fail("the header lines name different files")
	}
	if !s.renamed && !s.copied && s.hdrOld != s.hdrNew && s.hdrOld != "" && s.hdrNew != "" {
		s.fail("the names differ but the file is not renamed or copied")
	}
	if !s.renamed && !s.copied && s.minusName != "" && s.plusName != "" && s.minusName != s.plusName {
		s.fail("the --- and +++ names differ but the file is not renamed or copied")
	}
	if !s.created && s.oldPath() == "" || !s.deleted && s.newPath() == "" {
		s.fail("cannot tell which file this is")
	}
}

// agree reports whether the non-empty names are all the same.
func agree(names ...string) bool {
	first := ""
	for _, n := range names {
		if n == "" {
			continue
		}
		if first == "" {
			first = n
		} else if n != first {
			return false
		}
	}
	return true
}
