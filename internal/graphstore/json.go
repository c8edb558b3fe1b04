package graphstore

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds the JSON the store reads and writes. Strings are written
// exactly as JavaScript's JSON.stringify writes them, since the reference
// server writes its file with it; reading is a small scanner that decodes
// the few shapes the file holds without a copy where it can, and only skips
// over (while checking) any other value.

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as JavaScript's JSON.stringify writes a string:
// quote, backslash and the C0 control characters escaped (\b \t \n \f \r in
// short form, the others as \u00xx), everything else as it is. Invalid UTF-8
// is written as U+FFFD.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\uFFFD"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// validUTF8 returns s with each byte that is not part of valid UTF-8
// replaced by U+FFFD, as the reader decodes strings from the file.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func validAll(ss []string) []string {
	for i, s := range ss {
		if !utf8.ValidString(s) {
			out := append([]string(nil), ss...)
			for j := i; j < len(out); j++ {
				out[j] = validUTF8(out[j])
			}
			return out
		}
	}
	return ss
}

// maxDepth bounds the nesting of values the scanner skips over.
const maxDepth = 1000

// A scanner reads JSON from s. Its errors carry the position they were
// found at.
type scanner struct {
	s string
	i int
	// altered is set when a string read is not the input's bytes as they
	// stand: it had escapes or invalid UTF-8.
	altered bool
}

// syntaxError is a JSON error at a position of the scanner's input.
type syntaxError struct {
	pos int
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

func (sc *scanner) fail(format string, args ...any) error {
	return &syntaxError{pos: sc.i, msg: fmt.Sprintf(format, args...)}
}

func (sc *scanner) unexpected(want string) error {
	if sc.i >= len(sc.s) {
		return sc.fail("unexpected end of line, want %s", want)
	}
	r, _ := utf8.DecodeRuneInString(sc.s[sc.i:])
	return sc.fail("invalid character %q, want %s", r, want)
}

// ws skips JSON whitespace.
func (sc *scanner) ws() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\r', '\n':
			sc.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (sc *scanner) peek() byte {
	sc.ws()
	if sc.i < len(sc.s) {
		return sc.s[sc.i]
	}
	return 0
}

func (sc *scanner) expect(c byte) error {
	if sc.peek() != c {
		return sc.unexpected(fmt.Sprintf("%q", c))
	}
	sc.i++
	return nil
}

// str reads a string. A string without escapes and in valid UTF-8 is a
// substring of the input, not a copy.
func (sc *scanner) str() (string, error) {
	if sc.peek() != '"' {
		return "", sc.unexpected("a string")
	}
	sc.i++
	start := sc.i
	ascii := true
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		switch {
		case c == '"':
			v := sc.s[start:sc.i]
			sc.i++
			if !ascii && !utf8.ValidString(v) {
				v = validUTF8(v)
				sc.altered = true
			}
			return v, nil
		case c == '\\':
			sc.altered = true
			return sc.escapedStr(start)
		case c < 0x20:
			return "", sc.fail("control character %#02x in string", c)
		case c >= utf8.RuneSelf:
			ascii = false
		}
		sc.i++
	}
	return "", sc.fail("unterminated string")
}

// plainStr reads a string that AppendJSONString writes as it stands: no
// escape, no control character, valid UTF-8. It returns false, having
// read an unknown amount, for anything else.
func (sc *scanner) plainStr() (string, bool) {
	if sc.i >= len(sc.s) || sc.s[sc.i] != '"' {
		return "", false
	}
	start := sc.i + 1
	ascii := true
	for i := start; i < len(sc.s); i++ {
		switch c := sc.s[i]; {
		case c == '"':
			v := sc.s[start:i]
			if !ascii && !utf8.ValidString(v) {
				return "", false
			}
			sc.i = i + 1
			return v, true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// follows reads lit if the input goes on with it.
func (sc *scanner) follows(lit string) bool {
	if !strings.HasPrefix(sc.s[sc.i:], lit) {
		return false
	}
	sc.i += len(lit)
	return true
}

// escapedStr finishes reading a string that has escapes, from start (just
// after the opening quote); sc.i is at the first backslash.
func (sc *scanner) escapedStr(start int) (string, error) {
	b := make([]byte, 0, sc.i-start+16)
	b = append(b, sc.s[start:sc.i]...)
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		switch {
		case c == '"':
			sc.i++
			return validUTF8(string(b)), nil
		case c < 0x20:
			return "", sc.fail("control character %#02x in string", c)
		case c != '\\':
			b = append(b, c)
			sc.i++
			continue
		}
		if sc.i+1 >= len(sc.s) {
			return "", sc.fail("unterminated string")
		}
		e := sc.s[sc.i+1]
		sc.i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := sc.hex4()
			if !ok {
				return "", sc.fail("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				// A pair makes one rune; a lone half is U+FFFD, as Go's
				// encoding/json decodes it.
				save := sc.i
				if r2, ok := sc.lowSurrogate(); ok {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						b = utf8.AppendRune(b, d)
						continue
					}
				}
				sc.i = save
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
		default:
			sc.i -= 2
			return "", sc.fail("invalid escape %q in string", "\\"+string(e))
		}
	}
	return "", sc.fail("unterminated string")
}

func (sc *scanner) hex4() (rune, bool) {
	if sc.i+4 > len(sc.s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(sc.s[sc.i : sc.i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	sc.i += 4
	return r, true
}

func (sc *scanner) lowSurrogate() (rune, bool) {
	if !strings.HasPrefix(sc.s[sc.i:], `\u`) {
		return 0, false
	}
	sc.i += 2
	return sc.hex4()
}

// strs reads an array of strings. ok is false, with sc.i unchanged, when the
// value is valid JSON of another shape.
func (sc *scanner) strs() (v []string, ok bool, err error) {
	if sc.peek() != '[' {
		return nil, false, nil
	}
	start := sc.i
	sc.i++
	if sc.peek() == ']' {
		sc.i++
		return []string{}, true, nil
	}
	var buf [8]string
	got := buf[:0] // not v, a result: that would move buf to the heap
	for {
		if sc.peek() != '"' {
			sc.i = start
			return nil, false, nil
		}
		s, err := sc.str()
		if err != nil {
			return nil, false, err
		}
		got = append(got, s)
		switch sc.peek() {
		case ',':
			sc.i++
		case ']':
			sc.i++
			return append(make([]string, 0, len(got)), got...), true, nil
		default:
			return nil, false, sc.unexpected("',' or ']'")
		}
	}
}

// skip reads over one value of any kind, checking that it is valid JSON.
func (sc *scanner) skip(depth int) error {
	if depth > maxDepth {
		return sc.fail("nesting deeper than %d", maxDepth)
	}
	switch c := sc.peek(); {
	case c == '"':
		_, err := sc.str()
		return err
	case c == '{':
		sc.i++
		if sc.peek() == '}' {
			sc.i++
			return nil
		}
		for {
			if _, err := sc.str(); err != nil {
				return err
			}
			if err := sc.expect(':'); err != nil {
				return err
			}
			if err := sc.skip(depth + 1); err != nil {
				return err
			}
			switch sc.peek() {
			case ',':
				sc.i++
			case '}':
				sc.i++
				return nil
			default:
				return sc.unexpected("',' or '}'")
			}
		}
	case c == '[':
		return sc.array(func() error { return sc.skip(depth + 1) })
	case c == '-' || '0' <= c && c <= '9':
		return sc.number()
	case c == 't':
		return sc.literal("true")
	case c == 'f':
		return sc.literal("false")
	case c == 'n':
		return sc.literal("null")
	default:
		return sc.unexpected("a value")
	}
}

func (sc *scanner) literal(word string) error {
	if !strings.HasPrefix(sc.s[sc.i:], word) {
		return sc.unexpected(word)
	}
	sc.i += len(word)
	return nil
}

// number reads a number in JSON's grammar.
func (sc *scanner) number() error {
	digits := func() int {
		n := 0
		for sc.i < len(sc.s) && '0' <= sc.s[sc.i] && sc.s[sc.i] <= '9' {
			sc.i++
			n++
		}
		return n
	}
	if sc.s[sc.i] == '-' {
		sc.i++
	}
	if sc.i < len(sc.s) && sc.s[sc.i] == '0' {
		sc.i++
	} else if digits() == 0 {
		return sc.unexpected("a digit")
	}
	if sc.i < len(sc.s) && sc.s[sc.i] == '.' {
		sc.i++
		if digits() == 0 {
			return sc.unexpected("a digit")
		}
	}
	if sc.i < len(sc.s) && (sc.s[sc.i] == 'e' || sc.s[sc.i] == 'E') {
		sc.i++
		if sc.i < len(sc.s) && (sc.s[sc.i] == '+' || sc.s[sc.i] == '-') {
			sc.i++
		}
		if digits() == 0 {
			return sc.unexpected("a digit")
		}
	}
	return nil
}

// members reads an object, calling f for each member with sc.i at the
// member's value; f must read over the value.
func (sc *scanner) members(f func(key string, keyStart int) error) error {
	if err := sc.expect('{'); err != nil {
		return err
	}
	if sc.peek() == '}' {
		sc.i++
		return nil
	}
	for {
		sc.ws()
		keyStart := sc.i
		key, err := sc.str()
		if err != nil {
			return err
		}
		if err := sc.expect(':'); err != nil {
			return err
		}
		sc.ws()
		if err := f(key, keyStart); err != nil {
			return err
		}
		switch sc.peek() {
		case ',':
			sc.i++
		case '}':
			sc.i++
			return nil
		default:
			return sc.unexpected("',' or '}'")
		}
	}
}

// end checks that only whitespace is left.
func (sc *scanner) end() error {
	if sc.ws(); sc.i < len(sc.s) {
		return sc.unexpected("the end of the line")
	}
	return nil
}
