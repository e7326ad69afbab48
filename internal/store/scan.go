package store

import "database/sql"

// Scanner is one row to scan: a *sql.Row or the current row of *sql.Rows.
type Scanner interface{ Scan(dest ...any) error }

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
