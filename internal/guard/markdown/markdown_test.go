package markdown

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
)

// TestRender: Markdown becomes the HTML of basic text; raw HTML is shown
// as text; images become links; links keep only http, https and mailto
// URLs, are marked, open apart, and show their URL.
func TestRender(t *testing.T) {
	const rel = ` rel="nofollow noreferrer noopener" target="_blank"`
	for _, tc := range []struct{ name, in, want string }{
		{"emphasis", "**bold**, *em*, `code` and ~~gone~~",
			"<p><strong>bold</strong>, <em>em</em>, <code>code</code> and <del>gone</del></p>"},
		{"lists", "- one\n- two\n\n3. three", "<ul><li>one</li><li>two</li></ul><ol start=\"3\"><li>three</li></ol>"},
		{"code block", "```go\nx := \"<b>\"\n```", "<pre><code class=\"language-go\">x := &#34;&lt;b&gt;&#34;\n</code></pre>"},
		{"quote and heading", "> quoted\n\n# Head", "<blockquote><p>quoted</p></blockquote><h1>Head</h1>"},
		{"table", "| a | b |\n|:--|--:|\n| 1 | 2 |", "<table><thead><tr><th align=\"left\">a</th><th align=\"right\">b</th></tr></thead>" +
			"<tbody><tr><td align=\"left\">1</td><td align=\"right\">2</td></tr></tbody></table>"},
		{"script block", `<script>document.title="pwned"</script>`, "<pre><code>&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;</code></pre>"},
		{"inline img", "a <img src=x onerror=alert(1)> b", "<p>a &lt;img src=x onerror=alert(1)&gt; b</p>"},
		{"iframe", "<iframe src=\"http://127.0.0.1:9/\">\n", "<pre><code>&lt;iframe src=&#34;http://127.0.0.1:9/&#34;&gt;\n</code></pre>"},
		{"style", "<style>body{background:url(http://127.0.0.1:9/)}</style>", "<pre><code>&lt;style&gt;body{background:url(http://127.0.0.1:9/)}&lt;/style&gt;</code></pre>"},
		{"comment", "<!-- hidden -->", "<pre><code>&lt;!-- hidden --&gt;</code></pre>"},
		{"raw link", `<a href="http://x">raw</a>`, "<p>&lt;a href=&#34;http://x&#34;&gt;raw&lt;/a&gt;</p>"},
		{"entities stay text", "&lt;script&gt; x<br>y", "<p>&lt;script&gt; x&lt;br&gt;y</p>"},
		{"image", "![a cat](http://127.0.0.1:9/cat.png)", `<p><a href="http://127.0.0.1:9/cat.png"` + rel + ">image: a cat</a> (http://127.0.0.1:9/cat.png)</p>"},
		{"data image", "![x](data:image/png;base64,AAAA)", "<p>image: x</p>"},
		{"image in a link", "[![img](http://i/x.png)](http://l/)", `<p><a href="http://l/"` + rel + ">image: img</a> (http://l/)</p>"},
		{"javascript", "[click](javascript:alert(1))", "<p>click</p>"},
		{"javascript upper", "[click](JAVASCRIPT:alert(1))", "<p>click</p>"},
		{"javascript tab", "[c](java&#09;script:alert(1))", "<p>c</p>"},
		{"javascript autolink", "<javascript:alert(1)>", "<p>javascript:alert(1)</p>"},
		{"data link", "[x](data:text/html,<script>alert(1)</script>)", "<p>x</p>"},
		{"relative", "[x](/api/threads) [y](#top)", "<p>x y</p>"},
		{"link", `[docs](https://example.com/a "T")`, `<p><a href="https://example.com/a"` + rel + ` title="T">docs</a> (https://example.com/a)</p>`},
		{"title quotes", `[x](http://127.0.0.1:9/ "a\" onmouseover=\"alert(1)")`,
			`<p><a href="http://127.0.0.1:9/"` + rel + ` title="a&#34; onmouseover=&#34;alert(1)">x</a> (http://127.0.0.1:9/)</p>`},
		{"bare URL", "see https://example.org/x", `<p>see <a href="https://example.org/x"` + rel + ">https://example.org/x</a></p>"},
		{"mailto", "[m](mailto:a@b.c)", `<p><a href="mailto:a@b.c" rel="nofollow noreferrer">m</a> (mailto:a@b.c)</p>`},
		{"definition only", "[x]: http://a", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes, err := Render(tc.in, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(HTML(nodes))); diff != "" {
				t.Errorf("Render(%q) (-want +got):\n%s", tc.in, diff)
			}
			checkSafe(t, tc.in, nodes)
		})
	}
}

// TestRenderShowsText: every text, the URLs shown after links included,
// passes through show; markup is never made from what show returns.
func TestRenderShowsText(t *testing.T) {
	nodes, err := Render("a\u202eb [x](http://h/\u202e)", func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, "\u202e", `\u202e`), "a", "<a>")
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(HTML(nodes)), `<p>&lt;a&gt;\u202eb <a href="http://h/%E2%80%AE" rel="nofollow noreferrer noopener" target="_blank">x</a> (http://h/%E2%80%AE)</p>`; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestRenderBounds: Markdown over its bounds is not rendered, and says why.
func TestRenderBounds(t *testing.T) {
	for _, tc := range []struct{ name, in, why string }{
		{"long", strings.Repeat("a", MaxSource+1), "bytes, over"},
		{"quotes", strings.Repeat(">", MaxPrefix+1) + " a", "spaces and markers"},
		{"lists", strings.Repeat("- ", MaxPrefix/2+1) + "a", "spaces and markers"},
		{"brackets", strings.Repeat("[", MaxDepth+1) + "a", "brackets nested"},
		{"delimiters", strings.Repeat("*a_ ", MaxDelimiters/2+1), "*, _ and ~"},
		{"elements", strings.Repeat("*a ", 2*MaxDepth) + "b" + strings.Repeat(" a*", 2*MaxDepth), "elements nested"},
	} {
		if _, err := Render(tc.in, nil); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s: %v, want ErrTooLarge saying %q", tc.name, err, tc.why)
		}
	}
	// Within the bounds, each is rendered: a paragraph's count starts again
	// after a blank line.
	within := strings.Repeat(strings.Repeat("*a_ ", MaxDelimiters/4)+"\n\n"+strings.Repeat("[", MaxDepth)+"\n\n", 4)
	if _, err := Render(within, nil); err != nil {
		t.Errorf("within the bounds: %v", err)
	}
}

// FuzzRender: whatever the text, the HTML holds only the allowed elements
// and attributes, no script, event handler, style or source of any kind,
// and links only to http, https and mailto URLs.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"**a** _b_ `c`", "<script>alert(1)</script>", "<img src=http://127.0.0.1:9/x onerror=alert(1)>",
		"![a](http://127.0.0.1:9/x.png)", "[a](javascript:alert(1))", "<javascript:alert(1)>", "[a](data:text/html,x)",
		"<a href=\"javascript:x\" onclick=\"y\">z</a>", "<svg onload=alert(1)>", "<style>*{background:url(//x)}</style>",
		"[a](http://x \"t\" onmouseover=\"y\")", "| a |\n|---|\n| <b>x</b> |", "```\n<script>\n```", "www.example.com",
		"<!--", "<p style=\"background:url(http://x)\">", "[x]: javascript:alert(1)\n\n[y][x]", "&#106;avascript:alert(1)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		nodes, err := Render(in, nil)
		if err != nil {
			if !errors.Is(err, ErrTooLarge) && !strings.Contains(err.Error(), "open stack of elements") {
				t.Fatalf("Render(%q): %v", in, err)
			}
			return
		}
		checkSafe(t, in, nodes)
	})
}

// allowedAttrs are the attributes each element may have.
var allowedAttrs = map[string]map[string]bool{
	"a": {"href": true, "title": true, "rel": true, "target": true}, "ol": {"start": true},
	"th": {"align": true}, "td": {"align": true}, "code": {"class": true},
}

// checkSafe checks the nodes, and the HTML they make as a browser would
// parse it, against the policy.
func checkSafe(t *testing.T, in string, nodes []Node) {
	t.Helper()
	elements := map[string]bool{}
	for _, e := range allowed {
		elements[e] = true
	}
	check := func(tag string, attrs map[string]string) {
		if !elements[tag] {
			t.Fatalf("Render(%q) made a <%s>", in, tag)
		}
		for k, v := range attrs {
			if !allowedAttrs[tag][k] {
				t.Fatalf("Render(%q) made <%s %s=%q>", in, tag, k, v)
			}
		}
		if href, ok := attrs["href"]; ok {
			u, err := url.Parse(href)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "mailto") {
				t.Fatalf("Render(%q) made a link to %q", in, href)
			}
		}
	}
	var walk func([]Node)
	walk = func(ns []Node) {
		for _, n := range ns {
			if n.Tag != "" {
				check(n.Tag, n.Attrs)
				walk(n.Children)
			}
		}
	}
	walk(nodes)
	// JSON keeps what the nodes say.
	data, _ := json.Marshal(nodes)
	var back []Node
	if err := json.Unmarshal(data, &back); err != nil || !cmp.Equal(nodes, back) {
		t.Fatalf("Render(%q): the nodes do not survive JSON: %v", in, err)
	}
	out := string(HTML(nodes))
	parsed, err := html.Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	for n := range parsed.Descendants() {
		switch n.Type {
		case html.ElementNode:
			if n.Data == "html" || n.Data == "head" || n.Data == "body" {
				continue
			}
			attrs := map[string]string{}
			for _, a := range n.Attr {
				attrs[a.Key] = a.Val
			}
			check(n.Data, attrs)
		case html.CommentNode, html.DoctypeNode:
			t.Fatalf("Render(%q) made a comment or doctype: %q", in, out)
		}
	}
}
