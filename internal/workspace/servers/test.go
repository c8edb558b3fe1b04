package servers

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/workspace/runtime"
)

// Test starts an approved server through the tool runtime (runtime.Probe),
// initializes an MCP session with it, lists its tools and hashes each
// (name, description, input schema, annotations); the server's status
// becomes ok or failed. The configuration as it would run now (its program
// resolved afresh, today's policy applied) must be the approved and saved
// one, or the Test is refused with ApprovalRequired: its secrets are sealed
// for the approved fingerprint and are released to nothing else, and a
// command that now resolves to another program does not run.
//
// The first Test of an approved configuration records what it lists as the
// approved tool set (audited as server.tools_approved, by the owner who
// pressed Test, who sees the tools on the server's page). Every later Test
// compares its listing with that set, as every connection does: a drift is
// shown, changed and new tools stay quarantined until the owner approves the
// new set, and its first sight is audited (server.tools_changed). Errors are
// recorded with every secret value redacted, the server's stderr included.
func (m *Manager) Test(ctx context.Context, actor string, id int64) (Server, error) {
	cur, err := m.load(ctx, m.o.DB, id)
	if err != nil {
		return Server{}, err
	}
	p, err := m.Preview(ctx, id, cur.config, Secrets{})
	if err != nil {
		return Server{}, err
	}
	fp := p.Fingerprint
	if cur.approved != fp || cur.config.Fingerprint() != fp {
		return Server{}, &ApprovalRequired{p}
	}
	sec, _, err := m.openSecrets(ctx, m.o.DB, id, fp)
	if err != nil {
		return Server{}, err
	}
	spec := m.spec(id, p.Config, fp, sec)
	probeCtx, cancel := context.WithTimeout(ctx, m.o.TestTimeout)
	defer cancel()
	l, testErr := m.o.Runtime.Probe(probeCtx, spec)
	status, lastError, logoURL := StatusOK, "", cur.logo
	if testErr != nil {
		// The runtime's errors are redacted already; this is a second net.
		status, lastError = StatusFailed, spec.Redactor().String(testErr.Error())
	} else {
		logoURL = m.logoOf(probeCtx, l.Icons)
	}
	if testErr == nil {
		// Calls from now on see what this Test saw: renewed before the change
		// is committed, so that a listing the change sets off (the /mcp
		// endpoint's) is made on a fresh connection, not the old one.
		m.renew(id)
	}
	_, err = m.change(ctx, id, actor, func(tx *sql.Tx, now *row) (string, map[string]string, error) {
		if now.config.Fingerprint() != fp {
			return "", nil, fmt.Errorf("the configuration changed during the test; test again")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE servers SET status = ?, last_error = ?, logo = ?, updated_at = ? WHERE id = ?`,
			status, lastError, logoURL, stamp(m.now()), id); err != nil {
			return "", nil, err
		}
		detail := map[string]string{"status": status}
		if testErr != nil {
			return "server.test", detail, nil
		}
		detail["tools"] = strconv.Itoa(len(l.Tools))
		detail["listed_tool_set_hash"] = l.Hash
		drift, first, err := m.listed(ctx, tx, now, fp, l, actor, "test")
		if err != nil {
			return "", nil, err
		}
		if first {
			detail["tool_set"] = "recorded"
		} else if !drift.Empty() {
			addLists(detail, drift)
		}
		return "server.test", detail, nil
	})
	if err != nil {
		return Server{}, err
	}
	return m.Get(ctx, id)
}

// maxIcons bounds how many of a server's declared icons a Test tries.
const maxIcons = 3

// logoOf returns the first of a server's declared icons that makes a safe
// data: URL (see package logo), fetched here on the server, from a public
// host or an allowed local origin; "" if none does. A logo is decoration:
// a bad one never fails a Test.
func (m *Manager) logoOf(ctx context.Context, icons []mcp.Icon) string {
	for i, icon := range icons {
		if i == maxIcons {
			break
		}
		if u, err := checkURL(icon.Source); err == nil {
			if _, private := privateHost(urlHost(u)); private && !slices.Contains(m.o.Policy.LocalOrigins, origin(u)) {
				continue
			}
		}
		if data, err := m.icons.Fetch(ctx, icon.Source); err == nil {
			return data
		}
	}
	return ""
}

// spec is how the runtime reaches the approved configuration c (whose
// fingerprint is fp) with the secrets released for it. The tool set and
// switches are added by Runnable; a Test needs none.
func (m *Manager) spec(id int64, c Config, fp string, sec Secrets) runtime.Spec {
	s := runtime.Spec{ServerID: id, Name: c.Name, Fingerprint: fp, Kind: c.Kind}
	switch c.Kind {
	case KindStdio:
		s.Command, s.Program, s.Args, s.Dir, s.Env = c.Command, c.Program, c.Args, c.Cwd, sec.Env
	default:
		s.URL, s.Headers, s.Allow, s.TLS = c.URL, sec.Headers, m.o.Policy.allowFor(c.URL), m.tlsFor(c.URL)
	}
	return s
}

// tlsFor is the TLS configuration for a server, or an icon, at rawURL: the
// one place that decides whom zero serve's connections to servers and icons
// trust. The local CA's certificates (--local-ca) are trusted, besides the
// system's, for an allowed local origin only.
func (m *Manager) tlsFor(rawURL string) *tls.Config {
	if m.o.TLS != nil {
		return m.o.TLS
	}
	if m.o.LocalCA != nil && m.o.Policy.allowFor(rawURL) != nil {
		return &tls.Config{RootCAs: m.o.LocalCA}
	}
	return nil
}

// LoadLocalCA reads a PEM file of CA certificates for local https servers
// (zero serve --local-ca) and returns them with the system's roots.
func LoadLocalCA(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("local CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("local CA file %s: no PEM certificate in it", path)
	}
	return pool, nil
}
