package store

import (
	"database/sql"
	"strconv"
	"strings"
)

// Scanner is one row to scan: a *sql.Row or the current row of *sql.Rows.
type Scanner interface{ Scan(dest ...any) error }

// ScanID scans a row of one id (a ScanAll scan).
func ScanID(row Scanner) (int64, error) {
	var id int64
	return id, row.Scan(&id)
}

// ScanAll scans every row of a query's result with scan and closes the
// rows. err is the query's own error, returned (normalized) as it is, so
// that a query's two results can be passed on directly. An empty result
// is an empty, non-nil slice (a JSON []).
func ScanAll[T any](rows *sql.Rows, err error, scan func(Scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, Normalize(err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, Normalize(err)
		}
		out = append(out, v)
	}
	return out, Normalize(rows.Err())
}

// ScanPage is ScanAll for a page asked with LIMIT limit+1: it returns
// at most limit rows, and whether more follow.
func ScanPage[T any](rows *sql.Rows, err error, limit int, scan func(Scanner) (T, error)) ([]T, bool, error) {
	out, err := ScanAll(rows, err, scan)
	if err != nil {
		return nil, false, err
	}
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

// In is the list of n placeholders "($first, $first+1, ...)" for an IN
// clause whose values are the query's arguments first to first+n-1.
// A query built with it varies with n: prefix it with Dynamic.
func In(first, n int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(first+i))
	}
	b.WriteByte(')')
	return b.String()
}
