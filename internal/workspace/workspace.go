// Package workspace is `zero serve`: a local web app and JSON API where a
// person adds MCP servers (and, later, plugins and skills) behind an
// explicit approval of the exact configuration's fingerprint. It wires the
// pieces: the SQLite store under $ZERO_HOME, who may call (auth), the
// servers and their sealed secrets, the tool runtime that runs them, and the
// hash-chained audit log; and it serves them on a loopback address behind
// the Host and Origin guard.
package workspace

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/gitsource"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/localhttp"
	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/sandbox"
	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/endpoint"
	"github.com/zero-dev/zero/internal/workspace/passkeys"
	"github.com/zero-dev/zero/internal/workspace/plugins"
	"github.com/zero-dev/zero/internal/workspace/providers"
	"github.com/zero-dev/zero/internal/workspace/runtime"
	"github.com/zero-dev/zero/internal/workspace/secrets"
	"github.com/zero-dev/zero/internal/workspace/servers"
	"github.com/zero-dev/zero/internal/workspace/skills"
	"github.com/zero-dev/zero/internal/workspace/store"
	"github.com/zero-dev/zero/internal/workspace/threads"
	"github.com/zero-dev/zero/internal/workspace/web"
)

// Defaults.
const (
	DefaultAddr = "127.0.0.1:7077"
	dbFile      = "zero.db"
	auditFile   = "audit.log"
	threadsDir  = "workspace"
	skillsDir   = "skills"
	pluginsDir  = "plugins"
)

// serveGCPercent is the collector's percentage in zero serve, as in the
// MCP servers: a tool call through /mcp allocates several times what it
// keeps (the SDK's JSON decoding), the live heap is small, and at the
// default (100) the collector took a third of the CPU of a call.
const serveGCPercent = 400

// Options configure a workspace.
type Options struct {
	Home                string // $ZERO_HOME; created with mode 0700 if missing
	Team                bool   // several users with roles, instead of one owner
	AllowedLocalOrigins []string
	// LocalCAFile names a PEM file of CA certificates trusted, besides the
	// system's, for the allowed local origins only: their servers and the
	// icons there (servers.Options.LocalCA), not the model providers or
	// the skills' git host.
	LocalCAFile string
	Stderr      io.Writer
	// GOGC is the GOGC environment variable, as the caller read it. When it
	// is empty, Serve sets the collector's percentage to serveGCPercent.
	GOGC string
	// SecretsKeyFile, if set, names the key that seals secrets
	// (ZERO_SECRETS_KEY_FILE), which every replica of a workspace shares;
	// it must exist. Unset: $ZERO_HOME/secrets.key, made at the first start.
	SecretsKeyFile string
	// DatabaseURL, if set, is the PostgreSQL database (ZERO_DATABASE_URL or
	// --database) that holds the workspace's state and its audit log, which
	// replicas share. Unset: $ZERO_HOME/zero.db and $ZERO_HOME/audit.log.
	DatabaseURL string
	// GitHubURL is where skills come from (ZERO_GITHUB_URL; "" is
	// github.com), GitHubToken the token sent to it alone (GH_TOKEN,
	// GITHUB_TOKEN or gh's).
	GitHubURL   string
	GitHubToken string
	// RegistryURL is the MCP Registry servers are added from
	// (ZERO_REGISTRY_URL; "" is DefaultRegistryURL).
	RegistryURL string
	// RegistryRuntimes, for tests, maps a registry package's runtime
	// ("npx", "uvx", "dnx", "docker", and "node" and "python3" for mcpb
	// bundles) to the program that stands in for
	// it; nil: the runtimes' own names, found in the PATH.
	RegistryRuntimes map[string]string
	// TLS and Resolver are for tests: TLS trusts a test server's
	// certificate, Resolver makes a name resolve to a chosen address. Nil
	// means the system's.
	TLS      *tls.Config
	Resolver netguard.Resolver
	// SandboxRunners are the sandbox backends sandboxed threads may use;
	// nil: sandbox.DefaultRunners, every backend (tests pass their own).
	SandboxRunners []sandbox.Runner
	// SandboxHelper is the host path of the guest helper program, which
	// sandboxed threads' file tools run in their guests, with
	// SandboxHelperArgs before each command: zero itself and {"guest"}.
	SandboxHelper     string
	SandboxHelperArgs []string
	// SandboxDockerHost is the Docker daemon of the Docker backends
	// (DOCKER_HOST); "" is the client's default.
	SandboxDockerHost string
}

// A Workspace is an open workspace: its database, key, audit log and
// routes.
type Workspace struct {
	opts      Options
	db        *sql.DB
	pool      *database.Pool // on PostgreSQL: the threads' LISTEN and their queue
	queue     *river.Client[pgx.Tx]
	auth      *auth.Service
	servers   *servers.Manager
	runtime   *runtime.Runtime // the one way the workspace calls a tool
	endpoint  *endpoint.Endpoint
	providers *providers.Manager
	threads   *threads.Store
	skills    *skills.Manager  // skills added from GitHub, under $ZERO_HOME/skills
	plugins   *plugins.Manager // plugins installed from GitHub, under $ZERO_HOME/plugins
	registry  *registrySource  // the MCP Registry servers are added from, through its cache
	runner    *threads.Runner  // the threads' runs
	// threadLimits bound each run; zero values are the defaults (tests
	// lower them).
	threadLimits threads.Limits
	// sandboxLimits bound each guest of a sandboxed thread; zero values
	// are sandbox's defaults (tests lower them).
	sandboxLimits sandbox.Limits
	audit         *audit.Log
	auditPath     string
	roots         *fsroot.Set
	ownerID       int64
	log           *slog.Logger
	base          string   // http://host:port, once listening: localhost on loopback, for people's links
	listenURL     string   // http://listen-host:port, for clients' configurations (the bridge, /mcp)
	origins       []string // the origins a browser may send from
	pages         *web.Renderer
	box           *secrets.Box
	refusals      *refusals
	shown         *showOnce
	sandboxes     sandboxes // the sandbox backends, made at their first use
	// passkeys are the people's passkeys and the assertions that confirm
	// approvals (passkeys_gate.go), made with the routes.
	passkeys *passkeys.Service
	mux      *http.ServeMux // the routes, for the passkey challenge to look one up
}

// Open opens (creating and migrating as needed) the workspace under
// o.Home.
func Open(ctx context.Context, o Options) (*Workspace, error) {
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if err := os.MkdirAll(o.Home, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", o.Home, err)
	}
	workDir := filepath.Join(o.Home, threadsDir)
	if err := os.MkdirAll(workDir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", workDir, err)
	}
	var box *secrets.Box
	var err error
	if o.SecretsKeyFile != "" {
		box, err = secrets.OpenKey(o.SecretsKeyFile)
	} else {
		box, err = secrets.LoadKey(filepath.Join(o.Home, secrets.KeyFile))
	}
	if err != nil {
		return nil, err
	}
	db, err := openStore(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := checkSecretsKey(ctx, db, box, o); err != nil {
		db.Close()
		return nil, err
	}
	pages, err := web.New()
	if err != nil {
		db.Close()
		return nil, err
	}
	w := &Workspace{opts: o, db: db, auth: auth.New(db), auditPath: filepath.Join(o.Home, auditFile), pages: pages, box: box,
		log:      slog.New(slog.NewTextHandler(o.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		refusals: &refusals{now: time.Now}, shown: newShowOnce()}
	ok := false
	defer func() {
		if !ok {
			w.Close()
		}
	}()
	if o.DatabaseURL != "" {
		w.audit, err = audit.OpenInTable(ctx, db)
	} else {
		w.audit, err = audit.Open(w.auditPath)
	}
	if err != nil {
		return nil, err
	}
	if w.roots, err = fsroot.Open([]string{workDir}); err != nil {
		return nil, err
	}
	if w.ownerID, err = w.auth.EnsureOwner(ctx, "owner"); err != nil {
		return nil, err
	}
	var localCA *x509.CertPool
	if o.LocalCAFile != "" {
		if localCA, err = servers.LoadLocalCA(o.LocalCAFile); err != nil {
			return nil, err
		}
	}
	w.runtime = runtime.New(runtime.Options{Roots: w.roots, Audit: w.audit, Resolver: o.Resolver, Log: w.log, Observe: w.observe,
		DataDir: o.Home})
	w.servers = servers.NewManager(servers.Options{
		DB: db, Box: box, Audit: w.audit, Workspace: w.roots, TLS: o.TLS, Resolver: o.Resolver, LocalCA: localCA,
		Policy: servers.Policy{LocalOrigins: o.AllowedLocalOrigins}, Runtime: w.runtime,
		Changed: func(id int64) { w.endpoint.Changed(id) }, Log: w.log,
	})
	w.openRegistry()
	if w.skills, err = skills.New(skills.Options{Dir: filepath.Join(o.Home, skillsDir), Audit: w.audit,
		Source: &gitsource.Source{BaseURL: o.GitHubURL, Token: o.GitHubToken}}); err != nil {
		return nil, fmt.Errorf("open the skills: %w", err)
	}
	if w.plugins, err = plugins.New(ctx, plugins.Options{Dir: filepath.Join(o.Home, pluginsDir), DB: db, Box: box, Audit: w.audit,
		Source: &gitsource.Source{BaseURL: o.GitHubURL, Token: o.GitHubToken}, Skills: w.skills, Servers: w.servers,
		Runtime: w.runtime, LocalOrigins: o.AllowedLocalOrigins, Changed: func(id int64) { w.endpoint.PluginChanged(id) }}); err != nil {
		return nil, fmt.Errorf("open the plugins: %w", err)
	}
	w.endpoint = endpoint.New(endpoint.Options{Servers: w.servers, Plugins: w.plugins, Runtime: w.runtime, Log: w.log, Shared: o.DatabaseURL != ""})
	w.providers = providers.New(db, box, w.audit)
	// Each thread's folder is under the thread workspace, where the tools
	// run: $ZERO_HOME/workspace/threads/ID.
	w.threads = threads.New(db, filepath.Join(workDir, "threads"))
	if err := w.threads.JoinReplicas(ctx); err != nil {
		return nil, fmt.Errorf("join the workspace's replicas: %w", err)
	}
	w.runner = threads.NewRunner(w.threads)
	if o.DatabaseURL == "" {
		if _, err := w.threads.InterruptAll(ctx, "the workspace stopped before the run ended"); err != nil {
			return nil, fmt.Errorf("end the runs of the last start: %w", err)
		}
	} else {
		// The other replicas' appends and answers wake this one's streams
		// and waiting runs, and their changes to servers this one's /mcp
		// clients; runs are jobs, and the runs of replicas that are gone
		// are taken over, not ended.
		if w.pool, err = database.OpenPool(ctx, o.DatabaseURL); err != nil {
			return nil, err
		}
		w.runner.Listen(w.pool)
		w.endpoint.Listen(w.pool)
		if err := w.startQueue(ctx, w.pool); err != nil {
			return nil, fmt.Errorf("start the threads' queue: %w", err)
		}
	}
	if err := w.servers.Upgrade(ctx); err != nil {
		return nil, fmt.Errorf("upgrade stored servers: %w", err)
	}
	ok = true
	return w, nil
}

// checkSecretsKey compares the key with the one the database's secrets are
// sealed with: the first workspace to open the database leaves a check
// sealed with its key, and every later one opens it. On PostgreSQL a key
// that does not is refused: a replica given another key (or none, and so
// its own) would fail to open what the others sealed, and seal what they
// cannot open. On SQLite, which one workspace owns, a key that changed (a
// secrets.key lost and made again) is taken, with a warning: the secrets
// sealed before cannot be opened, and their servers say so until they are
// set again.
func checkSecretsKey(ctx context.Context, db *sql.DB, box *secrets.Box, o Options) error {
	if _, err := db.ExecContext(ctx, `INSERT INTO secrets_key (id, sealed) VALUES (1, ?) ON CONFLICT (id) DO NOTHING`, box.SealCheck()); err != nil {
		return fmt.Errorf("the secrets key's check: %w", err)
	}
	var sealed []byte
	if err := db.QueryRowContext(ctx, `SELECT sealed FROM secrets_key WHERE id = 1`).Scan(&sealed); err != nil {
		return fmt.Errorf("the secrets key's check: %w", err)
	}
	if box.Check(sealed) {
		return nil
	}
	key := filepath.Join(o.Home, secrets.KeyFile)
	if o.SecretsKeyFile != "" {
		key = o.SecretsKeyFile
	}
	if database.DialectOf(db) == database.PostgreSQL {
		return fmt.Errorf("the secrets key %s is not the one this workspace's secrets are sealed with: "+
			"give every replica of a database the same ZERO_SECRETS_KEY_FILE. If that key is lost for good, "+
			"the secrets sealed with it cannot be opened: delete the check (DELETE FROM secrets_key) and set them again", key)
	}
	if _, err := db.ExecContext(ctx, `UPDATE secrets_key SET sealed = ? WHERE id = 1`, box.SealCheck()); err != nil {
		return fmt.Errorf("the secrets key's check: %w", err)
	}
	fmt.Fprintf(o.Stderr, "warning: the secrets key %s is not the one the secrets were sealed with; "+
		"the secrets set before cannot be opened: set them again (or stop, and put the old key back)\n", key)
	return nil
}

// openStore opens the workspace's database: o.DatabaseURL's, or the file
// under o.Home.
func openStore(ctx context.Context, o Options) (*sql.DB, error) {
	if o.DatabaseURL != "" {
		return store.OpenPostgres(ctx, o.DatabaseURL)
	}
	return store.Open(ctx, filepath.Join(o.Home, dbFile))
}

// observe hands what a runtime connection listed to the servers, which
// record it and audit a drift.
func (w *Workspace) observe(ctx context.Context, s runtime.Spec, l runtime.Listing) error {
	return w.servers.Observe(ctx, s, l)
}

// Close releases the workspace, after stopping every server the runtime
// runs.
func (w *Workspace) Close() error {
	var errs []error
	if w.runner != nil {
		w.runner.Close() // its runs end interrupted, while the runtime and the database are open
	}
	if w.threads != nil {
		w.threads.LeaveReplicas()
	}
	if w.endpoint != nil {
		w.endpoint.Close()
	}
	if w.registry != nil {
		w.registry.close() // its refreshes write to the database
	}
	if w.runtime != nil {
		errs = append(errs, w.runtime.Close())
	}
	if w.audit != nil {
		if n, since := w.refusals.flush(); n > 0 {
			w.recordDropped(n, since)
		}
		errs = append(errs, w.audit.Close())
	}
	if w.roots != nil {
		errs = append(errs, w.roots.Close())
	}
	if w.queue != nil {
		// After the runner: the runs it worked have ended, and a job it
		// takes now is left to another replica.
		errs = append(errs, w.queue.Stop(context.Background()))
	}
	if w.pool != nil {
		w.pool.Close()
	}
	errs = append(errs, w.db.Close())
	return errors.Join(errs...)
}

// Handler returns the workspace's routes behind the Host and Origin guard,
// for a listener at l.
// On loopback the workspace's own links name it http://localhost:PORT:
// WebAuthn takes a domain as its relying party, never an IP address, so
// passkeys work there; 127.0.0.1 and [::1] are still served.
func (w *Workspace) Handler(l localhttp.Listen, port int) (http.Handler, error) {
	host := l.Host
	if l.Loopback {
		host = "localhost"
	}
	w.base = "http://" + net.JoinHostPort(host, strconv.Itoa(port))
	w.listenURL = "http://" + net.JoinHostPort(l.Host, strconv.Itoa(port))
	w.origins = []string{w.base}
	if l.Loopback {
		for _, h := range []string{"127.0.0.1", "[::1]"} {
			w.origins = append(w.origins, "http://"+h+":"+strconv.Itoa(port))
		}
	}
	pk, err := passkeys.New(passkeys.Options{DB: w.db, RPID: host, RPName: "Zero", Origins: []string{w.base}})
	if err != nil {
		return nil, fmt.Errorf("passkeys: %w", err)
	}
	w.passkeys = pk
	w.mux = w.routes()
	return securityHeaders(localhttp.GuardRecording(l, w.mux, w.guardRefused)), nil
}

// LoginURL returns a fresh one-time login link for the owner.
func (w *Workspace) LoginURL(ctx context.Context) (string, error) {
	token, err := w.auth.LoginLink(ctx, w.ownerID)
	if err != nil {
		return "", err
	}
	return auth.LoginURL(w.base, token), nil
}

// securityHeaders sets the headers every answer carries.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		h := rw.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", web.CSP)
		// same-origin, not no-referrer: under no-referrer a browser sends
		// "Origin: null" with a form, which the Origin check refuses.
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(rw, r)
	})
}

// Serve opens the workspace, listens on addr (which must be loopback), prints
// the URL and a one-time login link on stderr, and serves until ctx is done.
func Serve(ctx context.Context, o Options, addr string) error {
	l, err := localhttp.CheckAddr(addr, false)
	if err != nil {
		return err
	}
	if o.GOGC == "" {
		debug.SetGCPercent(serveGCPercent)
	}
	ln, err := listen(l, o.Home) // first: a port in use leaves the home as it was
	if err != nil {
		return err
	}
	defer ln.Close()
	lock, err := lockServe(o.Home) // one server per home: see home.go
	if err != nil {
		return err
	}
	defer lock.release()
	w, err := Open(ctx, o)
	if err != nil {
		return err
	}
	defer w.Close()
	h, err := w.Handler(l, ln.Addr().(*net.TCPAddr).Port)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if err := lock.publish(w.base); err != nil {
		return fmt.Errorf("write %s: %w", serveLockFile, err)
	}
	link, err := w.LoginURL(ctx)
	if err != nil {
		return err
	}
	mode := "single-user"
	if o.Team {
		mode = "team"
	}
	fmt.Fprintf(o.Stderr, "Zero workspace (%s) at %s\nOpen this one-time login link in your browser (valid %v):\n  %s\n",
		mode, w.base, auth.LoginLinkTTL, link)
	return localhttp.Serve(ctx, hs, ln)
}
