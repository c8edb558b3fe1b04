package hiddentext

import (
	"strings"
	"testing"
)

// TestStrip removes the tag, bidi and zero-width characters, keeps ZWJ,
// ZWNJ, variation selectors and ordinary text, and repairs invalid UTF-8.
func TestStrip(t *testing.T) {
	tags := "\U000E0049\U000E0047\U000E004E\U000E004F\U000E0052\U000E0045" // "IGNORE" in tag characters
	cases := []struct {
		name, in, want string
		n              int
	}{
		{"plain", "hello, world\n\ttabs stay", "hello, world\n\ttabs stay", 0},
		{"tags", "read" + tags + " me", "read me", 6},
		{"tag block edges", "a\U000E0000b\U000E007Fc", "abc", 2},
		{"bidi", "x\u202Ay\u202Bz\u202C\u202D\u202E\u2066\u2067\u2068\u2069\u200E\u200F\u061C!", "xyz!", 12},
		{"zero width", "a\u200Bb\u2060c\u2061\u2062\u2063\u2064d\u180Ee\uFEFFf", "abcdef", 8},
		{"byte order mark at the start", "\uFEFFtext", "text", 1},
		{"joiners kept", "👩\u200D💻 \u0645\u200C\u06CC", "👩\u200D💻 \u0645\u200C\u06CC", 0},
		{"variation selector kept", "☃\uFE0F", "☃\uFE0F", 0},
		{"invalid UTF-8", "a\xffb\u200B", "a\uFFFDb", 1},
	}
	for _, c := range cases {
		got, n := Strip(c.in)
		if got != c.want || n != c.n {
			t.Errorf("%s: Strip(%+q) = %+q, %d; want %+q, %d", c.name, c.in, got, n, c.want, c.n)
		}
		if again, m := Strip(got); again != got || m != 0 {
			t.Errorf("%s: stripping twice changed %+q to %+q", c.name, got, again)
		}
	}
}

// TestStripLeavesNothingScanFinds: after Strip, Scan finds no bidi, tag
// or zero-width run other than joiners.
func TestStripLeavesNothingScanFinds(t *testing.T) {
	var all strings.Builder
	for r := rune(0); r < 0xE0200; r++ {
		if r < 0xD800 || r > 0xDFFF {
			all.WriteRune(r)
		}
	}
	got, _ := Strip(all.String())
	for _, f := range Scan(got) {
		switch f.Kind {
		case KindBidi, KindTag:
			t.Errorf("after Strip: %s", f.Detail)
		case KindZeroWidth:
			if !strings.Contains(f.Detail, "U+200C U+200D") || strings.Count(f.Detail, "U+") != 2 {
				t.Errorf("after Strip: %s", f.Detail)
			}
		}
	}
}
