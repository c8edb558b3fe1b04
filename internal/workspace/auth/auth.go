// Package auth owns who may call the workspace: users and their roles,
// one-time login links, browser sessions (an HttpOnly, SameSite=Strict
// cookie plus a CSRF token and a same-origin check), and bearer tokens for
// computer callers (agents and scripts), which an owner creates in a
// browser session, each for every server or scoped to chosen ones. Secrets
// it issues (links, sessions, tokens) are stored only as SHA-256 hashes.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zero-dev/zero/internal/database"
)

// Role is a user's role in the workspace.
type Role string

// Roles. A single-user workspace has one owner.
const (
	Owner  Role = "owner"
	Member Role = "member"
	Viewer Role = "viewer"
)

// Kind says how a caller authenticated.
type Kind string

// Caller kinds.
const (
	Browser Kind = "browser" // a session cookie
	Bearer  Kind = "bearer"  // an Authorization: Bearer token
)

// Names and lifetimes.
const (
	SessionCookie  = "zero_session"
	CSRFHeader     = "X-CSRF-Token"
	CSRFField      = "csrf_token" // the same token in a form of the web UI
	TokenPrefix    = "zt_"
	LoginLinkTTL   = 15 * time.Minute
	SessionTTL     = 12 * time.Hour
	loginPath      = "/login"
	tokenNameLimit = 100
	// TokenScopeLimit bounds the servers a scoped token names.
	TokenScopeLimit = 1000
)

// Errors the API turns into status codes.
var (
	ErrUnauthenticated = errors.New("not signed in: open a login link, or send a bearer token")
	ErrLinkInvalid     = errors.New("this login link is unknown, used or expired; run zero login for a new one")
	ErrCrossSite       = errors.New("cross-site request refused")
	ErrCSRF            = errors.New("missing or wrong CSRF token")
)

// ErrTokenRefused is a request's bearer token that is no token of this
// workspace (revoked, mistyped, or another workspace's): 401
// unauthenticated, as ErrUnauthenticated, with what to do instead.
var ErrTokenRefused = errors.New("the bearer token was refused (revoked, or not this workspace's): create a new one on the Connect a client or Tokens page")

// A LinkError is a refused login link: why, and whose link it was ("" for
// a link never issued).
type LinkError struct {
	Reason string // "unknown", "used" or "expired"
	User   string
}

func (e *LinkError) Error() string { return ErrLinkInvalid.Error() }
func (e *LinkError) Unwrap() error { return ErrLinkInvalid }

// A Caller is an authenticated request's user.
type Caller struct {
	UserID  int64
	User    string
	Role    Role
	Kind    Kind
	TokenID int64 // for a bearer caller
	// Scoped marks a bearer token limited to some servers: Servers are their
	// ids, the only servers whose tools it may list and call over /mcp. An
	// unscoped token may use every server. A scoped token whose servers were
	// all deleted has Scoped set and no Servers: it may use none.
	Scoped  bool
	Servers []int64
	// FirstUse marks the first request a bearer token ever made.
	FirstUse bool
	// Passkey names the credential (its id, base64url, cut to 16
	// characters) of the passkey assertion that confirmed this request, or
	// "" (the workspace's passkey gate sets it).
	Passkey string

	csrf string // for a browser caller
}

// Actor names the caller in audit records: "user:NAME" for a browser
// session ("user:NAME passkey:CREDENTIAL" for a request a passkey
// confirmed), "token:ID:NAME" for a bearer token.
func (c *Caller) Actor() string {
	if c.Kind == Bearer {
		return fmt.Sprintf("token:%d:%s", c.TokenID, c.User)
	}
	if c.Passkey != "" {
		return "user:" + c.User + " passkey:" + c.Passkey
	}
	return "user:" + c.User
}

// CSRF returns a browser caller's CSRF token, to be echoed in the
// X-CSRF-Token header of every unsafe request.
func (c *Caller) CSRF() string { return c.csrf }

// A Service answers who is calling. It is safe for concurrent use.
type Service struct {
	db  *sql.DB
	now func() time.Time

	// Bearer tokens known good, by hash, so that a token's every request
	// does not read the database again. Only what DeleteToken changes is
	// kept (users are never changed or deleted); a scoped token's servers
	// are always read, since a deleted server's id is given again. On
	// PostgreSQL, which replicas share, nothing is kept: another replica
	// may delete a token.
	shared  bool
	mu      sync.Mutex
	gen     uint64 // counts forget calls: a lookup older than one is not kept
	bearers map[string]bearer
}

// A bearer is a known good token's row.
type bearer struct {
	tokenID, userID int64
	user            string
	role            Role
	scoped          bool
}

// New returns the service on the workspace database.
func New(db *sql.DB) *Service {
	return &Service{db: db, now: time.Now, bearers: map[string]bearer{}, shared: database.DialectOf(db) == database.PostgreSQL}
}

// forget drops every known token, after a token was deleted.
func (s *Service) forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	clear(s.bearers)
}

func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// EnsureOwner returns the owner's id, creating an owner named name if the
// workspace has none.
func (s *Service) EnsureOwner(ctx context.Context, name string) (int64, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, `SELECT id FROM users WHERE role = 'owner' ORDER BY id LIMIT 1`).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	id, err = s.CreateUser(ctx, name, Owner)
	if database.IsUnique(err) {
		// Another replica made it first.
		err = s.db.QueryRowContext(ctx, `SELECT id FROM users WHERE role = 'owner' ORDER BY id LIMIT 1`).Scan(&id)
	}
	return id, err
}

// CreateUser adds a user.
func (s *Service) CreateUser(ctx context.Context, name string, role Role) (int64, error) {
	if name == "" || len(name) > 64 || strings.ContainsAny(name, "\x00\n\r\t:") {
		return 0, fmt.Errorf("user name %q: want 1-64 characters, no control characters or colons", name)
	}
	switch role {
	case Owner, Member, Viewer:
	default:
		return 0, fmt.Errorf("role %q: want owner, member or viewer", role)
	}
	var id int64
	if err := s.db.QueryRowContext(ctx, `INSERT INTO users (name, role, created_at) VALUES (?, ?, ?) RETURNING id`, name, role, stamp(s.now())).Scan(&id); err != nil {
		return 0, fmt.Errorf("add user %q: %w", name, err)
	}
	return id, nil
}

// usedLinksKept is how long a used or expired link is remembered, so that
// presenting it again is told apart from presenting an unknown one.
const usedLinksKept = 7 * 24 * time.Hour

// LoginLink returns a new one-time login token for the user, valid for
// LoginLinkTTL; the link is base + "/login?token=" + token. Links that
// expired more than a week ago are forgotten.
func (s *Service) LoginLink(ctx context.Context, userID int64) (string, error) {
	token := randomToken()
	now := s.now()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM login_links WHERE expires_at < ?`, stamp(now.Add(-usedLinksKept))); err != nil {
		return "", err
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO login_links (hash, user_id, expires_at) VALUES (?, ?, ?)`,
		hash(token), userID, stamp(now.Add(LoginLinkTTL)))
	if err != nil {
		return "", err
	}
	return token, nil
}

// LoginURL is the link a person opens for token.
func LoginURL(base, token string) string {
	return base + loginPath + "?token=" + url.QueryEscape(token)
}

// Login consumes a login token and opens a session: it returns the session
// id (the cookie's value) and the user's name. A refused link is a
// *LinkError saying why: unknown, already used, or expired.
func (s *Service) Login(ctx context.Context, token string) (session, user string, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", "", err
	}
	defer tx.Rollback()
	var userID int64
	var expires, used string
	err = tx.QueryRowContext(ctx, `SELECT l.user_id, u.name, l.expires_at, l.used_at FROM login_links l JOIN users u ON u.id = l.user_id WHERE l.hash = ?`,
		hash(token)).Scan(&userID, &user, &expires, &used)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", "", &LinkError{Reason: "unknown"}
	case err != nil:
		return "", "", err
	case used != "":
		return "", "", &LinkError{Reason: "used", User: user}
	case expires < stamp(s.now()):
		return "", "", &LinkError{Reason: "expired", User: user}
	}
	// Only the use that marks the link takes it: of two at once (two
	// replicas), the other finds it used.
	res, err := tx.ExecContext(ctx, `UPDATE login_links SET used_at = ? WHERE hash = ? AND used_at = ''`, stamp(s.now()), hash(token))
	if err != nil {
		return "", "", err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return "", "", &LinkError{Reason: "used", User: user}
	}
	session = randomToken()
	_, err = tx.ExecContext(ctx, `INSERT INTO sessions (hash, user_id, csrf, expires_at) VALUES (?, ?, ?, ?)`,
		hash(session), userID, randomToken(), stamp(s.now().Add(SessionTTL)))
	if err != nil {
		return "", "", err
	}
	return session, user, tx.Commit()
}

// Logout ends the request's browser session, if any.
func (s *Service) Logout(ctx context.Context, r *http.Request) error {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return nil
	}
	_, err = s.db.ExecContext(ctx, `DELETE FROM sessions WHERE hash = ?`, hash(c.Value))
	return err
}

// Identify returns the request's caller. A request carrying an
// Authorization header is a bearer caller, whatever cookies it has.
func (s *Service) Identify(r *http.Request) (*Caller, error) {
	ctx := r.Context()
	if h := r.Header.Get("Authorization"); h != "" {
		token, ok := strings.CutPrefix(h, "Bearer ")
		if !ok || !strings.HasPrefix(token, TokenPrefix) {
			return nil, ErrTokenRefused
		}
		h := hash(token)
		s.mu.Lock()
		b, known := s.bearers[h]
		gen := s.gen
		s.mu.Unlock()
		firstUse := false
		if !known {
			var firstUsed string
			err := s.db.QueryRowContext(ctx, `SELECT t.id, t.first_used_at, t.scoped, u.id, u.name, u.role FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = ?`,
				h).Scan(&b.tokenID, &firstUsed, &b.scoped, &b.userID, &b.user, &b.role)
			if err != nil {
				return nil, ErrTokenRefused
			}
			if firstUsed == "" {
				res, err := s.db.ExecContext(ctx, `UPDATE tokens SET first_used_at = ? WHERE id = ? AND first_used_at = ''`, stamp(s.now()), b.tokenID)
				if err != nil {
					return nil, err
				}
				n, _ := res.RowsAffected()
				firstUse = n == 1
			}
			s.mu.Lock()
			if s.gen == gen && !s.shared {
				s.bearers[h] = b
			}
			s.mu.Unlock()
		}
		c := &Caller{Kind: Bearer, TokenID: b.tokenID, UserID: b.userID, User: b.user, Role: b.role, Scoped: b.scoped, FirstUse: firstUse}
		if c.Scoped {
			var err error
			if c.Servers, err = s.scope(ctx, c.TokenID); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
	cookie, err := r.Cookie(SessionCookie)
	if err != nil {
		return nil, ErrUnauthenticated
	}
	c := &Caller{Kind: Browser}
	var expires string
	err = s.db.QueryRowContext(ctx, `SELECT u.id, u.name, u.role, s.csrf, s.expires_at FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.hash = ?`,
		hash(cookie.Value)).Scan(&c.UserID, &c.User, &c.Role, &c.csrf, &expires)
	if err != nil || expires < stamp(s.now()) {
		return nil, ErrUnauthenticated
	}
	return c, nil
}

// scope returns the ids of the servers a scoped token may use, in order.
func (s *Service) scope(ctx context.Context, tokenID int64) ([]int64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT server_id FROM token_servers WHERE token_id = ? ORDER BY server_id`, tokenID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// CreateToken makes a bearer token for the user; the token itself is
// returned once and stored only as a hash. servers is its scope: nil for
// a token that may use every server, else the ids of the only servers it
// may use, each of which must exist (an empty list is refused).
func (s *Service) CreateToken(ctx context.Context, userID int64, name string, servers []int64) (id int64, token string, err error) {
	if name == "" || len(name) > tokenNameLimit || strings.ContainsAny(name, "\x00\n\r") {
		return 0, "", fmt.Errorf("token name: want 1-%d characters, no control characters", tokenNameLimit)
	}
	switch {
	case servers != nil && len(servers) == 0:
		return 0, "", errors.New("a token limited to some servers needs at least one; leave the servers out for a token that may use every server")
	case len(servers) > TokenScopeLimit:
		return 0, "", fmt.Errorf("a token may be limited to at most %d servers, not %d; leave the servers out for a token that may use every server", TokenScopeLimit, len(servers))
	}
	scope := slices.Compact(slices.Sorted(slices.Values(servers)))
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, "", err
	}
	defer tx.Rollback()
	var taken int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM tokens WHERE name = ?`, name).Scan(&taken); err != nil {
		return 0, "", err
	}
	if taken > 0 {
		return 0, "", fmt.Errorf("a token named %q exists already: choose another name", name)
	}
	for _, sid := range scope {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM servers WHERE id = ?`, sid).Scan(&n); err != nil {
			return 0, "", err
		}
		if n == 0 {
			return 0, "", fmt.Errorf("no server has id %d: limit the token to existing servers", sid)
		}
	}
	token = TokenPrefix + randomToken()
	if err := tx.QueryRowContext(ctx, `INSERT INTO tokens (user_id, name, hash, created_at, scoped) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		userID, name, hash(token), stamp(s.now()), servers != nil).Scan(&id); err != nil {
		return 0, "", err
	}
	for _, sid := range scope {
		if _, err := tx.ExecContext(ctx, `INSERT INTO token_servers (token_id, server_id) VALUES (?, ?)`, id, sid); err != nil {
			return 0, "", err
		}
	}
	return id, token, tx.Commit()
}

// A TokenInfo describes a token without revealing it. Scoped and Servers
// are its scope, as in Caller; Servers is nil for an unscoped token.
type TokenInfo struct {
	ID        int64   `json:"id"`
	Name      string  `json:"name"`
	User      string  `json:"user"`
	CreatedAt string  `json:"created_at"`
	Scoped    bool    `json:"scoped"`
	Servers   []int64 `json:"servers"`
}

// Tokens lists the tokens with their scopes.
func (s *Service) Tokens(ctx context.Context) ([]TokenInfo, error) {
	scopes := map[int64][]int64{}
	srows, err := s.db.QueryContext(ctx, `SELECT token_id, server_id FROM token_servers ORDER BY token_id, server_id`)
	if err != nil {
		return nil, err
	}
	defer srows.Close()
	for srows.Next() {
		var tid, sid int64
		if err := srows.Scan(&tid, &sid); err != nil {
			return nil, err
		}
		scopes[tid] = append(scopes[tid], sid)
	}
	if err := srows.Err(); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT t.id, t.name, u.name, t.created_at, t.scoped FROM tokens t JOIN users u ON u.id = t.user_id ORDER BY t.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []TokenInfo{}
	for rows.Next() {
		var t TokenInfo
		if err := rows.Scan(&t.ID, &t.Name, &t.User, &t.CreatedAt, &t.Scoped); err != nil {
			return nil, err
		}
		if t.Scoped {
			t.Servers = append([]int64{}, scopes[t.ID]...)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// DeleteToken revokes a token; it reports whether there was one.
func (s *Service) DeleteToken(ctx context.Context, id int64) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM tokens WHERE id = ?`, id)
	s.forget() // whether or not it failed: the database decides again
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// isForm reports whether r's body is an HTML form.
func isForm(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded")
}

// CheckBrowserWrite guards a browser caller's unsafe request: it must come
// from one of the workspace's own origins (Sec-Fetch-Site: same-origin, or,
// from a browser that does not send it, an Origin among origins) and carry
// the session's CSRF token, in the X-CSRF-Token header or, from a form, in
// its csrf_token field.
func CheckBrowserWrite(r *http.Request, c *Caller, origins []string) error {
	o := r.Header.Get("Origin")
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin":
		if o != "" && !slices.Contains(origins, o) {
			return ErrCrossSite
		}
	case "":
		if !slices.Contains(origins, o) {
			return ErrCrossSite
		}
	default:
		return ErrCrossSite
	}
	got := r.Header.Get(CSRFHeader)
	if got == "" && isForm(r) {
		got = r.PostFormValue(CSRFField)
	}
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(c.csrf)) != 1 {
		return ErrCSRF
	}
	return nil
}
