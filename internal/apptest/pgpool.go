package apptest

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"forgeapi/internal/store"
)

// Test databases are reused. Copying the template and dropping the copy
// cost PostgreSQL about 3 s a test on a busy two-core machine (a 15 MB
// copy written through the WAL, then its files unlinked), in each of the
// hundreds of tests the suite starts a server in; emptying the tables of
// a used database costs a few milliseconds. So a test's database, when
// the test ends, is renamed out of reach (a server the test left behind
// cannot reconnect to it), emptied to the template's state and kept
// under a pool name (poolPrefix, the schema version, a random part);
// the next test of any process of the machine takes a kept one by
// renaming it to its own name (a rename is atomic: two processes never
// take the same one) and copies the template only when none is kept.
//
// "The template's state" is checked, not assumed: each process records
// it from the first copy it makes (the schema's fingerprint, the rows
// the migrations seeded, the sequences); a database whose schema a test
// changed, or that cannot be emptied, is dropped instead.

// poolPrefix begins the names of kept databases: tp_DIGEST_RANDOM.
const poolPrefix = "tp_"

// poolSize bounds the databases kept per schema version: about the
// number of tests that run at once on a machine (two packages, some
// parallel tests), so that a run leaves little behind.
const poolSize = 8

// userSchemas selects the namespaces a test may have changed (n is
// pg_namespace).
const userSchemas = `n.nspname NOT IN ` + systemSchemas

const systemSchemas = `('pg_catalog', 'information_schema', 'pg_toast')`

// templateState is what a fresh copy of the template holds that a used
// database must be brought back to.
type templateState struct {
	fingerprint string
	tables      []string // every table of the user schemas, quoted
	seeds       []seed   // the tables the migrations left rows in
	sequences   json.RawMessage
}

// seed is one table's rows in a fresh copy, as JSON, and the columns a
// row is inserted with (generated ones left out).
type seed struct {
	table   string
	columns string
	rows    json.RawMessage
}

// pool is one process's view of the kept databases of a server.
type pool struct {
	base, digest string
	mu           sync.Mutex
	state        *templateState // nil until this process made a fresh copy
}

var pools sync.Map // base URL + digest -> *pool

func poolOf(base, digest string) *pool {
	p, _ := pools.LoadOrStore(base+"\x00"+digest, &pool{base: base, digest: digest})
	return p.(*pool)
}

// known reports whether the process has recorded the template's state.
func (p *pool) known() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state != nil
}

// record notes the state of the fresh copy at url, once per process.
func (p *pool) record(ctx context.Context, url string) error {
	if p.known() {
		return nil
	}
	db, err := store.OpenPostgresSQL(url)
	if err != nil {
		return err
	}
	defer db.Close()
	state, err := readTemplateState(ctx, db)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.state = state
	p.mu.Unlock()
	return nil
}

// take renames a kept database to name and reports whether there was one.
func (p *pool) take(ctx context.Context, admin *sql.DB, name string) bool {
	rows, err := admin.QueryContext(ctx, `SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY random()`,
		likePrefix(poolPrefix+p.digest+"_"))
	kept, err := scanNames(rows, err)
	if err != nil {
		return false
	}
	for _, k := range kept {
		if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+k+" RENAME TO "+name); err == nil {
			return true
		}
	}
	return false
}

// release brings the test database name back to the template's state
// and keeps it, or drops it when that is not possible or the pool is full.
func (p *pool) release(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p.mu.Lock()
	state := p.state
	p.mu.Unlock()
	admin, err := store.OpenPostgresSQL(p.base)
	if err != nil {
		return
	}
	defer admin.Close()
	cleaning := testDatabaseName()
	if state == nil || !renameAway(ctx, admin, name, cleaning) {
		dropDatabase(p.base, name)
		return
	}
	if err := empty(ctx, databaseURL(p.base, cleaning, testSchema), state); err != nil || p.full(ctx, admin) {
		dropDatabase(p.base, cleaning)
		return
	}
	if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+cleaning+" RENAME TO "+poolPrefix+p.digest+"_"+randomHex(8)); err != nil {
		dropDatabase(p.base, cleaning)
	}
}

// full reports whether poolSize databases are kept already.
func (p *pool) full(ctx context.Context, admin *sql.DB) bool {
	var n int
	err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_database WHERE datname LIKE $1`, likePrefix(poolPrefix+p.digest+"_")).Scan(&n)
	return err != nil || n >= poolSize
}

// renameAway renames the database from to to once no session is
// connected to it, ending the sessions a test left open.
func renameAway(ctx context.Context, admin *sql.DB, from, to string) bool {
	for attempt := 0; attempt < 20; attempt++ {
		_, _ = admin.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, from)
		if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+from+" RENAME TO "+to); err == nil {
			return true
		}
		time.Sleep(50 * time.Millisecond) // a terminated session is still leaving
	}
	return false
}

// empty brings the database at url back to state: every table emptied
// (foreign keys and triggers off, as for a restore), the seeded rows
// written again, the sequences reset. A schema other than the
// template's is an error.
func empty(ctx context.Context, url string, state *templateState) error {
	db, err := store.OpenPostgresSQL(url)
	if err != nil {
		return err
	}
	defer db.Close()
	var fingerprint string
	if err := db.QueryRowContext(ctx, fingerprintQuery).Scan(&fingerprint); err != nil {
		return err
	}
	if fingerprint != state.fingerprint {
		return errors.New("the test changed the schema")
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	stmts := []string{"SET LOCAL session_replication_role = replica", "DELETE FROM " + strings.Join(state.tables, "; DELETE FROM ")}
	for _, st := range stmts {
		if _, err := tx.ExecContext(ctx, st); err != nil {
			return err
		}
	}
	for _, s := range state.seeds {
		_, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM json_populate_recordset(NULL::%s, $1)`,
			s.table, s.columns, s.columns, s.table), string(s.rows))
		if err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `SELECT setval(s.name::regclass, s.value, s.called) FROM json_to_recordset($1) AS s(name text, value bigint, called bool)`,
		string(state.sequences)); err != nil {
		return err
	}
	return tx.Commit()
}

// fingerprintQuery digests the user schemas' definitions: relations and
// their columns, constraints, triggers, functions, extensions.
const fingerprintQuery = `SELECT md5(string_agg(x, ',' ORDER BY x)) FROM (
	SELECT 'rel:' || n.nspname || '.' || c.relname || ':' || c.relkind::text || ':' || COALESCE(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), '') AS x
	FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
	WHERE ` + userSchemas + `
	UNION ALL SELECT 'con:' || n.nspname || '.' || co.conname FROM pg_constraint co JOIN pg_namespace n ON n.oid = co.connamespace WHERE ` + userSchemas + `
	UNION ALL SELECT 'trg:' || t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ` + userSchemas + `
	UNION ALL SELECT 'fn:' || n.nspname || '.' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE ` + userSchemas + `
	UNION ALL SELECT 'ns:' || nspname FROM pg_namespace
	UNION ALL SELECT 'ext:' || extname || ' ' || extversion FROM pg_extension) d`

// readTemplateState reads a fresh copy's state.
func readTemplateState(ctx context.Context, db *sql.DB) (*templateState, error) {
	s := &templateState{}
	if err := db.QueryRowContext(ctx, fingerprintQuery).Scan(&s.fingerprint); err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT format('%I.%I', schemaname, tablename) FROM pg_tables
		WHERE schemaname NOT IN `+systemSchemas+` ORDER BY 1`)
	if s.tables, err = scanNames(rows, err); err != nil {
		return nil, err
	}
	for _, table := range s.tables {
		var rows []byte
		if err := db.QueryRowContext(ctx, `SELECT json_agg(t) FROM `+table+` t`).Scan(&rows); err != nil {
			return nil, err
		}
		if rows == nil {
			continue
		}
		var columns string
		err := db.QueryRowContext(ctx, `SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
			WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = ''`, table).Scan(&columns)
		if err != nil {
			return nil, err
		}
		s.seeds = append(s.seeds, seed{table: table, columns: columns, rows: rows})
	}
	err = db.QueryRowContext(ctx, `SELECT COALESCE(json_agg(json_build_object(
			'name', format('%I.%I', schemaname, sequencename),
			'value', COALESCE(last_value, start_value), 'called', last_value IS NOT NULL)), '[]')
		FROM pg_sequences WHERE schemaname NOT IN `+systemSchemas).Scan(&s.sequences)
	return s, err
}

// likePrefix is the LIKE pattern of the names that begin with prefix.
func likePrefix(prefix string) string { return strings.ReplaceAll(prefix, "_", `\_`) + "%" }

// scanNames reads a column of names.
func scanNames(rows *sql.Rows, err error) ([]string, error) {
	return store.ScanAll(rows, err, func(sc store.Scanner) (n string, err error) { return n, sc.Scan(&n) })
}
