package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestHookLastResponsesMigrationKeepsThem: migration 41 moves the last
// responses of existing hooks out of the hooks table into
// hook_last_responses; a hook that never had one gets no row.
func TestHookLastResponsesMigrationKeepsThem(t *testing.T) {
	ctx := context.Background()
	db := sqliteMigratedTo(t, 40)
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for _, q := range []string{
		`INSERT INTO hooks (id, events, url, created_at, updated_at, last_response_code, last_response_status,
			last_response_message, last_response_at) VALUES (1, '["push"]', 'http://a.example/', $1, $1, 502, 'failed', 'Invalid HTTP Response: 502', $1)`,
		`INSERT INTO hooks (id, events, url, created_at, updated_at) VALUES (2, '["push"]', 'http://b.example/', $1, $1)`,
	} {
		if _, err := db.ExecContext(ctx, q, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(ctx, `SELECT hook_id, code, status, message, responded_at FROM hook_last_responses`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var n int
	for rows.Next() {
		var id, code int64
		var status, message string
		var respondedAt time.Time
		if err := rows.Scan(&id, &code, &status, &message, &respondedAt); err != nil {
			t.Fatal(err)
		}
		n++
		if id != 1 || code != 502 || status != "failed" || message != "Invalid HTTP Response: 502" || !respondedAt.Equal(at) {
			t.Errorf("moved last response: hook %d, %d %q %q at %v", id, code, status, message, respondedAt)
		}
	}
	if err := rows.Err(); err != nil || n != 1 {
		t.Errorf("%d last responses moved (%v), want 1", n, err)
	}
}

// TestCountsMigrationsCountWhatIsThere: migration 44 fills
// repository_counts with the stars, watchers (not ignoring) and forks
// each repository has, 45 account_counts with each account's followers,
// follows and public and private repositories, and their triggers count
// on from there.
func TestCountsMigrationsCountWhatIsThere(t *testing.T) {
	ctx := context.Background()
	db := sqliteMigratedTo(t, 43)
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for _, q := range []string{
		`INSERT INTO accounts (id, type, login, created_at, updated_at) VALUES (1, 'User', 'a', $1, $1), (2, 'User', 'b', $1, $1), (3, 'User', 'c', $1, $1)`,
		`INSERT INTO repositories (id, owner_id, name, created_at, updated_at) VALUES (10, 1, 'popular', $1, $1), (11, 1, 'quiet', $1, $1)`,
		`INSERT INTO repositories (id, owner_id, name, fork_of_id, created_at, updated_at) VALUES (12, 2, 'popular', 10, $1, $1)`,
		`INSERT INTO stars (user_id, repository_id, created_at) VALUES (1, 10, $1), (2, 10, $1), (3, 10, $1), (2, 12, $1)`,
		`INSERT INTO subscriptions (user_id, repository_id, ignored, created_at) VALUES (1, 10, FALSE, $1), (2, 10, TRUE, $1), (3, 11, FALSE, $1)`,
		`INSERT INTO follows (follower_id, followee_id, created_at) VALUES (2, 1, $1), (3, 1, $1), (1, 3, $1)`,
		`UPDATE repositories SET private = TRUE WHERE id = 11`,
	} {
		if _, err := db.ExecContext(ctx, q, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO stars (user_id, repository_id, created_at) VALUES (1, 11, $1)`, at); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO follows (follower_id, followee_id, created_at) VALUES (2, 3, $1)`, at); err != nil {
		t.Fatal(err)
	}
	want := map[int64][3]int64{10: {3, 1, 1}, 11: {1, 1, 0}, 12: {1, 0, 0}}
	for id, counts := range want {
		var got [3]int64
		if err := db.QueryRowContext(ctx, `SELECT stars, subscribers, forks FROM repository_counts WHERE repository_id = $1`, id).
			Scan(&got[0], &got[1], &got[2]); err != nil || got != counts {
			t.Errorf("repository %d: (stars, subscribers, forks) %v (%v), want %v", id, got, err, counts)
		}
	}
	wantAccounts := map[int64][4]int64{1: {2, 1, 1, 1}, 2: {0, 2, 1, 0}, 3: {2, 1, 0, 0}}
	for id, counts := range wantAccounts {
		var got [4]int64
		if err := db.QueryRowContext(ctx, `SELECT followers, following, public_repos, private_repos FROM account_counts WHERE account_id = $1`, id).
			Scan(&got[0], &got[1], &got[2], &got[3]); err != nil || got != counts {
			t.Errorf("account %d: (followers, following, public, private) %v (%v), want %v", id, got, err, counts)
		}
	}
}

// TestOpenIssuesMigrationCountsWhatIsThere: migration 52 counts each
// repository's open issues and pull requests into repository_counts
// (repositories without a counts row get one), marks the size of every
// repository there unmeasured (NULL, for git maintenance to measure),
// and its triggers count on from there; rows made later start at size 0.
// It runs on PostgreSQL too when FORGEAPI_TEST_POSTGRES_URL is set.
func TestOpenIssuesMigrationCountsWhatIsThere(t *testing.T) {
	ctx := context.Background()
	db := migratedTo(t, 51)
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for _, q := range []string{
		`INSERT INTO accounts (id, type, login, created_at, updated_at) VALUES (1, 'User', 'a', $1, $1), (2, 'User', 'b', $1, $1)`,
		`INSERT INTO repositories (id, owner_id, name, created_at, updated_at) VALUES (10, 1, 'busy', $1, $1), (11, 1, 'quiet', $1, $1), (12, 2, 'starred', $1, $1)`,
		`INSERT INTO stars (user_id, repository_id, created_at) VALUES (1, 12, $1)`,
		`INSERT INTO issues (repository_id, number, is_pull_request, title, state, created_at, updated_at) VALUES
			(10, 1, FALSE, 'open', 'open', $1, $1), (10, 2, FALSE, 'closed', 'closed', $1, $1),
			(10, 3, TRUE, 'open pull', 'open', $1, $1), (10, 4, TRUE, 'closed pull', 'closed', $1, $1),
			(11, 1, FALSE, 'closed', 'closed', $1, $1), (12, 1, FALSE, 'open', 'open', $1, $1)`,
	} {
		if _, err := db.ExecContext(ctx, q, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	// The triggers count on: a new issue, a closed one reopened, an open
	// one moved to another repository.
	for _, q := range []string{
		`INSERT INTO repositories (id, owner_id, name, created_at, updated_at) VALUES (13, 2, 'new', $1, $1)`,
		`INSERT INTO issues (repository_id, number, title, created_at, updated_at) VALUES (13, 1, 'new', $1, $1)`,
		`UPDATE issues SET state = 'open', updated_at = $1 WHERE repository_id = 11 AND number = 1`,
		`UPDATE issues SET repository_id = 11, number = 2, updated_at = $1 WHERE repository_id = 10 AND number = 1`,
	} {
		if _, err := db.ExecContext(ctx, q, at); err != nil {
			t.Fatal(err)
		}
	}
	type counts struct {
		stars, openIssues int64
		measured          bool
	}
	want := map[int64]counts{10: {0, 1, false}, 11: {0, 2, false}, 12: {1, 1, false}, 13: {0, 1, true}}
	for id, c := range want {
		var got counts
		if err := db.QueryRowContext(ctx, `SELECT stars, open_issues, size_kb IS NOT NULL FROM repository_counts WHERE repository_id = $1`, id).
			Scan(&got.stars, &got.openIssues, &got.measured); err != nil || got != c {
			t.Errorf("repository %d: (stars, open issues, measured) %v (%v), want %v", id, got, err, c)
		}
	}
}

// migratedTo returns a new database migrated up to version: SQLite, or
// a new schema of the PostgreSQL database FORGEAPI_TEST_POSTGRES_URL
// names when it is set (dropped when the test ends).
func migratedTo(t *testing.T, version int64) *DB {
	t.Helper()
	base := os.Getenv("FORGEAPI_TEST_POSTGRES_URL")
	if base == "" {
		return sqliteMigratedTo(t, version)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	admin, err := OpenPostgresSQL(base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := openPostgres(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	migrations, err := newMigrations(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrations.UpTo(context.Background(), version); err != nil {
		t.Fatal(err)
	}
	return db
}

// sqliteMigratedTo returns a new SQLite database migrated up to version,
// closed when the test ends; migrate takes it the rest of the way.
func sqliteMigratedTo(t *testing.T, version int64) *DB {
	t.Helper()
	db, err := openSQLite(filepath.Join(t.TempDir(), "forgeapi.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	migrations, err := newMigrations(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrations.UpTo(context.Background(), version); err != nil {
		t.Fatal(err)
	}
	return db
}
