package hiddentext

import (
	"strings"
	"unicode/utf8"
)

// Strip returns text without the invisible characters that can smuggle
// instructions past a person to a model, and how many it removed: Unicode
// tag characters (U+E0000–U+E007F), bidirectional controls (U+202A–U+202E,
// U+2066–U+2069, U+200E, U+200F, U+061C) and zero-width characters
// (U+200B, U+2060–U+2064, U+180E, U+FEFF), the classes [Scan] reports.
// The zero-width joiner and non-joiner (U+200D, U+200C) are kept: emoji
// sequences and scripts such as Persian need them. Variation selectors are
// kept too. Invalid UTF-8 becomes U+FFFD (and is not counted). Untrusted
// output, such as an MCP tool's result, goes through it before anyone reads
// it.
func Strip(text string) (string, int) {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	first := strings.IndexFunc(text, stripped)
	if first < 0 {
		return text, 0
	}
	var b strings.Builder
	b.Grow(len(text))
	b.WriteString(text[:first])
	n := 0
	for _, r := range text[first:] {
		if stripped(r) {
			n++
			continue
		}
		b.WriteRune(r)
	}
	return b.String(), n
}

// stripped reports whether Strip removes r.
func stripped(r rune) bool {
	if r == 0x200C || r == 0x200D {
		return false
	}
	switch hiddenKind(r, -1) {
	case KindBidi, KindZeroWidth, KindTag:
		return true
	}
	return r == 0xFEFF // hiddenKind spares a byte order mark only at offset 0
}
