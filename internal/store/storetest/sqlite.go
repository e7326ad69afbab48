package storetest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"forgeapi/internal/store"
	"forgeapi/internal/testcache"
)

// Migrating an empty SQLite database to the current schema takes a
// second or more of CPU (several under the race detector), in each of
// the hundreds of servers and stores the suite opens. SeedSQLite instead
// puts a copy of a database migrated once per machine (a file in the
// test cache named after store.MigrationsDigest) where the store opens
// its database, which then finds every migration applied. Tests that
// reuse a data directory migrate as a real server does; so does the
// template itself, through store.Open. PostgreSQL has its own template
// (internal/apptest).

// OpenSQLite opens a store on a new SQLite database in a temporary
// directory of the test, already migrated (a copy of the template), and
// closes it when the test ends.
func OpenSQLite(t testing.TB) *store.DB {
	t.Helper()
	dir := t.TempDir()
	if err := SeedSQLite(dir); err != nil {
		t.Fatalf("seed the database: %v", err)
	}
	db, err := store.Open(context.Background(), "", dir)
	if err != nil {
		t.Fatalf("open the store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// SeedSQLite copies the migrated template into dataDir as the store's
// database file, unless dataDir holds one already.
func SeedSQLite(dataDir string) error {
	dst := filepath.Join(dataDir, "forgeapi.db")
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	src, err := sqliteTemplate()
	if err != nil {
		return err
	}
	return copyFile(src, dst)
}

// sqliteTemplate is the path of the migrated template, made once.
var sqliteTemplate = sync.OnceValues(func() (string, error) {
	return testcache.File("sqlite", store.MigrationsDigest()[:16]+".db", migrateTemplate)
})

// migrateTemplate writes a database migrated to the current schema at
// path, in one file (its write-ahead log checkpointed into it).
func migrateTemplate(path string) error {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".seed-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := store.Open(ctx, "", dir)
	if err != nil {
		return fmt.Errorf("migrate the template database: %w", err)
	}
	if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		db.Close()
		return fmt.Errorf("checkpoint the template database: %w", err)
	}
	if err := db.Close(); err != nil {
		return err
	}
	return os.Rename(filepath.Join(dir, "forgeapi.db"), path)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
