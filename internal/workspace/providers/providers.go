// Package providers keeps the workspace's model providers: the endpoints
// that threads call. Each has a name, a base URL (https, or plain http to
// loopback), the wire API it speaks (OpenAI chat completions, OpenAI
// Responses or Anthropic Messages: model.Config.WireAPI), whether it
// streams, the models it offers and a default one, and an API key that is write-only: sealed for the provider
// and the base URL it was set for, so that a key goes nowhere but the
// endpoint its owner gave it for, and never back out of the package but to
// the model client.
package providers

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/workspace/secrets"
)

// Errors.
var (
	ErrNotFound = errors.New("no such provider")
	ErrInvalid  = errors.New("invalid provider")
	ErrTaken    = errors.New("a provider of that name exists")
)

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

// A Provider is one endpoint's settings, as saved. The key itself is never
// in it: KeySet says whether one is saved, KeySetBy who set it.
type Provider struct {
	ID           int64     `json:"id"`
	Name         string    `json:"name"`
	BaseURL      string    `json:"base_url"`
	WireAPI      string    `json:"wire_api"` // model.WireChat, model.WireResponses or model.WireAnthropic
	Stream       bool      `json:"stream"`   // false: ask for whole answers (some local servers drop streamed tool calls)
	DefaultModel string    `json:"default_model"`
	Models       []string  `json:"models"` // as the endpoint last listed them
	KeySet       bool      `json:"key_set"`
	KeySetBy     string    `json:"key_set_by,omitempty"`
	Updated      time.Time `json:"updated"`
}

// A Manager saves providers in the workspace database, their keys sealed
// by box, each change in the audit log.
type Manager struct {
	db    *sql.DB
	box   *secrets.Box
	audit *audit.Log
	now   func() time.Time
	// http is the model clients' HTTP client: nil for the model package's
	// default, a test server's client in tests.
	http *http.Client
}

// New returns a manager.
func New(db *sql.DB, box *secrets.Box, log *audit.Log) *Manager {
	return &Manager{db: db, box: box, audit: log, now: time.Now}
}

// slot is where a provider's key is sealed: the provider, and a digest of
// the base URL it was set for. (Slot's ServerID holds the provider's id;
// the kind keeps it apart from every server's secret.)
func slot(id int64, baseURL string) secrets.Slot {
	sum := sha256.Sum256([]byte(baseURL))
	return secrets.Slot{ServerID: id, Kind: "provider", Name: "api_key", Fingerprint: "sha256:" + hex.EncodeToString(sum[:])}
}

// check validates p and returns it with its base URL canonical.
func check(p Provider) (Provider, error) {
	if !nameRE().MatchString(p.Name) {
		return p, fmt.Errorf("%w: name %q: want 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", ErrInvalid, p.Name)
	}
	raw := strings.TrimSpace(p.BaseURL)
	u, err := model.CheckBaseURL(raw)
	switch {
	case err != nil && !strings.Contains(raw, "://"):
		return p, fmt.Errorf("%w: the base URL has no scheme: write https://HOST/v1, or http://127.0.0.1:PORT/v1 for a server on this machine", ErrInvalid)
	case err != nil:
		return p, fmt.Errorf("%w: the base URL: %v", ErrInvalid, err)
	}
	p.BaseURL = strings.TrimRight(u.String(), "/")
	wire, err := model.CheckWireAPI(p.WireAPI)
	if err != nil {
		return p, fmt.Errorf("%w: wire API %q: want %s", ErrInvalid, p.WireAPI, strings.Join(model.WireAPIs, ", "))
	}
	p.WireAPI = wire
	if len(p.DefaultModel) > model.MaxModelID || strings.ContainsFunc(p.DefaultModel, unicode.IsControl) {
		return p, fmt.Errorf("%w: default model: at most %d bytes, no control characters", ErrInvalid, model.MaxModelID)
	}
	return p, nil
}

// A Key is what Save does with the API key: keep the one saved (while the
// base URL stays the same), set a new one, or clear it.
type Key struct {
	Set   bool   // replace the key with Value ("" clears it)
	Value string // never logged, never returned
}

// Save creates (p.ID 0) or updates provider p as actor. A key saved for
// another base URL is dropped when the URL changes, unless a new one is
// set with it: a key goes only to the endpoint it was given for.
func (m *Manager) Save(ctx context.Context, actor string, p Provider, key Key) (Provider, error) {
	p, err := check(p)
	if err != nil {
		return Provider{}, err
	}
	if strings.ContainsFunc(key.Value, unicode.IsControl) {
		return Provider{}, fmt.Errorf("%w: the API key holds a control character", ErrInvalid)
	}
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return Provider{}, err
	}
	defer tx.Rollback()
	now := stamp(m.now())
	action := "provider.update"
	dropped := false
	if p.ID == 0 {
		action = "provider.create"
		if err := tx.QueryRowContext(ctx, `INSERT INTO providers (name, base_url, wire_api, stream, default_model, models, api_key, key_set_by, updated_at)
			VALUES (?, ?, ?, ?, ?, '[]', NULL, '', ?) RETURNING id`, p.Name, p.BaseURL, p.WireAPI, p.Stream, p.DefaultModel, now).Scan(&p.ID); err != nil {
			return Provider{}, taken(err)
		}
	} else {
		var oldURL string
		err := tx.QueryRowContext(ctx, `SELECT base_url FROM providers WHERE id = ?`, p.ID).Scan(&oldURL)
		if errors.Is(err, sql.ErrNoRows) {
			return Provider{}, fmt.Errorf("%w: %d", ErrNotFound, p.ID)
		}
		if err != nil {
			return Provider{}, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE providers SET name = ?, base_url = ?, wire_api = ?, stream = ?, default_model = ?, updated_at = ? WHERE id = ?`,
			p.Name, p.BaseURL, p.WireAPI, p.Stream, p.DefaultModel, now, p.ID); err != nil {
			return Provider{}, taken(err)
		}
		if oldURL != p.BaseURL && !key.Set {
			res, err := tx.ExecContext(ctx, `UPDATE providers SET api_key = NULL, key_set_by = '', models = '[]' WHERE id = ? AND api_key IS NOT NULL`, p.ID)
			if err != nil {
				return Provider{}, err
			}
			n, _ := res.RowsAffected()
			dropped = n == 1
		}
	}
	if key.Set {
		var sealed []byte
		setBy := ""
		if key.Value != "" {
			if sealed, err = m.box.Seal(slot(p.ID, p.BaseURL), key.Value); err != nil {
				return Provider{}, err
			}
			setBy = actor
		}
		if _, err := tx.ExecContext(ctx, `UPDATE providers SET api_key = ?, key_set_by = ? WHERE id = ?`, sealed, setBy, p.ID); err != nil {
			return Provider{}, err
		}
	}
	detail := map[string]string{"name": p.Name, "base_url": p.BaseURL, "wire_api": p.WireAPI, "stream": strconv.FormatBool(p.Stream), "default_model": p.DefaultModel}
	switch {
	case key.Set && key.Value != "":
		detail["key"] = "set"
	case key.Set:
		detail["key"] = "cleared"
	case dropped:
		detail["key"] = "dropped: the base URL changed"
	}
	if err := tx.Commit(); err != nil {
		return Provider{}, err
	}
	if _, err := m.audit.Append(audit.Event{Actor: actor, Action: action, Target: target(p.ID), Detail: detail}); err != nil {
		return Provider{}, err
	}
	return m.Get(ctx, p.ID)
}

func target(id int64) string { return "provider:" + strconv.FormatInt(id, 10) }

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// taken says a unique name was taken, or returns err.
func taken(err error) error {
	if database.IsUnique(err) {
		return ErrTaken
	}
	return err
}

// Get returns provider id, without its key.
func (m *Manager) Get(ctx context.Context, id int64) (Provider, error) {
	ps, err := m.list(ctx, ` WHERE id = ?`, id)
	if err != nil {
		return Provider{}, err
	}
	if len(ps) == 0 {
		return Provider{}, fmt.Errorf("%w: %d", ErrNotFound, id)
	}
	return ps[0], nil
}

// List returns every provider by name, without keys.
func (m *Manager) List(ctx context.Context) ([]Provider, error) {
	return m.list(ctx, ` ORDER BY name`)
}

func (m *Manager) list(ctx context.Context, where string, args ...any) ([]Provider, error) {
	rows, err := m.db.QueryContext(ctx, `SELECT id, name, base_url, wire_api, stream, default_model, models, api_key IS NOT NULL, key_set_by, updated_at FROM providers`+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Provider{}
	for rows.Next() {
		var (
			p               Provider
			models, updated string
		)
		if err := rows.Scan(&p.ID, &p.Name, &p.BaseURL, &p.WireAPI, &p.Stream, &p.DefaultModel, &models, &p.KeySet, &p.KeySetBy, &updated); err != nil {
			return nil, err
		}
		json.Unmarshal([]byte(models), &p.Models)
		if p.Models == nil {
			p.Models = []string{}
		}
		p.Updated, _ = time.Parse(time.RFC3339Nano, updated)
		out = append(out, p)
	}
	return out, rows.Err()
}

// Delete deletes provider id and its key.
func (m *Manager) Delete(ctx context.Context, actor string, id int64) error {
	res, err := m.db.ExecContext(ctx, `DELETE FROM providers WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: %d", ErrNotFound, id)
	}
	_, err = m.audit.Append(audit.Event{Actor: actor, Action: "provider.delete", Target: target(id)})
	return err
}

// Client returns the model client of provider id, with its key opened for
// the base URL it is saved with, and the provider. A key that does not
// open (it was sealed for another URL or workspace) is an error, never a
// request without it.
func (m *Manager) Client(ctx context.Context, id int64) (*model.Client, Provider, error) {
	p, err := m.Get(ctx, id)
	if err != nil {
		return nil, Provider{}, err
	}
	var sealed []byte
	if err := m.db.QueryRowContext(ctx, `SELECT api_key FROM providers WHERE id = ?`, id).Scan(&sealed); err != nil {
		return nil, Provider{}, err
	}
	key := ""
	if sealed != nil {
		if key, err = m.box.Open(slot(id, p.BaseURL), sealed); err != nil {
			return nil, Provider{}, fmt.Errorf("provider %q: its API key does not open for %s: set it again", p.Name, p.BaseURL)
		}
	}
	return model.New(model.Config{BaseURL: p.BaseURL, APIKey: key, Model: p.DefaultModel, WireAPI: p.WireAPI}, m.http), p, nil
}

// ReachTimeout bounds [Manager.Reach].
const ReachTimeout = 5 * time.Second

// Reach asks p's endpoint for its model list without the key, through the
// HTTP client and policy its threads use, and reports whether anything
// answered within ReachTimeout (any HTTP status counts). An error wraps
// [model.ErrUnreachable] and says why in words. Nothing is saved.
func (m *Manager) Reach(ctx context.Context, p Provider) error {
	ctx, cancel := context.WithTimeout(ctx, ReachTimeout)
	defer cancel()
	return model.New(model.Config{BaseURL: p.BaseURL, WireAPI: p.WireAPI}, m.http).Ping(ctx)
}

// Discover asks provider id's endpoint for its models (GET /models, or
// /v1/models with Anthropic's headers) and
// saves the list; a default model no longer listed is kept, and shown as
// such by the caller.
func (m *Manager) Discover(ctx context.Context, actor string, id int64) (Provider, error) {
	c, p, err := m.Client(ctx, id)
	if err != nil {
		return Provider{}, err
	}
	ids, err := c.Models(ctx)
	if err != nil {
		return Provider{}, fmt.Errorf("provider %q: %w", p.Name, err)
	}
	data, _ := json.Marshal(ids)
	if _, err := m.db.ExecContext(ctx, `UPDATE providers SET models = ? WHERE id = ? AND base_url = ?`, string(data), id, p.BaseURL); err != nil {
		return Provider{}, err
	}
	if _, err := m.audit.Append(audit.Event{Actor: actor, Action: "provider.models", Target: target(id),
		Detail: map[string]string{"count": strconv.Itoa(len(ids))}}); err != nil {
		return Provider{}, err
	}
	return m.Get(ctx, id)
}
