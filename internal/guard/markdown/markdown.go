// Package markdown is the one place that turns Markdown written by a model
// into HTML for a page. It renders with goldmark (CommonMark, plus GFM's
// tables, strikethrough and bare links) and then sanitizes the HTML with a
// bluemonday policy of its own, so that what reaches a page holds:
//
//   - no markup the text wrote: raw HTML in the Markdown is shown as text,
//     never interpreted;
//   - no script, event handler, style, form or frame: only the elements and
//     attributes of basic text (paragraphs, headings, lists, quotes, code,
//     emphasis, tables, links);
//   - no resource loaded from anywhere: an image becomes a link to it, named
//     "image: " and its alt text, so nothing is fetched unless a person
//     follows it;
//   - links only to http, https and mailto URLs (javascript:, data:,
//     relative and unparseable ones are dropped, their text kept), each with
//     rel="nofollow noreferrer noopener" and target="_blank", and followed
//     by its URL in parentheses when its text is not the URL, so a person
//     sees where a link goes before following it.
//
// [Render] returns the result as a tree of [Node]s: [HTML] writes it for a
// template, and it goes to a browser's script as JSON, which builds the
// elements as they are without parsing a string as HTML.
package markdown

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Bounds of what is rendered, so that no text costs more than a fraction
// of a second: longer or deeper Markdown is shown as text.
const (
	MaxSource = 64 << 10 // bytes of Markdown
	MaxDepth  = 32       // brackets nested in one another; twice as many elements
	// MaxPrefix bounds the run of spaces, quote and list markers that
	// starts a line (each can open a container).
	MaxPrefix = 2 * MaxDepth
	// MaxDelimiters bounds the emphasis delimiters of a paragraph.
	MaxDelimiters = 1024
)

// ErrTooLarge is Render's error for Markdown over MaxSource bytes or that
// nests deeper than the bounds.
var ErrTooLarge = errors.New("markdown too large to render")

// A Node is rendered Markdown: an element (Tag, its attributes and
// children) or, with no Tag, a text.
type Node struct {
	Tag      string            `json:"tag,omitempty"`
	Attrs    map[string]string `json:"attrs,omitempty"`
	Children []Node            `json:"children,omitempty"`
	Text     string            `json:"text,omitempty"`
}

// Render renders src, Markdown from a model, as the package doc says.
// Each text of the result passes through show (nil: as it is); the
// workspace uses it to show hidden characters escaped.
func Render(src string, show func(string) string) ([]Node, error) {
	if len(src) > MaxSource {
		return nil, fmt.Errorf("%w: %d bytes, over %d", ErrTooLarge, len(src), MaxSource)
	}
	if err := checkCost(src); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := converter().Convert([]byte(strings.ToValidUTF8(src, "\uFFFD")), &buf); err != nil {
		return nil, fmt.Errorf("render markdown: %w", err)
	}
	safe := policy().SanitizeReader(&buf)
	parsed, err := html.ParseFragment(safe, &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		return nil, fmt.Errorf("read the sanitized html: %w", err)
	}
	if show == nil {
		show = func(s string) string { return s }
	}
	root := &html.Node{Type: html.ElementNode}
	for _, n := range parsed {
		root.AppendChild(n)
	}
	doc, _, err := convert(root, 0, show)
	return doc.Children, err
}

// checkCost refuses src that would cost goldmark more than a fraction of
// a second, whose time grows with the square of some nestings: lines that
// start with over MaxPrefix bytes of spaces and container markers,
// brackets nested over MaxDepth deep, or a paragraph (lines between blank
// ones) with over MaxDelimiters emphasis delimiters.
func checkCost(src string) error {
	depth, delims := 0, 0
	for line := range strings.Lines(src) {
		if strings.TrimSpace(line) == "" {
			depth, delims = 0, 0 // neither links nor emphasis span paragraphs
		}
		if prefix := len(line) - len(strings.TrimLeft(line, " \t>-+*.)0123456789")); prefix > MaxPrefix {
			return fmt.Errorf("%w: a line starts with %d bytes of spaces and markers, over %d", ErrTooLarge, prefix, MaxPrefix)
		}
		for i := 0; i < len(line); i++ {
			switch line[i] {
			case '\\':
				i++
			case '[', '(':
				if depth++; depth > MaxDepth {
					return fmt.Errorf("%w: brackets nested over %d deep", ErrTooLarge, MaxDepth)
				}
			case ']', ')':
				depth = max(depth-1, 0)
			case '*', '_', '~':
				if delims++; delims > MaxDelimiters {
					return fmt.Errorf("%w: a paragraph with over %d of *, _ and ~", ErrTooLarge, MaxDelimiters)
				}
			}
		}
	}
	return nil
}

// convert is n as a Node, its links followed by their URLs; ok is false
// for what is neither an element nor a text.
func convert(n *html.Node, depth int, show func(string) string) (Node, bool, error) {
	switch n.Type {
	case html.TextNode:
		// Line breaks between blocks show nothing.
		keep := n.Data != "" && (strings.TrimSpace(n.Data) != "" || !blocks[n.Parent.Data])
		return Node{Text: show(n.Data)}, keep, nil
	case html.ElementNode:
	default:
		return Node{}, false, nil
	}
	if depth > 2*MaxDepth {
		return Node{}, false, fmt.Errorf("%w: elements nested over %d deep", ErrTooLarge, 2*MaxDepth)
	}
	out := Node{Tag: n.Data}
	for _, a := range n.Attr {
		if out.Attrs == nil {
			out.Attrs = map[string]string{}
		}
		out.Attrs[a.Key] = a.Val
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		child, ok, err := convert(c, depth+1, show)
		if err != nil {
			return Node{}, false, err
		}
		if ok {
			out.Children = append(out.Children, child)
		}
		if c.Type == html.ElementNode && c.Data == "a" {
			if href := attr(c, "href"); href != "" && !named(textOf(c), href) {
				out.Children = append(out.Children, Node{Text: show(" (" + href + ")")})
			}
		}
	}
	return out, true, nil
}

// blocks are the elements (and the root, "") whose texts are only the
// line breaks between their children.
var blocks = map[string]bool{"": true, "ul": true, "ol": true, "blockquote": true, "table": true, "thead": true, "tbody": true, "tr": true}

// named reports whether a link's text is its URL, with or without the
// scheme.
func named(text, href string) bool {
	text = strings.TrimSpace(text)
	if text == href {
		return true
	}
	for _, scheme := range []string{"https://", "http://", "mailto:"} {
		if rest, ok := strings.CutPrefix(href, scheme); ok && text == rest {
			return true
		}
	}
	return false
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

// voids are the elements the policy allows that have no end tag.
var voids = map[string]bool{"br": true, "hr": true}

// HTML writes nodes as HTML, every text and attribute value escaped.
func HTML(nodes []Node) template.HTML {
	var b strings.Builder
	write(&b, nodes)
	return template.HTML(b.String())
}

func write(b *strings.Builder, nodes []Node) {
	for _, n := range nodes {
		if n.Tag == "" {
			b.WriteString(html.EscapeString(n.Text))
			continue
		}
		b.WriteString("<" + n.Tag)
		for _, k := range slices.Sorted(maps.Keys(n.Attrs)) {
			b.WriteString(" " + k + `="` + html.EscapeString(n.Attrs[k]) + `"`)
		}
		b.WriteString(">")
		if voids[n.Tag] {
			continue
		}
		write(b, n.Children)
		b.WriteString("</" + n.Tag + ">")
	}
}

// converter is the goldmark setup: raw HTML shown as text, images made
// links; no attributes, heading ids or footnotes.
var converter = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(imagesAsLinks{}, 100))),
		goldmark.WithRendererOptions(
			renderer.WithNodeRenderers(util.Prioritized(rawAsText{}, 100)),
			extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute),
		),
	)
})

// imagesAsLinks replaces each image with a link to it, named "image: "
// and the image's alt text; an image inside a link becomes that name alone.
type imagesAsLinks struct{}

func (imagesAsLinks) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	var images []*ast.Image
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if img, ok := n.(*ast.Image); ok && entering {
			images = append(images, img)
		}
		return ast.WalkContinue, nil
	})
	for _, img := range images {
		var into ast.Node = img.Parent()
		if !inLink(img) {
			link := ast.NewLink()
			link.Destination, link.Title = img.Destination, img.Title
			img.Parent().InsertBefore(img.Parent(), img, link)
			into = link
		}
		at := func(n ast.Node) {
			if into == img.Parent() {
				into.InsertBefore(into, img, n)
			} else {
				into.AppendChild(into, n)
			}
		}
		at(ast.NewString([]byte("image: ")))
		for c := img.FirstChild(); c != nil; {
			next := c.NextSibling()
			at(c)
			c = next
		}
		img.Parent().RemoveChild(img.Parent(), img)
	}
}

func inLink(n ast.Node) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Kind() == ast.KindLink || p.Kind() == ast.KindAutoLink {
			return true
		}
	}
	return false
}

// rawAsText renders raw HTML as the text it is: inline, escaped in place;
// a block, escaped in a code block.
type rawAsText struct{}

func (rawAsText) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			segs := n.(*ast.RawHTML).Segments
			for i := range segs.Len() {
				seg := segs.At(i)
				w.WriteString(html.EscapeString(string(seg.Value(src))))
			}
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(ast.KindHTMLBlock, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		b := n.(*ast.HTMLBlock)
		if entering {
			w.WriteString("<pre><code>")
			lines := b.Lines()
			for i := range lines.Len() {
				line := lines.At(i)
				w.WriteString(html.EscapeString(string(line.Value(src))))
			}
			return ast.WalkContinue, nil
		}
		if b.HasClosure() {
			w.WriteString(html.EscapeString(string(b.ClosureLine.Value(src))))
		}
		w.WriteString("</code></pre>\n")
		return ast.WalkContinue, nil
	})
}

// allowed are the elements the policy allows.
var allowed = []string{"p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "ul", "ol", "li", "pre", "code",
	"em", "strong", "del", "a", "table", "thead", "tbody", "tr", "th", "td"}

// policy is the sanitizer: the elements and attributes above, links as
// the package doc says.
var policy = sync.OnceValue(func() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements(allowed...)
	p.AllowAttrs("start").Matching(regexp.MustCompile(`^[0-9]{1,9}$`)).OnElements("ol")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|center|right)$`)).OnElements("th", "td")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[A-Za-z0-9_+#.-]{1,40}$`)).OnElements("code")
	p.AllowAttrs("href", "title").OnElements("a")
	p.AllowURLSchemes("http", "https", "mailto")
	p.RequireParseableURLs(true)
	p.AllowRelativeURLs(false)
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return p
})
