package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/pin"
)

// DefaultURL is the official MCP Registry.
const DefaultURL = "https://registry.modelcontextprotocol.io"

// Limits on a Client.
const (
	DefaultLimit   = 30                // entries a listing asks for when a Query says none
	MaxLimit       = 100               // the most a Query may ask for
	maxListBody    = 16 << 20          // bytes in a listing's answer
	maxGetBody     = MaxEntry + 64<<10 // bytes in one entry's answer: the entry and the registry's _meta
	maxCursor      = 1024              // bytes in a cursor
	maxSearch      = 200               // bytes in a search
	requestTimeout = 30 * time.Second  // when the HTTP client sets none
)

// Errors.
var (
	ErrDeleted     = errors.New("the registry has deleted this entry")
	ErrNotFound    = errors.New("no such entry in the registry")
	ErrUnreachable = errors.New("the registry could not be reached")
	ErrAnswer      = errors.New("the registry's answer was refused")
)

// A Client reads a registry that speaks the MCP Registry API (v0.1).
type Client struct {
	BaseURL string // e.g. DefaultURL
	// HTTP sends the requests: the workspace passes a netguard client.
	HTTP *http.Client
	// Log hears of entries left out of a listing, and why; nil: discarded.
	Log *slog.Logger
}

// A Query asks for one page of a listing.
type Query struct {
	Search      string // a substring of the name; "" for all
	Cursor      string // the NextCursor of the page before; "" for the first
	Limit       int    // 0 for DefaultLimit; at most MaxLimit
	AllVersions bool   // every version, not only each server's latest
}

// A Listed is one entry as the registry gave it.
type Listed struct {
	Entry  *Entry
	Raw    []byte // the entry (the answer's "server"), as canonical JSON
	SHA256 string // hex SHA-256 of Raw
	Meta
	// Icon is the entry's icon as a data: URL, or "": the Store's.
	Icon string
	// FetchedAt is when the registry gave it.
	FetchedAt time.Time
	// Stale, from the Store, says why the registry could not be asked,
	// when this is the cached copy.
	Stale error
}

// A Key names one version of an entry.
type Key struct{ Name, Version string }

// A Page is one page of a listing.
type Page struct {
	Entries    []Listed
	NextCursor string // "" on the last page
	// Deleted are the entries the registry marked deleted, left out.
	Deleted []Key
	// Refused counts the entries Parse refused, left out (and logged).
	Refused   int
	FetchedAt time.Time
	// Stale, from the Store, says why the registry could not be reached,
	// when the page is the cached one of FetchedAt.
	Stale error
}

// List asks the registry for one page of its listing: GET
// /v0.1/servers?search=&cursor=&limit=&version=latest (without version
// when q.AllVersions). Entries that fail Parse are left out, each with its
// reason logged; deleted ones are left out and named in Page.Deleted.
func (c *Client) List(ctx context.Context, q Query) (Page, error) {
	if q.Limit <= 0 {
		q.Limit = DefaultLimit
	}
	switch {
	case q.Limit > MaxLimit:
		return Page{}, fmt.Errorf("list the registry: limit %d, over %d", q.Limit, MaxLimit)
	case len(q.Cursor) > maxCursor:
		return Page{}, fmt.Errorf("list the registry: a cursor of %d bytes, over %d", len(q.Cursor), maxCursor)
	case len(q.Search) > maxSearch:
		return Page{}, fmt.Errorf("list the registry: a search of %d bytes, over %d", len(q.Search), maxSearch)
	}
	v := url.Values{}
	if q.Search != "" {
		v.Set("search", q.Search)
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	v.Set("limit", strconv.Itoa(q.Limit))
	if !q.AllVersions {
		v.Set("version", "latest")
	}
	body, err := c.get(ctx, "/v0.1/servers?"+v.Encode(), maxListBody)
	if err != nil {
		return Page{}, fmt.Errorf("list the registry: %w", err)
	}
	var p parser
	top, ok := object(&p, "answer", body)
	var servers []json.RawMessage
	meta := map[string]json.RawMessage{}
	if ok {
		// An empty page may say "servers": null (a nil list, as Go
		// encodes it): no entries.
		if raw := top["servers"]; !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			servers, _ = get[[]json.RawMessage](&p, "servers", raw)
		}
		if m, ok := object(&p, "metadata", top["metadata"]); ok {
			meta = m
		}
	}
	page := Page{FetchedAt: time.Now()}
	page.NextCursor, _ = get[string](&p, "metadata.nextCursor", meta["nextCursor"])
	if err := p.err(); err != nil {
		return Page{}, fmt.Errorf("list the registry: %w: %w", ErrAnswer, err)
	}
	if len(servers) > MaxLimit {
		return Page{}, fmt.Errorf("list the registry: %w: %d entries, over the %d asked for", ErrAnswer, len(servers), q.Limit)
	}
	for i, raw := range servers {
		l, err := parseListed(raw, !q.AllVersions)
		switch {
		case errors.Is(err, ErrDeleted):
			page.Deleted = append(page.Deleted, Key{l.Entry.Name, l.Entry.Version})
		case err != nil:
			page.Refused++
			c.log().Warn("registry entry left out", "registry", c.BaseURL, "index", i, "reason", err)
		default:
			l.FetchedAt = page.FetchedAt
			page.Entries = append(page.Entries, l)
		}
	}
	return page, nil
}

// Get asks the registry for one version of an entry: GET
// /v0.1/servers/{name}/versions/{version}. The version must be exact. It
// refuses a deleted entry with ErrDeleted, and an answer for another name
// or version.
func (c *Client) Get(ctx context.Context, name, version string) (Listed, error) {
	if msg := NameProblem(name); msg != "" {
		return Listed{}, fmt.Errorf("get %s: %w: the name %s", quote(name), ErrNotFound, msg)
	}
	if msg := VersionProblem(version); msg != "" {
		return Listed{}, fmt.Errorf("get %s: the version %s", name, msg)
	}
	body, err := c.get(ctx, "/v0.1/servers/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version), maxGetBody)
	if err != nil {
		return Listed{}, fmt.Errorf("get %s %s: %w", name, version, err)
	}
	l, err := parseListed(body, false)
	if err != nil {
		return Listed{}, fmt.Errorf("get %s %s: %w", name, version, err)
	}
	if l.Entry.Name != name || l.Entry.Version != version {
		return Listed{}, fmt.Errorf("get %s %s: %w: it is %s %s", name, version, ErrAnswer, quote(l.Entry.Name), quote(l.Entry.Version))
	}
	l.FetchedAt = time.Now()
	return l, nil
}

// ParseListed reads one answer of the API (a ServerResponse: the entry
// under "server", the registry's _meta beside it), as Get does.
func ParseListed(data []byte) (Listed, error) { return parseListed(data, false) }

// parseListed reads a ServerResponse. An entry without the registry's
// _meta is active, and the latest when latest (it came from a listing of
// latest versions). A deleted one is returned with ErrDeleted.
func parseListed(data []byte, latest bool) (Listed, error) {
	var p parser
	top, ok := object(&p, "answer", data)
	if !ok {
		return Listed{}, fmt.Errorf("%w: %w", ErrAnswer, p.err())
	}
	server := top["server"]
	if server == nil {
		return Listed{}, fmt.Errorf("%w: no server in it", ErrAnswer)
	}
	e, err := Parse(server)
	if err != nil {
		return Listed{}, err
	}
	m, err := parseMeta(top["_meta"])
	if err != nil {
		return Listed{}, fmt.Errorf("%s %s: %w", e.Name, e.Version, err)
	}
	if !hasOfficial(top["_meta"]) {
		m.IsLatest = latest
	}
	raw, err := pin.CanonicalJSON(server)
	if err != nil { // Parse read it
		return Listed{}, fmt.Errorf("%w: %w", ErrEntry, err)
	}
	sum := sha256.Sum256(raw)
	l := Listed{Entry: e, Raw: raw, SHA256: hex.EncodeToString(sum[:]), Meta: m}
	if m.Status == statusDeleted {
		return l, fmt.Errorf("%s %s: %w", e.Name, e.Version, ErrDeleted)
	}
	return l, nil
}

// hasOfficial reports whether a _meta has the registry's part.
func hasOfficial(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m[officialKey] != nil
}

func (c *Client) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

// get sends a GET to the registry and reads at most max bytes of a 200
// answer. A failure to connect, and a 5xx or 429, wrap ErrUnreachable; a
// 404 wraps ErrNotFound.
func (c *Client) get(ctx context.Context, path string, max int64) ([]byte, error) {
	base, err := netguard.CheckURL(strings.TrimRight(c.BaseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("the registry URL: %w", err)
	}
	if c.HTTP == nil {
		return nil, errors.New("no HTTP client")
	}
	if c.HTTP.Timeout <= 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, requestTimeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.String()+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	switch s := resp.StatusCode; {
	case s == http.StatusOK:
	case s == http.StatusNotFound:
		return nil, ErrNotFound
	case s >= 500 || s == http.StatusTooManyRequests:
		return nil, fmt.Errorf("%w: it answered %s", ErrUnreachable, resp.Status)
	default:
		return nil, fmt.Errorf("%w: status %s", ErrAnswer, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("%w: over %d bytes", ErrAnswer, max)
	}
	return body, nil
}
