package fetch

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSuppressedContent hides a distinctive string in every element whose
// content must not reach the model, in plain, nested and malformed forms,
// and checks that none of them survives conversion, through the tool and
// the prompt, while the visible text around them does.
func TestSuppressedContent(t *testing.T) {
	cases := []struct {
		name string
		html string
	}{
		{"script", `<p>VISIBLE</p><script>var LEAK_SCRIPT = 1;</script>`},
		{"script with type", `<p>VISIBLE</p><script type="text/template"><p>LEAK_SCRIPT_TEMPLATE</p></script>`},
		{"upper-case script", `<p>VISIBLE</p><SCRIPT>LEAK_UPPER</SCRIPT>`},
		{"style", `<style>.x::after{content:"LEAK_STYLE"}</style><p>VISIBLE</p>`},
		{"style in body", `<p>VISIBLE</p><div><style>LEAK_BODY_STYLE{}</style></div>`},
		{"noscript", `<p>VISIBLE</p><noscript><p>LEAK_NOSCRIPT</p><img src="x" alt="LEAK_NOSCRIPT_ALT"></noscript>`},
		{"noscript in head", `<html><head><noscript><style>LEAK_HEAD_NOSCRIPT</style></noscript></head><body><p>VISIBLE</p></body></html>`},
		{"template", `<p>VISIBLE</p><template><p>LEAK_TEMPLATE</p></template>`},
		{"nested template", `<p>VISIBLE</p><template><div><template><p>LEAK_NESTED_TEMPLATE</p></template></div></template>`},
		{"script in template", `<p>VISIBLE</p><template><script>LEAK_TEMPLATE_SCRIPT</script></template>`},
		{"template in a table", `<table><tr><td>VISIBLE</td></tr><template><tr><td>LEAK_TABLE_TEMPLATE</td></tr></template></table>`},
		{"script in noscript", `<p>VISIBLE</p><noscript><script>LEAK_NOSCRIPT_SCRIPT</script></noscript>`},
		{"svg style and script", `<p>VISIBLE</p><svg><style>LEAK_SVG_STYLE</style><script>LEAK_SVG_SCRIPT</script></svg>`},
		{"math style", `<p>VISIBLE</p><math><style>LEAK_MATH_STYLE</style></math>`},
		{"unterminated script", `<p>VISIBLE</p><script>LEAK_UNTERMINATED <p>still script</p>`},
		{"unterminated style", `<p>VISIBLE</p><style>LEAK_UNTERMINATED_STYLE`},
		{"unterminated template", `<p>VISIBLE</p><template><p>LEAK_UNTERMINATED_TEMPLATE`},
		{"fake end tag in script", `<p>VISIBLE</p><script>a = "</scr" + "ipt>LEAK_FAKE_END";</script>`},
		{"end tag with spaces", `<p>VISIBLE</p><script>LEAK_SPACED_END</script   ><p>AFTER</p>`},
		{"comment inside script", `<p>VISIBLE</p><script><!-- LEAK_SCRIPT_COMMENT <script></script> --></script>`},
		{"stray end tags", `</script></style><p>VISIBLE</p></template></noscript>`},
		{"script in attribute-less div soup", `<div><p>VISIBLE<script>LEAK_IN_P</script></div></p>`},
		{"html comment", `<p>VISIBLE</p><!-- LEAK_COMMENT -->`},
		{"noembed and noframes", `<p>VISIBLE</p><noembed>LEAK_NOEMBED</noembed><noframes>LEAK_NOFRAMES</noframes>`},
		{"iframe and textarea", `<p>VISIBLE</p><iframe>LEAK_IFRAME</iframe><textarea>LEAK_TEXTAREA</textarea>`},
		{"title", `<html><head><title>LEAK_TITLE</title></head><body><p>VISIBLE</p></body></html>`},
		{"title in the body", `<p>VISIBLE</p><title>LEAK_BODY_TITLE</title>`},
	}
	s := newServer(Options{})
	base, _ := url.Parse("http://example.test/")
	for _, c := range cases {
		md := s.markdown(c.html, base)
		if !strings.Contains(md, "VISIBLE") {
			t.Errorf("%s: visible text lost: %q", c.name, md)
		}
		if strings.Contains(md, "LEAK") {
			t.Errorf("%s: hidden content leaked: %q", c.name, md)
		}
	}
	if md := s.markdown(`<p>VISIBLE</p><script>LEAK</script   ><p>AFTER</p>`, base); !strings.Contains(md, "AFTER") {
		t.Errorf("text after a closed script lost: %q", md)
	}

	// The same page through the tool and the prompt.
	var all strings.Builder
	for _, c := range cases {
		all.WriteString("<div>" + c.html + "</div>")
	}
	web := pages(t, map[string]pageSpec{"/": {contentType: "text/html", body: "<html><body>" + all.String() + "</body></html>"}})
	cs := start(t, Options{})
	text, isError := call(t, cs, web.URL+"/")
	if isError || !strings.Contains(text, "VISIBLE") || strings.Contains(text, "LEAK") {
		t.Errorf("tool: isError=%v %q", isError, text)
	}
	res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "fetch", Arguments: map[string]string{"url": web.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Messages[0].Content.(*mcp.TextContent).Text; !strings.Contains(text, "VISIBLE") || strings.Contains(text, "LEAK") {
		t.Errorf("prompt: %q", text)
	}
}

func TestDeeplyNestedPage(t *testing.T) {
	s := newServer(Options{})
	base, _ := url.Parse("http://example.test/")
	md := s.markdown(strings.Repeat("<div>", 600)+"deep"+strings.Repeat("</div>", 600), base)
	if !strings.HasPrefix(md, "<error>Page failed to be simplified from HTML") || !strings.Contains(md, "raw") {
		t.Errorf("a page nested 600 deep: %q", md)
	}
}

func TestCharsets(t *testing.T) {
	cases := []struct {
		name        string
		contentType string
		body        string
		want        string
	}{
		{"latin-1 by Content-Type", "text/html; charset=ISO-8859-1", "caf\xe9 na\xefve \xa9", "café naïve ©"},
		{"latin1 label", "text/plain; charset=latin1", "\xc0 la carte", "À la carte"},
		{"quoted charset", `text/plain; charset="iso-8859-1"`, "\xe9t\xe9", "été"},
		{"windows-1252 quotes", "text/plain; charset=windows-1252", "\x93quoted\x94 \x80 \x85", "“quoted” € …"},
		{"meta charset", "text/html", `<meta charset="windows-1252"><p>caf` + "\xe9</p>", `<meta charset="windows-1252"><p>café</p>`},
		{"meta http-equiv", "text/html", `<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"><p>` + "\xfc</p>", `<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"><p>ü</p>`},
		{"Content-Type beats meta", "text/html; charset=utf-8", `<meta charset="iso-8859-1">café`, `<meta charset="iso-8859-1">café`},
		{"meta utf-8 page", "text/html", `<meta charset=utf-8>café`, `<meta charset=utf-8>café`},
		{"meta utf-16 means utf-8", "text/html", `<meta charset="utf-16">café`, `<meta charset="utf-16">café`},
		{"undeclared utf-8", "text/plain", "naïve 中文", "naïve 中文"},
		{"undeclared latin-1 guessed windows-1252", "text/plain", "na\xefve", "naïve"},
		{"utf-8 BOM dropped", "text/plain; charset=iso-8859-1", "\xef\xbb\xbfcafé", "café"},
		{"utf-16le BOM", "text/plain", "\xff\xfec\x00a\x00f\x00\xe9\x00", "café"},
		{"utf-16be BOM", "text/plain", "\xfe\xff\x00c\x00a\x00f\x00\xe9", "café"},
		{"invalid utf-8 replaced", "text/plain; charset=utf-8", "a\xffb", "a\uFFFDb"},
		{"unknown label falls through to meta", "text/html; charset=x-unknown", `<meta charset="latin1">` + "\xe9", `<meta charset="latin1">é`},
		{"shift_jis", "text/plain; charset=shift_jis", "\x93\xfa\x96\x7b", "日本"},
		{"gbk", "text/plain; charset=gbk", "\xd6\xd0\xce\xc4", "中文"},
		{"iso-8859-2", "text/plain; charset=iso-8859-2", "\xb1", "ą"},
	}
	for _, c := range cases {
		got := decode([]byte(c.body), c.contentType)
		if got != c.want || !utf8.ValidString(got) {
			t.Errorf("%s: %s", c.name, cmp.Diff(c.want, got))
		}
	}

	// End to end: a latin-1 page and a meta-charset page through the tool.
	web := pages(t, map[string]pageSpec{
		"/latin1": {contentType: "text/html; charset=iso-8859-1", body: "<html><body><p>Cr\xe8me br\xfbl\xe9e \xe0 la fran\xe7aise</p></body></html>"},
		"/meta":   {contentType: "text/html", body: `<html><head><meta charset="windows-1252"></head><body><p>` + "\x93Gr\xfc\xdfe\x94 \x80</p></body></html>"},
	})
	cs := start(t, Options{})
	runFetch(t, cs, []fetchCall{
		{name: "latin-1 page", args: map[string]any{"url": web.URL + "/latin1"}, want: "Contents of " + web.URL + "/latin1:\nCrème brûlée à la française"},
		{name: "meta-charset page", args: map[string]any{"url": web.URL + "/meta"}, want: "Contents of " + web.URL + "/meta:\n“Grüße” €"},
	})
}

// TestConcurrentConversions runs conversions side by side on the server's
// one converter (run it with -race).
func TestConcurrentConversions(t *testing.T) {
	s := newServer(Options{})
	base, _ := url.Parse("http://example.test/a/")
	page := `<h1>T</h1><p>x <a href="b">link</a></p><script>LEAK</script><ul><li>i</li></ul>`
	want := s.markdown(page, base)
	done := make(chan string)
	for range 4 {
		go func() {
			var got string
			for range 20 {
				got = s.markdown(page, base)
			}
			done <- got
		}()
	}
	for range 4 {
		if got := <-done; got != want {
			t.Errorf("concurrent conversion: %q, want %q", got, want)
		}
	}
}
