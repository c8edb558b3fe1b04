package fetch

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
)

// decode turns a body into text by the charset [charsetOf] decides, for
// every content type. A leading byte order mark is dropped and invalid
// sequences become U+FFFD, so the text is always valid UTF-8.
func decode(body []byte, contentType string) string {
	name, bom := charsetOf(body, contentType)
	text := body[bom:]
	if name == "utf-8" && utf8.Valid(text) {
		return string(text)
	}
	if enc, _ := charset.Lookup(name); enc != nil {
		if out, err := enc.NewDecoder().Bytes(text); err == nil {
			text = out
		}
	}
	return strings.ToValidUTF8(string(text), "\uFFFD")
}

// charsetOf decides a body's charset the way browsers do, in this order:
//
//  1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE), whose length it returns;
//  2. the Content-Type charset, unless the label is unknown;
//  3. the document's own declaration in its first 1024 bytes: for HTML (and a
//     body without a valid Content-Type) "<?x" in UTF-16, a <meta> charset or
//     http-equiv, else an XML declaration; for XML "<?x" in UTF-16 or the XML
//     declaration; for CSS @charset;
//  4. UTF-8, if the whole body is valid UTF-8;
//  5. golang.org/x/net/html/charset's guess.
//
// JSON (application/json, text/json, +json) is UTF-8 after step 1. The name
// is the Encoding standard's, one [charset.Lookup] knows.
func charsetOf(body []byte, contentType string) (name string, bom int) {
	switch {
	case bytes.HasPrefix(body, []byte("\xef\xbb\xbf")):
		return "utf-8", 3
	case bytes.HasPrefix(body, []byte("\xfe\xff")):
		return "utf-16be", 2
	case bytes.HasPrefix(body, []byte("\xff\xfe")):
		return "utf-16le", 2
	}
	essence, label, ok := parseMIME(contentType)
	k := kindOf(essence, ok)
	if k == kindJSON {
		return "utf-8", 0
	}
	if name := lookup(label); name != "" {
		return name, 0
	}
	if name := declared(k, body[:min(len(body), prescanWindow)]); name != "" {
		return name, 0
	}
	if utf8.Valid(body) {
		return "utf-8", 0
	}
	return guess(body), 0
}

// prescanWindow is how far a document's declaration is looked for, as the
// HTML standard advises.
const prescanWindow = 1024

// A kind is what a content type says about where its charset is declared.
type kind int

const (
	kindHTML kind = iota // text/html, or no valid Content-Type
	kindXML
	kindJSON
	kindCSS
	kindText // every other type: no declaration inside
)

// kindOf classifies a MIME type's essence as the MIME Sniffing standard
// groups them.
func kindOf(essence string, ok bool) kind {
	_, subtype, _ := strings.Cut(essence, "/")
	switch {
	case !ok || essence == "text/html":
		return kindHTML
	case essence == "application/json" || essence == "text/json" || strings.HasSuffix(subtype, "+json"):
		return kindJSON
	case essence == "application/xml" || essence == "text/xml" || strings.HasSuffix(subtype, "+xml"):
		return kindXML
	case essence == "text/css":
		return kindCSS
	}
	return kindText
}

// declared returns the charset head (a body's first bytes) declares for
// its kind, or "".
func declared(k kind, head []byte) string {
	switch k {
	case kindHTML:
		return prescan(head)
	case kindXML:
		if name := utf16Declaration(head); name != "" {
			return name
		}
		return xmlEncoding(head)
	case kindCSS:
		return cssCharset(head)
	}
	return ""
}

// guess is x/net/html/charset's guess for a body that declares nothing:
// UTF-8 if its first 1024 bytes are UTF-8 with a non-ASCII byte, else
// windows-1252. Every '<' is blanked first so that its own <meta> prescan,
// which is only for HTML and has already run, finds nothing.
func guess(body []byte) string {
	head := bytes.ReplaceAll(body[:min(len(body), prescanWindow)], []byte("<"), []byte(" "))
	_, name, _ := charset.DetermineEncoding(head, "text/plain")
	return name
}

// asciiSpace is ASCII whitespace, as the WHATWG standards define it.
const asciiSpace = "\t\n\f\r "

// lookup is the Encoding standard's "get an encoding": the name of the
// encoding a label stands for, or "" when the label is unknown.
func lookup(label string) string {
	label = strings.Trim(label, asciiSpace)
	for i := 0; i < len(label); i++ {
		if label[i] <= ' ' || label[i] >= 0x7f {
			return ""
		}
	}
	if strings.EqualFold(label, "replacement") {
		return "" // an encoding's name, but not one of its labels
	}
	_, name := charset.Lookup(label)
	return name
}

// parseMIME is the MIME Sniffing standard's "parse a MIME type" for one
// Content-Type value: its essence in lower case and its first valid charset
// parameter, or ok false when the value is not a MIME type.
func parseMIME(s string) (essence, charsetLabel string, ok bool) {
	const httpSpace = "\t\n\r "
	s = strings.Trim(s, httpSpace)
	typ, rest, found := strings.Cut(s, "/")
	if !found || !isToken(typ) {
		return "", "", false
	}
	subtype, rest, _ := strings.Cut(rest, ";")
	subtype = strings.TrimRight(subtype, httpSpace)
	if !isToken(subtype) {
		return "", "", false
	}
	essence = strings.ToLower(typ + "/" + subtype)
	seen := false
	for rest != "" {
		rest = strings.TrimLeft(rest, httpSpace)
		end := strings.IndexAny(rest, ";=")
		if end < 0 {
			break
		}
		name := strings.ToLower(rest[:end])
		sep := rest[end]
		rest = rest[end+1:]
		if sep == ';' {
			continue
		}
		var value string
		if strings.HasPrefix(rest, `"`) {
			value, rest = quotedString(rest)
			_, rest, _ = strings.Cut(rest, ";")
		} else {
			value, rest, _ = strings.Cut(rest, ";")
			value = strings.TrimRight(value, httpSpace)
			if value == "" {
				continue
			}
		}
		if name == "charset" && !seen && isQuotedStringToken(value) {
			charsetLabel, seen = value, true
		}
	}
	return essence, charsetLabel, true
}

// quotedString collects an HTTP quoted string from s, which starts with
// '"': its value with escapes undone, and what follows it.
func quotedString(s string) (value, rest string) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '"':
			return b.String(), s[i+1:]
		case '\\':
			if i+1 == len(s) {
				b.WriteByte('\\')
				return b.String(), ""
			}
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String(), ""
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

func isQuotedStringToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '\t' && (c < 0x20 || c == 0x7f) {
			return false
		}
	}
	return true
}

// prescan is the HTML standard's "prescan a byte stream to determine its
// encoding" over head: a UTF-16 XML declaration, else the first <meta> that
// declares a known charset, else the XML declaration.
func prescan(head []byte) string {
	if name := utf16Declaration(head); name != "" {
		return name
	}
	if name := metaScan(head); name != "" {
		return name
	}
	return xmlEncoding(head)
}

// utf16Declaration recognises "<?x" in UTF-16 without a byte order mark.
func utf16Declaration(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("<\x00?\x00x\x00")):
		return "utf-16le"
	case bytes.HasPrefix(b, []byte("\x00<\x00?\x00x")):
		return "utf-16be"
	}
	return ""
}

// metaScan is the prescan's loop: it skips comments, other tags and their
// attributes, and returns what the first <meta> declaring a known charset
// declares, or "" when the bytes run out.
func metaScan(b []byte) string {
	for i := 0; i < len(b); i++ {
		rest := b[i:]
		switch {
		case bytes.HasPrefix(rest, []byte("<!--")):
			end := bytes.Index(rest[2:], []byte("-->"))
			if end < 0 {
				return ""
			}
			i += 2 + end + 2 // the '>'; "<!-->" ends the comment
		case len(rest) >= 6 && rest[0] == '<' && bytes.EqualFold(rest[1:5], []byte("meta")) && (isSpace(rest[5]) || rest[5] == '/'):
			i += 5
			if name := metaCharset(b, &i); name != "" {
				return name
			}
		case len(rest) >= 2 && rest[0] == '<' && (isLetter(rest[1]) || len(rest) >= 3 && rest[1] == '/' && isLetter(rest[2])):
			end := bytes.IndexAny(rest, asciiSpace+">")
			if end < 0 {
				return ""
			}
			i += end
			for {
				if _, _, ok := attribute(b, &i); !ok {
					break
				}
			}
		case len(rest) >= 2 && rest[0] == '<' && (rest[1] == '!' || rest[1] == '/' || rest[1] == '?'):
			end := bytes.IndexByte(rest[1:], '>')
			if end < 0 {
				return ""
			}
			i += 1 + end
		}
	}
	return ""
}

// metaCharset reads a <meta>'s attributes from *pos and returns the charset
// it declares, or "" when it declares none the prescan accepts.
func metaCharset(b []byte, pos *int) string {
	var seenHTTPEquiv, seenContent, seenCharset, gotPragma, charsetSet bool
	var needPragma *bool
	name := ""
	for {
		attr, value, ok := attribute(b, pos)
		if !ok {
			break
		}
		switch {
		case attr == "http-equiv" && !seenHTTPEquiv:
			seenHTTPEquiv = true
			gotPragma = value == "content-type"
		case attr == "content" && !seenContent:
			seenContent = true
			if found := metaContentCharset(value); found != "" && !charsetSet {
				name, charsetSet, needPragma = found, true, new(true)
			}
		case attr == "charset" && !seenCharset:
			seenCharset = true
			name, charsetSet, needPragma = lookup(value), true, new(false)
		}
	}
	if needPragma == nil || *needPragma && !gotPragma {
		return ""
	}
	switch name {
	case "utf-16le", "utf-16be":
		return "utf-8"
	case "x-user-defined":
		return "windows-1252"
	}
	return name
}

// attribute is the prescan's "get an attribute" at *pos: a name and value
// in ASCII lower case, and false at a '>' or when the bytes run out, with
// *pos left at the '>' or at the end.
func attribute(b []byte, pos *int) (name, value string, ok bool) {
	p := *pos
	for p < len(b) && (isSpace(b[p]) || b[p] == '/') {
		p++
	}
	if p >= len(b) || b[p] == '>' {
		*pos = min(p, len(b))
		return "", "", false
	}
	var n, v []byte
	hasValue := false
loop:
	for ; p < len(b); p++ {
		switch c := b[p]; {
		case c == '=' && len(n) > 0:
			p++
			hasValue = true
			break loop
		case isSpace(c):
			break loop
		case c == '/' || c == '>':
			*pos = p
			return string(n), "", true
		default:
			n = append(n, toLower(c))
		}
	}
	if !hasValue {
		for p < len(b) && isSpace(b[p]) {
			p++
		}
		if p >= len(b) {
			*pos = len(b)
			return "", "", false
		}
		if b[p] != '=' {
			*pos = p
			return string(n), "", true
		}
		p++
	}
	for p < len(b) && isSpace(b[p]) {
		p++
	}
	if p >= len(b) {
		*pos = len(b)
		return "", "", false
	}
	switch q := b[p]; q {
	case '"', '\'':
		for p++; p < len(b); p++ {
			if b[p] == q {
				*pos = p + 1
				return string(n), string(v), true
			}
			v = append(v, toLower(b[p]))
		}
		*pos = len(b)
		return "", "", false
	case '>':
		*pos = p
		return string(n), "", true
	}
	for ; p < len(b); p++ {
		if c := b[p]; isSpace(c) || c == '>' {
			*pos = p
			return string(n), string(v), true
		}
		v = append(v, toLower(b[p]))
	}
	*pos = len(b)
	return "", "", false
}

// metaContentCharset is the HTML standard's "extracting a character
// encoding from a meta element" for a content value in lower case.
func metaContentCharset(s string) string {
	for {
		i := strings.Index(s, "charset")
		if i < 0 {
			return ""
		}
		s = strings.TrimLeft(s[i+len("charset"):], asciiSpace)
		if strings.HasPrefix(s, "=") {
			s = strings.TrimLeft(s[1:], asciiSpace)
			break
		}
	}
	if s == "" {
		return ""
	}
	if q := s[0]; q == '"' || q == '\'' {
		end := strings.IndexByte(s[1:], q)
		if end < 0 {
			return ""
		}
		return lookup(s[1 : 1+end])
	}
	if end := strings.IndexAny(s, asciiSpace+";"); end >= 0 {
		s = s[:end]
	}
	return lookup(s)
}

// xmlEncoding is the HTML standard's "get an XML encoding": the encoding
// named in an XML declaration at the start of b, with UTF-16 read as UTF-8
// (the declaration was legible as ASCII), or "".
func xmlEncoding(b []byte) string {
	if !bytes.HasPrefix(b, []byte("<?xml")) {
		return ""
	}
	end := bytes.IndexByte(b, '>')
	if end < 0 {
		return ""
	}
	d := b[:end]
	i := bytes.Index(d, []byte("encoding"))
	if i < 0 {
		return ""
	}
	d = trimControl(d[i+len("encoding"):])
	if len(d) == 0 || d[0] != '=' {
		return ""
	}
	d = trimControl(d[1:])
	if len(d) == 0 || d[0] != '"' && d[0] != '\'' {
		return ""
	}
	label, _, found := bytes.Cut(d[1:], d[:1])
	if !found || bytes.ContainsFunc(label, func(r rune) bool { return r <= ' ' }) {
		return ""
	}
	return notUTF16(lookup(string(label)))
}

// cssCharset is CSS Syntax's @charset rule: `@charset "label";` at the very
// start of b, with UTF-16 read as UTF-8.
func cssCharset(b []byte) string {
	rest, ok := bytes.CutPrefix(b, []byte(`@charset "`))
	if !ok {
		return ""
	}
	label, after, found := bytes.Cut(rest, []byte(`"`))
	if !found || !bytes.HasPrefix(after, []byte(";")) {
		return ""
	}
	return notUTF16(lookup(string(label)))
}

// notUTF16 replaces UTF-16 by UTF-8: a declaration read as ASCII cannot be
// in UTF-16.
func notUTF16(name string) string {
	if name == "utf-16le" || name == "utf-16be" {
		return "utf-8"
	}
	return name
}

func isSpace(c byte) bool  { return strings.IndexByte(asciiSpace, c) >= 0 }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func toLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 0x20
	}
	return c
}

func trimControl(b []byte) []byte {
	for len(b) > 0 && b[0] <= ' ' {
		b = b[1:]
	}
	return b
}
