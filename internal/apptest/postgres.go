package apptest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"forgeapi/internal/store"
	"forgeapi/internal/store/storetest"
)

// On PostgreSQL each test server gets a database of its own, copied
// (CREATE DATABASE ... TEMPLATE) from one migrated once per machine and
// schema version: a copy takes about a tenth of what running the
// migrations takes, in each of the hundreds of servers the suite starts.
// The template is named after store.MigrationsDigest, made under an
// advisory lock (test binaries run in parallel) and published by a
// rename, so a copy never starts from a half-migrated one. Where the
// role may not create databases, each test gets a schema of the base
// database instead, migrated by the server as before.

// testSchema is the schema that holds forgeapi's tables in the template
// and so in every copy.
const testSchema = "forgeapi"

// DatabaseURL returns "" (SQLite) or, when FORGEAPI_TEST_POSTGRES_URL is
// set, the URL of a database of its own holding the current schema and
// the migrations' rows only: a kept one (pool) or a new copy of the
// template. When the test ends it is emptied and kept, or dropped.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresURLEnv)
	if base == "" {
		return ""
	}
	admin, err := store.OpenPostgresSQL(base)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	defer admin.Close()
	name := testDatabaseName()
	ctx := context.Background()
	var p *pool
	for attempt := 1; ; attempt++ {
		template, err := postgresTemplate(base)
		if err != nil {
			t.Fatalf("postgres: the template database: %v", err)
		}
		if template == "" {
			return schemaURL(t, admin, base)
		}
		p = poolOf(base, strings.TrimPrefix(template, templatePrefix))
		if p.known() && p.take(ctx, admin, name) {
			break
		}
		_, err = admin.Exec("CREATE DATABASE " + name + " TEMPLATE " + template)
		if err == nil {
			err = afterCopy(ctx, admin, p, base, name)
			if err != nil {
				dropDatabase(base, name)
				t.Fatalf("postgres: a new copy of the template: %v", err)
			}
			break
		}
		// A test process of another schema version (another checkout)
		// dropped this one's template as stale: make it again, once.
		var pgErr *pgconn.PgError
		if attempt == 1 && errors.As(err, &pgErr) && pgErr.Code == "3D000" { // invalid_catalog_name
			templates.Delete(base)
			continue
		}
		t.Fatalf("postgres: copy the template: %v", err)
	}
	t.Cleanup(func() { p.release(name) })
	return withTestPoolSize(t, databaseURL(base, name, testSchema))
}

// afterCopy sets up a new copy of the template: commits without waiting
// for the WAL's flush (a test's data need not outlive a crash of
// PostgreSQL; settings of a database are not copied with it), and, the
// first time in the process, the template's state read off it (pool).
func afterCopy(ctx context.Context, admin *sql.DB, p *pool, base, name string) error {
	if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+name+" SET synchronous_commit = off"); err != nil {
		return err
	}
	return p.record(ctx, databaseURL(base, name, testSchema))
}

// schemaURL makes a schema of the base database for the test, dropped
// when it ends, and returns the URL whose search_path is it.
func schemaURL(t testing.TB, admin *sql.DB, base string) string {
	schema := "t_" + randomHex(8)
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("postgres: create schema: %v", err)
	}
	t.Cleanup(func() {
		if db, err := store.OpenPostgresSQL(base); err == nil {
			_, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE")
			db.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("postgres URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return withTestPoolSize(t, u.String())
}

// databaseURL is base naming the database name instead, with
// search_path schema ("" for none).
func databaseURL(base, name, schema string) string {
	u, err := url.Parse(base)
	if err != nil {
		panic(err) // base was opened already
	}
	u.Path = "/" + name
	q := u.Query()
	q.Del("search_path")
	if schema != "" {
		q.Set("search_path", schema)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// testPoolSize is how many connections a test's server holds at most
// (store: pool_max_conns, and one for its listener). A server's own
// default, 16, times the servers of two test packages running their
// parallel tests at once, overran PostgreSQL's default max_connections
// of 100 ("sorry, too many clients already"); a test's server rarely
// has more than a few queries in flight.
const testPoolSize = 4

// withTestPoolSize is dsn asking for testPoolSize connections, unless
// FORGEAPI_TEST_POSTGRES_URL names a size of its own or tb is a
// benchmark, which measures a server as it runs by default.
func withTestPoolSize(tb testing.TB, dsn string) string {
	if _, bench := tb.(*testing.B); bench {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		panic(err) // made by databaseURL or schemaURL
	}
	q := u.Query()
	if !q.Has("pool_max_conns") {
		q.Set("pool_max_conns", strconv.Itoa(testPoolSize))
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// testDatabaseName is a new name for a test's database: t_, the test
// process's id, a random part. A test's database is dropped when the
// test ends; one its process did not live to drop (killed, or stopped at
// a timeout) is dropped by the next test process of the machine
// (dropOrphans).
func testDatabaseName() string {
	return "t_" + strconv.Itoa(os.Getpid()) + "_" + randomHex(8)
}

// dropOrphans drops the test databases (testDatabaseName) of test
// processes of this machine that have ended.
func dropOrphans(ctx context.Context, conn *sql.Conn, base string) {
	rows, err := conn.QueryContext(ctx, `SELECT datname FROM pg_database WHERE datname ~ '^t_[0-9]+_[0-9a-f]+$'`)
	names, err := scanNames(rows, err)
	if err != nil {
		return
	}
	for _, n := range names {
		pid, err := strconv.Atoi(strings.Split(n, "_")[1])
		if err != nil || processAlive(pid) {
			continue
		}
		dropDatabase(base, n)
	}
}

// dropStalePools drops the kept databases (pool) of schema versions
// whose template is gone.
func dropStalePools(ctx context.Context, conn *sql.Conn) {
	rows, err := conn.QueryContext(ctx, `SELECT datname FROM pg_database d WHERE datname LIKE $1
		AND NOT EXISTS (SELECT 1 FROM pg_database t WHERE t.datname = $2 || split_part(d.datname, '_', 2))`,
		likePrefix(poolPrefix), templatePrefix)
	names, err := scanNames(rows, err)
	if err != nil {
		return
	}
	for _, n := range names {
		_, _ = conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+n)
	}
}

func dropDatabase(base, name string) {
	if db, err := store.OpenPostgresSQL(base); err == nil {
		_, _ = db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		db.Close()
	}
}

var templates sync.Map // base URL -> func() (string, error)

// templatePrefix begins a template's name; the schema version follows.
const templatePrefix = "forgeapi_template_"

// postgresTemplate is the name of the migrated template database of the
// server at base, made once per machine and schema version; "" when the
// role may not create databases.
func postgresTemplate(base string) (string, error) {
	once, _ := templates.LoadOrStore(base, sync.OnceValues(func() (string, error) { return makeTemplate(base) }))
	return once.(func() (string, error))()
}

// makeTemplate makes the template database unless another process has.
func makeTemplate(base string) (string, error) {
	ctx := context.Background()
	admin, err := store.OpenPostgresSQL(base)
	if err != nil {
		return "", err
	}
	defer admin.Close()
	conn, err := admin.Conn(ctx) // the advisory lock is the session's
	if err != nil {
		return "", err
	}
	defer conn.Close()
	name := templatePrefix + store.MigrationsDigest()[:16]
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(hashtext($1))", name); err != nil {
		return "", err
	}
	defer func() { _, _ = conn.ExecContext(ctx, "SELECT pg_advisory_unlock(hashtext($1))", name) }()
	var exists bool
	if err := conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	dropOrphans(ctx, conn, base)
	dropStalePools(ctx, conn)
	if exists {
		return name, markUsed(ctx, conn, name)
	}
	partial := name + "_partial"
	dropDatabase(base, partial) // a crashed run's
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+partial); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege
			return "", nil
		}
		return "", err
	}
	if err := migrateDatabase(ctx, base, partial); err != nil {
		dropDatabase(base, partial)
		return "", err
	}
	if _, err := conn.ExecContext(ctx, "ALTER DATABASE "+partial+" RENAME TO "+name); err != nil {
		return "", err
	}
	dropOtherTemplates(ctx, conn, name)
	return name, markUsed(ctx, conn, name)
}

// templateIdle is how long a template of another schema version must
// have gone unused before a test process drops it: checkouts of other
// versions (branches, worktrees) test on the same server at once, and
// each must keep its own.
const templateIdle = 2 * time.Hour

// markUsed records in the template's comment that a test process of its
// schema version starts now (dropOtherTemplates reads it).
func markUsed(ctx context.Context, conn *sql.Conn, name string) error {
	_, err := conn.ExecContext(ctx, "COMMENT ON DATABASE "+name+" IS '"+time.Now().UTC().Format(time.RFC3339)+"'")
	return err
}

// dropOtherTemplates drops the templates of other schema versions that
// no test process has started from for templateIdle (markUsed), as far
// as no one uses them (a DROP of one in use fails and is let be). One
// being made (its _partial name) is another test process's work in
// progress, under that version's lock: it is left alone (a crashed
// run's is dropped by the next maker of its version).
func dropOtherTemplates(ctx context.Context, conn *sql.Conn, keep string) {
	rows, err := conn.QueryContext(ctx, `SELECT datname, COALESCE(shobj_description(oid, 'pg_database'), '')
		FROM pg_database WHERE datname LIKE 'forgeapi\_template\_%'
		AND datname NOT LIKE '%\_partial' AND datname <> $1`, keep)
	type template struct{ name, used string }
	all, err := store.ScanAll(rows, err, func(sc store.Scanner) (t template, err error) { return t, sc.Scan(&t.name, &t.used) })
	if err != nil {
		return
	}
	for _, t := range all {
		if used, err := time.Parse(time.RFC3339, t.used); err == nil && time.Since(used) < templateIdle {
			continue
		}
		_, _ = conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+t.name)
	}
}

// migrateDatabase makes testSchema in the database name and migrates it
// as a server would, leaving no session connected.
func migrateDatabase(ctx context.Context, base, name string) error {
	plain, err := store.OpenPostgresSQL(databaseURL(base, name, ""))
	if err != nil {
		return err
	}
	_, err = plain.ExecContext(ctx, "CREATE SCHEMA "+testSchema)
	plain.Close()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "forgeapi-template-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(ctx, databaseURL(base, name, testSchema), dir)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return db.Close()
}

// OpenStore opens a store for a test that needs one without a server:
// on PostgreSQL a test database of its own (DatabaseURL), on SQLite a
// copy of the migrated template in a temporary directory. It is closed
// when the test ends.
func OpenStore(t testing.TB) *store.DB {
	t.Helper()
	url := DatabaseURL(t)
	if url == "" {
		return storetest.OpenSQLite(t)
	}
	db, err := store.Open(context.Background(), url, t.TempDir())
	if err != nil {
		t.Fatalf("open the store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
