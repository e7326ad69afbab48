package apptest

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
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

// TestOtherCheckoutsKeepTheirTemplates: a template of another schema
// version that a test process started from lately is another checkout's
// (a branch tested at the same time) and is kept; one unused for
// templateIdle, or never marked, is dropped.
func TestOtherCheckoutsKeepTheirTemplates(t *testing.T) {
	base := os.Getenv(PostgresURLEnv)
	if base == "" {
		t.Skip("PostgreSQL only: set " + PostgresURLEnv)
	}
	ctx := context.Background()
	conn := adminSession(t, base)
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	inUse, idle, unmarked := "forgeapi_template_inuse"+suffix, "forgeapi_template_idle"+suffix, "forgeapi_template_unmarked"+suffix
	for _, n := range []string{inUse, idle, unmarked} {
		if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+n); err != nil {
			t.Skipf("the role may not create databases: %v", err)
		}
		defer dropDatabase(base, n)
	}
	Must(t, "mark", markUsed(ctx, conn, inUse))
	_, err := conn.ExecContext(ctx, "COMMENT ON DATABASE "+idle+" IS '"+time.Now().Add(-templateIdle-time.Minute).UTC().Format(time.RFC3339)+"'")
	Must(t, "mark as idle", err)

	dropOtherTemplates(ctx, conn, "forgeapi_template_current")
	for n, want := range map[string]bool{inUse: true, idle: false, unmarked: false} {
		var exists bool
		Must(t, "look", conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", n).Scan(&exists))
		if exists != want {
			t.Errorf("%s exists: %v, want %v", n, exists, want)
		}
	}
}

// TestOrphanedTestDatabasesAreDropped: a test database whose process has
// ended (its background drop cut short by the exit) is dropped by the
// next test process; one of a living process is left alone.
func TestOrphanedTestDatabasesAreDropped(t *testing.T) {
	base := os.Getenv(PostgresURLEnv)
	if base == "" {
		t.Skip("PostgreSQL only: set " + PostgresURLEnv)
	}
	ctx := context.Background()
	conn := adminSession(t, base)
	ended := exec.Command("true")
	Must(t, "run a process that ends", ended.Run())
	orphan := "t_" + strconv.Itoa(ended.Process.Pid) + "_" + randomHex(8)
	living := testDatabaseName()
	for _, n := range []string{orphan, living} {
		if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+n); err != nil {
			t.Skipf("the role may not create databases: %v", err)
		}
		defer dropDatabase(base, n)
	}

	dropOrphans(ctx, conn, base)
	for n, want := range map[string]bool{orphan: false, living: true} {
		var exists bool
		Must(t, "look", conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", n).Scan(&exists))
		if exists != want {
			t.Errorf("%s exists: %v, want %v", n, exists, want)
		}
	}
}

// adminSession is one session of the base database, closed when the test
// ends.
func adminSession(t *testing.T, base string) *sql.Conn {
	admin, err := sql.Open("pgx", base)
	Must(t, "open", err)
	t.Cleanup(func() { admin.Close() })
	conn, err := admin.Conn(context.Background())
	Must(t, "connect", err)
	t.Cleanup(func() { conn.Close() })
	return conn
}
