package fetch

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRobots checks the spec's robots.txt rules one by one, each on its own
// site: the tool's fetch is blocked or allowed, and a blocked page is never
// requested.
func TestRobots(t *testing.T) {
	type robots struct {
		status int    // 0: 200
		body   string // served as robots.txt
		hangUp bool   // close the connection instead of answering
	}
	cases := []struct {
		name    string
		robots  robots
		ua      string
		path    string
		blocked []string // parts of the error; nil: allowed
	}{
		{name: "unreachable", robots: robots{hangUp: true}, path: "/page",
			blocked: []string{"robots.txt is unreachable", "so fetching", "is not allowed", "fetch prompt"}},
		{name: "401", robots: robots{status: 401}, path: "/page",
			blocked: []string{"/robots.txt answered with status 401 (Unauthorized)", "assumed not to be allowed", "fetch prompt"}},
		{name: "403", robots: robots{status: 403}, path: "/page",
			blocked: []string{"status 403 (Forbidden)", "assumed not to be allowed"}},
		{name: "404 allows", robots: robots{status: 404, body: "User-agent: *\nDisallow: /\n"}, path: "/page"},
		{name: "410 allows", robots: robots{status: 410}, path: "/page"},
		{name: "disallow for every agent", robots: robots{body: "User-agent: *\nDisallow: /page\n"}, path: "/page",
			blocked: []string{"/robots.txt disallows fetching", "/page for the user agent \"" + DefaultUserAgent + "\"", "fetch prompt"}},
		{name: "disallow matching the default user agent", robots: robots{body: "User-agent: *\nAllow: /\n\nUser-agent: Mozilla\nDisallow: /page\n"}, path: "/page",
			blocked: []string{"disallows"}},
		{name: "disallow matching a configured user agent", ua: "ZeroBot/2.0", robots: robots{body: "User-agent: zerobot\nDisallow: /\n"}, path: "/page",
			blocked: []string{"disallows", `"ZeroBot/2.0"`}},
		{name: "disallow for another agent", ua: "ZeroBot/2.0", robots: robots{body: "User-agent: OtherBot\nDisallow: /\n"}, path: "/page"},
		{name: "disallow of another path", robots: robots{body: "User-agent: *\nDisallow: /private\n"}, path: "/page"},
		{name: "allow overrides a shorter disallow", robots: robots{body: "User-agent: *\nDisallow: /\nAllow: /page\n"}, path: "/page"},
		{name: "allow all", robots: robots{body: "User-agent: *\nAllow: /\n"}, path: "/page"},
		{name: "empty robots.txt", robots: robots{body: ""}, path: "/page"},
		{name: "query matched", robots: robots{body: "User-agent: *\nDisallow: /page?secret\n"}, path: "/page?secret=1",
			blocked: []string{"disallows"}},
		{name: "5xx body is parsed", robots: robots{status: 503, body: "User-agent: *\nDisallow: /\n"}, path: "/page", blocked: []string{"disallows"}},
		{name: "unparsable", robots: robots{body: "Disallow: /\n"}, path: "/page", blocked: []string{"could not be parsed", "is not allowed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			web := serve(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/robots.txt" {
					w.Header().Set("Content-Type", "text/plain")
					w.Write([]byte("the page"))
					return
				}
				if c.robots.hangUp {
					conn, _, _ := w.(http.Hijacker).Hijack()
					conn.Close()
					return
				}
				if c.robots.status != 0 {
					w.WriteHeader(c.robots.status)
				}
				w.Write([]byte(c.robots.body))
			})
			cs := start(t, Options{RespectRobots: true, UserAgent: c.ua})
			text, isError := call(t, cs, web.URL+c.path)
			if c.blocked == nil {
				if isError || !strings.HasSuffix(text, "\nthe page") {
					t.Errorf("want allowed; got isError=%v %q", isError, text)
				}
			} else {
				if !isError {
					t.Errorf("want blocked; got %q", text)
				}
				for _, s := range c.blocked {
					if !strings.Contains(text, s) {
						t.Errorf("error %q does not contain %q", text, s)
					}
				}
			}
			want := []string{"/robots.txt", "/page"}
			if c.blocked != nil {
				want = want[:1]
			}
			if diff := cmp.Diff(want, web.paths()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRobotsOffByDefault: without RespectRobots, robots.txt is not even
// requested, whatever it says.
func TestRobotsOffByDefault(t *testing.T) {
	web := pages(t, map[string]pageSpec{
		"/robots.txt": {contentType: "text/plain", body: "User-agent: *\nDisallow: /\n"},
		"/page":       {contentType: "text/plain", body: "the page"},
	})
	cs := start(t, Options{})
	if text, isError := call(t, cs, web.URL+"/page"); isError || !strings.HasSuffix(text, "the page") {
		t.Errorf("fetch: %v %q", isError, text)
	}
	if diff := cmp.Diff([]string{"/page"}, web.paths()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestPromptIgnoresRobots: the prompt is user-initiated, so it fetches a page
// robots.txt disallows, without asking for robots.txt, while the tool on the
// same server is blocked.
func TestPromptIgnoresRobots(t *testing.T) {
	web := pages(t, map[string]pageSpec{
		"/robots.txt": {contentType: "text/plain", body: "User-agent: *\nDisallow: /\n"},
		"/page":       {contentType: "text/html", body: "<p>the page</p>"},
	})
	cs := start(t, Options{RespectRobots: true})
	res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "fetch", Arguments: map[string]string{"url": web.URL + "/page"}})
	if err != nil || len(res.Messages) != 1 || res.Messages[0].Content.(*mcp.TextContent).Text != "the page" {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	if diff := cmp.Diff([]string{"/page"}, web.paths()); diff != "" {
		t.Errorf("prompt requests (-want +got):\n%s", diff)
	}
	if text, isError := call(t, cs, web.URL+"/page"); !isError || !strings.Contains(text, "disallows") {
		t.Errorf("the tool on the same page: %v %q", isError, text)
	}
}

func call(t *testing.T, cs *mcp.ClientSession, url string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"url": url}})
	if err != nil {
		t.Fatalf("fetch %s: %v", url, err)
	}
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, c.(*mcp.TextContent).Text)
	}
	return strings.Join(parts, "\n"), res.IsError
}
