package apptest

import (
	"fmt"
	"time"
)

// seedBatch is how many rows one statement of Each adds. In one
// PostgreSQL transaction every update of a counts row (the triggers of
// migrations 00044 and 00045) is slower than the last, as the row's
// versions stay until the commit: seeding 200,000 stars of one
// repository in one statement would take minutes.
const seedBatch = 2000

// Users is a range of users made by ManyUsers, for benchmarks at
// realistic sizes.
type Users struct {
	env         *Env
	first, last int64 // their ids
}

// ManyUsers creates n users named prefix-1 to prefix-n with one SQL
// statement (no password, no token), far faster than n calls of User.
func (e *Env) ManyUsers(prefix string, n int) Users {
	e.T.Helper()
	now := time.Now().UTC()
	_, err := e.App.DB.ExecContext(e.Context(), `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)
		INSERT INTO accounts (type, login, created_at, updated_at) SELECT 'User', $2 || i, $3, $3 FROM n`, n, prefix+"-", now)
	Must(e.T, fmt.Sprintf("create %d users", n), err)
	u := Users{env: e}
	Must(e.T, "find the users", e.App.DB.QueryRowContext(e.Context(),
		`SELECT min(id), max(id) FROM accounts WHERE login LIKE $1`, prefix+"-%").Scan(&u.first, &u.last))
	return u
}

// Each runs insert for every user, in statements of seedBatch users: the
// statement selects the users' ids as `id` from `accounts a WHERE a.id >=
// $1 AND a.id < $2`, its own arguments following ($3 on).
func (u Users) Each(what, insert string, args ...any) {
	u.env.T.Helper()
	for from := u.first; from <= u.last; from += seedBatch {
		_, err := u.env.App.DB.ExecContext(u.env.Context(), insert, append([]any{from, min(from+seedBatch, u.last+1)}, args...)...)
		Must(u.env.T, what, err)
	}
}
