package servers

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/buildinfo"
	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/guard/redact"
	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/pin"
)

// maxTools bounds how many tools a Test records.
const maxTools = 1000

// Test starts an approved server, initializes an MCP session with it, lists
// its tools and records a hash of each (name, description, input schema,
// annotations); the server's status becomes ok or failed. The
// configuration as it would run now (its program resolved afresh, today's
// policy applied) must be the approved and saved one, or the Test is
// refused with ApprovalRequired: its secrets are sealed for the approved
// fingerprint and are released to nothing else, and a command that now
// resolves to another program does not run. Errors are recorded with every
// secret value redacted, the server's stderr included.
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
	values := map[string]string{}
	for name, v := range sec.Env {
		values["env "+name] = v
	}
	for name, v := range sec.Headers {
		values["header "+name] = v
	}
	red := redact.New(values)

	ctx, cancel := context.WithTimeout(ctx, m.o.TestTimeout)
	defer cancel()
	tools, icons, testErr := m.listTools(ctx, p.Config, sec)
	status, lastError, toolsJSON, logoURL := StatusOK, "", []byte("[]"), cur.logo
	if testErr != nil {
		status, lastError = StatusFailed, red.String(testErr.Error())
	} else {
		toolsJSON, _ = json.Marshal(tools)
		logoURL = m.logoOf(ctx, icons)
	}
	_, err = m.change(ctx, id, actor, func(tx *sql.Tx, now *row) (string, map[string]string, error) {
		if now.config.Fingerprint() != fp {
			return "", nil, fmt.Errorf("the configuration changed during the test; test again")
		}
		_, err := tx.ExecContext(ctx, `UPDATE servers SET status = ?, tools = ?, last_error = ?, logo = ?, updated_at = ? WHERE id = ?`,
			status, string(toolsJSON), lastError, logoURL, stamp(m.now()), id)
		detail := map[string]string{"status": status, "tools": fmt.Sprint(len(tools))}
		return "server.test", detail, err
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

// listTools connects to the server as configured and lists its tools and
// the icons it declares.
func (m *Manager) listTools(ctx context.Context, c Config, sec Secrets) ([]Tool, []mcp.Icon, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "zero-workspace", Version: buildinfo.Version()}, nil)
	var transport mcp.Transport
	var stop func() string
	switch c.Kind {
	case KindStdio:
		if c.Program == "" {
			return nil, nil, fmt.Errorf("%s resolves to no executable file: nothing ran", c.Command)
		}
		p, err := spawn.Start(ctx, m.command(c, sec))
		if err != nil {
			return nil, nil, err
		}
		transport = &mcp.IOTransport{Reader: p.Stdout, Writer: p.Stdin}
		stop = func() string {
			res, _ := p.Stop()
			return strings.TrimSpace(string(res.Stderr))
		}
	default:
		httpClient := netguard.NewClient(netguard.Options{
			BlockPrivate: true,
			Schemes:      netguard.HTTPSOnly,
			Allow:        m.o.Policy.allowFor(c.URL),
			Timeout:      m.o.TestTimeout,
			TLS:          m.tlsFor(c.URL),
			Resolver:     m.o.Resolver,
		})
		u, _ := checkURL(c.URL) // c passed validation: its URL is canonical
		httpClient.Transport = &withHeaders{base: httpClient.Transport, origin: origin(u), headers: sec.Headers}
		if c.Kind == KindSSE {
			transport = &mcp.SSEClientTransport{Endpoint: c.URL, HTTPClient: httpClient}
		} else {
			transport = &mcp.StreamableClientTransport{Endpoint: c.URL, HTTPClient: httpClient, MaxRetries: -1}
		}
		stop = func() string { return "" }
	}
	tools, icons, err := collectTools(ctx, client, transport)
	stderr := stop()
	if err != nil && stderr != "" {
		err = fmt.Errorf("%w; the server's stderr: %s", err, tail(stderr, 2000))
	}
	return tools, icons, err
}

func collectTools(ctx context.Context, client *mcp.Client, transport mcp.Transport) ([]Tool, []mcp.Icon, error) {
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, nil, fmt.Errorf("initialize: %w", err)
	}
	defer cs.Close()
	var icons []mcp.Icon
	if res := cs.InitializeResult(); res != nil && res.ServerInfo != nil {
		icons = res.ServerInfo.Icons
	}
	var tools []Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, nil, fmt.Errorf("list tools: %w", err)
		}
		if len(tools) == maxTools {
			return nil, nil, fmt.Errorf("the server lists more than %d tools", maxTools)
		}
		schema, _ := json.Marshal(t.InputSchema)
		annotations := []byte("null")
		if t.Annotations != nil {
			annotations, _ = json.Marshal(t.Annotations)
		}
		h, err := pin.ToolHash(t.Name, t.Description, schema, annotations)
		if err != nil {
			return nil, nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		tools = append(tools, Tool{Name: t.Name, Description: t.Description, Hash: h})
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	if tools == nil {
		tools = []Tool{}
	}
	return tools, icons, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// withHeaders adds a server's configured headers to the requests that go to
// the server's own origin, and to no other: a redirect elsewhere does not
// carry them.
type withHeaders struct {
	base    http.RoundTripper
	origin  string
	headers map[string]string
}

func (t *withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 && origin(r.URL) == t.origin {
		r = r.Clone(r.Context())
		for name, v := range t.headers {
			r.Header.Set(name, v)
		}
	}
	return t.base.RoundTrip(r)
}

// tlsFor is the TLS configuration for a server at rawURL: the local CA's
// certificates are trusted, besides the system's, for an allowed local
// origin only.
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
