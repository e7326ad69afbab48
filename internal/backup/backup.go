// Package backup copies the data of a forge while its servers run
// (forgeapi backup) and restores such a copy into a new data directory
// (forgeapi restore).
//
// A backup holds, under one directory: the SQLite database (forgeapi.db,
// a snapshot taken with VACUUM INTO beside the server's writers; on
// PostgreSQL the operator takes pg_dump first instead), the bare git
// repositories (git/), the local blob store (blobs/), the key files of
// the data directory (webhook.key, blob-signing.key, tls/, the SSH host
// key in ssh/, the web-flow signing key in signing/), and last a
// manifest listing every file with its size and SHA-256 digest.
//
// The database is copied first and the repositories after, so the copies
// of the repositories are as new as the database or newer, never older:
// every commit an event or a pull request of the database names is in
// them. Restore then sets back the references that moved after the
// database's snapshot (githost.RefRestorer, pulls.RestoreRefs), so that
// no branch holds a commit whose push has no event; the pushes the
// database had logged but not recorded are recorded by the push recovery
// worker when the restored server starts.
package backup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/store"
)

// Source is the forge a backup copies.
type Source struct {
	DataDir string
	// DatabaseURL is empty for SQLite under DataDir, or the PostgreSQL
	// URL (the backup then holds no database: take pg_dump first).
	DatabaseURL string
	// Blob is the server's --blob: empty for DataDir/blobs, file://PATH,
	// or s3://... (not copied).
	Blob string
	// WithoutKeys leaves the key files (keyNames) out of the backup, for
	// operators who keep keys apart from data: they copy them into the
	// restored data directory themselves.
	WithoutKeys bool
	// Version names the forgeapi build in the manifest.
	Version string
	// Progress, when not nil, receives a line per step.
	Progress io.Writer
}

// Summary is what a backup or a restore did.
type Summary struct {
	Database     string // "sqlite" or "postgres"
	Repositories int
	Gists        int
	Blobs        int
	Files        int
	Bytes        int64
	// Notes are what the operator must know: what the backup could not
	// hold, what the restore changed.
	Notes []string
}

// The key files of the data directory a backup copies, and its key
// directories: TLS, the SSH server's host key (a restored server keeps its
// fingerprint, so clients' known_hosts still match) and the web-flow
// signing key (it signs new commits with the same key).
var (
	keyFiles = []string{"webhook.key", "blob-signing.key"}
	keyDirs  = []string{"tls", "ssh", "signing"}
)

// keyNames names the key files and directories for the operator.
const keyNames = "webhook.key, blob-signing.key, tls/, ssh/, signing/"

// Backup writes a backup of src into dir, which must not exist or be
// empty. It reads the forge as its servers run and changes nothing of
// it. A backup that fails removes what it wrote.
func Backup(ctx context.Context, src Source, dir string) (*Summary, error) {
	if info, err := os.Stat(src.DataDir); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("no data directory at %s: check --data", src.DataDir)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	remove, err := newDirectory(dir, "the backup directory")
	if err != nil {
		return nil, err
	}
	s, err := backup(ctx, src, newCopier(dir))
	if err != nil {
		remove()
		return nil, err
	}
	return s, nil
}

func backup(ctx context.Context, src Source, c *copier) (*Summary, error) {
	m := &Manifest{Format: manifestFormat, Version: src.Version, StartedAt: time.Now().UTC()}
	s := &Summary{}
	say := func(format string, args ...any) {
		if src.Progress != nil {
			fmt.Fprintf(src.Progress, "forgeapi: "+format+"\n", args...)
		}
	}
	known := &snapshotRepos{}
	var knownGists map[string]bool // nil on PostgreSQL: every gist's directory
	if src.DatabaseURL == "" {
		m.Database = string(store.SQLite)
		say("copying the SQLite database ...")
		live, err := snapshotSQLite(ctx, filepath.Join(src.DataDir, "forgeapi.db"), c, "forgeapi.db")
		if err != nil {
			return nil, err
		}
		defer live.Close()
		if err := known.read(ctx, live, c.path("forgeapi.db")); err != nil {
			return nil, err
		}
		if knownGists, err = snapshotGists(ctx, c.path("forgeapi.db")); err != nil {
			return nil, err
		}
	} else {
		m.Database = string(store.Postgres)
		s.Notes = append(s.Notes, "the database is on PostgreSQL: this backup holds no database; "+
			"it goes with the pg_dump taken before it started (see the backup section of docs/operations.md)")
	}
	s.Database = m.Database
	n, err := copyRepositories(ctx, c, filepath.Join(src.DataDir, "git"), known, say)
	if err != nil {
		return nil, err
	}
	s.Repositories = n
	if s.Gists, err = copyGists(ctx, c, filepath.Join(src.DataDir, "gists"), knownGists, say); err != nil {
		return nil, err
	}
	if s.Blobs, err = copyBlobs(c, src); err != nil {
		return nil, err
	}
	if strings.HasPrefix(src.Blob, "s3://") {
		s.Notes = append(s.Notes, "migration archives are in S3 (--blob s3://...): back the bucket up with S3's own tools (versioning, replication)")
	}
	if src.WithoutKeys {
		s.Notes = append(s.Notes, "the key files ("+keyNames+") were left out: "+
			"copy them into the restored data directory before its server starts")
	} else if err := copyKeys(c, src.DataDir, s); err != nil {
		return nil, err
	}
	m.FinishedAt = time.Now().UTC()
	if err := c.writeManifest(m); err != nil {
		return nil, err
	}
	s.Files, s.Bytes = len(m.Files), c.bytes()
	return s, nil
}

// copyKeys copies the key files of the data directory.
func copyKeys(c *copier, dataDir string, s *Summary) error {
	for _, name := range keyFiles {
		gone, err := c.copyFile(filepath.Join(dataDir, name), name)
		if err != nil {
			return err
		}
		if gone && name == "webhook.key" {
			s.Notes = append(s.Notes, "no webhook.key in the data directory: the server takes --secret-key; keep that key with this backup")
		}
	}
	for _, name := range keyDirs {
		if err := c.copyTree(filepath.Join(dataDir, name), name, nil); err != nil {
			return err
		}
	}
	return nil
}

// snapshotSQLite writes a snapshot of the SQLite database at path to rel
// with VACUUM INTO: one read transaction, beside the server's writers
// (the database is in WAL mode), and lists it. It returns the database,
// open.
func snapshotSQLite(ctx context.Context, path string, c *copier, rel string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no SQLite database at %s: check --data and --database", path)
	}
	q := url.Values{}
	q.Set("mode", "rw") // never create it
	q.Add("_pragma", "busy_timeout(10000)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, c.path(rel)); err != nil {
		db.Close()
		return nil, fmt.Errorf("snapshot of %s: %w", path, err)
	}
	if err := c.adopt(rel); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// snapshotRepos tells, on SQLite, which repository directories belong to
// the repositories of the database's snapshot. SQLite gives the id of the
// newest repository to the next one once it is deleted, so a directory
// may hold a repository made after the snapshot under the id of one the
// snapshot has: its copy would pass for the other's. On PostgreSQL, whose
// ids are never given twice, every directory is copied (restore leaves
// out those the database does not have).
type snapshotRepos struct {
	live    *sql.DB             // the live database; nil on PostgreSQL
	created map[int64]time.Time // the snapshot's repositories: id -> created_at
}

// read lists the repositories of the snapshot at path.
func (r *snapshotRepos) read(ctx context.Context, live *sql.DB, path string) error {
	snap, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer snap.Close()
	rows, err := snap.QueryContext(ctx, `SELECT id, created_at FROM repositories`)
	if err != nil {
		return fmt.Errorf("read the snapshot's repositories: %w", err)
	}
	defer rows.Close()
	r.live, r.created = live, map[int64]time.Time{}
	for rows.Next() {
		var id int64
		var created time.Time
		if err := rows.Scan(&id, &created); err != nil {
			return err
		}
		r.created[id] = created
	}
	return rows.Err()
}

// holds reports whether the directory of repository id is the one of the
// snapshot's repository of that id now.
func (r *snapshotRepos) holds(ctx context.Context, id int64) (bool, error) {
	if r.live == nil {
		return true, nil
	}
	created, ok := r.created[id]
	if !ok {
		return false, nil // made after the snapshot
	}
	var now time.Time
	err := r.live.QueryRowContext(ctx, `SELECT created_at FROM repositories WHERE id = ?`, id).Scan(&now)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // deleted since
	}
	return err == nil && now.Equal(created), err
}

// repositoryDir matches the directory of a repository under DATA/git
// (repos.Service.GitDir): staging directories of repositories being
// created and those of deleted ones are left out.
var repositoryDir = regexp.MustCompile(`^([0-9]+)\.git$`)

// copyRepositories copies the repositories under root that known holds to
// git/ and returns how many it copied.
func copyRepositories(ctx context.Context, c *copier, root string, known *snapshotRepos, say func(string, ...any)) (int, error) {
	entries, err := readDir(root)
	if err != nil {
		return 0, err
	}
	entries = slices.DeleteFunc(entries, func(e fs.DirEntry) bool { return !e.IsDir() || !repositoryDir.MatchString(e.Name()) })
	n := 0
	for i, e := range entries {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if i%100 == 0 {
			say("copying repositories: %d of %d ...", i, len(entries))
		}
		id, _ := strconv.ParseInt(repositoryDir.FindStringSubmatch(e.Name())[1], 10, 64)
		copied, err := copyKnownRepository(ctx, c, filepath.Join(root, e.Name()), "git/"+e.Name(), id, known)
		if err != nil {
			return n, err
		}
		if copied {
			n++
		}
	}
	return n, nil
}

// copyKnownRepository copies the repository id at src to rel when it is
// the snapshot's repository of that id before and after the copy.
func copyKnownRepository(ctx context.Context, c *copier, src, rel string, id int64, known *snapshotRepos) (bool, error) {
	if ok, err := known.holds(ctx, id); err != nil || !ok {
		return false, err
	}
	gone, err := c.copyRepository(ctx, src, rel)
	if err != nil || gone {
		return false, err
	}
	ok, err := known.holds(ctx, id)
	if err == nil && !ok {
		err = c.dropTree(rel)
	}
	return ok && err == nil, err
}

// copyBlobs copies the local blob store to blobs/ and returns how many
// objects it copied; none for S3.
func copyBlobs(c *copier, src Source) (int, error) {
	dir := filepath.Join(src.DataDir, "blobs")
	switch {
	case strings.HasPrefix(src.Blob, "s3://"):
		return 0, nil
	case strings.HasPrefix(src.Blob, "file://"):
		dir = strings.TrimPrefix(src.Blob, "file://")
	case src.Blob != "":
		return 0, errors.New("--blob: want file://PATH or s3://BUCKET?...")
	}
	before := len(c.files)
	// .tmp holds objects being written (blob.Local.Put).
	err := c.copyTree(dir, "blobs", func(name string, isDir bool) bool { return isDir && name == ".tmp" })
	return len(c.files) - before, err
}
