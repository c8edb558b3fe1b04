package netguard

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// CheckURL parses raw (surrounding white space trimmed) and accepts it only
// if it is an absolute http or https URL with a host, an optional port from 1
// to 65535, and no credentials (user@host), which could otherwise pass a
// different host for a glance at the start of the URL. A refusal wraps
// [ErrURL], happens before any network I/O, and never quotes credentials.
func CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: not a valid URL: %v", ErrURL, err)
	}
	if err := checkURL(u); err != nil {
		return nil, err
	}
	return u, nil
}

// checkURL applies CheckURL's rules to a parsed URL.
func checkURL(u *url.URL) error {
	switch {
	case u.Scheme == "":
		return fmt.Errorf("%w: no scheme; want an absolute http:// or https:// URL", ErrURL)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%w: the %s: scheme is not allowed; only http and https are", ErrURL, quoteScheme(u.Scheme))
	case u.Opaque != "":
		return fmt.Errorf("%w: want %s://host/..., with a host after the two slashes", ErrURL, u.Scheme)
	case u.User != nil:
		return fmt.Errorf("%w: credentials in the URL (user@host) are not allowed", ErrURL)
	case u.Hostname() == "":
		return fmt.Errorf("%w: no host", ErrURL)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 {
			return fmt.Errorf("%w: port %q is not a number from 1 to 65535", ErrURL, p)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return fmt.Errorf("%w: empty port after the host", ErrURL)
	}
	return nil
}

// quoteScheme shortens a long scheme for an error. url.Parse accepts only
// letters, digits, "+", "-" and "." in a scheme, so it needs no quoting.
func quoteScheme(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}
