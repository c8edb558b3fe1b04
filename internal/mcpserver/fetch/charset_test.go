package fetch

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html/charset"
)

// encode writes text in the named encoding.
func encode(t testing.TB, text, name string) []byte {
	t.Helper()
	if name == "utf-8" {
		return []byte(text)
	}
	enc, _ := charset.Lookup(name)
	if enc == nil {
		t.Fatalf("no encoding %q", name)
	}
	b, err := enc.NewEncoder().Bytes([]byte(text))
	if err != nil {
		t.Fatalf("encode %q as %s: %v", text, name, err)
	}
	return b
}

// decodeAs decodes b in the named encoding, the way a browser that had
// settled on it would.
func decodeAs(t *testing.T, b []byte, name string) string {
	t.Helper()
	enc, _ := charset.Lookup(name)
	if enc == nil {
		t.Fatalf("no encoding %q", name)
	}
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		t.Fatalf("decode as %s: %v", name, err)
	}
	return string(out)
}

// asciiKiB is more than the first 1024 bytes of a body, all ASCII.
var asciiKiB = strings.Repeat("abcdefgh ", 120)

// TestCharsetOrder runs every content type against every way of labelling
// a body (a byte order mark, the Content-Type charset, a <meta>, an XML
// declaration, nothing) and four bodies: 1 KiB of ASCII then UTF-8,
// windows-1252, Shift_JIS, and UTF-16 with a byte order mark. Each label
// declares the body's own charset; a type that does not read that label
// falls through to valid UTF-8, then to the guess (windows-1252). JSON reads
// only the byte order mark, and is otherwise UTF-8.
func TestCharsetOrder(t *testing.T) {
	samples := []struct {
		name    string
		charset string // the encoding it is written in
		label   string // how its labels spell that
		text    string
		bom     []byte // the byte order mark it always starts with
	}{
		{name: "ASCII KiB then UTF-8", charset: "utf-8", label: "UTF-8", text: asciiKiB + "café 日本 ✓"},
		{name: "windows-1252", charset: "windows-1252", label: "windows-1252", text: "“Grüße” € naïve"},
		{name: "Shift_JIS", charset: "shift_jis", label: "Shift_JIS", text: "日本語のテキスト"},
		{name: "UTF-16LE with BOM", charset: "utf-16le", label: "UTF-16LE", text: "日本 café", bom: []byte{0xff, 0xfe}},
	}
	types := []struct {
		contentType string
		reads       string // the labels it reads besides a byte order mark
	}{
		{"text/html", "header meta xml"},
		{"", "meta xml"}, // no Content-Type: read as HTML
		{"text/plain", "header"},
		{"text/markdown; variant=GFM", "header"},
		{"text/csv", "header"},
		{"text/css", "header"},
		{"application/octet-stream", "header"},
		{"application/xml", "header xml"},
		{"text/xml", "header xml"},
		{"application/atom+xml", "header xml"},
		{"application/json", ""},
		{"application/ld+json", ""},
	}
	for _, typ := range types {
		for _, label := range []string{"bom", "header", "meta", "xml", "none"} {
			for _, s := range samples {
				if label == "bom" && s.bom == nil && s.charset != "utf-8" {
					continue // no byte order mark exists for it
				}
				if label == "header" && typ.contentType == "" {
					continue // no charset without a type
				}
				name := typ.contentType + " × " + label + " × " + s.name
				text, contentType := s.text, typ.contentType
				switch label {
				case "header":
					contentType += "; charset=" + s.label
				case "meta":
					text = `<meta charset="` + s.label + `">` + text
				case "xml":
					text = `<?xml version="1.0" encoding="` + s.label + `"?>` + text
				}
				body := append(append([]byte{}, s.bom...), encode(t, text, s.charset)...)
				if label == "bom" && s.bom == nil {
					body = append([]byte("\xef\xbb\xbf"), body...)
				}

				wantName, wantBOM := "windows-1252", 0
				switch {
				case s.bom != nil:
					wantName, wantBOM = s.charset, len(s.bom)
				case label == "bom":
					wantName, wantBOM = "utf-8", 3
				case strings.Contains(typ.reads, label):
					wantName = s.charset
				case s.charset == "utf-8" || strings.Contains(typ.contentType, "json"):
					wantName = "utf-8"
				}
				gotName, gotBOM := charsetOf(body, contentType)
				if gotName != wantName || gotBOM != wantBOM {
					t.Errorf("%s: charset %s (BOM %d), want %s (BOM %d)", name, gotName, gotBOM, wantName, wantBOM)
				}
				want := text
				if wantName != s.charset {
					want = decodeAs(t, body[wantBOM:], wantName)
				}
				if got := decode(body, contentType); got != want {
					t.Errorf("%s: text (-want +got):\n%s", name, cmp.Diff(want, got))
				}
			}
		}
	}
}

// TestCharsetDeclarations pins each step of the order and the edges of the
// declarations a document makes about itself.
func TestCharsetDeclarations(t *testing.T) {
	sjis := string(encode(t, "日本語", "shift_jis"))
	utf16le := func(s string) string { return string(encode(t, s, "utf-16le")) }
	utf16be := func(s string) string { return string(encode(t, s, "utf-16be")) }
	cases := []struct {
		name        string
		contentType string
		body        string
		charset     string
		want        string
	}{
		// 1. The byte order mark beats every label.
		{"UTF-8 BOM beats the header", "text/plain; charset=windows-1252", "\xef\xbb\xbfcafé", "utf-8", "café"},
		{"UTF-16BE BOM beats the header", "text/html; charset=iso-8859-1", "\xfe\xff" + utf16be("été"), "utf-16be", "été"},
		{"UTF-16LE BOM beats a meta", "text/html", "\xff\xfe" + utf16le(`<meta charset="windows-1252">é`), "utf-16le", `<meta charset="windows-1252">é`},
		{"JSON honours a UTF-16 BOM", "application/json", "\xff\xfe" + utf16le(`{"a":"é"}`), "utf-16le", `{"a":"é"}`},
		{"JSON drops a UTF-8 BOM", "application/vnd.api+json", "\xef\xbb\xbf{}", "utf-8", "{}"},

		// 2. The Content-Type charset, read as browsers parse MIME types.
		{"header beats the meta", "text/html; charset=shift_jis", `<meta charset="utf-8">` + sjis, "shift_jis", `<meta charset="utf-8">日本語`},
		{"header beats the XML declaration", "application/xml; charset=iso-8859-1", `<?xml version="1.0" encoding="UTF-8"?><r>caf` + "\xe9</r>", "windows-1252", `<?xml version="1.0" encoding="UTF-8"?><r>café</r>`},
		{"header beats valid UTF-8", "text/plain; charset=iso-8859-1", "é", "windows-1252", "Ã©"},
		{"header UTF-16 without a BOM is UTF-16", "text/plain; charset=utf-16be", utf16be("日本"), "utf-16be", "日本"},
		{"unknown header label falls through to the meta", "text/html; charset=x-klingon", `<meta charset="shift_jis">` + sjis, "shift_jis", `<meta charset="shift_jis">日本語`},
		{"unknown header label falls through to UTF-8", "text/plain; charset=bogus", asciiKiB + "café", "utf-8", asciiKiB + "café"},
		{"replacement is not a label", "text/plain; charset=replacement", "café", "utf-8", "café"},
		{"a replacement label hides the body", "text/html; charset=iso-2022-kr", "abc", "replacement", "\uFFFD"},
		{"parameters in any case, quoted, spaced; the first charset counts", `Text/Plain ; Format=flowed; CHARSET="Shift_JIS" ; charset=utf-8`, sjis, "shift_jis", "日本語"},
		{"a malformed parameter before the charset", "text/plain; foo; =bar; charset=shift_jis", sjis, "shift_jis", "日本語"},
		{"an empty charset is no label", "text/plain; charset=", "café", "utf-8", "café"},
		{"JSON ignores the header", "application/json; charset=iso-8859-1", `{"a":"café"}`, "utf-8", `{"a":"café"}`},
		{"JSON never guesses", "application/json", `{"a":"caf` + "\xe9\"}", "utf-8", `{"a":"caf` + "\uFFFD\"}"},
		{"a Content-Type that is not a MIME type reads the meta", "html; charset=utf-8", `<meta charset="shift_jis">` + sjis, "shift_jis", `<meta charset="shift_jis">日本語`},

		// 3. The document's own declaration beats valid UTF-8.
		{"meta beats valid UTF-8", "text/html", `<meta charset="iso-8859-1">café`, "windows-1252", `<meta charset="iso-8859-1">cafÃ©`},
		{"no Content-Type reads the meta", "", `<meta charset=shift_jis>` + sjis, "shift_jis", `<meta charset=shift_jis>日本語`},
		{"http-equiv after content", "text/html", `<META content="text/html; charset=shift_jis" HTTP-EQUIV="Content-Type">` + sjis, "shift_jis", `<META content="text/html; charset=shift_jis" HTTP-EQUIV="Content-Type">日本語`},
		{"content with a quoted charset", "text/html", `<meta http-equiv=content-type content='text/html;charset="koi8-r"'>` + "\xc1", "koi8-r", `<meta http-equiv=content-type content='text/html;charset="koi8-r"'>а`},
		{"content without http-equiv is ignored", "text/html", `<meta content="text/html; charset=shift_jis">café`, "utf-8", `<meta content="text/html; charset=shift_jis">café`},
		{"the first charset attribute counts", "text/html", `<meta charset="shift_jis" charset="utf-8">` + sjis, "shift_jis", `<meta charset="shift_jis" charset="utf-8">日本語`},
		{"an unknown meta charset falls through to the next meta", "text/html", `<meta charset="x-bogus"><meta/charset='shift_jis'>` + sjis, "shift_jis", `<meta charset="x-bogus"><meta/charset='shift_jis'>日本語`},
		{"meta x-user-defined means windows-1252", "text/html", `<meta charset="x-user-defined">` + "\x80", "windows-1252", `<meta charset="x-user-defined">€`},
		{"meta UTF-16 means UTF-8", "text/html", `<meta charset="utf-16">café`, "utf-8", `<meta charset="utf-16">café`},
		{"meta in a comment is ignored", "text/html", `<!-- <meta charset="shift_jis"> -->café`, "utf-8", `<!-- <meta charset="shift_jis"> -->café`},
		{"meta in an attribute value is ignored", "text/html", `<a title='<meta charset="shift_jis">'>café`, "utf-8", `<a title='<meta charset="shift_jis">'>café`},
		{"meta after a script that mentions one", "text/html", `<script>x="<meta charset=utf-8>"</script>` + sjis, "utf-8", `<script>x="<meta charset=utf-8>"</script>` + "\uFFFD\uFFFD\uFFFD{\uFFFD\uFFFD"},
		{"meta past the first 1024 bytes is ignored", "text/html", asciiKiB + `<meta charset="iso-8859-1">café`, "utf-8", asciiKiB + `<meta charset="iso-8859-1">café`},
		{"meta in text/plain is ignored", "text/plain", `<meta charset="iso-8859-1">` + asciiKiB + "café", "utf-8", `<meta charset="iso-8859-1">` + asciiKiB + "café"},
		{"XML declaration of UTF-8", "application/xml", `<?xml version="1.0" encoding="UTF-8"?><r>` + asciiKiB + "café</r>", "utf-8", `<?xml version="1.0" encoding="UTF-8"?><r>` + asciiKiB + "café</r>"},
		{"XML declaration of UTF-8 over windows-1252 bytes", "application/xml", `<?xml version="1.0" encoding="UTF-8"?><r>caf` + "\xe9</r>", "utf-8", `<?xml version="1.0" encoding="UTF-8"?><r>caf` + "\uFFFD</r>"},
		{"XML declaration in single quotes with spaces", "image/svg+xml", `<?xml version='1.0' encoding = 'windows-1252'?><svg>` + "\x93x\x94</svg>", "windows-1252", `<?xml version='1.0' encoding = 'windows-1252'?><svg>“x”</svg>`},
		{"XML declaration of UTF-16 means UTF-8", "application/xml", `<?xml version="1.0" encoding="UTF-16"?><r>café</r>`, "utf-8", `<?xml version="1.0" encoding="UTF-16"?><r>café</r>`},
		{"UTF-16LE XML without a BOM", "application/xml", utf16le(`<?xml version="1.0"?><r>é</r>`), "utf-16le", `<?xml version="1.0"?><r>é</r>`},
		{"UTF-16BE HTML without a BOM", "text/html", utf16be(`<?xml version="1.0"?><p>é`), "utf-16be", `<?xml version="1.0"?><p>é`},
		{"XML declaration in an HTML page", "text/html", `<?xml version="1.0" encoding="ISO-8859-1"?><html><p>caf` + "\xe9", "windows-1252", `<?xml version="1.0" encoding="ISO-8859-1"?><html><p>café`},
		{"meta beats the XML declaration in HTML", "text/html", `<?xml version="1.0" encoding="ISO-8859-1"?><meta charset="utf-8">café`, "utf-8", `<?xml version="1.0" encoding="ISO-8859-1"?><meta charset="utf-8">café`},
		{"XML declaration not at the start is ignored", "application/xml", ` <?xml version="1.0" encoding="Shift_JIS"?>` + "café", "utf-8", ` <?xml version="1.0" encoding="Shift_JIS"?>` + "café"},
		{"XML declaration in text/plain is ignored", "text/plain", `<?xml version="1.0" encoding="ISO-8859-2"?>` + asciiKiB + "café", "utf-8", `<?xml version="1.0" encoding="ISO-8859-2"?>` + asciiKiB + "café"},
		{"CSS @charset", "text/css", `@charset "shift_jis"; /* ` + sjis + ` */`, "shift_jis", `@charset "shift_jis"; /* 日本語 */`},
		{"CSS @charset must be exact", "text/css", `@charset 'shift_jis'; /* café */`, "utf-8", `@charset 'shift_jis'; /* café */`},

		// 4. Valid UTF-8 is UTF-8, however much ASCII comes first.
		{"text/plain, 1 KiB of ASCII then UTF-8", "text/plain", asciiKiB + "café", "utf-8", asciiKiB + "café"},
		{"empty body", "text/plain", "", "utf-8", ""},

		// 5. Otherwise the guess.
		{"guess windows-1252", "text/plain", "na\xefve", "windows-1252", "naïve"},
		{"guess windows-1252 for unlabelled Shift_JIS", "text/markdown", sjis, "windows-1252", "“ú–{Œê"},
		{"guess UTF-8 from the first KiB", "text/plain", "café " + asciiKiB + "\xff", "utf-8", "café " + asciiKiB + "\uFFFD"},
	}
	for _, c := range cases {
		if name, _ := charsetOf([]byte(c.body), c.contentType); name != c.charset {
			t.Errorf("%s: charset %s, want %s", c.name, name, c.charset)
		}
		if got := decode([]byte(c.body), c.contentType); got != c.want {
			t.Errorf("%s: text (-want +got):\n%s", c.name, cmp.Diff(c.want, got))
		}
	}
}

// TestCharsetThroughTheTool fetches, from a loopback server, the cases the
// issue names (JSON, text/plain, text/markdown, XML declaring UTF-8, HTML
// without a meta, each 1 KiB of ASCII before a UTF-8 character), and pages
// that declare a charset, whose text the Markdown converter and raw both
// get decoded once.
func TestCharsetThroughTheTool(t *testing.T) {
	pad := asciiKiB
	web := pages(t, map[string]pageSpec{
		"/json":     {contentType: "application/json", body: `{"pad":"` + pad + `","name":"café ✓"}`},
		"/text":     {contentType: "text/plain", body: pad + "café ✓"},
		"/markdown": {contentType: "text/markdown", body: "# Title\n\n" + pad + "café ✓"},
		"/xml":      {contentType: "application/xml", body: `<?xml version="1.0" encoding="UTF-8"?><r>` + pad + "café ✓</r>"},
		"/html":     {contentType: "text/html", body: "<html><body><p>" + pad + "café ✓</p></body></html>"},
		"/untyped":  {body: "<html><body><p>" + pad + "café ✓</p></body></html>"},
		"/declared": {contentType: "text/html", body: `<html><head><meta charset="windows-1252"></head><body><p>` + "\xc3\xa9 \xe9</p></body></html>"},
		"/sjis":     {contentType: "text/html; charset=Shift_JIS", body: "<p>" + string(encode(t, "日本語", "shift_jis")) + "</p>"},
	})
	u := web.URL
	raw := func(path, contentType string) string {
		return "Content type " + contentType + " cannot be simplified to markdown, but here is the raw content:\nContents of " + u + path + ":\n"
	}
	cs := start(t, Options{})
	runFetch(t, cs, []fetchCall{
		{name: "JSON", args: map[string]any{"url": u + "/json"}, want: raw("/json", "application/json") + `{"pad":"` + pad + `","name":"café ✓"}`},
		{name: "text/plain", args: map[string]any{"url": u + "/text"}, want: raw("/text", "text/plain") + pad + "café ✓"},
		{name: "text/markdown", args: map[string]any{"url": u + "/markdown"}, want: raw("/markdown", "text/markdown") + "# Title\n\n" + pad + "café ✓"},
		{name: "XML declaring UTF-8", args: map[string]any{"url": u + "/xml"}, want: raw("/xml", "application/xml") + `<?xml version="1.0" encoding="UTF-8"?><r>` + pad + "café ✓</r>"},
		{name: "HTML without a meta", args: map[string]any{"url": u + "/html"}, want: "Contents of " + u + "/html:\n" + strings.TrimSpace(pad) + " café ✓"},
		{name: "HTML without a Content-Type", args: map[string]any{"url": u + "/untyped"}, want: "Contents of " + u + "/untyped:\n" + strings.TrimSpace(pad) + " café ✓"},
		{name: "declared page as Markdown", args: map[string]any{"url": u + "/declared"}, want: "Contents of " + u + "/declared:\nÃ© é"},
		{name: "declared page raw", args: map[string]any{"url": u + "/declared", "raw": true}, want: raw("/declared", "text/html") + `<html><head><meta charset="windows-1252"></head><body><p>Ã© é</p></body></html>`},
		{name: "Shift_JIS page", args: map[string]any{"url": u + "/sjis"}, want: "Contents of " + u + "/sjis:\n日本語"},
	})
}

// FuzzDecode feeds the charset decision untrusted bytes and Content-Type
// values: it never panics, always names an encoding, only skips a byte
// order mark that is there, and always returns valid UTF-8; a valid UTF-8
// body without a byte order mark comes back unchanged as text/plain and as
// JSON.
func FuzzDecode(f *testing.F) {
	seeds := []struct{ body, contentType string }{
		{asciiKiB + "café", "text/plain"},
		{`{"a":"café"}`, "application/json; charset=iso-8859-1"},
		{`<?xml version="1.0" encoding="UTF-8"?><r>caf` + "\xe9</r>", "application/xml"},
		{`<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"><p>` + "\xfc", "text/html"},
		{`<!--><meta charset='shift_jis'/><a b=c d="e" f='g'>` + "\x93\xfa", ""},
		{`<meta charset="utf-16"><meta content="charset=koi8-r" http-equiv=content-type>`, "text/html"},
		{"\xff\xfec\x00a\x00f\x00\xe9\x00", `text/plain; charset="utf-8"; x=\"`},
		{"\x00<\x00?\x00x\x00m\x00l", "text/xml"},
		{`@charset "gbk";` + "\xd6\xd0", "text/css"},
		{"<meta charset", "text/html; charset=x-unknown"},
		{"\xef\xbb\xbf", "application/ld+json"},
		{"abc", "text/html; charset=iso-2022-kr"},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.contentType)
	}
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		name, bom := charsetOf(body, contentType)
		if enc, _ := charset.Lookup(name); enc == nil {
			t.Fatalf("charset %q is no encoding", name)
		}
		if bom != 0 && !(bom == 3 && bytes.HasPrefix(body, []byte("\xef\xbb\xbf")) ||
			bom == 2 && (bytes.HasPrefix(body, []byte("\xfe\xff")) || bytes.HasPrefix(body, []byte("\xff\xfe")))) {
			t.Fatalf("skips %d bytes of %q as a byte order mark", bom, body[:min(len(body), 3)])
		}
		if got := decode(body, contentType); !utf8.ValidString(got) {
			t.Fatalf("decode(%q, %q) = %q, not valid UTF-8", body, contentType, got)
		}
		if utf8.Valid(body) && !bytes.HasPrefix(body, []byte("\xef\xbb\xbf")) {
			for _, ct := range []string{"text/plain", "application/json"} {
				if got := decode(body, ct); got != string(body) {
					t.Fatalf("valid UTF-8 as %s: %q, want %q", ct, got, body)
				}
			}
		}
	})
}
