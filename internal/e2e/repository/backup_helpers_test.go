package repository_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/backup"
	"forgeapi/internal/cli"
	"forgeapi/internal/store"
	"forgeapi/internal/testwait"
)

// databaseCopy is the database as an operator copies it before forgeapi
// backup: nothing on SQLite (the backup holds its snapshot), a pg_dump
// of the test's schema on PostgreSQL.
type databaseCopy struct {
	file, schema string
}

// copyDatabase takes the pg_dump of env's schema on PostgreSQL.
func copyDatabase(t *testing.T, env *apptest.Env) *databaseCopy {
	t.Helper()
	if env.Config.DatabaseURL == "" {
		return &databaseCopy{}
	}
	if _, err := exec.LookPath("pg_dump"); err != nil {
		t.Skip("pg_dump is not installed")
	}
	u, err := url.Parse(env.Config.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	d := &databaseCopy{file: filepath.Join(t.TempDir(), "forgeapi.sql"), schema: q.Get("search_path")}
	q.Del("search_path") // the server's parameters, not libpq's
	q.Del("pool_max_conns")
	u.RawQuery = q.Encode()
	args := []string{"--no-owner", "--no-privileges", "--file=" + d.file}
	if base, err := url.Parse(os.Getenv(apptest.PostgresURLEnv)); err == nil && base.Path == u.Path {
		// The test's schema in a shared database (apptest's fallback):
		// its schema alone, without the extensions the migrations made.
		args = append(args, "--schema="+d.schema)
	}
	// The test's own database: all of it, as an operator dumps a forge,
	// with the extensions its migrations made (pg_trgm).
	run(t, "pg_dump", append(args, u.String())...)
	return d
}

// restore loads the dump into a new database, dropped when the test
// ends, and returns its URL; "" on SQLite.
func (d *databaseCopy) restore(t *testing.T) string {
	t.Helper()
	if d.file == "" {
		return ""
	}
	base := os.Getenv(apptest.PostgresURLEnv)
	name := "restored_" + strings.ToLower(apptest.Unique("db")[3:])
	db, err := store.OpenPostgresSQL(base)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if db, err := store.OpenPostgresSQL(base); err == nil {
			_, _ = db.Exec("DROP DATABASE " + name + " WITH (FORCE)")
			db.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	// A schema's dump holds no extension: the new database gets pg_trgm
	// first, where the migrations put it (a whole database's dump makes
	// it again, IF NOT EXISTS).
	run(t, "psql", "--quiet", "--set=ON_ERROR_STOP=1", "--command=CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public", u.String())
	run(t, "psql", "--quiet", "--set=ON_ERROR_STOP=1", "--file="+d.file, u.String())
	q := u.Query()
	q.Set("search_path", d.schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// run runs a command and fails the test when it fails.
func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// backupOf backs env up into a new directory and returns it.
func backupOf(t *testing.T, env *apptest.Env) (string, *backup.Summary) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "backup")
	s, err := backup.Backup(ctx, backup.Source{DataDir: env.DataDir, DatabaseURL: env.Config.DatabaseURL}, dir)
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	return dir, s
}

// restoreOf restores the backup in dir (with the database copy db) into a
// new data directory and starts a server on it, whose push recovery
// takes the pushes cut short by the snapshot at start.
func restoreOf(t *testing.T, env *apptest.Env, dir string, db *databaseCopy) (*apptest.Env, *backup.Summary) {
	t.Helper()
	cfg := env.Config
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = filepath.Join(t.TempDir(), "restored")
	cfg.DatabaseURL = db.restore(t)
	cfg.PushRecovery.Grace = -1
	s, err := backup.Restore(ctx, dir, backup.Target{DataDir: cfg.DataDir, DatabaseURL: cfg.DatabaseURL})
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	return apptest.StartConfig(t, cfg), s
}

// gitDir runs git in the bare repository dir and returns its output.
func gitDir(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Env = []string{"GIT_DIR=" + dir, "GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// repoDirs are the bare repositories of env's data directory.
func repoDirs(t *testing.T, env *apptest.Env) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(env.DataDir, "git", "*.git"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// fsckProblem matches what `git fsck` says of a repository that is not
// whole (dangling objects, which a reference set back leaves, are fine).
var fsckProblem = regexp.MustCompile(`(?m)^(error|fatal|missing|broken|bad|warning)`)

// checkFsck runs a full `git fsck` on every repository of env.
func checkFsck(t *testing.T, env *apptest.Env) {
	t.Helper()
	for _, dir := range repoDirs(t, env) {
		out, err := gitDir(dir, "fsck", "--full", "--strict", "--no-progress")
		if err != nil || fsckProblem.MatchString(out) {
			t.Errorf("git fsck %s: %v\n%s", filepath.Base(dir), err, out)
		}
	}
}

// branchHeads returns the branches of the bare repository dir with their
// commits.
func branchHeads(t *testing.T, dir string) map[string]string {
	t.Helper()
	out, err := gitDir(dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/", "refs/tags/")
	if err != nil {
		t.Fatalf("for-each-ref in %s: %v: %s", dir, err, out)
	}
	heads := map[string]string{}
	for line := range strings.Lines(out) {
		if name, sha, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			heads[name] = sha
		}
	}
	return heads
}

// checkEventsAgreeWithGit checks the feed of the repository owner/name on
// env against its git data in dir: every push event's commits are in the
// repository, and every branch's commit is the head of one of the
// branch's push events.
func checkEventsAgreeWithGit(t *testing.T, env *apptest.Env, token, owner, name, dir string) {
	t.Helper()
	pushed := map[string]map[string]bool{} // ref -> heads of its push events
	for ev, err := range env.Client(token).Activity.ListRepositoryEventsIter(ctx, owner, name, &github.ListOptions{PerPage: 100}) {
		if err != nil {
			t.Fatalf("events of %s/%s: %v", owner, name, err)
		}
		if ev.GetType() != "PushEvent" {
			continue
		}
		payload, err := ev.ParsePayload()
		if err != nil {
			t.Fatal(err)
		}
		p := payload.(*github.PushEvent)
		if out, err := gitDir(dir, "cat-file", "-e", p.GetHead()+"^{commit}"); err != nil {
			t.Errorf("%s/%s: the push event of %s names %s, which git does not have: %s", owner, name, p.GetRef(), p.GetHead(), out)
		}
		if pushed[p.GetRef()] == nil {
			pushed[p.GetRef()] = map[string]bool{}
		}
		pushed[p.GetRef()][p.GetHead()] = true
	}
	for ref, sha := range branchHeads(t, dir) {
		if strings.HasPrefix(ref, "refs/heads/") && !pushed[ref][sha] {
			t.Errorf("%s/%s: %s is at %s, which no push event of it names (events: %v)", owner, name, ref, sha, slices.Sorted(maps.Keys(pushed[ref])))
		}
	}
}

// count runs a counting query on env's database.
func countRows(t *testing.T, env *apptest.Env, query string, args ...any) int {
	t.Helper()
	var n int
	if err := env.Q().QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitPastRecordedRefsStart waits until the clock is in a later second
// than the start of recorded_refs: reflog times are whole seconds, and
// a restore sets back only entries written after that start.
func waitPastRecordedRefsStart(t *testing.T, env *apptest.Env) {
	t.Helper()
	var since time.Time
	if err := env.Q().QueryRowContext(ctx, `SELECT since FROM recorded_refs_since`).Scan(&since); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the next second", func() bool { return time.Now().Unix() > since.Unix() })
}

// withDatabaseOf makes the backup in dir hold the SQLite database of the
// backup in older, as a backup whose repositories were copied long after
// its database snapshot does.
func withDatabaseOf(t *testing.T, dir, older string) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(older, "forgeapi.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "forgeapi.db"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	var m backup.Manifest
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	for i := range m.Files {
		if m.Files[i].Path == "forgeapi.db" {
			m.Files[i].Size, m.Files[i].SHA256 = int64(len(body)), hex.EncodeToString(sum[:])
		}
	}
	if raw, err = json.Marshal(m); err == nil {
		err = os.WriteFile(filepath.Join(dir, "manifest.json"), raw, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// forgeapi runs the command line and returns its exit code and output.
func forgeapi(args ...string) (int, string) {
	var out bytes.Buffer
	code := cli.Execute(ctx, args, &out, &out)
	return code, out.String()
}
