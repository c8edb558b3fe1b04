package registry

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Limits on a Store.
const (
	iconWorkers = 4                // icons fetched at once
	iconBudget  = 20 * time.Second // for the icons of one page
)

// ErrNotCached reports an entry or a page the cache does not have.
var ErrNotCached = errors.New("not in the registry cache")

// A Store caches one registry's entries and listing pages in the workspace
// database (tables registry_entries and registry_pages, package store), so
// that a page can show what is cached without waiting on the registry, and
// a listing that cannot reach it returns the cached one, saying when it was
// fetched. Deleted entries are never kept.
type Store struct {
	db     *sql.DB
	client *Client
	icons  *Icons // nil: no icons
	key    string // the registry's URL, as the cache keys it
	log    *slog.Logger
	now    func() time.Time
}

// StoreOptions configure a Store.
type StoreOptions struct {
	DB     *sql.DB
	Client *Client
	Icons  *Icons       // nil: entries get no icon
	Log    *slog.Logger // nil: discarded
}

// NewStore returns a Store.
func NewStore(o StoreOptions) *Store {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Store{db: o.DB, client: o.Client, icons: o.Icons, key: strings.TrimRight(o.Client.BaseURL, "/"), log: log, now: time.Now}
}

// queryKey is how the cache names a query (its cursor apart).
func queryKey(q Query) string {
	v := url.Values{}
	v.Set("search", q.Search)
	v.Set("limit", strconv.Itoa(q.Limit))
	v.Set("all", strconv.FormatBool(q.AllVersions))
	return v.Encode()
}

// List asks the registry for a page and caches it, with its entries and
// their icons. When the registry cannot be asked, or its answer is refused,
// it returns the cached page instead, its Stale saying why and its
// FetchedAt when; with nothing cached, the registry's error.
func (s *Store) List(ctx context.Context, q Query) (Page, error) {
	if q.Limit <= 0 {
		q.Limit = DefaultLimit
	}
	p, err := s.client.List(ctx, q)
	if err != nil {
		if ctx.Err() != nil {
			return Page{}, err
		}
		cached, cerr := s.CachedPage(ctx, q)
		if cerr != nil {
			return Page{}, err
		}
		cached.Stale = err
		return cached, nil
	}
	s.fillIcons(ctx, p.Entries)
	if err := s.savePage(ctx, q, p); err != nil {
		return Page{}, err
	}
	return p, nil
}

// CachedPage returns the cached page of q, without asking the registry:
// ErrNotCached if there is none.
func (s *Store) CachedPage(ctx context.Context, q Query) (Page, error) {
	if q.Limit <= 0 {
		q.Limit = DefaultLimit
	}
	var entries, fetched string
	var p Page
	err := s.db.QueryRowContext(ctx, `SELECT entries, next_cursor, fetched_at FROM registry_pages
		WHERE registry_url = ? AND query = ? AND cursor = ?`, s.key, queryKey(q), q.Cursor).Scan(&entries, &p.NextCursor, &fetched)
	if errors.Is(err, sql.ErrNoRows) {
		return Page{}, ErrNotCached
	}
	if err != nil {
		return Page{}, fmt.Errorf("read the registry cache: %w", err)
	}
	p.FetchedAt, _ = time.Parse(time.RFC3339Nano, fetched)
	var keys []Key
	if err := json.Unmarshal([]byte(entries), &keys); err != nil {
		return Page{}, fmt.Errorf("read the registry cache: %w", err)
	}
	for _, k := range keys {
		l, err := s.Cached(ctx, k.Name, k.Version)
		if err != nil {
			if errors.Is(err, ErrNotCached) {
				continue // deleted since
			}
			return Page{}, err
		}
		p.Entries = append(p.Entries, l)
	}
	return p, nil
}

// Get asks the registry for one version of an entry, caches it with its
// icon and returns it. A deleted entry is dropped from the cache and
// refused (ErrDeleted); an unknown one is ErrNotFound. When the registry
// cannot be reached, it returns the cached copy, its Stale saying why.
func (s *Store) Get(ctx context.Context, name, version string) (Listed, error) {
	l, err := s.client.Get(ctx, name, version)
	switch {
	case errors.Is(err, ErrDeleted):
		if _, derr := s.db.ExecContext(ctx, `DELETE FROM registry_entries WHERE registry_url = ? AND name = ? AND version = ?`,
			s.key, name, version); derr != nil {
			return Listed{}, fmt.Errorf("%w (and the cache: %w)", err, derr)
		}
		return Listed{}, err
	case errors.Is(err, ErrUnreachable) && ctx.Err() == nil:
		cached, cerr := s.Cached(ctx, name, version)
		if cerr != nil {
			return Listed{}, err
		}
		cached.Stale = err
		return cached, nil
	case err != nil:
		return Listed{}, err
	}
	one := []Listed{l}
	s.fillIcons(ctx, one)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Listed{}, fmt.Errorf("cache %s: %w", name, err)
	}
	defer tx.Rollback()
	if err := s.saveEntry(ctx, tx, one[0]); err != nil {
		return Listed{}, err
	}
	if err := tx.Commit(); err != nil {
		return Listed{}, fmt.Errorf("cache %s: %w", name, err)
	}
	return one[0], nil
}

// Cached returns the cached copy of one version of an entry, without
// asking the registry: ErrNotCached if there is none.
func (s *Store) Cached(ctx context.Context, name, version string) (Listed, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+entryColumns+` FROM registry_entries
		WHERE registry_url = ? AND name = ? AND version = ?`, s.key, name, version)
	if err != nil {
		return Listed{}, fmt.Errorf("read the registry cache: %w", err)
	}
	got, err := s.scan(rows)
	if err != nil {
		return Listed{}, err
	}
	if len(got) == 0 {
		return Listed{}, fmt.Errorf("%s %s: %w", name, version, ErrNotCached)
	}
	return got[0], nil
}

// Search looks through the cached latest versions of entries whose name,
// title or description holds text (case aside), in name order, limit at a
// time (0: DefaultLimit; at most MaxLimit) after cursor, the NextCursor of
// the page before. It never asks the registry.
func (s *Store) Search(ctx context.Context, text, cursor string, limit int) (Page, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	pattern := "%" + likeEscaper.Replace(strings.ToLower(text)) + "%"
	rows, err := s.db.QueryContext(ctx, `SELECT `+entryColumns+` FROM registry_entries
		WHERE registry_url = ? AND is_latest = 1 AND name > ? AND search_text LIKE ? ESCAPE '\'
		ORDER BY name LIMIT ?`, s.key, cursor, pattern, limit+1)
	if err != nil {
		return Page{}, fmt.Errorf("search the registry cache: %w", err)
	}
	got, err := s.scan(rows)
	if err != nil {
		return Page{}, err
	}
	var p Page
	if len(got) > limit {
		got = got[:limit]
		p.NextCursor = got[limit-1].Entry.Name
	}
	p.Entries = got
	for _, l := range got {
		if l.FetchedAt.After(p.FetchedAt) {
			p.FetchedAt = l.FetchedAt
		}
	}
	return p, nil
}

// likeEscaper escapes LIKE's wildcards, with '\' as the escape.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// entryColumns are what scan reads.
const entryColumns = `name, version, is_latest, status, status_message, entry, sha256, icon, fetched_at`

// scan reads rows of entryColumns. A row whose entry Parse now refuses
// (this Zero is stricter than the one that cached it) is left out and
// logged.
func (s *Store) scan(rows *sql.Rows) ([]Listed, error) {
	defer rows.Close()
	var out []Listed
	for rows.Next() {
		var l Listed
		var name, version, fetched string
		var latest int
		if err := rows.Scan(&name, &version, &latest, &l.Status, &l.StatusMessage, &l.Raw, &l.SHA256, &l.Icon, &fetched); err != nil {
			return nil, fmt.Errorf("read the registry cache: %w", err)
		}
		e, err := Parse(l.Raw)
		if err != nil {
			s.log.Warn("cached registry entry left out", "registry", s.key, "name", name, "version", version, "reason", err)
			continue
		}
		l.Entry, l.IsLatest = e, latest == 1
		l.FetchedAt, _ = time.Parse(time.RFC3339Nano, fetched)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the registry cache: %w", err)
	}
	return out, nil
}

// fillIcons sets each entry's Icon: the cached one when the entry is
// unchanged (same SHA-256) and had one, else fetched, a few at once,
// within iconBudget. An icon refused is logged and left "".
func (s *Store) fillIcons(ctx context.Context, entries []Listed) {
	if s.icons == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, iconBudget)
	defer cancel()
	sem := make(chan struct{}, iconWorkers)
	var wg sync.WaitGroup
	for i := range entries {
		l := &entries[i]
		if len(l.Entry.Icons) == 0 {
			continue
		}
		var icon string
		err := s.db.QueryRowContext(ctx, `SELECT icon FROM registry_entries WHERE registry_url = ? AND name = ? AND version = ? AND sha256 = ?`,
			s.key, l.Entry.Name, l.Entry.Version, l.SHA256).Scan(&icon)
		if err == nil && icon != "" {
			l.Icon = icon
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			u, err := s.icons.DataURL(ctx, l.Entry.Icons)
			if err != nil {
				s.log.Warn("registry icon refused", "registry", s.key, "name", l.Entry.Name, "version", l.Entry.Version, "reason", err)
				return
			}
			l.Icon = u
		})
	}
	wg.Wait()
}

// savePage caches a page's entries, drops those the registry deleted, and
// records the page, in one transaction.
func (s *Store) savePage(ctx context.Context, q Query, p Page) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("cache the registry page: %w", err)
	}
	defer tx.Rollback()
	keys := make([]Key, 0, len(p.Entries))
	for _, l := range p.Entries {
		if err := s.saveEntry(ctx, tx, l); err != nil {
			return err
		}
		keys = append(keys, Key{l.Entry.Name, l.Entry.Version})
	}
	for _, k := range p.Deleted {
		if _, err := tx.ExecContext(ctx, `DELETE FROM registry_entries WHERE registry_url = ? AND name = ? AND version = ?`,
			s.key, k.Name, k.Version); err != nil {
			return fmt.Errorf("cache the registry page: %w", err)
		}
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO registry_pages (registry_url, query, cursor, entries, next_cursor, fetched_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (registry_url, query, cursor) DO UPDATE SET entries = excluded.entries, next_cursor = excluded.next_cursor,
			fetched_at = excluded.fetched_at`,
		s.key, queryKey(q), q.Cursor, string(list), p.NextCursor, stamp(p.FetchedAt)); err != nil {
		return fmt.Errorf("cache the registry page: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("cache the registry page: %w", err)
	}
	return nil
}

// saveEntry caches one entry; when it is the latest, the other cached
// versions of its name are not.
func (s *Store) saveEntry(ctx context.Context, tx *sql.Tx, l Listed) error {
	e := l.Entry
	latest := 0
	if l.IsLatest {
		latest = 1
		if _, err := tx.ExecContext(ctx, `UPDATE registry_entries SET is_latest = 0 WHERE registry_url = ? AND name = ? AND version <> ?`,
			s.key, e.Name, e.Version); err != nil {
			return fmt.Errorf("cache %s: %w", e.Name, err)
		}
	}
	search := strings.ToLower(e.Name + "\n" + e.Title + "\n" + e.Description)
	if _, err := tx.ExecContext(ctx, `INSERT INTO registry_entries (registry_url, name, version, is_latest, status, status_message,
			title, description, search_text, entry, sha256, icon, fetched_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (registry_url, name, version) DO UPDATE SET is_latest = excluded.is_latest, status = excluded.status,
			status_message = excluded.status_message, title = excluded.title, description = excluded.description,
			search_text = excluded.search_text, entry = excluded.entry, sha256 = excluded.sha256, icon = excluded.icon,
			fetched_at = excluded.fetched_at`,
		s.key, e.Name, e.Version, latest, l.Status, l.StatusMessage, e.Title, e.Description, search, l.Raw, l.SHA256, l.Icon,
		stamp(l.FetchedAt)); err != nil {
		return fmt.Errorf("cache %s: %w", e.Name, err)
	}
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
