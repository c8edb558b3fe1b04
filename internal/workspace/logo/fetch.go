package logo

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/zero-dev/zero/internal/guard/netguard"
)

// Limits on a Fetcher.
const (
	maxURL       = 2048             // bytes in an https URL
	maxDataURL   = 4 * MaxBytes     // bytes in a data: URL, room for percent-encoding
	cacheSize    = 256              // URLs cached, successes and failures together
	failureTTL   = time.Minute      // how long a failed fetch is remembered
	fetchTimeout = 10 * time.Second // used when the client sets no timeout
)

// A Fetcher turns icon sources into data: URLs on the server side, and
// caches the results of https fetches in memory by URL: up to 256 entries,
// the oldest dropped first. A success is kept until it is dropped; a
// failure is kept for a minute, so a broken or hostile icon URL is not
// fetched again on every page load, unless it failed because the caller's
// context ended. Data URLs are not cached. It is safe for concurrent use;
// two concurrent first fetches of one URL may both go to the network.
type Fetcher struct {
	client *http.Client // nil: data: URLs only
	now    func() time.Time

	mu    sync.Mutex
	cache map[string]entry
	order []string // cached URLs, oldest first
}

// An entry is a cached result.
type entry struct {
	url     string
	err     error
	expires time.Time // zero for a success
}

// NewFetcher returns a Fetcher that sends requests with a copy of client
// that follows no redirect, sends no cookies and, if client sets no
// timeout, gives up after 10 seconds. The client must enforce the public-host rule: the workspace
// passes a netguard client with BlockPrivate. With a nil client the Fetcher
// accepts only data: URLs.
func NewFetcher(client *http.Client) *Fetcher {
	f := &Fetcher{now: time.Now, cache: map[string]entry{}}
	if client != nil {
		c := *client
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		c.Jar = nil // an icon request carries no cookies
		if c.Timeout <= 0 {
			c.Timeout = fetchTimeout
		}
		f.client = &c
	}
	return f
}

// Fetch returns src as a checked data: URL (see [DataURL]). A data: URL,
// its payload base64 or percent-encoded, is decoded without network I/O;
// its declared type is ignored. An https URL of at most 2048 bytes that
// netguard accepts (no credentials; see [netguard.Options.CheckURL]) is
// fetched, with its host in canonical form, by a GET that must answer 200
// directly, with at most MaxBytes of body. Every other scheme is refused
// with [ErrURL] before any network I/O.
func (f *Fetcher) Fetch(ctx context.Context, src string) (string, error) {
	src = strings.TrimSpace(src)
	if len(src) >= 5 && strings.EqualFold(src[:5], "data:") {
		data, err := decodeDataURL(src)
		if err != nil {
			return "", err
		}
		return DataURL(data)
	}
	u, err := checkURL(src)
	if err != nil {
		return "", err
	}
	if f.client == nil {
		return "", fmt.Errorf("%w: this fetcher has no HTTP client", ErrURL)
	}
	key := u.String() // one entry for every spelling of a host
	if e, ok := f.lookup(key); ok {
		return e.url, e.err
	}
	v, err := f.get(ctx, u)
	if err == nil || ctx.Err() == nil {
		f.store(key, v, err)
	}
	return v, err
}

// urlPolicy is netguard's check of an icon URL: https only.
var urlPolicy = netguard.Options{Schemes: netguard.HTTPSOnly}

// checkURL accepts an https URL by netguard's rules, and returns it with its
// host in canonical form.
func checkURL(src string) (*url.URL, error) {
	if len(src) > maxURL {
		return nil, fmt.Errorf("%w: %d bytes, over the %d-byte limit", ErrURL, len(src), maxURL)
	}
	u, err := urlPolicy.CheckURL(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrURL, err)
	}
	return u, nil
}

// get fetches u and checks the body.
func (f *Fetcher) get(ctx context.Context, u *url.URL) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrURL, err)
	}
	req.Header.Set("Accept", "image/png, image/svg+xml")
	resp, err := f.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("fetch icon: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("fetch icon: status %d, want 200 (redirects are not followed)", resp.StatusCode)
	}
	if resp.ContentLength > MaxBytes {
		return "", fmt.Errorf("%w: the server declared %d bytes, over the %d-byte limit", ErrTooLarge, resp.ContentLength, MaxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxBytes+1))
	if err != nil {
		return "", fmt.Errorf("fetch icon: %w", err)
	}
	if len(data) > MaxBytes {
		return "", fmt.Errorf("%w: the body is over the %d-byte limit", ErrTooLarge, MaxBytes)
	}
	return DataURL(data)
}

// decodeDataURL returns the payload of a data: URL, percent-decoded and
// then, if the URL says ";base64", base64-decoded (white space and missing
// padding allowed, as browsers do).
func decodeDataURL(src string) ([]byte, error) {
	if len(src) > maxDataURL {
		return nil, fmt.Errorf("%w: data: URL of %d bytes, over the %d-byte limit", ErrTooLarge, len(src), maxDataURL)
	}
	meta, payload, ok := strings.Cut(src[len("data:"):], ",")
	if !ok {
		return nil, fmt.Errorf("%w: data: URL without a comma", ErrURL)
	}
	data, err := url.PathUnescape(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: data: URL payload: %v", ErrURL, err)
	}
	meta = strings.TrimRight(meta, " \t")
	if len(meta) < 7 || !strings.EqualFold(meta[len(meta)-7:], ";base64") {
		return []byte(data), nil
	}
	data = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' {
			return -1
		}
		return r
	}, data)
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(data, "="))
	if err != nil {
		return nil, fmt.Errorf("%w: data: URL payload: %v", ErrURL, err)
	}
	return b, nil
}

// lookup returns a cached result for src, if there is a live one.
func (f *Fetcher) lookup(src string) (entry, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.cache[src]
	if !ok || !e.expires.IsZero() && !f.now().Before(e.expires) {
		return entry{}, false
	}
	return e, true
}

// store caches a result for src, dropping the oldest entry when full.
func (f *Fetcher) store(src, v string, err error) {
	e := entry{url: v, err: err}
	if err != nil {
		e.expires = f.now().Add(failureTTL)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.cache[src]; !ok {
		if len(f.order) >= cacheSize {
			delete(f.cache, f.order[0])
			f.order = f.order[1:]
		}
		f.order = append(f.order, src)
	}
	f.cache[src] = e
}
