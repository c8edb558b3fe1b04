package fetch

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/mcpserver"
	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
)

func start(t *testing.T, o Options) *mcp.ClientSession {
	t.Helper()
	return mcptest.Connect(t, New(o, io.Discard), nil)
}

// site is a test web server on a loopback address that records the
// requests it gets.
type site struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
}

// paths returns the paths requested so far.
func (s *site) paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.requests {
		out = append(out, r.URL.Path)
	}
	return out
}

func (s *site) userAgents() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.requests {
		out = append(out, r.UserAgent())
	}
	return out
}

// serve starts a site on addr (such as 127.0.0.1:0) whose handler h sees
// every request.
func serve(t *testing.T, addr string, h http.HandlerFunc) *site {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &site{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r)
		s.mu.Unlock()
		h(w, r)
	}))
	s.Listener.Close()
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// pages serves fixed bodies by path, with a content type each; anything
// else is a 404.
type pageSpec struct {
	contentType string
	body        string
	status      int
}

func pages(t *testing.T, m map[string]pageSpec) *site {
	return serve(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		p, ok := m[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if p.contentType != "" {
			w.Header().Set("Content-Type", p.contentType)
		} else {
			w.Header()["Content-Type"] = nil // no sniffing: no Content-Type at all
		}
		if p.status != 0 {
			w.WriteHeader(p.status)
		}
		io.WriteString(w, p.body)
	})
}

type fetchCall struct {
	name    string
	args    map[string]any
	want    string // exact text, unless contain
	contain []string
	absent  []string
	isError bool
}

func runFetch(t *testing.T, cs *mcp.ClientSession, calls []fetchCall) {
	t.Helper()
	for _, c := range calls {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fetch", Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: protocol error: %v", c.name, err)
		}
		text := mcptest.Text(res)
		if res.IsError != c.isError {
			t.Errorf("%s: isError = %v, want %v; text %q", c.name, res.IsError, c.isError, text)
			continue
		}
		if !res.IsError {
			b, _ := json.Marshal(res.StructuredContent)
			var out mcpserver.TextOutput
			if json.Unmarshal(b, &out) != nil || out.Content != text {
				t.Errorf("%s: structured content %s does not match the text", c.name, b)
			}
		}
		if c.want != "" && text != c.want {
			t.Errorf("%s: mismatch (-want +got):\n%s", c.name, cmp.Diff(c.want, text))
		}
		for _, s := range c.contain {
			if !strings.Contains(text, s) {
				t.Errorf("%s: %q does not contain %q", c.name, text, s)
			}
		}
		for _, s := range c.absent {
			if strings.Contains(text, s) {
				t.Errorf("%s: %q contains %q", c.name, text, s)
			}
		}
	}
}

func TestToolAndPromptDescriptions(t *testing.T) {
	cs := start(t, Options{})
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	required := mcptest.CheckSchemas(t, tools.Tools, map[string]any{"fetch": fetchArgs{}})
	if diff := cmp.Diff(map[string][]string{"fetch": {"url"}}, required); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
	a := tools.Tools[0].Annotations
	if !a.ReadOnlyHint || *a.DestructiveHint || !a.IdempotentHint || !*a.OpenWorldHint {
		t.Errorf("annotations %+v, want read-only, not destructive, idempotent, open world", a)
	}
	var schema struct {
		Properties map[string]struct {
			Default          any  `json:"default"`
			ExclusiveMinimum *int `json:"exclusiveMinimum"`
			ExclusiveMaximum *int `json:"exclusiveMaximum"`
			Minimum          *int `json:"minimum"`
		} `json:"properties"`
	}
	b, _ := json.Marshal(tools.Tools[0].InputSchema)
	json.Unmarshal(b, &schema)
	p := schema.Properties
	if p["max_length"].Default != 5000.0 || *p["max_length"].ExclusiveMinimum != 0 || *p["max_length"].ExclusiveMaximum != 1000000 ||
		p["start_index"].Default != 0.0 || *p["start_index"].Minimum != 0 || p["raw"].Default != false {
		t.Errorf("schema defaults and bounds differ from the reference: %s", b)
	}
	prompts, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "fetch" || len(prompts.Prompts[0].Arguments) != 1 ||
		prompts.Prompts[0].Arguments[0].Name != "url" || !prompts.Prompts[0].Arguments[0].Required {
		t.Errorf("prompts: %+v", prompts.Prompts)
	}
	if DefaultUserAgent != "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/134.0.0.0 Safari/537.36" {
		t.Errorf("DefaultUserAgent = %q", DefaultUserAgent)
	}
	s := newServer(Options{})
	if s.client.Timeout != 30*time.Second || s.opts.MaxBody != 10<<20 || s.opts.UserAgent != DefaultUserAgent {
		t.Errorf("defaults: timeout %v, body cap %d, user agent %q", s.client.Timeout, s.opts.MaxBody, s.opts.UserAgent)
	}
}

func TestFetchConvertsHTML(t *testing.T) {
	const page = `<!doctype html><html><head><title>T</title></head><body>
<h1>Hello</h1><p>Some <b>bold</b> text and <a href="/other">a link</a>.</p>
<ul><li>one</li><li>two</li></ul>
<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
</body></html>`
	web := pages(t, map[string]pageSpec{
		"/page":      {contentType: "text/html; charset=utf-8", body: page},
		"/untyped":   {body: "<p>no content type</p>"},
		"/json":      {contentType: "application/json", body: `{"a": "<b>x</b>"}`},
		"/sniffed":   {contentType: "text/plain", body: "<html><body><p>declared plain</p></body></html>"},
		"/empty":     {contentType: "text/html", body: "<html><body><script>only()</script></body></html>"},
		"/missing":   {status: 404, contentType: "text/html", body: "<p>gone</p>"},
		"/broken":    {status: 500, contentType: "text/plain", body: "boom"},
		"/redirect":  {status: 302, body: ""},
		"/dir/child": {contentType: "text/html", body: `<a href="sibling">s</a> <a href="../up">u</a>`},
		"/upper":     {contentType: "Text/HTML; charset=UTF-8", body: "<p>upper <i>case</i></p>"},
	})
	cs := start(t, Options{})
	u := web.URL
	runFetch(t, cs, []fetchCall{
		{name: "html", args: map[string]any{"url": u + "/page"},
			want: "Contents of " + u + "/page:\n# Hello\n\nSome **bold** text and [a link](" + u + "/other).\n\n- one\n- two\n\n| k | v |\n|---|---|\n| a | 1 |"},
		{name: "no content type is taken as HTML", args: map[string]any{"url": u + "/untyped"},
			want: "Contents of " + u + "/untyped:\nno content type"},
		{name: "json is text", args: map[string]any{"url": u + "/json"},
			want: "Content type application/json cannot be simplified to markdown, but here is the raw content:\nContents of " + u + "/json:\n" + `{"a": "<b>x</b>"}`},
		{name: "<html at the start", args: map[string]any{"url": u + "/sniffed"},
			want: "Contents of " + u + "/sniffed:\ndeclared plain"},
		{name: "raw", args: map[string]any{"url": u + "/page", "raw": true, "max_length": 999999},
			want: "Content type text/html; charset=utf-8 cannot be simplified to markdown, but here is the raw content:\nContents of " + u + "/page:\n" + page},
		{name: "nothing left", args: map[string]any{"url": u + "/empty"},
			want: "Contents of " + u + "/empty:\n<error>Page failed to be simplified from HTML</error>"},
		{name: "relative links", args: map[string]any{"url": u + "/dir/child"},
			want: "Contents of " + u + "/dir/child:\n[s](" + u + "/dir/sibling) [u](" + u + "/up)"},
		{name: "content type in upper case", args: map[string]any{"url": u + "/upper"},
			want: "Contents of " + u + "/upper:\nupper *case*"},
		{name: "404", args: map[string]any{"url": u + "/missing"}, isError: true,
			want: "fetch " + u + "/missing: the server answered with status 404 (Not Found)"},
		{name: "500", args: map[string]any{"url": u + "/broken"}, isError: true, contain: []string{"status 500 (Internal Server Error)"}},
		{name: "host without path", args: map[string]any{"url": u}, isError: true, contain: []string{"fetch " + u + "/: ", "404"}},
	})
}

func TestArgumentsChecked(t *testing.T) {
	web := pages(t, map[string]pageSpec{"/": {contentType: "text/plain", body: "x"}})
	cs := start(t, Options{})
	runFetch(t, cs, []fetchCall{
		{name: "missing url", args: map[string]any{}, isError: true, contain: []string{"url is required"}},
		{name: "max_length 0", args: map[string]any{"url": web.URL, "max_length": 0}, isError: true, contain: []string{"max_length must be greater than 0"}},
		{name: "max_length 1000000", args: map[string]any{"url": web.URL, "max_length": 1000000}, isError: true, contain: []string{"less than 1000000"}},
		{name: "max_length 999999", args: map[string]any{"url": web.URL, "max_length": 999999}, contain: []string{"\nx"}},
		{name: "start_index -1", args: map[string]any{"url": web.URL, "start_index": -1}, isError: true, contain: []string{"start_index must be at least 0"}},
		{name: "fraction", args: map[string]any{"url": web.URL, "max_length": 1.5}, isError: true, contain: []string{"max_length"}},
		{name: "string raw", args: map[string]any{"url": web.URL, "raw": "yes"}, isError: true, contain: []string{"raw"}},
		{name: "unknown argument", args: map[string]any{"url": web.URL, "headers": map[string]any{}}, isError: true, contain: []string{"headers"}},
		{name: "no scheme", args: map[string]any{"url": "example.com"}, isError: true, contain: []string{"no scheme"}},
	})
	if got := web.paths(); len(got) != 1 {
		t.Errorf("requests %v, want only the valid call's", got)
	}
}

// TestRefusedSchemesNoNetworkIO sends file: and gopher: URLs to the tool and
// the prompt, aimed at a site and at a name whose lookups are counted: no
// request arrives and no name is looked up.
func TestRefusedSchemesNoNetworkIO(t *testing.T) {
	web := pages(t, map[string]pageSpec{"/": {contentType: "text/plain", body: "x"}})
	res := &fakeResolver{names: map[string]string{"gopher.test": "127.0.0.1"}}
	cs := start(t, Options{Resolver: res, RespectRobots: true})
	host := strings.TrimPrefix(web.URL, "http://")
	port := host[strings.LastIndex(host, ":")+1:]
	urls := []string{
		"file:///etc/passwd",
		"file://" + host + "/etc/passwd",
		"gopher://" + host + "/_GET%20/%20HTTP/1.0%0D%0A%0D%0A",
		"gopher://gopher.test:" + port + "/_x",
		"ftp://" + host + "/",
		"data:text/plain,hello",
	}
	for _, u := range urls {
		runFetch(t, cs, []fetchCall{{name: u, args: map[string]any{"url": u}, isError: true, contain: []string{"scheme is not allowed; only http and https are"}}})
		got, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "fetch", Arguments: map[string]string{"url": u}})
		if err != nil || len(got.Messages) != 1 || !strings.Contains(got.Messages[0].Content.(*mcp.TextContent).Text, "scheme is not allowed") {
			t.Errorf("prompt %s: %+v, %v", u, got, err)
		}
	}
	if p := web.paths(); len(p) != 0 {
		t.Errorf("the site got requests %v", p)
	}
	if n := res.lookups.Load(); n != 0 {
		t.Errorf("%d name lookups", n)
	}
}

func TestChunking(t *testing.T) {
	// 10 characters: ASCII, 2-byte, 3-byte and 4-byte UTF-8.
	const text = "aé€😀bñ中😃cz"
	web := pages(t, map[string]pageSpec{
		"/t":     {contentType: "text/plain; charset=utf-8", body: text},
		"/empty": {contentType: "text/plain", body: ""},
	})
	cs := start(t, Options{})
	head := "Content type text/plain; charset=utf-8 cannot be simplified to markdown, but here is the raw content:\nContents of " + web.URL + "/t:\n"
	more := func(next int) string {
		return "\n\n<error>Content truncated. Call the fetch tool with a start_index of " + strconv.Itoa(next) + " to get more content.</error>"
	}
	runFetch(t, cs, []fetchCall{
		{name: "default is the whole of a short page", args: map[string]any{"url": web.URL + "/t"}, want: head + text},
		{name: "first 3", args: map[string]any{"url": web.URL + "/t", "max_length": 3}, want: head + "aé€" + more(3)},
		{name: "cut after a 4-byte character", args: map[string]any{"url": web.URL + "/t", "max_length": 4}, want: head + "aé€😀" + more(4)},
		{name: "start inside the multi-byte run", args: map[string]any{"url": web.URL + "/t", "start_index": 3, "max_length": 4}, want: head + "😀bñ中" + more(7)},
		{name: "last chunk, exactly to the end", args: map[string]any{"url": web.URL + "/t", "start_index": 7, "max_length": 3}, want: head + "😃cz"},
		{name: "last chunk, shorter than max_length", args: map[string]any{"url": web.URL + "/t", "start_index": 8, "max_length": 5}, want: head + "cz"},
		{name: "at the end", args: map[string]any{"url": web.URL + "/t", "start_index": 10},
			want: head + "<error>No more content available: start_index 10 is at or past the end of the content, which has 10 characters.</error>"},
		{name: "past the end", args: map[string]any{"url": web.URL + "/t", "start_index": 500}, contain: []string{"No more content available: start_index 500", "10 characters"}},
		{name: "empty page", args: map[string]any{"url": web.URL + "/empty"}, contain: []string{"No more content available", "0 characters"}},
	})
	// Every split of the text reassembles it, and no piece is invalid UTF-8.
	for size := int64(1); size <= 11; size++ {
		var got strings.Builder
		for start := int64(0); start < 10; start += size {
			piece, _, _ := strings.Cut(chunk(text, start, size, math.MaxInt), "\n\n<error>")
			if !utf8.ValidString(piece) {
				t.Fatalf("size %d start %d: invalid UTF-8 %q", size, start, piece)
			}
			got.WriteString(piece)
		}
		if got.String() != text {
			t.Errorf("size %d: reassembled %q", size, got.String())
		}
	}
	// The default chunk is 5000 characters.
	long := strings.Repeat("é", 5001)
	if c := chunk(long, 0, DefaultMaxLength, math.MaxInt); !strings.HasPrefix(c, strings.Repeat("é", 5000)+"\n\n<error>") || !strings.Contains(c, "start_index of 5000") {
		t.Errorf("default chunk of 5001 characters: %q", c[len(c)-120:])
	}
}

func TestUserAgent(t *testing.T) {
	web := pages(t, map[string]pageSpec{"/": {contentType: "text/plain", body: "x"}, "/robots.txt": {contentType: "text/plain", body: ""}})
	for _, ua := range []string{"", "ZeroTest/1.0 (+https://example.invalid)"} {
		web.mu.Lock()
		web.requests = nil
		web.mu.Unlock()
		cs := start(t, Options{UserAgent: ua, RespectRobots: true})
		runFetch(t, cs, []fetchCall{{name: "tool", args: map[string]any{"url": web.URL + "/"}, contain: []string{"\nx"}}})
		if _, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "fetch", Arguments: map[string]string{"url": web.URL + "/"}}); err != nil {
			t.Fatal(err)
		}
		want := ua
		if want == "" {
			want = DefaultUserAgent
		}
		if diff := cmp.Diff([]string{"/robots.txt", "/", "/"}, web.paths()); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{want, want, want}, web.userAgents()); diff != "" {
			t.Errorf("user agents for robots.txt, tool, prompt (-want +got):\n%s", diff)
		}
	}
}

func TestPrompt(t *testing.T) {
	web := pages(t, map[string]pageSpec{
		"/":     {contentType: "text/html", body: "<h2>Prompted</h2><script>SECRET_SCRIPT()</script>" + strings.Repeat("<p>word</p>", 3000)},
		"/gone": {status: 410, contentType: "text/plain", body: "gone"},
	})
	cs := start(t, Options{})
	get := func(u string) *mcp.GetPromptResult {
		t.Helper()
		res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "fetch", Arguments: map[string]string{"url": u}})
		if err != nil {
			t.Fatalf("prompt %s: %v", u, err)
		}
		return res
	}
	res := get(web.URL + "/")
	text := res.Messages[0].Content.(*mcp.TextContent).Text
	if res.Description != "Contents of "+web.URL+"/" || res.Messages[0].Role != "user" || !strings.HasPrefix(text, "## Prompted\n\nword") ||
		strings.Count(text, "word") != 3000 || strings.Contains(text, "SECRET_SCRIPT") {
		t.Errorf("prompt result: %q, %q (%d bytes)", res.Description, text[:min(len(text), 80)], len(text))
	}
	res = get(web.URL + "/gone")
	if res.Description != "Failed to fetch "+web.URL+"/gone" || !strings.Contains(res.Messages[0].Content.(*mcp.TextContent).Text, "410") {
		t.Errorf("failed prompt: %+v", res)
	}
	res = get("http://user:hunter2@" + strings.TrimPrefix(web.URL, "http://") + "/")
	if text := res.Messages[0].Content.(*mcp.TextContent).Text; !strings.Contains(text, "credentials") ||
		strings.Contains(text+res.Description, "hunter2") {
		t.Errorf("prompt with credentials: %+v", res)
	}
	if _, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "fetch"}); err == nil || !strings.Contains(err.Error(), "URL is required") {
		t.Errorf("prompt without url: %v", err)
	}
}

func TestBodyCap(t *testing.T) {
	big := strings.Repeat("x", DefaultMaxBody+1)
	web := serve(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		switch r.URL.Path {
		case "/declared":
			io.WriteString(w, big)
		case "/stream":
			// No Content-Length: the cap must stop the read itself.
			w.(http.Flusher).Flush()
			io.WriteString(w, big)
		case "/small":
			io.WriteString(w, strings.Repeat("y", 2000))
		}
	})
	cs := start(t, Options{})
	runFetch(t, cs, []fetchCall{
		{name: "declared length over 10 MiB", args: map[string]any{"url": web.URL + "/declared"}, isError: true,
			contain: []string{"response body too large", "over the 10 MiB limit"}},
		{name: "streamed over 10 MiB", args: map[string]any{"url": web.URL + "/stream"}, isError: true,
			contain: []string{"response body too large: over the 10 MiB limit"}},
		{name: "under the cap", args: map[string]any{"url": web.URL + "/small", "max_length": 10}, contain: []string{"yyyyyyyyyy\n\n<error>"}},
	})
	small := start(t, Options{MaxBody: 1000})
	runFetch(t, small, []fetchCall{{name: "a smaller cap", args: map[string]any{"url": web.URL + "/small"}, isError: true,
		contain: []string{"over the 1000-byte limit"}}})
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	web := serve(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	cs := start(t, Options{Timeout: 300 * time.Millisecond})
	begin := time.Now()
	runFetch(t, cs, []fetchCall{{name: "stalled", args: map[string]any{"url": web.URL}, isError: true,
		want: "fetch " + web.URL + "/: no complete response within 300ms"}})
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}

// fakeResolver maps names to one address each and counts lookups.
type fakeResolver struct {
	names   map[string]string
	lookups atomic.Int32
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.lookups.Add(1)
	if a, ok := r.names[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

var _ netguard.Resolver = (*fakeResolver)(nil)

func portOf(s *site) string { return strconv.Itoa(s.Listener.Addr().(*net.TCPAddr).Port) }

// TestLoopbackReachableByDefault states the spec's plain fact: without
// BlockPrivate there is no SSRF protection.
func TestLoopbackReachableByDefault(t *testing.T) {
	web := pages(t, map[string]pageSpec{"/admin": {contentType: "text/plain", body: "internal admin page"}})
	res := &fakeResolver{names: map[string]string{"intranet.test": "127.0.0.1"}}
	cs := start(t, Options{Resolver: res})
	runFetch(t, cs, []fetchCall{
		{name: "loopback address", args: map[string]any{"url": web.URL + "/admin"}, contain: []string{"internal admin page"}},
		{name: "name resolving to loopback", args: map[string]any{"url": "http://intranet.test:" + portOf(web) + "/admin"}, contain: []string{"internal admin page"}},
	})
}

func TestBlockPrivate(t *testing.T) {
	private := pages(t, map[string]pageSpec{"/secret": {contentType: "text/plain", body: "TOP SECRET"}})
	// The "public-looking" site is on the allow-list; the private one is not.
	public := serve(t, "127.0.0.2:0", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/by-address":
			http.Redirect(w, r, private.URL+"/secret", http.StatusFound)
		case "/by-name":
			http.Redirect(w, r, "http://rebound.test:"+portOf(private)+"/secret", http.StatusMovedPermanently)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/robots.txt":
			http.NotFound(w, r)
		default:
			io.WriteString(w, "public page")
		}
	})
	res := &fakeResolver{names: map[string]string{
		"public.test":  "127.0.0.2",
		"rebound.test": "127.0.0.1",
		"localhost":    "127.0.0.1",
	}}
	cs := start(t, Options{BlockPrivate: true, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}, Resolver: res})
	pub := "http://public.test:" + portOf(public)
	runFetch(t, cs, []fetchCall{
		{name: "allowed host", args: map[string]any{"url": pub + "/"}, contain: []string{"public page"}},
		{name: "name resolving to loopback", args: map[string]any{"url": "http://rebound.test:" + portOf(private) + "/secret"}, isError: true,
			contain: []string{"address blocked: 127.0.0.1 is loopback, and private networks are blocked"}},
		{name: "loopback address", args: map[string]any{"url": private.URL + "/secret"}, isError: true, contain: []string{"address blocked"}},
		{name: "localhost", args: map[string]any{"url": "http://localhost:" + portOf(private) + "/secret"}, isError: true, contain: []string{"localhost resolves to no allowed address", "address blocked"}},
		{name: "redirect to a private address", args: map[string]any{"url": pub + "/by-address"}, isError: true, contain: []string{"address blocked"}},
		{name: "redirect to a name resolving to loopback", args: map[string]any{"url": pub + "/by-name"}, isError: true, contain: []string{"address blocked"}},
		{name: "redirect to cloud metadata", args: map[string]any{"url": pub + "/to-metadata"}, isError: true, contain: []string{"169.254.169.254 is link-local"}},
		{name: "redirect to file:", args: map[string]any{"url": pub + "/to-file"}, isError: true, contain: []string{"file: scheme is not allowed"}},
	})
	got, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "fetch", Arguments: map[string]string{"url": pub + "/by-name"}})
	if err != nil || !strings.Contains(got.Messages[0].Content.(*mcp.TextContent).Text, "address blocked") {
		t.Errorf("prompt redirected to a private address: %+v, %v", got, err)
	}
	if p := private.paths(); len(p) != 0 {
		t.Errorf("the private site got requests %v", p)
	}
}

// TestNumericHostsCanonical fetches a page by numeric spellings of
// 127.0.0.1, robots.txt on: without the block, the page and its robots.txt
// are requested from 127.0.0.1 by address, and the result names the
// canonical URL; with --block-private-networks, the tool and the prompt
// refuse every spelling before any request. No name is ever looked up.
func TestNumericHostsCanonical(t *testing.T) {
	var (
		mu    sync.Mutex
		hosts []string
	)
	web := serve(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.URL.Path+" "+r.Host)
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "the page")
	})
	port := portOf(web)
	res := &fakeResolver{}
	open := start(t, Options{Resolver: res, RespectRobots: true})
	blocked := start(t, Options{Resolver: res, RespectRobots: true, BlockPrivate: true})
	spellings := []string{"0x7f000001", "2130706433", "127.1", "0177.0.0.1", "%EF%BC%91%EF%BC%92%EF%BC%97.1", "[::ffff:7f00:1]"}
	for _, h := range spellings {
		u := "http://" + h + ":" + port + "/page"
		canon := "http://127.0.0.1:" + port + "/page"
		if strings.HasPrefix(h, "[") {
			canon = "http://" + h + ":" + port + "/page"
		}
		runFetch(t, open, []fetchCall{{name: u, args: map[string]any{"url": u}, contain: []string{"Contents of " + canon + ":", "the page"}}})
		runFetch(t, blocked, []fetchCall{{name: u + " blocked", args: map[string]any{"url": u}, isError: true, contain: []string{"address blocked", "loopback"}}})
		got, err := blocked.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "fetch", Arguments: map[string]string{"url": u}})
		if err != nil || !strings.Contains(got.Messages[0].Content.(*mcp.TextContent).Text, "address blocked") {
			t.Errorf("prompt %s under the block: %+v, %v", u, got, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hosts) != 2*len(spellings) {
		t.Errorf("the site got %d requests, want %d (robots.txt and the page, unblocked only)", len(hosts), 2*len(spellings))
	}
	for _, h := range hosts {
		if !strings.HasSuffix(h, " 127.0.0.1:"+port) && !strings.HasSuffix(h, " [::ffff:7f00:1]:"+port) {
			t.Errorf("request %q does not name the canonical host", h)
		}
	}
	if n := res.lookups.Load(); n != 0 {
		t.Errorf("%d name lookups", n)
	}
}

// TestChunksFitBudget fetches a page of characters that JSON escapes to 6
// bytes, with max_length 999999, under the default reply budget and a
// lowered one: each chunk is cut to fit and ends with the start_index to go
// on from, and reading on with it gives back the whole page. The prompt,
// which returns the whole page, is cut too, with a note saying where the
// tool goes on.
func TestChunksFitBudget(t *testing.T) {
	page := strings.Repeat("\x01", 1_500_000) + "<&\"end"
	web := pages(t, map[string]pageSpec{"/p": {contentType: "text/plain; charset=utf-8", body: page}})
	next := regexp.MustCompile(`<error>Content truncated( at this server's reply budget)?\. Call the fetch tool with a start_index of (\d+) to get more content\.</error>$`)
	for _, budget := range []int{0, 100_000} {
		cs, wire := mcptest.ServeWire(t, New(Options{}, io.Discard), budget)
		limit := mcpserver.ReplyBudget(mcpserver.WithReplyBudget(context.Background(), budget))
		var got strings.Builder
		calls := 0
		for start := 0; ; calls++ {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"url": web.URL + "/p", "max_length": 999999, "start_index": start}})
			if err != nil {
				t.Fatalf("budget %d, start %d: %v", budget, start, err)
			}
			text := mcptest.Text(res)
			if res.IsError || wire.Last() > limit {
				t.Fatalf("budget %d, start %d: isError %v, %d bytes", budget, start, res.IsError, wire.Last())
			}
			_, piece, _ := strings.Cut(text, "/p:\n")
			m := next.FindStringSubmatch(piece)
			if m == nil {
				got.WriteString(piece)
				break
			}
			if m[1] != "" && wire.Last() < limit*3/4 {
				t.Errorf("budget %d, start %d: a chunk cut at %d bytes", budget, start, wire.Last())
			}
			if calls == 0 && m[1] == "" {
				t.Errorf("budget %d: the first chunk was not cut to the budget", budget)
			}
			got.WriteString(strings.TrimSuffix(piece, "\n\n"+m[0]))
			start, _ = strconv.Atoi(m[2])
		}
		if got.String() != page {
			t.Errorf("budget %d: %d calls gave back %d of %d bytes", budget, calls+1, got.Len(), len(page))
		}
		res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "fetch", Arguments: map[string]string{"url": web.URL + "/p"}})
		if err != nil {
			t.Fatalf("budget %d: prompt: %v", budget, err)
		}
		text := res.Messages[0].Content.(*mcp.TextContent).Text
		size := mcpserver.QuotedSize(text) + mcpserver.QuotedSize(res.Description) + 100
		note := regexp.MustCompile("\n\n<error>The page is cut here, at this server's reply budget of " + strconv.Itoa(limit) + ` bytes\. The fetch tool with a start_index of (\d+) returns the rest\.</error>$`)
		m := note.FindStringSubmatch(text)
		if size > limit || size < limit*3/4 || m == nil {
			t.Fatalf("budget %d: prompt of %d bytes: %.100q", budget, size, text[max(len(text)-200, 0):])
		}
		_, content, _ := strings.Cut(text[:len(text)-len(m[0])], "here is the raw content:\n")
		if k, _ := strconv.Atoi(m[1]); content != page[:k] {
			t.Errorf("budget %d: the prompt's text is not the page up to start_index %d", budget, k)
		}
	}
}

// TestDescriptionSaysWhatItReaches checks that the tool's description says
// it reaches local and private addresses unless --block-private-networks.
func TestDescriptionSaysWhatItReaches(t *testing.T) {
	for block, want := range map[bool]string{
		false: "It reaches local and private addresses too (loopback, link-local, private networks, cloud metadata services) unless the server was started with --block-private-networks.",
		true:  "This server was started with --block-private-networks: loopback, link-local, private and cloud metadata addresses are refused.",
	} {
		tools, err := start(t, Options{BlockPrivate: block}).ListTools(context.Background(), nil)
		if err != nil || !strings.Contains(tools.Tools[0].Description, want) {
			t.Errorf("BlockPrivate %v: %v %q", block, err, tools.Tools[0].Description)
		}
	}
}
