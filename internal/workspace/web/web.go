// Package web holds the workspace's web UI: html/template pages and a
// little CSS and JavaScript, embedded in the binary. It only renders; what
// a caller may see and do is decided by the workspace before a page is
// rendered, and checked again by the same code when a form is posted.
//
// Pages load nothing from other origins: the Content-Security-Policy
// allows scripts, styles and forms from the workspace itself, and images
// from it and from data: URLs (logos are data: URLs the server made).
package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/zero-dev/zero/internal/guard/hiddentext"
)

// CSP is the Content-Security-Policy of every answer: no inline script or
// style, nothing from another origin, no framing.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Static serves the embedded CSS and JavaScript under /static/.
func Static() http.Handler {
	sub, _ := fs.Sub(staticFiles, "static")
	files := http.StripPrefix("/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(rw, r)
	})
}

// Icon serves the workspace's icon, for /favicon.ico: pages declare it
// (layout.html), and answers that are not pages (JSON, a file) get it too
// when a browser asks for the conventional path.
func Icon() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		data, err := staticFiles.ReadFile("static/icon.svg")
		if err != nil {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "image/svg+xml")
		rw.Header().Set("Cache-Control", "no-cache")
		rw.Write(data)
	})
}

// A Page is what every template gets: who is looking, the CSRF token for
// its forms, a notice, and the page's own data.
type Page struct {
	Title  string
	User   string
	Role   string // owner, member or viewer; empty when signed out
	Team   bool
	CSRF   string
	Notice string // a fixed message about what was just done
	Failed bool   // the notice reports a failure
	// Passkeys: the viewer has a passkey, so the page's forms ask the
	// workspace whether each change needs it (static/passkey.js).
	Passkeys bool
	Data     any
}

// Owner reports whether the viewer is the workspace's owner.
func (p Page) Owner() bool { return p.Role == "owner" }

// Writer reports whether the viewer may add drafts and disable servers.
func (p Page) Writer() bool { return p.Role == "owner" || p.Role == "member" }

// Renderer renders the pages.
type Renderer struct {
	pages map[string]*template.Template
}

// New parses the templates: each page with the layout.
func New() (*Renderer, error) {
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	funcs := template.FuncMap{"commandLine": CommandLine, "visible": Visible, "join": strings.Join, "logo": Logo, "when": When}
	r := &Renderer{pages: map[string]*template.Template{}}
	for _, name := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(name, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", name)
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", name, err)
		}
		r.pages[base] = t
	}
	return r, nil
}

// Render writes page name with status. Pages are never cached: they can
// show a token once, and always show the state as it is.
func (r *Renderer) Render(rw http.ResponseWriter, status int, name string, p Page) error {
	t, ok := r.pages[name]
	if !ok {
		return fmt.Errorf("no page %q", name)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, p); err != nil {
		return fmt.Errorf("page %s: %w", name, err)
	}
	h := rw.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	rw.WriteHeader(status)
	_, err := rw.Write(buf.Bytes())
	return err
}

// When shows a stored RFC 3339 time to the minute, in UTC.
func When(stamp string) string {
	t, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return stamp
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// Logo returns a logo for an <img> src: a base64 PNG or SVG data: URL
// (which the server made with package logo) passes; anything else is
// empty, so an image never points elsewhere.
func Logo(dataURL string) template.URL {
	for _, prefix := range []string{"data:image/png;base64,", "data:image/svg+xml;base64,"} {
		if rest, ok := strings.CutPrefix(dataURL, prefix); ok && rest != "" && strings.Trim(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") == "" {
			return template.URL(dataURL)
		}
	}
	return ""
}

// CommandLine writes a command and its arguments as one line a person can
// read and a POSIX shell would split back into the same arguments: plain
// words as they are, others in single quotes, and any argument holding a
// control, invisible or non-UTF-8 character in $'...' with those characters
// escaped, so nothing on the line is hidden.
func CommandLine(command string, args []string) string {
	words := make([]string, 0, 1+len(args))
	for _, w := range append([]string{command}, args...) {
		words = append(words, quote(w))
	}
	return strings.Join(words, " ")
}

func quote(w string) string {
	if w == "" {
		return "''"
	}
	if hiddentext.Unprintable(w) {
		return "$'" + escape(w) + "'"
	}
	plain := true
	for _, c := range w {
		if !(c < utf8.RuneSelf && (c == '-' || c == '_' || c == '.' || c == '/' || c == ':' || c == '=' || c == '@' || c == ',' || c == '+' ||
			'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9')) {
			plain = false
			break
		}
	}
	if plain {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// escape writes s for $'...': backslash and quote escaped, hidden
// characters as \xHH, \uHHHH or \UHHHHHHHH.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == ' ' || unicode.IsPrint(c):
			b.WriteRune(c)
		case c < 0x80:
			fmt.Fprintf(&b, `\x%02x`, c)
		case c <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			fmt.Fprintf(&b, `\U%08x`, c)
		}
		i += size
	}
	return b.String()
}

// Visible writes a single value (a URL, a path, a name) with its hidden
// characters escaped as in CommandLine, and no quoting otherwise.
func Visible(s string) string {
	if !hiddentext.Unprintable(s) {
		return s
	}
	return escape(s)
}
