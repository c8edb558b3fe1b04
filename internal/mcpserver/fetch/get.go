package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/temoto/robotstxt"

	"github.com/zero-dev/zero/internal/guard/netguard"
)

// checkURL checks a URL with the client's netguard options, which puts its
// host in canonical form and refuses a blocked address written in it, and
// gives it the path "/" when it has none, as the reference's URL type does.
// Every request the server builds starts from the URL it returns.
func (s *server) checkURL(raw string) (*url.URL, error) {
	u, err := s.guard.CheckURL(raw)
	if err != nil {
		return nil, err
	}
	if u.Path == "" && u.RawPath == "" {
		u.Path = "/"
	}
	return u, nil
}

// A page is what a fetch returns: the content, and a line to put before it
// when it could not be simplified to Markdown.
type page struct {
	content string
	prefix  string
}

// get fetches u and returns its content: Markdown for HTML (unless raw),
// the decoded text otherwise. An HTTP status of 400 or more is an error.
func (s *server) get(ctx context.Context, u *url.URL, raw bool) (page, error) {
	resp, err := s.do(ctx, u)
	if err != nil {
		return page{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return page{}, fmt.Errorf("fetch %s: the server answered with status %s", u, status(resp))
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return page{}, s.requestError(u, err)
	}
	contentType := resp.Header.Get("Content-Type")
	text := decode(body, contentType)
	if isHTML(text, contentType) && !raw {
		return page{content: s.markdown(text, resp.Request.URL)}, nil
	}
	return page{
		content: text,
		prefix:  fmt.Sprintf("Content type %s cannot be simplified to markdown, but here is the raw content:\n", contentType),
	}, nil
}

// do sends a GET for u with the configured User-Agent.
func (s *server) do(ctx context.Context, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	req.Header.Set("User-Agent", s.opts.UserAgent)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, s.requestError(u, err)
	}
	return resp, nil
}

// requestError words a failed request for the model: the cause without Go's
// "Get URL:" wrapping, and a timeout or the body cap said plainly.
func (s *server) requestError(u *url.URL, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	switch {
	case errors.Is(err, netguard.ErrBodyTooLarge):
		return fmt.Errorf("fetch %s: %w (the cap is %d bytes)", u, err, s.opts.MaxBody)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("fetch %s: cancelled", u)
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("fetch %s: no complete response within %v", u, s.opts.Timeout)
	}
	return fmt.Errorf("fetch %s: %w", u, err)
}

func status(resp *http.Response) string {
	if text := http.StatusText(resp.StatusCode); text != "" {
		return fmt.Sprintf("%d (%s)", resp.StatusCode, text)
	}
	return fmt.Sprint(resp.StatusCode)
}

// isHTML decides as the reference does: "<html" in the first 100
// characters, a text/html Content-Type (in any case, which the reference
// does not allow), or no Content-Type at all.
func isHTML(text, contentType string) bool {
	head := text
	n := 0
	for i := range text {
		if n == 100 {
			head = text[:i]
			break
		}
		n++
	}
	return strings.Contains(head, "<html") || strings.Contains(strings.ToLower(contentType), "text/html") || contentType == ""
}

// checkRobots applies the spec's robots.txt policy to a tool fetch of u:
// robots.txt unreachable, or answering 401 or 403, blocks; any other 4xx
// allows; otherwise its rules for the configured user agent decide. The
// request goes through the same client, so it has the same guards.
func (s *server) checkRobots(ctx context.Context, u *url.URL) error {
	robotsURL := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"}
	const manual = "The user can fetch the page through the fetch prompt, which does not check robots.txt."
	resp, err := s.do(ctx, robotsURL)
	if err != nil {
		return fmt.Errorf("robots.txt is unreachable (%v), so fetching %s is not allowed. %s", err, u, manual)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%s answered with status %s, so fetching %s is assumed not to be allowed. %s", robotsURL, status(resp), u, manual)
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("robots.txt could not be read (%v), so fetching %s is not allowed. %s", s.requestError(robotsURL, err), u, manual)
	}
	rules, err := robotstxt.FromBytes(body)
	if err != nil {
		return fmt.Errorf("%s could not be parsed, so fetching %s is not allowed: %s. %s", robotsURL, u, strings.TrimSpace(strings.ReplaceAll(err.Error(), "\n", " ")), manual)
	}
	path := u.EscapedPath()
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	if !rules.TestAgent(path, s.opts.UserAgent) {
		return fmt.Errorf("%s disallows fetching %s for the user agent %q. %s", robotsURL, u, s.opts.UserAgent, manual)
	}
	return nil
}
