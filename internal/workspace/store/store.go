// Package store owns the workspace's database schema: it opens the SQLite
// file under $ZERO_HOME, or a PostgreSQL database that replicas share,
// through package database, migrates it to the current schema at start,
// and hands out a *sql.DB. Everything else speaks database/sql, its
// queries written once (see package database).
package store

import (
	"context"
	"database/sql"
	"slices"

	"github.com/zero-dev/zero/internal/database"
)

// migrations are applied in order; migrations[i] takes the schema from
// version i to i+1. Never edit one that has shipped: add another.
var migrations = []string{
	`CREATE TABLE users (
		id         INTEGER PRIMARY KEY,
		name       TEXT NOT NULL UNIQUE,
		role       TEXT NOT NULL CHECK (role IN ('owner', 'member', 'viewer')),
		created_at TEXT NOT NULL
	);
	CREATE TABLE login_links (
		hash       TEXT PRIMARY KEY,
		user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
		expires_at TEXT NOT NULL
	);
	CREATE TABLE sessions (
		hash       TEXT PRIMARY KEY,
		user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
		csrf       TEXT NOT NULL,
		expires_at TEXT NOT NULL
	);
	CREATE TABLE tokens (
		id         INTEGER PRIMARY KEY,
		user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
		name       TEXT NOT NULL,
		hash       TEXT NOT NULL UNIQUE,
		created_at TEXT NOT NULL
	);
	CREATE TABLE servers (
		id                   INTEGER PRIMARY KEY,
		name                 TEXT NOT NULL UNIQUE,
		config               TEXT NOT NULL,
		approved_fingerprint TEXT NOT NULL DEFAULT '',
		enabled              INTEGER NOT NULL DEFAULT 0,
		status               TEXT NOT NULL DEFAULT 'untested',
		tools                TEXT NOT NULL DEFAULT '[]',
		last_error           TEXT NOT NULL DEFAULT '',
		created_at           TEXT NOT NULL,
		updated_at           TEXT NOT NULL
	);
	CREATE TABLE secrets (
		server_id  INTEGER NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
		kind       TEXT NOT NULL CHECK (kind IN ('env', 'header')),
		name       TEXT NOT NULL,
		sealed     BLOB NOT NULL,
		PRIMARY KEY (server_id, kind, name)
	);`,
	// 2: a server's logo, a data: URL the server made from the icon the
	// MCP server declared.
	`ALTER TABLE servers ADD COLUMN logo TEXT NOT NULL DEFAULT ''`,
	// 3: who set each secret's value; the fingerprint encoding a server's
	// secrets are sealed under (1 until package servers seals them again
	// under 2); login links kept once used, so that a reuse is told apart
	// from an unknown link; a token's first use; unique token names (an
	// older duplicate gets its id appended).
	`ALTER TABLE secrets ADD COLUMN set_by TEXT NOT NULL DEFAULT '';
	ALTER TABLE servers ADD COLUMN encoding INTEGER NOT NULL DEFAULT 1;
	ALTER TABLE login_links ADD COLUMN used_at TEXT NOT NULL DEFAULT '';
	ALTER TABLE tokens ADD COLUMN first_used_at TEXT NOT NULL DEFAULT '';
	UPDATE tokens SET name = name || ' (' || id || ')' WHERE id NOT IN (SELECT min(id) FROM tokens GROUP BY name);
	CREATE UNIQUE INDEX tokens_name ON tokens (name);`,
	// 4: the drift gate. A server's approved tool set, for the configuration
	// fingerprint it was approved under (each tool's name, hash and listed
	// definition, as JSON), the last listing a Test or a connection made, the
	// tools its owner switched off (a row each), and the owner's debug-log
	// switch. They replace servers.tools, the hashes of the last Test.
	`CREATE TABLE tool_sets (
		server_id   INTEGER PRIMARY KEY REFERENCES servers (id) ON DELETE CASCADE,
		fingerprint TEXT NOT NULL,
		hash        TEXT NOT NULL,
		tools       TEXT NOT NULL,
		approved_by TEXT NOT NULL,
		approved_at TEXT NOT NULL
	);
	CREATE TABLE tool_listings (
		server_id   INTEGER PRIMARY KEY REFERENCES servers (id) ON DELETE CASCADE,
		fingerprint TEXT NOT NULL,
		hash        TEXT NOT NULL,
		tools       TEXT NOT NULL,
		listed_at   TEXT NOT NULL
	);
	CREATE TABLE tools_off (
		server_id INTEGER NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
		name      TEXT NOT NULL,
		set_by    TEXT NOT NULL,
		set_at    TEXT NOT NULL,
		PRIMARY KEY (server_id, name)
	);
	ALTER TABLE servers ADD COLUMN debug_log INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE servers DROP COLUMN tools;`,
	// 5: token scopes. A scoped token may use only the servers it has a row
	// for here; deleting a server deletes its rows, so a server that later
	// gets the same id is not in any token's scope.
	`ALTER TABLE tokens ADD COLUMN scoped INTEGER NOT NULL DEFAULT 0;
	CREATE TABLE token_servers (
		token_id  INTEGER NOT NULL REFERENCES tokens (id) ON DELETE CASCADE,
		server_id INTEGER NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
		PRIMARY KEY (token_id, server_id)
	);`,
	// 6: agent threads. Thread ids are never given again (AUTOINCREMENT):
	// a thread's folder is named by its id. Events are append-only; parent
	// is the seq of the event an event follows, 0 for the first of a
	// branch. thread_search indexes titles (seq 0) and message text.
	`CREATE TABLE threads (
		id                INTEGER PRIMARY KEY AUTOINCREMENT,
		title             TEXT NOT NULL,
		runtime           TEXT NOT NULL,
		provider          TEXT NOT NULL,
		model             TEXT NOT NULL,
		forked_from       INTEGER NOT NULL DEFAULT 0,
		forked_at         INTEGER NOT NULL DEFAULT 0,
		prompt_tokens     INTEGER NOT NULL DEFAULT 0,
		completion_tokens INTEGER NOT NULL DEFAULT 0,
		created_at        TEXT NOT NULL,
		updated_at        TEXT NOT NULL
	);
	CREATE TABLE thread_events (
		thread_id  INTEGER NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
		seq        INTEGER NOT NULL,
		parent     INTEGER NOT NULL,
		kind       TEXT NOT NULL,
		body       TEXT NOT NULL,
		created_at TEXT NOT NULL,
		PRIMARY KEY (thread_id, seq)
	);
	CREATE VIRTUAL TABLE thread_search USING fts5(text, thread_id UNINDEXED, seq UNINDEXED);`,
	// 7: model providers. api_key is sealed for the provider's id and the
	// base URL it was set for (package providers); NULL when none is set.
	`CREATE TABLE providers (
		id            INTEGER PRIMARY KEY AUTOINCREMENT,
		name          TEXT NOT NULL UNIQUE,
		base_url      TEXT NOT NULL,
		stream        INTEGER NOT NULL,
		default_model TEXT NOT NULL,
		models        TEXT NOT NULL,
		api_key       BLOB,
		key_set_by    TEXT NOT NULL,
		updated_at    TEXT NOT NULL
	);`,
	// 8: runs of threads. At most one run of a thread is not ended (the
	// partial unique index); package threads keeps the transitions.
	`CREATE TABLE thread_runs (
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		thread_id  INTEGER NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
		status     TEXT NOT NULL CHECK (status IN ('running', 'waiting_approval', 'completed', 'interrupted', 'failed')),
		error      TEXT NOT NULL DEFAULT '',
		started_at TEXT NOT NULL,
		ended_at   TEXT NOT NULL DEFAULT ''
	);
	CREATE UNIQUE INDEX thread_runs_one_open ON thread_runs (thread_id) WHERE status IN ('running', 'waiting_approval');`,
	// 9: approval rules for threads' tool calls. A tool rule is the
	// owner's, for every thread; a thread allowance is one thread's. An
	// allow (either kind) holds only for the tool hash and the server
	// fingerprint it was given for; a deny holds whatever they become.
	`CREATE TABLE tool_rules (
		server_id   INTEGER NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
		tool        TEXT NOT NULL,
		rule        TEXT NOT NULL CHECK (rule IN ('allow', 'deny')),
		tool_hash   TEXT NOT NULL,
		fingerprint TEXT NOT NULL,
		set_by      TEXT NOT NULL,
		set_at      TEXT NOT NULL,
		PRIMARY KEY (server_id, tool)
	);
	CREATE TABLE thread_allows (
		thread_id   INTEGER NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
		server_id   INTEGER NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
		tool        TEXT NOT NULL,
		tool_hash   TEXT NOT NULL,
		fingerprint TEXT NOT NULL,
		PRIMARY KEY (thread_id, server_id, tool)
	);`,
	// 10: approvals a run waits for, one per tool call, with the answer
	// once it came (or the expiry, which declines).
	`CREATE TABLE thread_approvals (
		id          INTEGER PRIMARY KEY AUTOINCREMENT,
		run_id      INTEGER NOT NULL REFERENCES thread_runs (id) ON DELETE CASCADE,
		call_id     TEXT NOT NULL,
		server_id   INTEGER NOT NULL,
		tool        TEXT NOT NULL,
		tool_hash   TEXT NOT NULL,
		fingerprint TEXT NOT NULL,
		status      TEXT NOT NULL CHECK (status IN ('pending', 'once', 'thread', 'always', 'declined', 'cancelled', 'expired')),
		answered_by TEXT NOT NULL DEFAULT '',
		expires_at  TEXT NOT NULL,
		answered_at TEXT NOT NULL DEFAULT '',
		UNIQUE (run_id, call_id)
	);`,
	// 11: the owner's thread settings, one row: how long a pending
	// approval waits before it expires as declined.
	`CREATE TABLE thread_settings (
		id               INTEGER PRIMARY KEY CHECK (id = 1),
		approval_timeout INTEGER NOT NULL,
		set_by           TEXT NOT NULL,
		set_at           TEXT NOT NULL
	);`,
	// 12: the replica that runs a run: a number each workspace takes when
	// it opens (0 on SQLite, where one process owns the database). On
	// PostgreSQL a replica holds an advisory lock on its number while it
	// lives (package threads), so that a replica that starts ends the runs
	// of replicas that are gone, and only theirs.
	`ALTER TABLE thread_runs ADD COLUMN replica INTEGER NOT NULL DEFAULT 0`,
	// 13: who started a run: the caller of its tool calls, which a replica
	// that takes the run over from one that is gone calls them as.
	`ALTER TABLE thread_runs ADD COLUMN actor TEXT NOT NULL DEFAULT ''`,
	// 14: how many times a replica took the run (its loop ran there, on
	// PostgreSQL, as a job): a job takes a run only at the count it was
	// queued at, so that of two jobs of one run one runs it.
	`ALTER TABLE thread_runs ADD COLUMN taken INTEGER NOT NULL DEFAULT 0`,
	// 15: who asked to cancel a run that no replica held then (on
	// PostgreSQL): the replica that takes it cancels it.
	`ALTER TABLE thread_runs ADD COLUMN cancelled_by TEXT NOT NULL DEFAULT ''`,
	// 16: the secrets key's check (package secrets' SealCheck), one row:
	// a workspace whose key does not open it refuses to start.
	`CREATE TABLE secrets_key (
		id     INTEGER PRIMARY KEY CHECK (id = 1),
		sealed BLOB NOT NULL
	);`,
	// 17: the most calls in flight to one server at once, the owner's
	// setting (0: the runtime's default).
	`ALTER TABLE servers ADD COLUMN max_calls INTEGER NOT NULL DEFAULT 0`,
	// 18: who gave each thread allowance, and when, as tool_rules keeps
	// for the owner's rules ('' for those given before).
	`ALTER TABLE thread_allows ADD COLUMN set_by TEXT NOT NULL DEFAULT '';
	ALTER TABLE thread_allows ADD COLUMN set_at TEXT NOT NULL DEFAULT '';`,
	// 19: plugins from GitHub (package plugins). A row is an installed
	// plugin: its files are in the folder dir under $ZERO_HOME/plugins,
	// with its provenance (source.json) beside them; manifest is its
	// plugin.json as installed. The approved_ columns are what the owner
	// last enabled: the fingerprint, the permission hash, the tool set
	// (name to tool hash, JSON) and the node program. Plugin ids are never
	// given again (AUTOINCREMENT): a secret is sealed for its plugin's id.
	// A secret's value is sealed for the permission hash in its row.
	`CREATE TABLE plugins (
		id                       INTEGER PRIMARY KEY AUTOINCREMENT,
		name                     TEXT NOT NULL UNIQUE,
		dir                      TEXT NOT NULL,
		repo                     TEXT NOT NULL,
		ref                      TEXT NOT NULL,
		folder                   TEXT NOT NULL,
		commit_sha               TEXT NOT NULL,
		set_hash                 TEXT NOT NULL,
		permission_hash          TEXT NOT NULL,
		manifest                 TEXT NOT NULL,
		approved_fingerprint     TEXT NOT NULL DEFAULT '',
		approved_permission_hash TEXT NOT NULL DEFAULT '',
		approved_tools           TEXT NOT NULL DEFAULT '{}',
		approved_node            TEXT NOT NULL DEFAULT '',
		enabled                  INTEGER NOT NULL DEFAULT 0,
		installed_by             TEXT NOT NULL,
		installed_at             TEXT NOT NULL,
		updated_at               TEXT NOT NULL
	);
	CREATE TABLE plugin_secrets (
		plugin_id       INTEGER NOT NULL REFERENCES plugins (id) ON DELETE CASCADE,
		name            TEXT NOT NULL,
		sealed          BLOB NOT NULL,
		permission_hash TEXT NOT NULL,
		set_by          TEXT NOT NULL,
		set_at          TEXT NOT NULL,
		PRIMARY KEY (plugin_id, name)
	);`,
	// 20: approval rules for threads' calls of plugins' tools, kept apart
	// from servers' (plugin ids are numbered apart from server ids), as
	// tool_rules and thread_allows are, and which of a pending approval's
	// tools is a plugin's.
	`CREATE TABLE plugin_tool_rules (
		plugin_id   INTEGER NOT NULL REFERENCES plugins (id) ON DELETE CASCADE,
		tool        TEXT NOT NULL,
		rule        TEXT NOT NULL CHECK (rule IN ('allow', 'deny')),
		tool_hash   TEXT NOT NULL,
		fingerprint TEXT NOT NULL,
		set_by      TEXT NOT NULL,
		set_at      TEXT NOT NULL,
		PRIMARY KEY (plugin_id, tool)
	);
	CREATE TABLE plugin_thread_allows (
		thread_id   INTEGER NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
		plugin_id   INTEGER NOT NULL REFERENCES plugins (id) ON DELETE CASCADE,
		tool        TEXT NOT NULL,
		tool_hash   TEXT NOT NULL,
		fingerprint TEXT NOT NULL,
		set_by      TEXT NOT NULL,
		set_at      TEXT NOT NULL,
		PRIMARY KEY (thread_id, plugin_id, tool)
	);
	ALTER TABLE thread_approvals ADD COLUMN plugin INTEGER NOT NULL DEFAULT 0;`,
	// 21: a provider's wire API (package model's Config.WireAPI); those
	// saved before speak chat completions.
	`ALTER TABLE providers ADD COLUMN wire_api TEXT NOT NULL DEFAULT 'chat-completions';`,
	// 22: sandboxed threads. A thread's sandbox backend ('' for a host
	// thread), chosen when it was made, and whether its guests get a
	// scratch copy of its work folder (1) or the folder itself (0); the
	// owner's sandbox settings, one row (a backend pinned, or a minimum
	// tier, '' for none; the default decision for sandboxed tools); the
	// approval rules of sandboxed threads' tools, by tool name alone (they
	// belong to no server or plugin), an allow holding only for the hash
	// and backend (fingerprint) it was given for; and which of a pending
	// approval's tools is a sandboxed thread's.
	`ALTER TABLE threads ADD COLUMN sandbox_backend TEXT NOT NULL DEFAULT '';
	ALTER TABLE threads ADD COLUMN sandbox_copy INTEGER NOT NULL DEFAULT 0;
	CREATE TABLE sandbox_settings (
		id       INTEGER PRIMARY KEY CHECK (id = 1),
		pin      TEXT NOT NULL,
		minimum  TEXT NOT NULL,
		approval TEXT NOT NULL CHECK (approval IN ('ask', 'allow')),
		set_by   TEXT NOT NULL,
		set_at   TEXT NOT NULL
	);
	CREATE TABLE sandbox_tool_rules (
		tool        TEXT PRIMARY KEY,
		rule        TEXT NOT NULL CHECK (rule IN ('allow', 'deny')),
		tool_hash   TEXT NOT NULL,
		fingerprint TEXT NOT NULL,
		set_by      TEXT NOT NULL,
		set_at      TEXT NOT NULL
	);
	CREATE TABLE sandbox_thread_allows (
		thread_id   INTEGER NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
		tool        TEXT NOT NULL,
		tool_hash   TEXT NOT NULL,
		fingerprint TEXT NOT NULL,
		set_by      TEXT NOT NULL,
		set_at      TEXT NOT NULL,
		PRIMARY KEY (thread_id, tool)
	);
	ALTER TABLE thread_approvals ADD COLUMN sandbox INTEGER NOT NULL DEFAULT 0;`,
	// 23: a cache of the MCP Registry (package registry), by the
	// registry's URL: each entry version's bytes (canonical JSON) and
	// SHA-256, what the registry says of it, the fields a page shows, a
	// lower-case search_text (name, title, description) that searches
	// scan, and its icon as a data: URL ('' for none); and the pages of
	// listings (a query and a cursor: the entries, as JSON [name, version]
	// pairs, and the next cursor), each with when the registry gave it.
	`CREATE TABLE registry_entries (
		registry_url   TEXT NOT NULL,
		name           TEXT NOT NULL,
		version        TEXT NOT NULL,
		is_latest      INTEGER NOT NULL,
		status         TEXT NOT NULL CHECK (status IN ('active', 'deprecated')),
		status_message TEXT NOT NULL,
		title          TEXT NOT NULL,
		description    TEXT NOT NULL,
		search_text    TEXT NOT NULL,
		entry          BLOB NOT NULL,
		sha256         TEXT NOT NULL,
		icon           TEXT NOT NULL,
		fetched_at     TEXT NOT NULL,
		PRIMARY KEY (registry_url, name, version)
	);
	CREATE INDEX registry_entries_latest ON registry_entries (registry_url, is_latest, name);
	CREATE TABLE registry_pages (
		registry_url TEXT NOT NULL,
		query        TEXT NOT NULL,
		cursor       TEXT NOT NULL,
		entries      TEXT NOT NULL,
		next_cursor  TEXT NOT NULL,
		fetched_at   TEXT NOT NULL,
		PRIMARY KEY (registry_url, query, cursor)
	);`,
	// 24: passkeys (package passkeys). A person's WebAuthn credentials,
	// each the library's credential record as JSON (public key, attestation
	// type, transports, flags, AAGUID, sign count) under its raw credential
	// id, which no two people share; last_used_at is '' until an assertion
	// used it. The challenges begun and not yet answered, by their single-use
	// nonce: a registration's, or an assertion's bound to one action (the
	// action's binding, hex; '' for a registration), with the words the page
	// showed, the library's session data (JSON) and when it expires. And the
	// owner's setting, one row: whether approvals need a passkey (no row:
	// yes, once the owner has one). Passkey ids are never given again
	// (AUTOINCREMENT): a page names the passkey it renames or removes by id.
	`CREATE TABLE passkeys (
		id            INTEGER PRIMARY KEY AUTOINCREMENT,
		user_id       INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
		name          TEXT NOT NULL,
		credential_id BLOB NOT NULL UNIQUE,
		credential    TEXT NOT NULL,
		created_at    TEXT NOT NULL,
		last_used_at  TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX passkeys_user ON passkeys (user_id);
	CREATE TABLE passkey_challenges (
		nonce      TEXT PRIMARY KEY,
		user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
		kind       TEXT NOT NULL CHECK (kind IN ('register', 'assert')),
		binding    TEXT NOT NULL,
		words      TEXT NOT NULL,
		session    TEXT NOT NULL,
		expires_at TEXT NOT NULL
	);
	CREATE INDEX passkey_challenges_expiry ON passkey_challenges (expires_at);
	CREATE TABLE passkey_settings (
		id       INTEGER PRIMARY KEY CHECK (id = 1),
		required TEXT NOT NULL CHECK (required IN ('on', 'off')),
		set_by   TEXT NOT NULL,
		set_at   TEXT NOT NULL
	);`,
}

// Open opens (creating it if need be) the database file at path and
// migrates it to the current schema (see package database: a new file is
// its owner's only).
func Open(ctx context.Context, path string) (*sql.DB, error) {
	return database.OpenSQLite(ctx, path, migrations)
}

// OpenPostgres opens the PostgreSQL database dsn names, which replicas of
// a workspace share, and migrates it to the current schema: the same
// migrations, through database.ForPostgres.
func OpenPostgres(ctx context.Context, dsn string) (*sql.DB, error) {
	return database.OpenPostgres(ctx, dsn, migrations)
}

// Version is the schema version Open migrates to.
func Version() int { return len(migrations) }

// Migrations are the schema's migrations, for tests that open it through
// databasetest.
func Migrations() []string { return slices.Clone(migrations) }
