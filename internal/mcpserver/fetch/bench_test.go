package fetch

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// benchPage generates an HTML page of about size bytes, shaped like an
// article: headings, paragraphs with inline markup and links, lists, a
// table, and the scripts and styles a real page carries.
func benchPage(size int) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Bench</title><style>body{font:16px sans-serif}</style>` +
		`<script>window.analytics = {track: function(){}};</script></head><body><nav><a href="/">Home</a></nav><main>`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `<h2 id="s%d">Section %d</h2>`, i, i)
		fmt.Fprintf(&b, `<p>Paragraph %d has <strong>bold</strong>, <em>emphasis</em>, <code>code</code> and `+
			`<a href="/page/%d?x=1&amp;y=2">a relative link</a>. Café, naïve, 中文 and emoji 😀 keep it honest; `+
			`so do characters that need escaping in Markdown: *stars*, _underscores_, [brackets] and #hashes.</p>`, i, i)
		b.WriteString(`<ul><li>first item</li><li>second <a href="https://example.com/">item</a></li><li>third</li></ul>`)
		if i%5 == 0 {
			b.WriteString(`<table><tr><th>name</th><th>value</th></tr><tr><td>alpha</td><td>1</td></tr><tr><td>beta</td><td>2</td></tr></table>`)
			b.WriteString(`<script>console.log("tracking", 12345);</script><noscript><img src="/pixel.gif"></noscript>`)
		}
		if i%7 == 0 {
			b.WriteString(`<blockquote><p>A quoted passage with a <a href="#s0">fragment link</a>.</p></blockquote><pre><code>func main() {}` + "\n" + `</code></pre>`)
		}
	}
	b.WriteString(`</main><footer>footer</footer></body></html>`)
	return b.String()
}

// BenchmarkHTMLToMarkdown measures the whole conversion a fetch does on a
// 2 MB page: parse, suppress, convert. Its MB/s is the conversion speed.
func BenchmarkHTMLToMarkdown(b *testing.B) {
	page := benchPage(2 << 20)
	s := newServer(Options{})
	base, _ := url.Parse("https://example.com/articles/bench")
	if md := s.markdown(page, base); !strings.Contains(md, "## Section 1") || strings.Contains(md, "tracking") {
		b.Fatalf("unexpected conversion: %q", md[:200])
	}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s.markdown(page, base)
	}
}
