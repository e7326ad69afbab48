package apptest

import (
	"context"
	"database/sql"
	"forgeapi/internal/store"
	"os"
	"os/exec"
	"strconv"
	"strings"
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
		db, err := store.OpenPostgresSQL(u)
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
	admin, err := store.OpenPostgresSQL(base)
	Must(t, "open", err)
	t.Cleanup(func() { admin.Close() })
	conn, err := admin.Conn(context.Background())
	Must(t, "connect", err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestUsedDatabaseIsEmptiedToTheTemplatesState: a used test database
// (rows written, a seeded row gone, a sequence advanced) is brought back
// to a fresh copy's state before it is kept for the next test; one whose
// schema a test changed is refused; a released database is renamed out
// of reach and taken again by another name.
func TestUsedDatabaseIsEmptiedToTheTemplatesState(t *testing.T) {
	base := os.Getenv(PostgresURLEnv)
	if base == "" {
		t.Skip("PostgreSQL only: set " + PostgresURLEnv)
	}
	ctx := context.Background()
	url := DatabaseURL(t)
	template, err := postgresTemplate(base)
	if err != nil || template == "" {
		t.Skipf("no template database (%v): the role may not create databases", err)
	}
	p := poolOf(base, template[len(templatePrefix):])
	if !p.known() {
		t.Fatal("the first copy of the process did not record the template's state")
	}
	db, err := store.OpenPostgresSQL(url)
	Must(t, "open", err)
	defer db.Close()
	dirty := []string{
		`INSERT INTO accounts (type, login, created_at, updated_at) VALUES ('User', 'octocat', now(), now())`,
		`INSERT INTO accounts (type, login, created_at, updated_at) VALUES ('User', 'hubot', now(), now())`,
		`DELETE FROM org_roles WHERE id = (SELECT min(id) FROM org_roles)`,
	}
	for _, q := range dirty {
		_, err := db.ExecContext(ctx, q)
		Must(t, q, err)
	}
	Must(t, "empty", empty(ctx, url, p.state))
	after, err := readTemplateState(ctx, db)
	Must(t, "read the state", err)
	if after.fingerprint != p.state.fingerprint || string(after.sequences) != string(p.state.sequences) || len(after.seeds) != len(p.state.seeds) {
		t.Fatalf("emptied: schema or sequences differ from a fresh copy's:\n%s\n%s", after.sequences, p.state.sequences)
	}
	for i, s := range after.seeds {
		if s.table != p.state.seeds[i].table || string(s.rows) != string(p.state.seeds[i].rows) {
			t.Errorf("seeded table %s: %s, want %s", s.table, s.rows, p.state.seeds[i].rows)
		}
	}
	var accounts int
	Must(t, "count", db.QueryRowContext(ctx, `SELECT count(*) FROM accounts`).Scan(&accounts))
	var id int64
	Must(t, "insert", db.QueryRowContext(ctx, `INSERT INTO accounts (type, login, created_at, updated_at) VALUES ('User', 'octocat', now(), now()) RETURNING id`).Scan(&id))
	if accounts != 0 || id != 1 {
		t.Errorf("emptied: %d accounts, the next account's id %d; want 0 and 1", accounts, id)
	}

	_, err = db.ExecContext(ctx, `CREATE TABLE public.left_by_a_test (id int)`)
	Must(t, "change the schema", err)
	if err := empty(ctx, url, p.state); err == nil {
		t.Error("a database whose schema a test changed was emptied for reuse")
	}
	_, err = db.ExecContext(ctx, `DROP TABLE public.left_by_a_test`)
	Must(t, "undo", err)
	// Emptied again before it is kept: the account written above would
	// otherwise reach whichever test takes it next.
	Must(t, "empty again", empty(ctx, url, p.state))
	db.Close()

	admin, err := store.OpenPostgresSQL(base)
	Must(t, "open", err)
	defer admin.Close()
	name := url[strings.LastIndex(url, "/")+1 : strings.Index(url, "?")]
	kept := poolPrefix + p.digest + "_" + randomHex(8)
	if !renameAway(ctx, admin, name, kept) {
		t.Fatal("the test database could not be renamed")
	}
	again := testDatabaseName()
	if !p.take(ctx, admin, again) {
		t.Fatal("no kept database was taken")
	}
	defer dropDatabase(base, again)
	var exists bool
	Must(t, "look", admin.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", again).Scan(&exists))
	if !exists {
		t.Error("the taken database is not under its new name")
	}
}
