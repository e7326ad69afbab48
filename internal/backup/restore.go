package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"forgeapi/internal/git/githttp"
	"forgeapi/internal/githost"
	"forgeapi/internal/pulls"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// restoringMarker is the file a restore keeps in the data directory
// until it is done: a restore cut short (killed) leaves it, and no
// server nor command opens that directory (CheckRestored).
const restoringMarker = "RESTORE-IN-PROGRESS"

// CheckRestored refuses a data directory whose restore did not finish.
func CheckRestored(dataDir string) error {
	if _, err := os.Stat(filepath.Join(dataDir, restoringMarker)); err == nil {
		return fmt.Errorf("the restore into %s did not finish (%s is there): restore again into a new or empty directory", dataDir, restoringMarker)
	}
	return nil
}

// Target is where a restore writes.
type Target struct {
	// DataDir is the new data directory: it must not exist or be empty.
	DataDir string
	// DatabaseURL is empty to restore the backup's SQLite database into
	// DataDir, or the PostgreSQL database into which the operator
	// restored the pg_dump that goes with the backup.
	DatabaseURL string
	// Blob is the --blob the restored server will run with: empty for
	// DataDir/blobs, file://PATH (new or empty), or s3://... (the
	// backup's archives are not restored).
	Blob string
	// Progress, when not nil, receives a line per step.
	Progress io.Writer
}

// Restore restores the backup in dir into t and reports what it did. It
// checks every file against the manifest, copies them, opens the
// database (migrating it to this version's schema) and brings each
// repository into agreement with it: the references that moved after
// the database's snapshot are set back (see githost.RefRestorer and
// pulls.RestoreRefs), the copies of repositories the database does not
// have are removed, a repository the database has without a copy (it was
// deleted while the backup ran) is made empty, and every repository must
// pass `git fsck --connectivity-only`. A restore that fails removes what
// it wrote (on PostgreSQL, the database is only read and migrated); one
// killed leaves its marker file, and CheckRestored refuses the directory.
func Restore(ctx context.Context, dir string, t Target) (*Summary, error) {
	m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	switch {
	case m.Database == string(store.SQLite) && t.DatabaseURL != "":
		return nil, errors.New("this backup holds a SQLite database: restore it without --database")
	case m.Database == string(store.Postgres) && t.DatabaseURL == "":
		return nil, errors.New("this backup was made on PostgreSQL: restore the pg_dump taken before it into a new database, " +
			"then give that database's URL with --database")
	case m.Database == string(store.Postgres):
		if err := checkRestoredDump(ctx, t.DatabaseURL); err != nil {
			return nil, err
		}
	}
	if t.DataDir, err = filepath.Abs(t.DataDir); err != nil {
		return nil, err
	}
	remove, err := newDirectory(t.DataDir, "the data directory")
	if err != nil {
		return nil, err
	}
	marker := filepath.Join(t.DataDir, restoringMarker)
	if err := os.WriteFile(marker, []byte("forgeapi restore "+dir+"\n"), 0o644); err != nil {
		remove()
		return nil, err
	}
	blobDir, removeBlobs, err := blobTarget(t)
	if err != nil {
		remove()
		return nil, err
	}
	s, err := restore(ctx, dir, m, t, blobDir)
	if err == nil {
		flush() // the restored files, before the marker goes
		if err = os.Remove(marker); err == nil {
			err = syncDir(t.DataDir)
		}
	}
	if err != nil {
		removeBlobs()
		remove()
		return nil, err
	}
	return s, nil
}

// blobTarget is the directory the backup's archives go to ("" for S3)
// and the function that removes what the restore wrote there.
func blobTarget(t Target) (string, func(), error) {
	switch {
	case t.Blob == "":
		return filepath.Join(t.DataDir, "blobs"), func() {}, nil
	case strings.HasPrefix(t.Blob, "s3://"):
		return "", func() {}, nil
	case strings.HasPrefix(t.Blob, "file://"):
		dir := strings.TrimPrefix(t.Blob, "file://")
		remove, err := newDirectory(dir, "the blob directory")
		return dir, remove, err
	}
	return "", nil, errors.New("--blob: want file://PATH or s3://BUCKET?...")
}

// checkRestoredDump refuses a PostgreSQL database that holds no forge:
// the pg_dump must be restored into it first (the schema is not made
// here, which would pass an empty forge for a restored one).
func checkRestoredDump(ctx context.Context, url string) error {
	db, err := store.OpenPostgresSQL(url)
	if err != nil {
		return err
	}
	defer db.Close()
	var found bool
	err = db.QueryRowContext(ctx, `SELECT to_regclass('repositories') IS NOT NULL`).Scan(&found)
	if err != nil {
		return fmt.Errorf("connect postgres: %w", err)
	}
	if !found {
		return errors.New("the database given by --database holds no forge: restore the pg_dump taken before the backup into it first")
	}
	return nil
}

func restore(ctx context.Context, dir string, m *Manifest, t Target, blobDir string) (*Summary, error) {
	s := &Summary{Database: m.Database}
	say := func(format string, args ...any) {
		if t.Progress != nil {
			fmt.Fprintf(t.Progress, "forgeapi: "+format+"\n", args...)
		}
	}
	say("checking and copying %d files ...", len(m.Files))
	skippedBlobs := 0
	for _, f := range m.Files {
		dst := filepath.Join(t.DataDir, filepath.FromSlash(f.Path))
		if rel, ok := strings.CutPrefix(f.Path, "blobs/"); ok {
			if blobDir == "" {
				skippedBlobs++
				continue
			}
			dst = filepath.Join(blobDir, filepath.FromSlash(rel))
			s.Blobs++
		}
		if err := restoreFile(dir, f, dst); err != nil {
			return nil, err
		}
		s.Files++
		s.Bytes += f.Size
	}
	flush()
	if skippedBlobs > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d migration archives of the backup were not restored (--blob s3://...): copy %s into the bucket", skippedBlobs, filepath.Join(dir, "blobs")))
	}
	if _, err := os.Stat(filepath.Join(t.DataDir, "webhook.key")); errors.Is(err, fs.ErrNotExist) {
		s.Notes = append(s.Notes, "the backup has no webhook.key: put the backed-up data directory's key files ("+keyNames+") into "+
			t.DataDir+", or start the server with its --secret-key")
	}
	db, err := store.Open(ctx, t.DatabaseURL, t.DataDir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	say("bringing the repositories into agreement with the database ...")
	if err := restoreRepositories(ctx, db, filepath.Join(t.DataDir, "git"), s); err != nil {
		return nil, err
	}
	if err := restoreGists(ctx, db, filepath.Join(t.DataDir, "gists"), s); err != nil {
		return nil, err
	}
	return s, nil
}

// restoreRepositories brings the copied repositories under root into
// agreement with the database db.
func restoreRepositories(ctx context.Context, db *store.DB, root string, s *Summary) error {
	list, err := repos.All(ctx, db)
	if err != nil {
		return err
	}
	refs, err := githost.NewRefRestorer(ctx, db)
	if err != nil {
		return err
	}
	layout := &repos.Service{GitRoot: root}
	have := map[string]bool{}
	setBack, pullRefs := 0, 0
	for _, r := range list {
		if err := ctx.Err(); err != nil {
			return err
		}
		dir := layout.GitDir(r.ID)
		have[filepath.Base(dir)] = true
		_, statErr := os.Stat(filepath.Join(dir, "HEAD"))
		if statErr == nil {
			// The manifest lists files: an empty repository's copy has
			// no refs/ nor objects/, without which git sees none.
			for _, sub := range []string{"refs", "objects"} {
				if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
					return err
				}
			}
		}
		if err := githttp.Init(dir, r.DefaultBranch); err != nil {
			return err
		}
		if errors.Is(statErr, fs.ErrNotExist) {
			s.Notes = append(s.Notes, fmt.Sprintf("%s had no copy in the backup (deleted while the backup ran): restored empty", r.FullName()))
			continue
		}
		if err := githttp.SetDefaultBranch(dir, r.DefaultBranch); err != nil {
			return err
		}
		changes, err := refs.Restore(ctx, r.ID, dir)
		if err != nil {
			return fmt.Errorf("%s: %w", r.FullName(), err)
		}
		n, err := pulls.RestoreRefs(ctx, db, r.ID, dir)
		if err != nil {
			return fmt.Errorf("%s: %w", r.FullName(), err)
		}
		if err := checkConnectivity(ctx, dir); err != nil {
			return fmt.Errorf("%s: %w", r.FullName(), err)
		}
		setBack += len(changes)
		pullRefs += n
		s.Repositories++
	}
	if setBack+pullRefs > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d references moved after the database's snapshot were set back to it (and %d refs/pull/ references)", setBack, pullRefs))
	}
	return dropUnknown(root, have, s)
}

// dropUnknown removes the copies under root of repositories the database
// does not have (created after its snapshot).
func dropUnknown(root string, have map[string]bool, s *Summary) error {
	entries, err := readDir(root)
	if err != nil {
		return err
	}
	dropped := 0
	for _, e := range entries {
		if have[e.Name()] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
			return err
		}
		dropped++
	}
	if dropped > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d repositories created after the database's snapshot were left out", dropped))
	}
	return nil
}
