package store

import "testing"

// TestPositional: parameters $1..$n become ? only when each appears once
// and in order, outside strings, identifiers and comments.
func TestPositional(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE b = $1 AND c = $2`, `SELECT a FROM t WHERE b = ? AND c = ?`},
		{`INSERT INTO t VALUES ($1, $2, $3), ($4, $5, $6)`, `INSERT INTO t VALUES (?, ?, ?), (?, ?, ?)`},
		{`SELECT $1, $10, $2`, `SELECT $1, $10, $2`},                               // out of order
		{`UPDATE t SET a = $1 WHERE b <= $1`, `UPDATE t SET a = $1 WHERE b <= $1`}, // repeated
		{`SELECT $2, $1`, `SELECT $2, $1`},
		{`SELECT '$1 costs', $1`, `SELECT '$1 costs', ?`},
		{`SELECT "$x", $1`, `SELECT "$x", ?`},
		{`SELECT 'it''s', $1, $2`, `SELECT 'it''s', ?, ?`},
		{"SELECT $1 -- and $5\n, $2", "SELECT ? -- and $5\n, ?"},
		{`/* dynamic */ SELECT $1`, `/* dynamic */ SELECT ?`},
		{`SELECT ?, $1`, `SELECT ?, $1`},
		{`SELECT $01`, `SELECT $01`},
		{`SELECT $a`, `SELECT $a`},
		{`SELECT 'open $1`, `SELECT 'open $1`},
	} {
		if got := positional(c.in); got != c.want {
			t.Errorf("positional(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
