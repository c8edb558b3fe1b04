package servers

import (
	"context"
	"crypto/tls"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/workspace/logo"
	"github.com/zero-dev/zero/internal/workspace/secrets"
)

// Statuses.
const (
	StatusUntested = "untested"
	StatusOK       = "ok"
	StatusFailed   = "failed"
)

// ErrNotFound reports an unknown server.
var ErrNotFound = errors.New("no such server")

// An ApprovalRequired error carries the preview of the configuration as it
// is now: the request echoed no fingerprint, or one that does not match.
type ApprovalRequired struct{ Preview Preview }

func (e *ApprovalRequired) Error() string {
	return "approval required: the configuration's fingerprint is " + e.Preview.Fingerprint + "; review the preview and send it back"
}

// A Tool is one tool a Test found, with the hash of what a model reads of it.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Hash        string `json:"hash"`
}

// A Server is what the API shows of a server: its configuration (names, no
// values), its state and the names of its stored secrets.
type Server struct {
	ID                  int64    `json:"id"`
	Config              Config   `json:"config"`
	Fingerprint         string   `json:"fingerprint"`
	Approved            bool     `json:"approved"`
	ApprovedFingerprint string   `json:"approved_fingerprint,omitempty"`
	Enabled             bool     `json:"enabled"`
	Status              string   `json:"status"`
	Tools               []Tool   `json:"tools"`
	LastError           string   `json:"last_error,omitempty"`
	Logo                string   `json:"logo,omitempty"` // a data: URL, from the icon the server declared at its last Test
	EnvSecrets          []string `json:"env_secrets"`
	HeaderSecrets       []string `json:"header_secrets"`
	CreatedAt           string   `json:"created_at"`
	UpdatedAt           string   `json:"updated_at"`
}

// Options configure a Manager.
type Options struct {
	DB        *sql.DB
	Box       *secrets.Box
	Audit     *audit.Log
	Policy    Policy
	Workspace *fsroot.Set // the thread workspace: a stdio server's cwd is inside it
	// TLS is for tests that Test an https server with its own certificate;
	// nil means the system's roots.
	TLS *tls.Config
	// Resolver is for tests that make a name resolve to a private address;
	// nil means the system's resolver.
	Resolver netguard.Resolver
	// TestTimeout bounds a Test action; zero means 30 seconds.
	TestTimeout time.Duration
}

// A Manager keeps the servers. It is safe for concurrent use.
type Manager struct {
	o     Options
	now   func() time.Time
	icons *logo.Fetcher
}

// NewManager returns a manager.
func NewManager(o Options) *Manager {
	if o.TestTimeout == 0 {
		o.TestTimeout = 30 * time.Second
	}
	// Icons come from public hosts, or from the allowed local origins.
	var allow []netip.Prefix
	for _, origin := range o.Policy.LocalOrigins {
		allow = append(allow, o.Policy.allowFor(origin)...)
	}
	icons := logo.NewFetcher(netguard.NewClient(netguard.Options{
		BlockPrivate: true, Allow: allow, Timeout: 10 * time.Second, TLS: o.TLS, Resolver: o.Resolver,
	}))
	return &Manager{o: o, now: time.Now, icons: icons}
}

// Preview validates c and returns what a person approves.
func (m *Manager) Preview(c Config, s Secrets) (Preview, error) {
	if err := m.o.Policy.Validate(&c, s); err != nil {
		return Preview{}, err
	}
	return Preview{Config: c, Fingerprint: c.Fingerprint(), Warnings: m.o.Policy.warnings(c)}, nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Create saves a new server; it runs nothing. With a fingerprint it is an
// approval: the fingerprint must match c, and enable may switch the server
// on. Without one the server is saved unapproved and disabled (a draft a
// person approves later); enable then is refused with ApprovalRequired.
func (m *Manager) Create(ctx context.Context, actor string, c Config, s Secrets, fingerprint string, enable bool) (Server, error) {
	p, err := m.Preview(c, s)
	if err != nil {
		return Server{}, err
	}
	c = p.Config
	if fingerprint != "" && fingerprint != p.Fingerprint || fingerprint == "" && enable {
		return Server{}, &ApprovalRequired{p}
	}
	cfg, _ := json.Marshal(c)
	now := stamp(m.now())
	tx, err := m.o.DB.BeginTx(ctx, nil)
	if err != nil {
		return Server{}, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO servers (name, config, approved_fingerprint, enabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
		c.Name, string(cfg), fingerprint, enable, now, now)
	if err != nil {
		return Server{}, fmt.Errorf("a server named %q exists already, or the database refused it: %w", c.Name, err)
	}
	id, _ := res.LastInsertId()
	if err := m.sealSecrets(ctx, tx, id, p.Fingerprint, s); err != nil {
		return Server{}, err
	}
	action := "server.create"
	if fingerprint == "" {
		action = "server.draft"
	}
	if err := m.record(actor, action, id, p.Fingerprint, map[string]string{"enabled": strconv.FormatBool(enable)}); err != nil {
		return Server{}, err
	}
	if err := tx.Commit(); err != nil {
		return Server{}, err
	}
	return m.Get(ctx, id)
}

// Approve approves a server's configuration as it stands, if fingerprint
// matches it; enable switches the server on too.
func (m *Manager) Approve(ctx context.Context, actor string, id int64, fingerprint string, enable bool) (Server, error) {
	return m.change(ctx, id, func(tx *sql.Tx, cur *row) (string, map[string]string, error) {
		p := m.previewOf(cur.config)
		if fingerprint != p.Fingerprint {
			return "", nil, &ApprovalRequired{p}
		}
		_, err := tx.ExecContext(ctx, `UPDATE servers SET approved_fingerprint = ?, enabled = enabled OR ?, updated_at = ? WHERE id = ?`,
			fingerprint, enable, stamp(m.now()), id)
		return "server.approve", map[string]string{"enabled": strconv.FormatBool(enable || cur.enabled)}, err
	}, actor)
}

// Update replaces a server's configuration: an approval, so fingerprint
// must match the new configuration. Secrets given replace stored ones;
// stored secrets for names the new configuration still declares are kept
// (sealed again for the new fingerprint), the others deleted. A change to
// any code-relevant field resets the status to untested and clears the
// recorded tools.
func (m *Manager) Update(ctx context.Context, actor string, id int64, c Config, s Secrets, fingerprint string) (Server, error) {
	p, err := m.Preview(c, s)
	if err != nil {
		return Server{}, err
	}
	c = p.Config
	if fingerprint != p.Fingerprint {
		return Server{}, &ApprovalRequired{p}
	}
	return m.change(ctx, id, func(tx *sql.Tx, cur *row) (string, map[string]string, error) {
		oldFP := cur.config.Fingerprint()
		kept, err := m.openSecrets(ctx, tx, id, oldFP)
		if err != nil {
			return "", nil, err
		}
		merged := MergeSecrets(c, kept, s)
		if _, err := tx.ExecContext(ctx, `DELETE FROM secrets WHERE server_id = ?`, id); err != nil {
			return "", nil, err
		}
		if err := m.sealSecrets(ctx, tx, id, p.Fingerprint, merged); err != nil {
			return "", nil, err
		}
		cfg, _ := json.Marshal(c)
		status, tools := cur.status, cur.tools
		if oldFP != p.Fingerprint {
			status, tools = StatusUntested, "[]"
		}
		_, err = tx.ExecContext(ctx, `UPDATE servers SET name = ?, config = ?, approved_fingerprint = ?, status = ?, tools = ?, last_error = '', updated_at = ? WHERE id = ?`,
			c.Name, string(cfg), p.Fingerprint, status, tools, stamp(m.now()), id)
		return "server.edit", map[string]string{"previous_fingerprint": oldFP}, err
	}, actor)
}

// MergeSecrets keeps the earlier values for the names c still declares,
// and lets the given values replace them.
func MergeSecrets(c Config, earlier, given Secrets) Secrets {
	out := Secrets{Env: map[string]string{}, Headers: map[string]string{}}
	for name, v := range earlier.Env {
		if slices.Contains(c.Env, name) {
			out.Env[name] = v
		}
	}
	for name, v := range earlier.Headers {
		if slices.Contains(c.Headers, name) {
			out.Headers[name] = v
		}
	}
	maps.Copy(out.Env, given.Env)
	maps.Copy(out.Headers, given.Headers)
	return out
}

// Enable switches a server on: an approval, so fingerprint must match the
// configuration, and the configuration must be the approved one.
func (m *Manager) Enable(ctx context.Context, actor string, id int64, fingerprint string) (Server, error) {
	return m.change(ctx, id, func(tx *sql.Tx, cur *row) (string, map[string]string, error) {
		p := m.previewOf(cur.config)
		if fingerprint != p.Fingerprint || cur.approved != p.Fingerprint {
			return "", nil, &ApprovalRequired{p}
		}
		_, err := tx.ExecContext(ctx, `UPDATE servers SET enabled = 1, updated_at = ? WHERE id = ?`, stamp(m.now()), id)
		return "server.enable", nil, err
	}, actor)
}

// Disable switches a server off. It never needs an approval.
func (m *Manager) Disable(ctx context.Context, actor string, id int64) (Server, error) {
	return m.change(ctx, id, func(tx *sql.Tx, cur *row) (string, map[string]string, error) {
		_, err := tx.ExecContext(ctx, `UPDATE servers SET enabled = 0, updated_at = ? WHERE id = ?`, stamp(m.now()), id)
		return "server.disable", nil, err
	}, actor)
}

// Delete removes a server and its secrets.
func (m *Manager) Delete(ctx context.Context, actor string, id int64) error {
	_, err := m.change(ctx, id, func(tx *sql.Tx, cur *row) (string, map[string]string, error) {
		_, err := tx.ExecContext(ctx, `DELETE FROM servers WHERE id = ?`, id)
		return "server.delete", nil, err
	}, actor)
	return err
}

// row is a server as stored.
type row struct {
	id               int64
	config           Config
	approved         string
	enabled          bool
	status, tools    string
	lastError        string
	logo             string
	created, updated string
}

func scanRow(scan func(...any) error) (*row, error) {
	var r row
	var cfg string
	if err := scan(&r.id, &cfg, &r.approved, &r.enabled, &r.status, &r.tools, &r.lastError, &r.logo, &r.created, &r.updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(cfg), &r.config); err != nil {
		return nil, fmt.Errorf("server %d: stored configuration: %w", r.id, err)
	}
	return &r, nil
}

const selectRow = `SELECT id, config, approved_fingerprint, enabled, status, tools, last_error, logo, created_at, updated_at FROM servers`

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (m *Manager) load(ctx context.Context, q querier, id int64) (*row, error) {
	r, err := scanRow(q.QueryRowContext(ctx, selectRow+` WHERE id = ?`, id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return r, err
}

// change runs fn on server id in a transaction and records its action in
// the audit log, with the fingerprint of the configuration after it.
func (m *Manager) change(ctx context.Context, id int64, fn func(*sql.Tx, *row) (string, map[string]string, error), actor string) (Server, error) {
	tx, err := m.o.DB.BeginTx(ctx, nil)
	if err != nil {
		return Server{}, err
	}
	defer tx.Rollback()
	cur, err := m.load(ctx, tx, id)
	if err != nil {
		return Server{}, err
	}
	action, detail, err := fn(tx, cur)
	if err != nil {
		return Server{}, err
	}
	fp := cur.config.Fingerprint()
	if after, err := m.load(ctx, tx, id); err == nil {
		fp = after.config.Fingerprint()
	}
	if err := m.record(actor, action, id, fp, detail); err != nil {
		return Server{}, err
	}
	if err := tx.Commit(); err != nil {
		return Server{}, err
	}
	if action == "server.delete" {
		return Server{}, nil
	}
	return m.Get(ctx, id)
}

// record appends an audit record. It is written before the transaction
// commits, so no change goes unrecorded; a record of a change that then
// fails to commit can exist.
func (m *Manager) record(actor, action string, id int64, fingerprint string, detail map[string]string) error {
	_, err := m.o.Audit.Append(audit.Event{Actor: actor, Action: action, Target: "server:" + strconv.FormatInt(id, 10), Fingerprint: fingerprint, Detail: detail})
	return err
}

// Warnings lists what deserves a second look in a stored configuration.
// Unlike Preview it does not validate c again, so a server whose
// configuration today's policy would refuse still shows its warnings.
func (m *Manager) Warnings(c Config) []Warning { return m.o.Policy.warnings(c) }

func (m *Manager) previewOf(c Config) Preview {
	return Preview{Config: c, Fingerprint: c.Fingerprint(), Warnings: m.o.Policy.warnings(c)}
}

// Get returns one server.
func (m *Manager) Get(ctx context.Context, id int64) (Server, error) {
	r, err := m.load(ctx, m.o.DB, id)
	if err != nil {
		return Server{}, err
	}
	return m.view(ctx, r)
}

// List returns every server, by name.
func (m *Manager) List(ctx context.Context) ([]Server, error) {
	rows, err := m.o.DB.QueryContext(ctx, selectRow+` ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var rs []*row
	for rows.Next() {
		r, err := scanRow(rows.Scan)
		if err != nil {
			rows.Close()
			return nil, err
		}
		rs = append(rs, r)
	}
	rows.Close()
	out := []Server{}
	for _, r := range rs {
		s, err := m.view(ctx, r)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (m *Manager) view(ctx context.Context, r *row) (Server, error) {
	fp := r.config.Fingerprint()
	s := Server{
		ID: r.id, Config: r.config, Fingerprint: fp, Approved: r.approved != "" && r.approved == fp,
		ApprovedFingerprint: r.approved, Enabled: r.enabled, Status: r.status, LastError: r.lastError, Logo: r.logo,
		CreatedAt: r.created, UpdatedAt: r.updated, Tools: []Tool{}, EnvSecrets: []string{}, HeaderSecrets: []string{},
	}
	json.Unmarshal([]byte(r.tools), &s.Tools)
	rows, err := m.o.DB.QueryContext(ctx, `SELECT kind, name FROM secrets WHERE server_id = ? ORDER BY kind, name`, r.id)
	if err != nil {
		return Server{}, err
	}
	defer rows.Close()
	for rows.Next() {
		var kind, name string
		if err := rows.Scan(&kind, &name); err != nil {
			return Server{}, err
		}
		if kind == "env" {
			s.EnvSecrets = append(s.EnvSecrets, name)
		} else {
			s.HeaderSecrets = append(s.HeaderSecrets, name)
		}
	}
	return s, rows.Err()
}

func (m *Manager) sealSecrets(ctx context.Context, q querier, id int64, fingerprint string, s Secrets) error {
	for kind, values := range map[string]map[string]string{"env": s.Env, "header": s.Headers} {
		for name, value := range values {
			sealed, err := m.o.Box.Seal(secrets.Slot{ServerID: id, Kind: kind, Name: name, Fingerprint: fingerprint}, value)
			if err != nil {
				return err
			}
			if _, err := q.ExecContext(ctx, `INSERT OR REPLACE INTO secrets (server_id, kind, name, sealed) VALUES (?, ?, ?, ?)`, id, kind, name, sealed); err != nil {
				return err
			}
		}
	}
	return nil
}

// openSecrets opens a server's secrets for the configuration whose
// fingerprint is given. A secret sealed for another configuration does not
// open: the call fails rather than release it.
func (m *Manager) openSecrets(ctx context.Context, q querier, id int64, fingerprint string) (Secrets, error) {
	rows, err := q.QueryContext(ctx, `SELECT kind, name, sealed FROM secrets WHERE server_id = ?`, id)
	if err != nil {
		return Secrets{}, err
	}
	defer rows.Close()
	out := Secrets{Env: map[string]string{}, Headers: map[string]string{}}
	for rows.Next() {
		var kind, name string
		var sealed []byte
		if err := rows.Scan(&kind, &name, &sealed); err != nil {
			return Secrets{}, err
		}
		value, err := m.o.Box.Open(secrets.Slot{ServerID: id, Kind: kind, Name: name, Fingerprint: fingerprint}, sealed)
		if err != nil {
			return Secrets{}, fmt.Errorf("%s secret %s: %w", kind, name, err)
		}
		if kind == "env" {
			out.Env[name] = value
		} else {
			out.Headers[name] = value
		}
	}
	return out, rows.Err()
}
