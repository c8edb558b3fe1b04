package glob

import (
	"unicode/utf16"
	"unicode/utf8"
)

// jstr is a JavaScript string: a sequence of UTF-16 code units. Compilation
// works on jstr so that lengths, indexes and comparisons behave exactly as in
// minimatch, which is written in JavaScript.
type jstr = []uint16

// toJS encodes a valid UTF-8 Go string as UTF-16.
func toJS(s string) jstr {
	out := make(jstr, 0, len(s))
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			out = append(out, uint16(r1), uint16(r2))
		} else {
			out = append(out, uint16(r))
		}
	}
	return out
}

// fromJS decodes s to UTF-8. ok is false when s holds a lone surrogate, which
// no valid UTF-8 string can equal.
func fromJS(s jstr) (string, bool) {
	buf := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := rune(s[i])
		switch {
		case utf16.IsSurrogate(c):
			if c < 0xdc00 && i+1 < len(s) && s[i+1] >= 0xdc00 && s[i+1] < 0xe000 {
				buf = utf8.AppendRune(buf, utf16.DecodeRune(c, rune(s[i+1])))
				i++
				continue
			}
			return "", false
		default:
			buf = utf8.AppendRune(buf, c)
		}
	}
	return string(buf), true
}

// jcat concatenates into a new slice, so results never alias their inputs.
func jcat(parts ...jstr) jstr {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make(jstr, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func jeq(a, b jstr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// jis reports whether s equals the ASCII string t.
func jis(s jstr, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if s[i] != uint16(t[i]) {
			return false
		}
	}
	return true
}

// jhas reports whether s has the ASCII string t at index i (String.startsWith(t, i)).
func jhas(s jstr, t string, i int) bool {
	if i < 0 || i+len(t) > len(s) {
		return false
	}
	for k := 0; k < len(t); k++ {
		if s[i+k] != uint16(t[k]) {
			return false
		}
	}
	return true
}

// jat is String.charAt as a code unit, or -1 past the end.
func jat(s jstr, i int) int {
	if i < 0 || i >= len(s) {
		return -1
	}
	return int(s[i])
}

// jindex is String.indexOf for one code unit, from index from.
func jindex(s jstr, c uint16, from int) int {
	if from < 0 {
		from = 0
	}
	for i := from; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// jsplit is String.split with a one-unit separator.
func jsplit(s jstr, sep uint16) []jstr {
	var out []jstr
	start := 0
	for i, c := range s {
		if c == sep {
			out = append(out, s[start:i:i])
			start = i + 1
		}
	}
	return append(out, s[start:len(s):len(s)])
}

// ascii converts an ASCII Go string to a jstr.
func ascii(s string) jstr {
	out := make(jstr, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = uint16(s[i])
	}
	return out
}

// jkey makes a map key from s.
func jkey(s jstr) string {
	b := make([]byte, 2*len(s))
	for i, c := range s {
		b[2*i] = byte(c)
		b[2*i+1] = byte(c >> 8)
	}
	return string(b)
}

// isLineTerminator matches the code units JavaScript's "." does not.
func isLineTerminator(c rune) bool {
	return c == '\n' || c == '\r' || c == 0x2028 || c == 0x2029
}
