package logo

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

// svgOpen is the start of every test document.
const svgOpen = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 16 16">`

// harmless is content that every attack case carries and that must survive.
const harmless = `<circle id="local" cx="8" cy="8" r="4" fill="#f00"/><use href="#local"/>`

// keptHarmless is how harmless comes out.
var keptHarmless = []string{`<circle id="local" cx="8" cy="8" r="4" fill="#f00"></circle>`, `<use href="#local"></use>`}

func doc(body string) string { return svgOpen + harmless + body + `</svg>` }

func TestSanitizeSVGAttacks(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		absent []string // must not appear in the output, in any case
		kept   []string // must appear in the output, exactly
	}{
		{"script", doc(`<script>alert(1)</script>`), []string{"<script", "alert"}, nil},
		{"script CDATA", doc(`<script><![CDATA[alert(1)]]></script>`), []string{"script", "alert"}, nil},
		{"XHTML script", doc(`<script xmlns="http://www.w3.org/1999/xhtml">alert(1)</script>`), []string{"script", "alert"}, nil},
		{"prefixed XHTML script", doc(`<h:script xmlns:h="http://www.w3.org/1999/xhtml">alert(1)</h:script>`), []string{"script", "alert"}, nil},
		{"onload on root", `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)">` + harmless + `</svg>`, []string{"onload", "alert"}, nil},
		{"ONLOAD upper case", doc(`<g ONLOAD="alert(1)"><rect width="1" height="1"/></g>`), []string{"onload", "alert"}, []string{`<g><rect width="1" height="1"></rect></g>`}},
		{"onload with white space", doc("<g\n\tonload\n =\n \"alert(1)\"\n><rect width=\"1\"/></g>"), []string{"onload", "alert"}, []string{`<rect width="1"></rect>`}},
		{"onclick and onmouseover", doc(`<rect onclick="alert(1)" onMouseOver="alert(2)" width="2"/>`), []string{"onclick", "onmouseover", "alert"}, []string{`<rect width="2"></rect>`}},
		{"prefixed onload", doc(`<g xmlns:e="urn:x" e:onload="alert(1)"/>`), []string{"onload", "alert"}, []string{`<g></g>`}},
		{"xlink:href javascript", doc(`<a xlink:href="javascript:alert(1)"><rect width="3"/></a>`), []string{"javascript", "alert", "href=\"j"}, []string{`<a><rect width="3"></rect></a>`}},
		{"href javascript with leading space", doc(`<a href=" javascript:alert(1)"><rect width="3"/></a>`), []string{"javascript", "alert"}, []string{`<a><rect width="3"></rect></a>`}},
		{"href javascript with newline inside", doc("<a href=\"java\nscript:alert(1)\"><rect width=\"3\"/></a>"), []string{"script", "alert"}, []string{`<a>`}},
		{"href entity-encoded javascript", doc(`<a href="&#106;avascript:alert(1)"><rect width="3"/></a>`), []string{"javascript", "&#106;", "alert"}, []string{`<a>`}},
		{"href hex entities and tab", doc(`<a href="&#x6A;ava&#9;script&#58;alert(1)"><rect width="3"/></a>`), []string{"script", "alert"}, []string{`<a>`}},
		{"a href javascript", doc(`<a href="javascript:"><text>hi</text></a>`), []string{"javascript"}, []string{`<a><text>hi</text></a>`}},
		{"use remote href", doc(`<use href="https://evil/x.svg#a"/>`), []string{"evil", "x.svg"}, []string{`<use></use>`}},
		{"use xlink:href other file", doc(`<use xlink:href="other.svg#a"/>`), []string{"other.svg"}, []string{`<use></use>`}},
		{"use protocol-relative", doc(`<use href="//evil/x.svg#a"/>`), []string{"evil"}, nil},
		{"use data href", doc(`<use href="data:image/svg+xml;base64,PHN2Zz4="/>`), []string{"data:", "PHN2Zz4"}, nil},
		{"xlink:href used when href is absent", doc(`<use xlink:href="#local" x="1"/>`), []string{"xlink"}, []string{`<use href="#local" x="1"></use>`}},
		{"href wins over xlink:href", doc(`<use xlink:href="#local" href="https://evil/#a"/>`), []string{"evil", "xlink"}, []string{`<use></use>`}},
		{"image remote", doc(`<image href="https://evil/x.png" width="16" height="16"/>`), []string{"<image", "evil"}, nil},
		{"image data", doc(`<image xlink:href="data:image/png;base64,iVBORw0KGgo=" width="16"/>`), []string{"<image", "data:", "ivbor"}, nil},
		{"feImage", doc(`<filter id="f"><feImage href="https://evil/x.png"/><feGaussianBlur stdDeviation="1"/></filter>`), []string{"feimage", "evil"}, []string{`<filter id="f"><feGaussianBlur stdDeviation="1"></feGaussianBlur></filter>`}},
		{"style attribute url", doc(`<rect style="fill:url(https://evil/x);stroke:red" width="4"/>`), []string{"evil", "fill:"}, []string{`<rect style="stroke:red" width="4"></rect>`}},
		{"style attribute CSS escape", doc(`<rect style="fill:\75rl(https://evil/x)" width="4"/>`), []string{"evil", "style"}, []string{`<rect width="4"></rect>`}},
		{"style attribute unknown property", doc(`<rect style="background-image:image-set('https://evil/x.png' 1x);behavior:url(#x)" width="4"/>`), []string{"evil", "style", "behavior"}, nil},
		{"style attribute expression", doc(`<rect style="fill:expression(alert(1))" width="4"/>`), []string{"expression", "alert"}, nil},
		{"style attribute comment", doc(`<rect style="fill:red/*;stroke:url(https://evil/)*/" width="4"/>`), []string{"evil", "/*"}, nil},
		{"fill url remote", doc(`<rect fill="url(https://evil/)" width="5"/>`), []string{"evil", "url("}, []string{`<rect width="5"></rect>`}},
		{"fill url upper case and spaced", doc(`<rect fill="URL ( 'https://evil/' )" width="5"/>`), []string{"evil"}, []string{`<rect width="5"></rect>`}},
		{"mask and filter url remote", doc(`<g mask="url(other.svg#m)" filter='url("https://evil/#f")' clip-path="url(#local)"/>`), []string{"other.svg", "evil"}, []string{`<g clip-path="url(#local)"></g>`}},
		{"style element with import", doc(`<style>@import url(https://evil/x.css); circle { fill: url(https://evil/#p) }</style>`), []string{"<style", "@import", "evil"}, nil},
		{"foreignObject with HTML", doc(`<foreignObject width="10" height="10"><html xmlns="http://www.w3.org/1999/xhtml"><body><iframe src="https://evil/"></iframe><script>alert(1)</script></body></html></foreignObject>`), []string{"foreignobject", "<html", "iframe", "evil", "alert"}, nil},
		{"animate href", doc(`<a href="#local"><animate attributeName="href" to="javascript:alert(1)"/><rect width="6"/></a>`), []string{"animate", "javascript", "alert"}, []string{`<a href="#local"><rect width="6"></rect></a>`}},
		{"set href", doc(`<a><set attributeName="xlink:href" to="javascript:alert(1)"/><rect width="6"/></a>`), []string{"<set", "javascript", "alert"}, []string{`<a><rect width="6"></rect></a>`}},
		{"animate values", doc(`<a><animate attributeName="href" values="javascript:alert(1);#local"/></a>`), []string{"animate", "javascript"}, nil},
		{"animateTransform and animateMotion", doc(`<g><animateTransform attributeName="transform" type="rotate"/><animateMotion path="M0 0"/></g>`), []string{"animate"}, []string{`<g></g>`}},
		{"xml-stylesheet", `<?xml version="1.0" encoding="UTF-8"?><?xml-stylesheet href="https://evil/x.css"?>` + doc(``), []string{"evil", "<?"}, nil},
		{"comment", doc(`<!-- <script>alert(1)</script> -->`), []string{"<!--", "script", "alert"}, nil},
		{"xml:base", doc(`<g xml:base="https://evil/"><use href="#local"/></g>`), []string{"evil", "base"}, nil},
		{"javascript in text", doc(`<title>javascript:alert(1)</title>`), []string{"javascript"}, []string{`<title></title>`}},
		{"foreignObject split by comment in text", doc(`<desc>foreign<!-- -->Object</desc>`), []string{"foreignobject"}, []string{`<desc></desc>`}},
		{"javascript joined around a dropped element", doc(`<text>javascript<script>x</script>:alert(1)</text>`), []string{"javascript", "alert"}, []string{`<text></text>`}},
		{"text joined around a dropped element", doc(`<text>a<script>hidden</script>b</text>`), []string{"script", "hidden"}, []string{`<text>ab</text>`}},
		{"markup in text", doc(`<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>`), []string{"<script"}, []string{`<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>`}},
		{"non-ASCII in a value", doc(`<rect fill="u&#xFF52;l(https://evil/)" width="7"/>`), []string{"evil"}, []string{`<rect width="7"></rect>`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := SanitizeSVG([]byte(tt.in))
			if err != nil {
				t.Fatalf("SanitizeSVG: %v", err)
			}
			lower := strings.ToLower(string(out))
			for _, s := range tt.absent {
				if strings.Contains(lower, strings.ToLower(s)) {
					t.Errorf("output holds %q:\n%s", s, out)
				}
			}
			for _, s := range append(keptHarmless, tt.kept...) {
				if !strings.Contains(string(out), s) {
					t.Errorf("output lost %q:\n%s", s, out)
				}
			}
			checkOutput(t, out)
		})
	}
}

func TestSanitizeSVGKeeps(t *testing.T) {
	in := `<?xml version="1.0" encoding="UTF-8"?>
<!-- made by hand -->
<s:svg xmlns:s="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="32" height="32" viewBox="0 0 32 32">
  <s:title>Tools &amp; more</s:title>
  <s:defs>
    <s:linearGradient id="g" x1="0" y1="0" x2="1" y2="1">
      <s:stop offset="0" stop-color="#08f"/>
      <s:stop offset="1" style="stop-color: rgb(0, 80, 255) ; stop-opacity:0.5;"/>
    </s:linearGradient>
    <s:path id="p" d="M4 4h24v24H4z"/>
  </s:defs>
  <s:use xlink:href="#p" fill="url(#g)" transform="translate(1 2) rotate(45)"/>
  <s:text x="16" y="20" text-anchor="middle" font-family="'Open Sans', sans-serif">Z<![CDATA[<0>]]></s:text>
</s:svg>
`
	want := `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32">
  <title>Tools &amp; more</title>
  <defs>
    <linearGradient id="g" x1="0" y1="0" x2="1" y2="1">
      <stop offset="0" stop-color="#08f"></stop>
      <stop offset="1" style="stop-color:rgb(0, 80, 255);stop-opacity:0.5"></stop>
    </linearGradient>
    <path id="p" d="M4 4h24v24H4z"></path>
  </defs>
  <use href="#p" fill="url(#g)" transform="translate(1 2) rotate(45)"></use>
  <text x="16" y="20" text-anchor="middle" font-family="&quot;Open Sans&quot;, sans-serif">Z&lt;0&gt;</text>
</svg>`
	want = strings.Replace(want, `&quot;Open Sans&quot;`, `'Open Sans'`, 1)
	out, err := SanitizeSVG([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	checkOutput(t, out)
}

func TestSanitizeSVGRefuses(t *testing.T) {
	big := doc(`<!--` + strings.Repeat("x", MaxBytes) + `-->`)
	growing := svgOpen + strings.Repeat("<g/>", (MaxBytes-len(svgOpen)-6)/4) + "</svg>"
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"billion laughs", `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>` + doc(`<text>&c;</text>`), ErrSVG},
		{"external DTD", `<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">` + doc(``), ErrSVG},
		{"lower-case doctype", `<!doctype svg>` + doc(``), ErrSVG},
		{"ENTITY alone", doc(`<!ENTITY x "y">`), ErrSVG},
		{"other declaration", doc(`<!ELEMENT svg ANY>`), ErrSVG},
		{"undefined entity", doc(`<text>&xxe;</text>`), ErrSVG},
		{"HTML root", `<html><body><svg xmlns="http://www.w3.org/2000/svg"/></body></html>`, ErrSVG},
		{"svg without namespace", `<svg><circle r="1"/></svg>`, ErrSVG},
		{"svg in another namespace", `<svg xmlns="http://evil/"><circle r="1"/></svg>`, ErrSVG},
		{"other root in SVG namespace", `<g xmlns="http://www.w3.org/2000/svg"/>`, ErrSVG},
		{"empty", ``, ErrSVG},
		{"unclosed", svgOpen + harmless, ErrSVG},
		{"mismatched tags", svgOpen + `<g></a></svg>`, ErrSVG},
		{"two roots", doc(``) + doc(``), ErrSVG},
		{"text after root", doc(``) + `hello`, ErrSVG},
		{"non-UTF-8 encoding", `<?xml version="1.0" encoding="ISO-8859-1"?>` + doc(``), ErrSVG},
		{"invalid UTF-8", doc("<title>\xff</title>"), ErrSVG},
		{"control character", doc("<title>&#1;</title>"), ErrSVG},
		{"over MaxBytes", big, ErrTooLarge},
		{"output over MaxBytes", growing, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := SanitizeSVG([]byte(tt.in))
			if !errors.Is(err, tt.want) {
				t.Errorf("SanitizeSVG = %q, %v; want %v", out, err, tt.want)
			}
		})
	}
	if len(growing) > MaxBytes {
		t.Errorf("the growing input is %d bytes; it should fit MaxBytes", len(growing))
	}
}

// TestAllowLists keeps the lists free of what the sanitiser must drop.
func TestAllowLists(t *testing.T) {
	for name := range attributes {
		if strings.HasPrefix(strings.ToLower(name), "on") {
			t.Errorf("attribute %q is allowed", name)
		}
	}
	for _, name := range []string{"script", "style", "foreignObject", "image", "feImage", "animate", "set", "animateMotion", "animateTransform", "iframe", "embed", "object"} {
		if elements[name] {
			t.Errorf("element %q is allowed", name)
		}
	}
	for _, name := range []string{"xmlns", "attributeName", "to", "from", "values-xlink", "src", "begin"} {
		if attributes[name] {
			t.Errorf("attribute %q is allowed", name)
		}
	}
}

// checkOutput checks what every sanitised SVG must be: well-formed XML with
// an <svg> root, no forbidden words, no event handler, no duplicate
// attribute, no url() but url(#id) in attributes, and a fixed point of
// SanitizeSVG.
func checkOutput(t *testing.T, out []byte) {
	t.Helper()
	if len(out) > MaxBytes {
		t.Errorf("output is %d bytes", len(out))
	}
	lower := bytes.ToLower(out)
	for _, s := range []string{"<script", "javascript:", "foreignobject", "<!", "<?"} {
		if bytes.Contains(lower, []byte(s)) {
			t.Errorf("output holds %q:\n%s", s, out)
		}
	}
	d := xml.NewDecoder(bytes.NewReader(out))
	d.Strict = true
	roots := 0
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("output is not well-formed XML: %v\n%s", err, out)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if tok.Name.Space != svgNS || tok.Name.Local != "svg" {
					t.Errorf("root is %v", tok.Name)
				}
			}
			depth++
			seen := map[xml.Name]bool{}
			for _, a := range tok.Attr {
				if seen[a.Name] {
					t.Errorf("duplicate attribute %v in %s", a.Name, out)
				}
				seen[a.Name] = true
				if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") {
					t.Errorf("event handler %v in %s", a.Name, out)
				}
				v := strings.ToLower(a.Value)
				for i := 0; ; {
					j := strings.Index(v[i:], "url(")
					if j < 0 {
						break
					}
					i += j + 4
					if rest := strings.TrimLeft(v[i:], ` '"`); !strings.HasPrefix(rest, "#") {
						t.Errorf("attribute %s holds a url() that is not url(#id): %s", a.Name.Local, out)
					}
				}
			}
		case xml.EndElement:
			depth--
		}
	}
	if roots != 1 {
		t.Errorf("%d root elements in %s", roots, out)
	}
	again, err := SanitizeSVG(out)
	if err != nil {
		t.Fatalf("sanitising the output again: %v\n%s", err, out)
	}
	if !bytes.Equal(again, out) {
		t.Errorf("not idempotent:\nonce:  %s\ntwice: %s", out, again)
	}
}
