package database

import "testing"

// TestRebind: PostgreSQL's parameters are numbered in order; a "?" in a
// quoted string or identifier stays; SQLite's query is left as it is.
func TestRebind(t *testing.T) {
	for in, want := range map[string]string{
		`SELECT a FROM t WHERE b = ? AND c = ?`:    `SELECT a FROM t WHERE b = $1 AND c = $2`,
		`UPDATE t SET v = 'why?' WHERE id = ?`:     `UPDATE t SET v = 'why?' WHERE id = $1`,
		`SELECT "a?b" FROM t WHERE x IN (?, ?, ?)`: `SELECT "a?b" FROM t WHERE x IN ($1, $2, $3)`,
		`SELECT 'it''s?' , ?`:                      `SELECT 'it''s?' , $1`,
	} {
		if got := PostgreSQL.Rebind(in); got != want {
			t.Errorf("Rebind(%q) = %q, want %q", in, got, want)
		}
		if got := SQLite.Rebind(in); got != in {
			t.Errorf("SQLite changed %q to %q", in, got)
		}
	}
}
