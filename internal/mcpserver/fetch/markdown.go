package fetch

import (
	"net/url"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
)

// suppressed lists the elements whose whole content is removed before
// conversion: script, style, noscript and template, as the spec requires,
// and the other elements whose content a browser does not show as text
// (noembed, noframes, iframe and textarea hold raw text; head and title
// hold the page's metadata, and a title misplaced in the body is not shown
// either). They are matched by name in any namespace, so an <svg>
// <style> goes too. Comments go as well.
var suppressed = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true,
	"noembed": true, "noframes": true, "iframe": true, "textarea": true, "head": true, "title": true,
}

// failed is the reference's text for a page that gives no Markdown.
const failed = "<error>Page failed to be simplified from HTML</error>"

func newConverter() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(commonmark.WithListEndComment(false)),
		table.NewTablePlugin(),
		strikethrough.NewStrikethroughPlugin(),
	))
}

// markdown converts an HTML page to Markdown, with relative links made
// absolute against the page's own URL.
func (s *server) markdown(page string, base *url.URL) string {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		// html.Parse refuses elements nested more than 512 deep.
		return "<error>Page failed to be simplified from HTML (" + err.Error() + "); raw set to true returns the page as sent</error>"
	}
	suppress(doc)
	md, err := s.conv.ConvertNode(doc, converter.WithDomain(base.String()))
	if err != nil || len(strings.TrimSpace(string(md))) == 0 {
		return failed
	}
	return string(md)
}

// suppress removes the suppressed elements and every comment from the tree.
// It walks with an explicit stack, so no page can make it recurse deeply.
func suppress(doc *html.Node) {
	stack := []*html.Node{doc}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			if c.Type == html.CommentNode || (c.Type == html.ElementNode && suppressed[strings.ToLower(c.Data)]) {
				n.RemoveChild(c)
			} else {
				stack = append(stack, c)
			}
			c = next
		}
	}
}
