// Package database is Zero's one database package, the only user of the
// SQLite driver and of PostgreSQL's (pgx): OpenSQLite opens a database file
// with Zero's settings (WAL, a busy timeout, foreign keys, full sync, one
// connection), created readable and writable by its owner only;
// OpenPostgres opens a PostgreSQL database. Both migrate it with a
// caller's list of migrations, written for SQLite: PostgreSQL gets them
// through ForPostgres, a short, explicit list of rewrites. The workspace's
// store and Agent Zero's state each bring their own schema.
package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite" // SQLite's driver, registered as "sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// OpenSQLite opens (creating it if need be) the database file at path and applies
// the migrations it has not had: migrations[i] takes the schema from version
// i to i+1, each in its own transaction. Never edit a migration that has
// shipped: add another. A new file is readable and writable by its owner
// only, and SQLite gives its journal files the same mode. A database at a
// version newer than len(migrations) is refused.
func OpenSQLite(ctx context.Context, path string, migrations []string) (*sql.DB, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	f.Close()
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(FULL)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1) // SQLite has one writer; one connection keeps it simple and safe
	if err := migrate(ctx, db, migrations); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate database %s: %w", path, err)
	}
	return db, nil
}

// OpenPostgres opens the PostgreSQL database dsn names (a URL or
// key=value pairs, as pgx reads them) and applies the migrations it has
// not had, each rewritten by ForPostgres, as OpenSQLite does. Queries on
// it are written as for SQLite: the connection numbers their "?"
// parameters (Dialect.Rebind) and passes a bool as 1 or 0, the integers
// the schema keeps them as.
func OpenPostgres(ctx context.Context, dsn string, migrations []string) (*sql.DB, error) {
	db, err := ConnectPostgres(dsn)
	if err != nil {
		return nil, err
	}
	pg := make([]string, len(migrations))
	for i, m := range migrations {
		pg[i] = ForPostgres(m)
	}
	if err := migrate(ctx, db, pg); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate the PostgreSQL database: %w", err)
	}
	return db, nil
}

// CheckPostgres checks that dsn reads as a PostgreSQL connection string
// (a URL or key=value pairs), without connecting or looking up a name. Its
// error never holds the password.
func CheckPostgres(dsn string) error {
	_, err := pgx.ParseConfig(dsn)
	return err
}

// ConnectPostgres opens the PostgreSQL database dsn names as OpenPostgres
// does, without migrating it: for what reads a schema another part of Zero
// keeps (zero audit verify --database).
func ConnectPostgres(dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open the PostgreSQL database: %w", err)
	}
	db := sql.OpenDB(sqliteQueries{stdlib.GetConnector(*cfg)})
	// Several processes share one server, whose connections are few (100
	// by default): each takes at most maxPostgresConns.
	db.SetMaxOpenConns(maxPostgresConns)
	return db, nil
}

// A Pool is a pgx connection pool on PostgreSQL, as OpenPool makes it.
type Pool = pgxpool.Pool

// OpenPool opens a pgx connection pool on the PostgreSQL database dsn
// names, for what needs pgx itself (River's riverpgxv5 driver), with the
// same bound on connections as OpenPostgres.
func OpenPool(ctx context.Context, dsn string) (*Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open the PostgreSQL database: %w", err)
	}
	cfg.MaxConns = maxPostgresConns
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open the PostgreSQL database: %w", err)
	}
	return pool, nil
}

// WithSessionLock runs fn holding the PostgreSQL advisory lock key on a
// connection of pool: processes that start together on one database then
// do fn one at a time (make their tables: PostgreSQL refuses the second
// CREATE of a table being made). A lock that cannot be let go ends its
// connection, and the lock with it.
func WithSessionLock(ctx context.Context, pool *Pool, key int64, fn func() error) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("open the PostgreSQL database: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return fmt.Errorf("lock the PostgreSQL database for its tables: %w", err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key); err != nil {
			conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	return fn()
}

// maxPostgresConns bounds one process's connections to PostgreSQL.
const maxPostgresConns = 16

// ForUpdate is what ends a SELECT, in a transaction, of rows the
// transaction goes on to change after reading them: on PostgreSQL, whose
// transactions run side by side (read committed), " FOR UPDATE" locks the
// rows until it ends, so that two replicas' changes to a row take turns;
// SQLite's one writer takes turns already, and "" is its form.
func ForUpdate(db *sql.DB) string {
	if DialectOf(db) == PostgreSQL {
		return " FOR UPDATE"
	}
	return ""
}

// The dialect differences, each explicit: what a SQLite migration says,
// and what PostgreSQL says for it. Integers are 64-bit in SQLite; a row id
// SQLite assigns is an identity column; bytes are BYTEA; the full-text
// index (FTS5) is a table with a GIN index over its text.
var postgresRewrites = sync.OnceValue(func() []postgresRewrite {
	return []postgresRewrite{
		{regexp.MustCompile(`\bid(\s+)INTEGER PRIMARY KEY AUTOINCREMENT\b`), "id${1}BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"},
		{regexp.MustCompile(`\bid(\s+)INTEGER PRIMARY KEY(,|\n)`), "id${1}BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY${2}"},
		{regexp.MustCompile(`\bINTEGER\b`), "BIGINT"},
		{regexp.MustCompile(`\bBLOB\b`), "BYTEA"},
		{regexp.MustCompile(`\bREAL\b`), "DOUBLE PRECISION"},
		{regexp.MustCompile(`CREATE VIRTUAL TABLE (\w+) USING fts5\((\w+), (\w+) UNINDEXED, (\w+) UNINDEXED\);`),
			"CREATE TABLE ${1} (${2} TEXT NOT NULL, ${3} BIGINT NOT NULL, ${4} BIGINT NOT NULL);\n" +
				"\tCREATE INDEX ${1}_${2} ON ${1} USING gin (to_tsvector('simple', ${2}));"},
	}
})

// postgresRewrite is one entry of postgresRewrites: a SQLite pattern and
// its PostgreSQL replacement.
type postgresRewrite struct {
	re   *regexp.Regexp
	with string
}

// sqliteQueries connects to PostgreSQL through pgx, taking queries as
// they are written for SQLite.
type sqliteQueries struct{ driver.Connector }

func (c sqliteQueries) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return rebound{conn.(*stdlib.Conn)}, nil
}

func (c sqliteQueries) Driver() driver.Driver { return postgresDriver{c.Connector.Driver()} }

// postgresDriver is pgx's driver, named for DialectOf.
type postgresDriver struct{ driver.Driver }

// rebound is a pgx connection whose queries are rebound for PostgreSQL.
type rebound struct{ *stdlib.Conn }

func (c rebound) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.Prepare(PostgreSQL.Rebind(query))
}

func (c rebound) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, PostgreSQL.Rebind(query))
}

func (c rebound) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, PostgreSQL.Rebind(query), args)
}

func (c rebound) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, PostgreSQL.Rebind(query), args)
}

// CheckNamedValue passes a bool as the integer SQLite would store.
func (c rebound) CheckNamedValue(v *driver.NamedValue) error {
	if b, ok := v.Value.(bool); ok {
		v.Value = int64(0)
		if b {
			v.Value = int64(1)
		}
	}
	return nil
}

// DialectOf is the dialect of db, as OpenSQLite or OpenPostgres opened it.
func DialectOf(db *sql.DB) Dialect {
	if _, ok := db.Driver().(postgresDriver); ok {
		return PostgreSQL
	}
	return SQLite
}

// A Dialect is which database a query goes to.
type Dialect int

// The dialects.
const (
	SQLite Dialect = iota
	PostgreSQL
)

// Rebind writes query, whose parameters are SQLite's "?", in d's form:
// PostgreSQL's are $1, $2, ... A "?" inside a quoted string or identifier
// is left as it is.
func (d Dialect) Rebind(query string) string {
	if d != PostgreSQL {
		return query
	}
	var b strings.Builder
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// ForPostgres rewrites a migration written for SQLite for PostgreSQL.
func ForPostgres(migration string) string {
	for _, r := range postgresRewrites() {
		migration = r.re.ReplaceAllString(migration, r.with)
	}
	return migration
}

// migrationLock is the PostgreSQL advisory lock that keeps migrations one
// at a time, when several replicas start at once.
const migrationLock = 0x7a65726f6d696772 // "zeromigr"

// migrate applies the migrations the database has not had, on one
// connection that holds migrationLock on PostgreSQL.
func migrate(ctx context.Context, pool *sql.DB, migrations []string) error {
	db, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	if DialectOf(pool) == PostgreSQL {
		if _, err := db.ExecContext(ctx, `SELECT pg_advisory_lock(?)`, int64(migrationLock)); err != nil {
			return err
		}
		defer db.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(?)`, int64(migrationLock))
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var version int
	err = db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&version)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := db.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if version > len(migrations) {
		return fmt.Errorf("the database is at schema version %d, newer than this zero knows (%d)", version, len(migrations))
	}
	for v := version; v < len(migrations); v++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("to version %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, v+1); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// IsUnique reports whether err is a database's refusal of a row that
// breaks a unique index or key, in either dialect.
func IsUnique(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "23505" // unique_violation
	}
	var lite *sqlite.Error
	return errors.As(err, &lite) && (lite.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || lite.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}
