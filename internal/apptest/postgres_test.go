package apptest

import (
	"database/sql"
	"os"
	"testing"
)

// TestDatabaseURLOutlivesItsTemplate: a test process of another schema
// version drops this one's template as stale; the next test database is
// copied from a template made again instead of failing.
func TestDatabaseURLOutlivesItsTemplate(t *testing.T) {
	base := os.Getenv(PostgresURLEnv)
	if base == "" {
		t.Skip("PostgreSQL only: set " + PostgresURLEnv)
	}
	first := DatabaseURL(t)
	template, err := postgresTemplate(base)
	if err != nil || template == "" {
		t.Skipf("no template database (%v): the role may not create databases", err)
	}
	dropDatabase(base, template) // as another checkout's test process does
	second := DatabaseURL(t)
	for _, u := range []string{first, second} {
		db, err := sql.Open("pgx", u)
		Must(t, "open", err)
		var n int
		Must(t, "read the copied schema", db.QueryRow(`SELECT count(*) FROM accounts`).Scan(&n))
		db.Close()
	}
}
