package logo

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

const (
	svgNS   = "http://www.w3.org/2000/svg"
	xlinkNS = "http://www.w3.org/1999/xlink"
)

// elements lists the SVG elements kept. Every other element is dropped with
// everything inside it: script, style, foreignObject, image, feImage,
// animate, set and the other animation elements among them.
var elements = set(
	"svg", "g", "defs", "symbol", "use", "switch", "a", "title", "desc",
	"path", "rect", "circle", "ellipse", "line", "polyline", "polygon",
	"text", "tspan", "textPath",
	"linearGradient", "radialGradient", "stop", "pattern", "clipPath", "mask", "marker",
	"filter", "feBlend", "feColorMatrix", "feComponentTransfer", "feComposite",
	"feConvolveMatrix", "feDiffuseLighting", "feDisplacementMap", "feDistantLight",
	"feDropShadow", "feFlood", "feFuncA", "feFuncB", "feFuncG", "feFuncR",
	"feGaussianBlur", "feMerge", "feMergeNode", "feMorphology", "feOffset",
	"fePointLight", "feSpecularLighting", "feSpotLight", "feTile", "feTurbulence",
)

// textElements lists the elements whose character data is kept. Elsewhere
// only white space is.
var textElements = set("title", "desc", "text", "tspan", "textPath", "a")

// properties lists the presentation properties kept, as attributes and
// inside a style attribute.
var properties = set(
	"fill", "fill-opacity", "fill-rule", "stroke", "stroke-width", "stroke-linecap",
	"stroke-linejoin", "stroke-miterlimit", "stroke-dasharray", "stroke-dashoffset",
	"stroke-opacity", "opacity", "color", "display", "visibility", "overflow",
	"clip-path", "clip-rule", "mask", "filter", "marker-start", "marker-mid", "marker-end",
	"stop-color", "stop-opacity", "flood-color", "flood-opacity", "lighting-color",
	"font-family", "font-size", "font-style", "font-weight", "font-variant", "font-stretch",
	"text-anchor", "dominant-baseline", "alignment-baseline", "baseline-shift",
	"letter-spacing", "word-spacing", "text-decoration", "writing-mode",
	"transform", "transform-origin", "transform-box", "vector-effect", "paint-order",
	"shape-rendering", "text-rendering", "image-rendering", "color-interpolation",
	"color-interpolation-filters", "mix-blend-mode", "isolation",
)

// attributes lists the attributes kept (without a namespace): the
// properties, geometry and filter parameters. Values are checked by
// safeValue; href and style get their own rules. No event handler (on...)
// is on the list.
var attributes = union(properties, set(
	"id", "class", "style", "href", "version", "viewBox", "preserveAspectRatio",
	"x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "fx", "fy", "fr",
	"width", "height", "d", "points", "pathLength", "dx", "dy", "rotate",
	"textLength", "lengthAdjust", "startOffset", "method", "spacing", "side",
	"offset", "gradientUnits", "gradientTransform", "spreadMethod",
	"patternUnits", "patternContentUnits", "patternTransform",
	"clipPathUnits", "maskUnits", "maskContentUnits",
	"markerUnits", "markerWidth", "markerHeight", "refX", "refY", "orient",
	"filterUnits", "primitiveUnits", "in", "in2", "result", "stdDeviation", "mode",
	"operator", "k1", "k2", "k3", "k4", "type", "values", "tableValues", "slope",
	"intercept", "amplitude", "exponent", "radius", "baseFrequency", "numOctaves",
	"seed", "stitchTiles", "scale", "xChannelSelector", "yChannelSelector", "order",
	"kernelMatrix", "kernelUnitLength", "divisor", "bias", "targetX", "targetY",
	"edgeMode", "preserveAlpha", "surfaceScale", "diffuseConstant",
	"specularConstant", "specularExponent", "azimuth", "elevation", "z",
	"pointsAtX", "pointsAtY", "pointsAtZ", "limitingConeAngle",
))

// functions lists the CSS and transform functions an attribute value may
// call. url is further limited to url(#id).
var functions = set(
	"url", "rgb", "rgba", "hsl", "hsla", "hwb", "lab", "lch", "oklab", "oklch",
	"calc", "min", "max", "clamp",
	"matrix", "translate", "translatex", "translatey", "scale", "scalex", "scaley",
	"rotate", "skewx", "skewy",
	"blur", "brightness", "contrast", "drop-shadow", "grayscale", "hue-rotate",
	"invert", "opacity", "saturate", "sepia",
	"inset", "circle", "ellipse", "polygon",
)

// forbiddenText are refused in character data, compared without case.
var forbiddenText = []string{"javascript:", "vbscript:", "foreignobject"}

// forbidden are refused in an attribute value, compared without case or
// white space.
var forbidden = append([]string{"data:", "/*", "@import"}, forbiddenText...)

// SanitizeSVG parses data as XML and writes back only what the allow-lists
// above keep, so that the result references nothing outside itself and can
// run nothing. It drops comments, processing instructions, every element
// outside the SVG namespace or the list (with its content), every attribute
// with a namespace (xlink:href is read as href) or off the list, every href
// that is not "#id", and every value holding a url() other than url(#id),
// another function off the list, a backslash (a CSS escape), a character
// outside printable ASCII, or one of the forbidden words. A style attribute
// keeps only listed properties with such values.
//
// It refuses, with [ErrSVG], input that is not well-formed UTF-8 XML, that
// holds <!DOCTYPE or <!ENTITY anywhere, or whose root is not <svg> in the
// SVG namespace, and, with [ErrTooLarge], input or output over MaxBytes.
// The output is well-formed XML, and sanitising it again gives the same
// bytes.
func SanitizeSVG(data []byte) ([]byte, error) {
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("%w: %d bytes, over the %d-byte limit", ErrTooLarge, len(data), MaxBytes)
	}
	lower := bytes.ToLower(data)
	if bytes.Contains(lower, []byte("<!doctype")) || bytes.Contains(lower, []byte("<!entity")) {
		return nil, fmt.Errorf("%w: DOCTYPE and ENTITY declarations are not allowed", ErrSVG)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var s sanitizer
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSVG, err)
		}
		if err := s.token(tok); err != nil {
			return nil, err
		}
	}
	if !s.done {
		return nil, fmt.Errorf("%w: no complete <svg> root element", ErrSVG)
	}
	if s.out.Len() > MaxBytes {
		return nil, fmt.Errorf("%w: sanitised SVG is %d bytes, over the %d-byte limit", ErrTooLarge, s.out.Len(), MaxBytes)
	}
	return s.out.Bytes(), nil
}

// A sanitizer writes the kept part of a token stream.
type sanitizer struct {
	out  bytes.Buffer
	open []string // names of the kept elements now open, outermost first
	skip int      // depth inside a dropped element; 0 outside one
	text []byte   // character data not yet written
	done bool     // the root element has ended
}

func (s *sanitizer) token(tok xml.Token) error {
	switch t := tok.(type) {
	case xml.StartElement:
		switch {
		case s.done:
			return fmt.Errorf("%w: content after the root element", ErrSVG)
		case len(s.open) == 0 && (t.Name.Space != svgNS || t.Name.Local != "svg"):
			return fmt.Errorf("%w: the root element is not <svg> in the SVG namespace", ErrSVG)
		case s.skip > 0:
			s.skip++
		case t.Name.Space != svgNS || !elements[t.Name.Local]:
			s.skip = 1 // text around it stays pending: it will be written joined
		default:
			s.flush()
			s.start(t)
			s.open = append(s.open, t.Name.Local)
		}
	case xml.EndElement:
		if s.skip > 0 {
			s.skip--
			return nil
		}
		s.flush()
		name := s.open[len(s.open)-1]
		s.open = s.open[:len(s.open)-1]
		s.out.WriteString("</" + name + ">")
		s.done = len(s.open) == 0
	case xml.CharData:
		switch {
		case len(s.open) == 0:
			if len(bytes.TrimLeft(t, " \t\r\n")) != 0 {
				return fmt.Errorf("%w: text outside the root element", ErrSVG)
			}
		case s.skip == 0:
			s.text = append(s.text, t...)
		}
	case xml.Directive:
		return fmt.Errorf("%w: <!%s> declarations are not allowed", ErrSVG, firstWord(t))
	}
	// Comments and processing instructions are dropped.
	return nil
}

// flush writes the pending character data: all of it inside a text
// element, unless it holds a forbidden word; elsewhere only if it is white
// space. Text is gathered up to the next kept tag, so that pieces split by a
// comment, a CDATA section or a dropped element are judged together, as
// they are written.
func (s *sanitizer) flush() {
	text := string(s.text)
	s.text = s.text[:0]
	if text == "" {
		return
	}
	if textElements[s.open[len(s.open)-1]] {
		lower := strings.ToLower(text)
		for _, w := range forbiddenText {
			if strings.Contains(lower, w) {
				return
			}
		}
	} else if strings.TrimLeft(text, " \t\r\n") != "" {
		return
	}
	escape(&s.out, text, false)
}

// start writes the start tag of a kept element with its kept attributes,
// declaring the SVG namespace on the root.
func (s *sanitizer) start(t xml.StartElement) {
	s.out.WriteString("<" + t.Name.Local)
	if len(s.open) == 0 {
		s.out.WriteString(` xmlns="` + svgNS + `"`)
	}
	hasHref := false
	for _, a := range t.Attr {
		if a.Name.Space == "" && a.Name.Local == "href" {
			hasHref = true
		}
	}
	seen := map[string]bool{}
	for _, a := range t.Attr {
		var name string
		switch {
		case a.Name.Space == "" && attributes[a.Name.Local]:
			name = a.Name.Local
		case a.Name.Space == xlinkNS && a.Name.Local == "href" && !hasHref:
			name = "href" // href wins over xlink:href, as in SVG 2
		default:
			continue
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		v, ok := cleanAttr(name, a.Value)
		if !ok {
			continue
		}
		s.out.WriteString(" " + name + `="`)
		escape(&s.out, v, true)
		s.out.WriteString(`"`)
	}
	s.out.WriteString(">")
}

// cleanAttr returns the value to write for an attribute, or false to drop it.
func cleanAttr(name, v string) (string, bool) {
	switch name {
	case "href":
		v = strings.Trim(v, " \t\r\n")
		return v, isFragment(v)
	case "style":
		return cleanStyle(v)
	}
	return v, safeValue(v)
}

// isFragment reports whether v is "#id", a reference inside the document.
func isFragment(v string) bool {
	return len(v) > 1 && v[0] == '#' && isID(v[1:])
}

// isID reports whether s is made only of letters, digits, '-', '_' and '.'.
func isID(s string) bool {
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return s != ""
}

// cleanStyle keeps the declarations of a style attribute that set a listed
// property to a safe value, and writes them back as "prop:value;...".
func cleanStyle(v string) (string, bool) {
	var kept []string
	for decl := range strings.SplitSeq(v, ";") {
		prop, val, ok := strings.Cut(decl, ":")
		prop = strings.ToLower(strings.Trim(prop, " \t\r\n"))
		val = strings.Trim(val, " \t\r\n")
		if ok && properties[prop] && val != "" && safeValue(val) {
			kept = append(kept, prop+":"+val)
		}
	}
	style := strings.Join(kept, ";")
	return style, style != "" && safeValue(style)
}

// safeValue reports whether an attribute value may be kept. It is
// conservative: white space is ignored when looking for forbidden words and
// function names, though CSS would not join the pieces.
func safeValue(v string) bool {
	var b strings.Builder
	for _, c := range []byte(v) {
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		case c < 0x20 || c > 0x7e || c == '\\':
			return false
		}
		b.WriteByte(lowerASCII(c))
	}
	n := b.String()
	for _, w := range forbidden {
		if strings.Contains(n, w) {
			return false
		}
	}
	for i := 0; i < len(n); i++ {
		if n[i] != '(' {
			continue
		}
		j := i
		for j > 0 && isNameByte(n[j-1]) {
			j--
		}
		name := n[j:i]
		switch {
		case name == "url":
			end := strings.IndexByte(n[i:], ')')
			if end < 0 || !isLocalURL(n[i+1:i+end]) {
				return false
			}
		case name != "" && !functions[name]:
			return false
		}
	}
	return true
}

// isLocalURL reports whether the argument of url() is #id, quoted or not.
func isLocalURL(arg string) bool {
	if len(arg) >= 2 && (arg[0] == '"' || arg[0] == '\'') && arg[len(arg)-1] == arg[0] {
		arg = arg[1 : len(arg)-1]
	}
	return isFragment(arg)
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// escape writes s as XML character data, or as an attribute value when
// attr is set; there tabs and newlines become character references, so a
// parser's attribute-value normalisation leaves them as they are.
func escape(w *bytes.Buffer, s string, attr bool) {
	for _, r := range s {
		switch {
		case r == '&':
			w.WriteString("&amp;")
		case r == '<':
			w.WriteString("&lt;")
		case r == '>':
			w.WriteString("&gt;")
		case r == '"' && attr:
			w.WriteString("&quot;")
		case r == '\r':
			w.WriteString("&#xD;")
		case r == '\n' && attr:
			w.WriteString("&#xA;")
		case r == '\t' && attr:
			w.WriteString("&#x9;")
		default:
			w.WriteRune(r)
		}
	}
}

// firstWord returns the first word of a directive, for an error, if it is
// a short run of letters, or "...".
func firstWord(b []byte) string {
	w, _, _ := strings.Cut(string(b), " ")
	if len(w) > 20 || !isID(w) {
		return "..."
	}
	return w
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func union(a, b map[string]bool) map[string]bool {
	m := make(map[string]bool, len(a)+len(b))
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}
