package audit

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/zero-dev/zero/internal/database"
)

// TableSchema makes the table a [Table] keeps its chain in: one row a
// record, in the chain's order, with the same fields and hashes as the
// log file's records.
const TableSchema = `CREATE TABLE IF NOT EXISTS audit_records (
	seq         BIGINT PRIMARY KEY,
	time        TEXT NOT NULL,
	actor       TEXT NOT NULL,
	action      TEXT NOT NULL,
	target      TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	detail      TEXT NOT NULL,
	prev        TEXT NOT NULL,
	hash        TEXT NOT NULL
)`

// tableLock is the PostgreSQL advisory lock that orders appends: one
// chain, whichever process appends.
const tableLock = 0x7a65726f61756474 // "zeroaudt"

// A Table is the audit log's hash chain in a database table, which several
// processes (replicas of a workspace on one PostgreSQL) share. Each append
// reads the last record and adds the next in one transaction, under an
// advisory lock on PostgreSQL (SQLite serializes its writers), so the
// appends of every process make one chain.
type Table struct {
	db  *sql.DB
	now func() time.Time
}

// OpenTable returns the chain in db, making its table if need be.
// The table is made under the appends' lock: of processes that open a new
// database at once, one makes it (two CREATE TABLE IF NOT EXISTS at once
// can both try).
func OpenTable(ctx context.Context, db *sql.DB) (*Table, error) {
	t := &Table{db: db, now: time.Now}
	tx, err := t.lockedTx(ctx)
	if err != nil {
		return nil, fmt.Errorf("audit table: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, TableSchema); err != nil {
		return nil, fmt.Errorf("audit table: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("audit table: %w", err)
	}
	return t, nil
}

// lockedTx begins a transaction that holds tableLock on PostgreSQL.
func (t *Table) lockedTx(ctx context.Context) (*sql.Tx, error) {
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	if database.DialectOf(t.db) == database.PostgreSQL {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, int64(tableLock)); err != nil {
			tx.Rollback()
			return nil, err
		}
	}
	return tx, nil
}

// Append adds e as the chain's next record and returns it; it is stored
// when Append returns.
func (t *Table) Append(ctx context.Context, e Event) (Record, error) {
	tx, err := t.lockedTx(ctx)
	if err != nil {
		return Record{}, err
	}
	defer tx.Rollback()
	r := Record{Seq: 1, Time: t.now().UTC(), Event: cleanEvent(e)}
	var last uint64
	err = tx.QueryRowContext(ctx, `SELECT seq, hash FROM audit_records ORDER BY seq DESC LIMIT 1`).Scan(&last, &r.Prev)
	switch {
	case err == nil:
		r.Seq = last + 1
	case !errors.Is(err, sql.ErrNoRows):
		return Record{}, err
	}
	r.Hash = hashRecord(r)
	detail, _ := json.Marshal(r.Detail)
	if _, err := tx.ExecContext(ctx, `INSERT INTO audit_records (seq, time, actor, action, target, fingerprint, detail, prev, hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.Seq, formatTime(r.Time), r.Actor, r.Action, r.Target, r.Fingerprint, string(detail), r.Prev, r.Hash); err != nil {
		return Record{}, err
	}
	return r, tx.Commit()
}

// VerifyTable checks the chain in db, record by record: the sequence
// numbers follow from 1, each record's hash is its fields' (recomputed
// here), and each names the hash of the one before. It returns how many
// records there are, or a [*VerifyError] for the first bad one.
// db is a database or a transaction.
func VerifyTable(ctx context.Context, db Querier) (int, error) {
	return walkTable(ctx, db, nil)
}

// ReadTable returns the records of the chain in db, after verifying it as
// VerifyTable does; on a bad record it returns the error and no records.
func ReadTable(ctx context.Context, db Querier) ([]Record, error) {
	var out []Record
	if _, err := walkTable(ctx, db, func(r Record) { out = append(out, r) }); err != nil {
		return nil, err
	}
	return out, nil
}

// A Querier is a database or a transaction.
type Querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

// walkTable verifies the chain in db, giving each good record to each if
// it is not nil.
func walkTable(ctx context.Context, db Querier, each func(Record)) (int, error) {
	rows, err := db.QueryContext(ctx, `SELECT seq, time, actor, action, target, fingerprint, detail, prev, hash FROM audit_records ORDER BY seq`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	bad := func(seq uint64, n int, kind error, format string, args ...any) error {
		return &VerifyError{Path: "audit_records", Seq: seq, Line: n, Kind: kind, Reason: fmt.Sprintf(format, args...)}
	}
	n, prev := 0, ""
	for rows.Next() {
		var (
			r            Record
			stamp, dtext string
		)
		var err error
		if err = rows.Scan(&r.Seq, &stamp, &r.Actor, &r.Action, &r.Target, &r.Fingerprint, &dtext, &r.Prev, &r.Hash); err != nil {
			return n, err
		}
		n++
		if err := json.Unmarshal([]byte(dtext), &r.Detail); err != nil {
			return n, bad(r.Seq, n, ErrModified, "its detail does not parse")
		}
		if r.Time, err = time.Parse(time.RFC3339Nano, stamp); err != nil || formatTime(r.Time) != stamp {
			return n, bad(r.Seq, n, ErrModified, "its time %q is not one the log writes", stamp)
		}
		switch {
		case r.Seq > uint64(n):
			return n, bad(uint64(n), n, ErrRemoved, "record %d is missing", n)
		case r.Seq != uint64(n):
			return n, bad(uint64(n), n, ErrInserted, "record %d is in its place", r.Seq)
		case r.Prev != prev:
			return n, bad(r.Seq, n, ErrModified, "it names %q as the record before, which is %q", r.Prev, prev)
		case hashRecord(r) != r.Hash:
			return n, bad(r.Seq, n, ErrModified, "its fields do not hash to its hash")
		}
		prev = r.Hash
		if each != nil {
			each(r)
		}
	}
	return n, rows.Err()
}
