package servers

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/workspace/logo"
	"github.com/zero-dev/zero/internal/workspace/runtime"
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

// A Server is what the API shows of a server: its configuration (names, no
// values) as it would run now, its state and the names of its stored
// secrets, with who set each.
type Server struct {
	ID          int64  `json:"id"`
	Config      Config `json:"config"`
	Fingerprint string `json:"fingerprint"`
	// PinnedProgram is the program the saved configuration names; it
	// differs from Config.Program when the command now resolves elsewhere,
	// and the server is then not approved.
	PinnedProgram       string         `json:"pinned_program,omitempty"`
	Approved            bool           `json:"approved"`
	ApprovedFingerprint string         `json:"approved_fingerprint,omitempty"`
	Enabled             bool           `json:"enabled"`
	Status              string         `json:"status"`
	LastError           string         `json:"last_error,omitempty"`
	Logo                string         `json:"logo,omitempty"` // a data: URL, from the icon the server declared at its last Test
	EnvSecrets          []string       `json:"env_secrets"`
	HeaderSecrets       []string       `json:"header_secrets"`
	Secrets             []StoredSecret `json:"secrets"`
	CreatedAt           string         `json:"created_at"`
	UpdatedAt           string         `json:"updated_at"`

	// The drift gate, under the approved fingerprint. Tools are the tools
	// offered to callers: in the approved set, unchanged in the last
	// listing, not switched off. ListedTools are the last listing (a Test's
	// or a connection's; the approved set before any), in full, for review.
	// Quarantined names the listed tools that are changed or new, offered to
	// no caller until the owner approves ListedToolSetHash; Drift says how
	// the listing differs from the approved set (ToolSetHash), nil when it
	// does not.
	Tools             []runtime.Tool `json:"tools"`
	ListedTools       []runtime.Tool `json:"listed_tools"`
	Quarantined       []string       `json:"quarantined"`
	Drift             *runtime.Drift `json:"drift,omitempty"`
	ToolSetHash       string         `json:"tool_set_hash,omitempty"`
	ListedToolSetHash string         `json:"listed_tool_set_hash,omitempty"`
	DisabledTools     []string       `json:"disabled_tools"`
	DebugLog          bool           `json:"debug_log"`
	// MaxCalls is the most calls the workspace makes to the server at
	// once (SetMaxCalls); more wait their turn.
	MaxCalls int `json:"max_calls"`
}

// A StoredSecret names a stored secret value and who set it (an audit
// actor, such as "user:owner" or "token:3:owner").
type StoredSecret struct {
	Kind  string `json:"kind"` // "env" or "header"
	Name  string `json:"name"`
	SetBy string `json:"set_by"`
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
	// LocalCA, if set, is trusted besides the system's roots for the
	// allowed local origins (their servers and the icons there), and for
	// no other host (see LoadLocalCA and tlsFor).
	LocalCA *x509.CertPool
	// Resolver is for tests that make a name resolve to a private address;
	// nil means the system's resolver.
	Resolver netguard.Resolver
	// TestTimeout bounds a Test action; zero means 30 seconds.
	TestTimeout time.Duration
	// Runtime runs the servers (required): a Test's listing, the epoch a
	// Spec carries, and the connections it stops when a server is disabled,
	// edited or deleted.
	Runtime *runtime.Runtime
	// Changed, if set, hears of server id after every committed change to
	// it, and after a runtime connection's listing of its tools is recorded
	// (the /mcp endpoint then lists its tools again). It must not block.
	// On PostgreSQL the change is also sent on Channel, for the other
	// replicas.
	Changed func(id int64)
	// Log receives what goes wrong in the background; nil discards it.
	Log *slog.Logger
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
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{o: o, now: time.Now}
	m.icons = logo.NewFetcher(m.iconClient())
	return m
}

// iconClient is the client icons are fetched with. An icon at an allowed
// local origin is reached as a server at that origin is (allowFor, tlsFor):
// that origin's address, trusting the local CA besides the system's roots;
// any other icon at a public address only, with the system's roots. Each
// has a netguard client of its own, made here once.
func (m *Manager) iconClient() *http.Client {
	reach := func(rawURL string) http.RoundTripper {
		// Each gets its own copy of the TLS configuration: net/http
		// writes to it.
		return netguard.NewClient(netguard.Options{BlockPrivate: true, Schemes: netguard.HTTPSOnly,
			Allow: m.o.Policy.allowFor(rawURL), TLS: m.tlsFor(rawURL).Clone(), Resolver: m.o.Resolver}).Transport
	}
	t := &byOrigin{local: map[string]http.RoundTripper{}, public: reach("")}
	for _, o := range m.o.Policy.LocalOrigins {
		t.local[o] = reach(o)
	}
	return &http.Client{Transport: t, Timeout: 10 * time.Second}
}

// IconClient is the client for what a server or a registry entry
// declares elsewhere (an icon, an mcpb bundle): iconClient's.
func (m *Manager) IconClient() *http.Client { return m.iconClient() }

// byOrigin sends a request through the transport of its origin, if it has
// one, else through public.
type byOrigin struct {
	local  map[string]http.RoundTripper
	public http.RoundTripper
}

func (t *byOrigin) RoundTrip(r *http.Request) (*http.Response, error) {
	if rt, ok := t.local[origin(r.URL)]; ok {
		return rt.RoundTrip(r)
	}
	return t.public.RoundTrip(r)
}

// A NameTakenError reports a name another server has.
type NameTakenError struct{ Name string }

func (e *NameTakenError) Error() string {
	return fmt.Sprintf("a server named %q exists already: choose another name", e.Name)
}

// A NotRunnableError refuses to approve or enable a configuration that
// runs nothing: a stdio server whose command resolves to no program.
// Preview is the configuration as it is now, with its warnings.
type NotRunnableError struct {
	Preview Preview
	Why     string
}

func (e *NotRunnableError) Error() string {
	return "the configuration cannot run, so it is not approved: " + e.Why +
		"; make the command name a program (install it, or change the command), then review it again"
}

// canRun refuses p, an approval's preview, when it runs nothing.
func (m *Manager) canRun(p Preview) error {
	if why := m.NotRunnable(p.Config); why != "" {
		return &NotRunnableError{Preview: p, Why: why}
	}
	return nil
}

// NotRunnable says why c, as it would run now (see Preview and
// Server.Config), runs nothing; "" when it runs.
func (m *Manager) NotRunnable(c Config) string {
	if c.Runnable() {
		return ""
	}
	if _, err := m.program(c); err != nil {
		return err.Error()
	}
	return "the command resolves to no executable file"
}

// A StaleError reports an edit reviewed against a configuration that has
// changed since: Current is the server as it is now, Preview the edit's
// preview against it.
type StaleError struct {
	Current Server
	Preview Preview
}

func (e *StaleError) Error() string {
	return "the server changed after this edit was reviewed: review the edit again against its configuration as it is now"
}

// Preview validates c and returns what a person approves: c with its
// program resolved as it would run now, its fingerprint and the warnings
// about it. id is the server c would replace, 0 for a new one; a name
// another server has is refused with a NameTakenError.
func (m *Manager) Preview(ctx context.Context, id int64, c Config, s Secrets) (Preview, error) {
	return m.preview(ctx, m.o.DB, id, c, s)
}

func (m *Manager) preview(ctx context.Context, q querier, id int64, c Config, s Secrets) (Preview, error) {
	if err := m.o.Policy.Validate(&c, s); err != nil {
		return Preview{}, err
	}
	var other int64
	err := q.QueryRowContext(ctx, `SELECT id FROM servers WHERE name = ? AND id != ?`, c.Name, id).Scan(&other)
	switch {
	case err == nil:
		return Preview{}, &NameTakenError{Name: c.Name}
	case !errors.Is(err, sql.ErrNoRows):
		return Preview{}, err
	}
	return m.previewOf(m.current(c)), nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Create saves a new server; it runs nothing. With a fingerprint it is an
// approval: the fingerprint must match c, and enable may switch the server
// on. Without one the server is saved unapproved and disabled (a draft a
// person approves later); enable then is refused with ApprovalRequired.
// The secrets given are recorded as set by actor.
func (m *Manager) Create(ctx context.Context, actor string, c Config, s Secrets, fingerprint string, enable bool) (Server, error) {
	tx, err := m.o.DB.BeginTx(ctx, nil)
	if err != nil {
		return Server{}, err
	}
	defer tx.Rollback()
	p, err := m.preview(ctx, tx, 0, c, s)
	if err != nil {
		return Server{}, err
	}
	c = p.Config
	if fingerprint != "" && fingerprint != p.Fingerprint || fingerprint == "" && enable {
		return Server{}, &ApprovalRequired{p}
	}
	if fingerprint != "" {
		if err := m.canRun(p); err != nil {
			return Server{}, err
		}
	}
	cfg, _ := json.Marshal(c)
	now := stamp(m.now())
	var id int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO servers (name, config, approved_fingerprint, enabled, encoding, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		c.Name, string(cfg), fingerprint, enable, encoding, now, now).Scan(&id); err != nil {
		return Server{}, err
	}
	if err := m.sealSecrets(ctx, tx, id, p.Fingerprint, s, func(string, string) string { return actor }); err != nil {
		return Server{}, err
	}
	action := "server.create"
	if fingerprint == "" {
		action = "server.draft"
	}
	detail := map[string]string{"enabled": strconv.FormatBool(enable)}
	if names := secretNames(s); names != "" {
		detail["secrets_set"] = names
	}
	if err := m.record(actor, action, id, c.Name, p.Fingerprint, detail); err != nil {
		return Server{}, err
	}
	if err := tx.Commit(); err != nil {
		return Server{}, err
	}
	return m.Get(ctx, id)
}

// encoding is the fingerprint encoding new secrets are sealed under (pin's
// v2); a server saved under v1 is sealed again by Upgrade.
const encoding = 2

// Approve approves a server's configuration as it would run now, if
// fingerprint matches it; enable switches the server on too. Today's
// policy must accept the configuration. If its command now resolves to
// another program than the saved one, the saved configuration takes the
// new program (its secrets sealed again, its status untested again).
func (m *Manager) Approve(ctx context.Context, actor string, id int64, fingerprint string, enable bool) (Server, error) {
	return m.changeStopping(ctx, id, actor, func(tx *sql.Tx, cur *row) (string, map[string]string, error) {
		p, err := m.preview(ctx, tx, id, cur.config, Secrets{})
		if err != nil {
			return "", nil, err
		}
		if fingerprint != p.Fingerprint {
			return "", nil, &ApprovalRequired{p}
		}
		if err := m.canRun(p); err != nil {
			return "", nil, err
		}
		detail := map[string]string{"enabled": strconv.FormatBool(enable || cur.enabled)}
		if p.Fingerprint != cur.config.Fingerprint() {
			if err := m.replace(ctx, tx, actor, cur, p.Config, Secrets{}); err != nil {
				return "", nil, err
			}
			detail["changed"] = strings.Join(ChangedFields(cur.config, p.Config), ",")
		}
		_, err = tx.ExecContext(ctx, `UPDATE servers SET approved_fingerprint = ?, enabled = CASE WHEN ? = 1 THEN 1 ELSE enabled END, updated_at = ? WHERE id = ?`,
			fingerprint, enable, stamp(m.now()), id)
		return "server.approve", detail, err
	})
}

// Update replaces a server's configuration: an approval, so fingerprint
// must match the new configuration, and base must be the fingerprint of
// the configuration the edit was reviewed against, which must still be the
// server's (else a StaleError). Secrets given replace stored ones, and are
// recorded as set by actor; stored secrets for names the new configuration
// still declares are kept (sealed again for the new fingerprint), the others
// deleted. A change to any code-relevant field resets the status to
// untested and approves no tools: the next Test records a new tool set.
func (m *Manager) Update(ctx context.Context, actor string, id int64, c Config, s Secrets, fingerprint, base string) (Server, error) {
	return m.changeStopping(ctx, id, actor, func(tx *sql.Tx, cur *row) (string, map[string]string, error) {
		p, err := m.preview(ctx, tx, id, c, s)
		if err != nil {
			return "", nil, err
		}
		now := m.current(cur.config)
		if base != now.Fingerprint() {
			current, err := m.view(ctx, tx, cur)
			if err != nil {
				return "", nil, err
			}
			return "", nil, &StaleError{Current: current, Preview: p}
		}
		if fingerprint != p.Fingerprint {
			return "", nil, &ApprovalRequired{p}
		}
		if err := m.canRun(p); err != nil {
			return "", nil, err
		}
		detail := map[string]string{"previous_fingerprint": cur.config.Fingerprint()}
		if changed := ChangedFields(cur.config, p.Config); len(changed) > 0 {
			detail["changed"] = strings.Join(changed, ",")
		}
		if names := secretNames(s); names != "" {
			detail["secrets_set"] = names
		}
		if err := m.replace(ctx, tx, actor, cur, p.Config, s); err != nil {
			return "", nil, err
		}
		_, err = tx.ExecContext(ctx, `UPDATE servers SET approved_fingerprint = ?, updated_at = ? WHERE id = ?`, p.Fingerprint, stamp(m.now()), id)
		return "server.edit", detail, err
	})
}

// replace saves c as server cur's configuration: the stored secrets for
// names c still declares are sealed again for c's fingerprint, keeping who
// set them, and given replaces them, as set by actor; the others are
// deleted. A new fingerprint makes the server untested again.
func (m *Manager) replace(ctx context.Context, tx *sql.Tx, actor string, cur *row, c Config, given Secrets) error {
	oldFP, newFP := cur.config.Fingerprint(), c.Fingerprint()
	kept, setBy, err := m.openSecrets(ctx, tx, cur.id, oldFP)
	if err != nil {
		return err
	}
	merged := MergeSecrets(c, kept, given)
	if _, err := tx.ExecContext(ctx, `DELETE FROM secrets WHERE server_id = ?`, cur.id); err != nil {
		return err
	}
	setter := func(kind, name string) string {
		if _, ok := given.of(kind)[name]; ok {
			return actor
		}
		return setBy[kind+" "+name]
	}
	if err := m.sealSecrets(ctx, tx, cur.id, newFP, merged, setter); err != nil {
		return err
	}
	cfg, _ := json.Marshal(c)
	status := cur.status
	if oldFP != newFP {
		status = StatusUntested
		if err := forgetTools(ctx, tx, cur.id); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE servers SET name = ?, config = ?, status = ?, last_error = '', updated_at = ? WHERE id = ?`,
		c.Name, string(cfg), status, stamp(m.now()), cur.id)
	return err
}

// ChangedFields names the fields that differ between two configurations,
// for records and reviews: never their values.
func ChangedFields(a, b Config) []string {
	var out []string
	add := func(field string, differ bool) {
		if differ {
			out = append(out, field)
		}
	}
	add("name", a.Name != b.Name)
	add("kind", a.Kind != b.Kind)
	add("command", a.Command != b.Command)
	add("program", a.Program != b.Program)
	add("args", !slices.Equal(a.Args, b.Args))
	add("cwd", a.Cwd != b.Cwd)
	add("env", !slices.Equal(sorted(a.Env), sorted(b.Env)))
	add("url", a.URL != b.URL)
	add("headers", !slices.Equal(sorted(a.Headers), sorted(b.Headers)))
	add("registry", a.Registry.differs(b.Registry))
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// secretNames lists the names secrets give values for, "env NAME" and
// "header NAME", comma-separated.
func secretNames(s Secrets) string {
	var names []string
	for name := range s.Env {
		names = append(names, "env "+name)
	}
	for name := range s.Headers {
		names = append(names, "header "+name)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
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
// configuration as it would run now, and that must be the approved one.
func (m *Manager) Enable(ctx context.Context, actor string, id int64, fingerprint string) (Server, error) {
	return m.change(ctx, id, actor, func(tx *sql.Tx, cur *row) (string, map[string]string, error) {
		p, err := m.preview(ctx, tx, id, cur.config, Secrets{})
		if err != nil {
			return "", nil, err
		}
		if fingerprint != p.Fingerprint || cur.approved != p.Fingerprint || cur.config.Fingerprint() != p.Fingerprint {
			return "", nil, &ApprovalRequired{p}
		}
		if err := m.canRun(p); err != nil {
			return "", nil, err
		}
		_, err = tx.ExecContext(ctx, `UPDATE servers SET enabled = 1, updated_at = ? WHERE id = ?`, stamp(m.now()), id)
		return "server.enable", nil, err
	})
}

// Disable switches a server off, and stops it if it runs. It never needs
// an approval.
func (m *Manager) Disable(ctx context.Context, actor string, id int64) (Server, error) {
	return m.changeStopping(ctx, id, actor, func(tx *sql.Tx, cur *row) (string, map[string]string, error) {
		_, err := tx.ExecContext(ctx, `UPDATE servers SET enabled = 0, updated_at = ? WHERE id = ?`, stamp(m.now()), id)
		return "server.disable", nil, err
	})
}

// Delete removes a server and its secrets, stops it if it runs, and has
// the runtime forget its logs.
func (m *Manager) Delete(ctx context.Context, actor string, id int64) error {
	defer m.o.Runtime.Forget(id)
	_, err := m.change(ctx, id, actor, func(tx *sql.Tx, cur *row) (string, map[string]string, error) {
		_, err := tx.ExecContext(ctx, `DELETE FROM servers WHERE id = ?`, id)
		return "server.delete", nil, err
	})
	return err
}

// changed follows a committed change to server id: the Specs built before
// it are stale (Runtime.Invalidate), and it is announced.
func (m *Manager) changed(id int64) {
	m.o.Runtime.Invalidate(id)
	m.announce(id)
}

// Channel is the PostgreSQL channel on which the replicas of a workspace
// tell each other that a server changed; the payload is its id. A NOTIFY
// only wakes: what changed is read from the database.
const Channel = "zero_servers"

// announceTimeout bounds the NOTIFY of a change.
const announceTimeout = 5 * time.Second

// announce tells Options.Changed that server id changed and, on
// PostgreSQL, the other replicas too (see Channel). A NOTIFY that fails is
// logged: the others' callers still read the server from the database at
// every list and call.
func (m *Manager) announce(id int64) {
	if m.o.Changed != nil {
		m.o.Changed(id)
	}
	if database.DialectOf(m.o.DB) != database.PostgreSQL {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), announceTimeout)
	defer cancel()
	if _, err := m.o.DB.ExecContext(ctx, `SELECT pg_notify(?, ?)`, Channel, strconv.FormatInt(id, 10)); err != nil {
		m.o.Log.Warn("tell the other replicas that a server changed", "server", id, "err", err)
	}
}

// stop ends server id's runtime connection, if one runs, after a change:
// the next call starts it again under the server as it is then.
func (m *Manager) stop(id int64) { m.o.Runtime.Stop(id) }

// renew has server id's next call start a fresh runtime connection, which
// lists the tools again; calls in flight finish on the old one.
func (m *Manager) renew(id int64) { m.o.Runtime.Renew(id) }

// Upgrade seals again, under the current fingerprint encoding, the secrets
// of servers saved under the first one, and pins the program each one's
// command resolves to now. It approves nothing: a server approved before
// waits for a new approval, since its review now shows the program's path.
// A secret that does not open (it was sealed for another configuration)
// stays as it is and keeps failing as it did.
func (m *Manager) Upgrade(ctx context.Context) error {
	tx, err := m.o.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	old, err := loadRows(ctx, tx, ` WHERE encoding = 1`)
	if err != nil {
		return err
	}
	for _, r := range old {
		now := m.current(r.config)
		sec, setBy, err := m.openSecrets(ctx, tx, r.id, r.config.fingerprintV1())
		if err == nil {
			if _, err := tx.ExecContext(ctx, `DELETE FROM secrets WHERE server_id = ?`, r.id); err != nil {
				return err
			}
			setter := func(kind, name string) string { return setBy[kind+" "+name] }
			if err := m.sealSecrets(ctx, tx, r.id, now.Fingerprint(), sec, setter); err != nil {
				return err
			}
		} else if !errors.Is(err, secrets.ErrOpen) {
			return err
		}
		cfg, _ := json.Marshal(now)
		if _, err := tx.ExecContext(ctx, `UPDATE servers SET config = ?, encoding = ? WHERE id = ?`, string(cfg), encoding, r.id); err != nil {
			return err
		}
		detail := map[string]string{"from_encoding": "1", "to_encoding": strconv.Itoa(encoding)}
		if err := m.record("zero", "server.upgrade", r.id, r.config.Name, now.Fingerprint(), detail); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// row is a server as stored.
type row struct {
	id               int64
	config           Config
	approved         string
	enabled, debug   bool
	maxCalls         int
	status           string
	lastError        string
	logo             string
	created, updated string
}

func scanRow(scan func(...any) error) (*row, error) {
	var r row
	var cfg string
	if err := scan(&r.id, &cfg, &r.approved, &r.enabled, &r.debug, &r.maxCalls, &r.status, &r.lastError, &r.logo, &r.created, &r.updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(cfg), &r.config); err != nil {
		return nil, fmt.Errorf("server %d: stored configuration: %w", r.id, err)
	}
	return &r, nil
}

const selectRow = `SELECT id, config, approved_fingerprint, enabled, debug_log, max_calls, status, last_error, logo, created_at, updated_at FROM servers`

// loadRows returns the servers selectRow followed by where (a WHERE and
// ORDER BY clause) selects.
func loadRows(ctx context.Context, q querier, where string) ([]*row, error) {
	rows, err := q.QueryContext(ctx, selectRow+where)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*row
	for rows.Next() {
		r, err := scanRow(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

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

// lockAndLoad is load, in a transaction that goes on to change the server:
// on PostgreSQL the server's row stays locked until tx ends, so that the
// changes of two replicas to one server take turns, each checking what the
// other committed (see database.ForUpdate).
func (m *Manager) lockAndLoad(ctx context.Context, tx *sql.Tx, id int64) (*row, error) {
	if _, err := tx.ExecContext(ctx, `SELECT id FROM servers WHERE id = ?`+database.ForUpdate(m.o.DB), id); err != nil {
		return nil, err
	}
	return m.load(ctx, tx, id)
}

// change runs fn on server id in a transaction and records its action in
// the audit log, with the server's name and the fingerprint of its
// configuration after it.
func (m *Manager) change(ctx context.Context, id int64, actor string, fn func(*sql.Tx, *row) (string, map[string]string, error)) (Server, error) {
	return m.commit(ctx, id, actor, false, fn)
}

// changeStopping is change for a change that ends what runs of the server
// (an approval, an edit, a disable): its process is stopped once the
// change is committed and before it is announced, so that nothing the
// announcement prompts (a client listing the tools again) runs on the
// process about to be stopped.
func (m *Manager) changeStopping(ctx context.Context, id int64, actor string, fn func(*sql.Tx, *row) (string, map[string]string, error)) (Server, error) {
	return m.commit(ctx, id, actor, true, fn)
}

func (m *Manager) commit(ctx context.Context, id int64, actor string, stop bool, fn func(*sql.Tx, *row) (string, map[string]string, error)) (Server, error) {
	tx, err := m.o.DB.BeginTx(ctx, nil)
	if err != nil {
		return Server{}, err
	}
	defer tx.Rollback()
	cur, err := m.lockAndLoad(ctx, tx, id)
	if err != nil {
		return Server{}, err
	}
	action, detail, err := fn(tx, cur)
	if err != nil {
		return Server{}, err
	}
	fp, name := cur.config.Fingerprint(), cur.config.Name
	if after, err := m.load(ctx, tx, id); err == nil {
		fp, name = after.config.Fingerprint(), after.config.Name
	}
	if err := m.record(actor, action, id, name, fp, detail); err != nil {
		return Server{}, err
	}
	if err := tx.Commit(); err != nil {
		return Server{}, err
	}
	if stop {
		m.stop(id)
	}
	m.changed(id)
	if action == "server.delete" {
		return Server{}, nil
	}
	return m.Get(ctx, id)
}

// record appends an audit record naming the server by id (its target) and
// by name. It is written before the transaction commits, so no change goes
// unrecorded; a record of a change that then fails to commit can exist.
func (m *Manager) record(actor, action string, id int64, name, fingerprint string, detail map[string]string) error {
	d := map[string]string{"name": name}
	maps.Copy(d, detail)
	_, err := m.o.Audit.Append(audit.Event{Actor: actor, Action: action, Target: "server:" + strconv.FormatInt(id, 10), Fingerprint: fingerprint, Detail: d})
	return err
}

// Warnings lists what deserves a second look in a configuration as it
// would run (see Server.Config). Unlike Preview it does not validate c
// again, so a server whose configuration today's policy would refuse still
// shows its warnings.
func (m *Manager) Warnings(c Config) []Warning { return m.warnings(c) }

// ServerWarnings lists what deserves a second look before approver
// approves or uses s: its configuration's warnings, a program that moved
// since the configuration was saved, and secret values someone other than
// approver set. ToolWarnings says what changed in its tools.
func (m *Manager) ServerWarnings(s Server, approver string) []Warning {
	ws := m.warnings(s.Config)
	if s.Config.Kind == KindStdio && s.PinnedProgram != s.Config.Program {
		ws = append(ws, Warning{"program-changed", "danger", fmt.Sprintf(
			"the command now resolves to %s, not to %s as when it was saved: another program would run", orNothing(s.Config.Program), orNothing(s.PinnedProgram))})
	}
	for _, sec := range s.Secrets {
		if sec.SetBy != approver {
			ws = append(ws, Warning{"secret-set-by-other", "danger", fmt.Sprintf(
				"the value of %s %s was set by %s, not by you; you cannot see it, and it goes to the server as it is: set it yourself (Edit) unless you trust it",
				sec.Kind, sec.Name, orNothing(sec.SetBy))})
		}
	}
	return ws
}

func orNothing(s string) string {
	if s == "" {
		return "nothing (no executable file)"
	}
	return s
}

// current returns c as it would run now: its program resolved afresh.
func (m *Manager) current(c Config) Config {
	c.Program, _ = m.program(c)
	return c
}

// program resolves c's command through the execution boundary, as a run
// would (the runtime's Spec.Cmd is the one description of how a stdio
// server starts): the absolute path of what would run, or "" and why not.
func (m *Manager) program(c Config) (string, error) {
	if c.Kind != KindStdio {
		return "", nil
	}
	cmd := m.spec(0, c, "", Secrets{}).Cmd(m.o.Workspace)
	cmd.Expect = ""
	return spawn.Resolve(cmd)
}

func (m *Manager) previewOf(c Config) Preview {
	return Preview{Config: c, Fingerprint: c.Fingerprint(), Warnings: m.warnings(c)}
}

// Get returns one server.
func (m *Manager) Get(ctx context.Context, id int64) (Server, error) {
	r, err := m.load(ctx, m.o.DB, id)
	if err != nil {
		return Server{}, err
	}
	return m.view(ctx, m.o.DB, r)
}

// List returns every server, by name.
func (m *Manager) List(ctx context.Context) ([]Server, error) {
	rs, err := loadRows(ctx, m.o.DB, ` ORDER BY name`)
	if err != nil {
		return nil, err
	}
	out := []Server{}
	for _, r := range rs {
		s, err := m.view(ctx, m.o.DB, r)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// view is a server as the API shows it: its configuration as it would run
// now, approved only if that is exactly the approved and saved one.
func (m *Manager) view(ctx context.Context, q querier, r *row) (Server, error) {
	now := m.current(r.config)
	fp := now.Fingerprint()
	s := Server{
		ID: r.id, Config: now, Fingerprint: fp, PinnedProgram: r.config.Program,
		Approved:            r.approved != "" && r.approved == fp && r.config.Fingerprint() == fp,
		ApprovedFingerprint: r.approved, Enabled: r.enabled, Status: r.status, LastError: r.lastError, Logo: r.logo,
		CreatedAt: r.created, UpdatedAt: r.updated, EnvSecrets: []string{}, HeaderSecrets: []string{},
		Secrets: []StoredSecret{}, DebugLog: r.debug, MaxCalls: maxCallsOf(r.maxCalls),
	}
	if err := m.toolsView(ctx, q, r, &s); err != nil {
		return Server{}, err
	}
	rows, err := q.QueryContext(ctx, `SELECT kind, name, set_by FROM secrets WHERE server_id = ? ORDER BY kind, name`, r.id)
	if err != nil {
		return Server{}, err
	}
	defer rows.Close()
	for rows.Next() {
		var sec StoredSecret
		if err := rows.Scan(&sec.Kind, &sec.Name, &sec.SetBy); err != nil {
			return Server{}, err
		}
		s.Secrets = append(s.Secrets, sec)
		if sec.Kind == "env" {
			s.EnvSecrets = append(s.EnvSecrets, sec.Name)
		} else {
			s.HeaderSecrets = append(s.HeaderSecrets, sec.Name)
		}
	}
	return s, rows.Err()
}

// sealSecrets stores s's values for server id, sealed for fingerprint,
// each recorded as set by setBy(kind, name).
func (m *Manager) sealSecrets(ctx context.Context, q querier, id int64, fingerprint string, s Secrets, setBy func(kind, name string) string) error {
	for _, kind := range []string{"env", "header"} {
		for name, value := range s.of(kind) {
			sealed, err := m.o.Box.Seal(secrets.Slot{ServerID: id, Kind: kind, Name: name, Fingerprint: fingerprint}, value)
			if err != nil {
				return err
			}
			if _, err := q.ExecContext(ctx, `INSERT INTO secrets (server_id, kind, name, sealed, set_by) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (server_id, kind, name) DO UPDATE SET sealed = excluded.sealed, set_by = excluded.set_by`,
				id, kind, name, sealed, setBy(kind, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// openSecrets opens a server's secrets for the configuration whose
// fingerprint is given, and says who set each ("env NAME" -> actor). A
// secret sealed for another configuration does not open: the call fails
// rather than release it.
func (m *Manager) openSecrets(ctx context.Context, q querier, id int64, fingerprint string) (Secrets, map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT kind, name, sealed, set_by FROM secrets WHERE server_id = ?`, id)
	if err != nil {
		return Secrets{}, nil, err
	}
	defer rows.Close()
	out := Secrets{Env: map[string]string{}, Headers: map[string]string{}}
	setBy := map[string]string{}
	for rows.Next() {
		var kind, name, by string
		var sealed []byte
		if err := rows.Scan(&kind, &name, &sealed, &by); err != nil {
			return Secrets{}, nil, err
		}
		value, err := m.o.Box.Open(secrets.Slot{ServerID: id, Kind: kind, Name: name, Fingerprint: fingerprint}, sealed)
		if err != nil {
			return Secrets{}, nil, fmt.Errorf("%s secret %s: %w", kind, name, err)
		}
		out.of(kind)[name] = value
		setBy[kind+" "+name] = by
	}
	return out, setBy, rows.Err()
}
