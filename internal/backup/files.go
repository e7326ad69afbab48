package backup

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"forgeapi/internal/store"
)

// manifestName is the file a backup writes last: the list of its files
// with their sizes and SHA-256 digests. A directory without it is not a
// complete backup.
const manifestName = "manifest.json"

// manifestFormat is the version of the backup's layout and manifest.
const manifestFormat = 1

// Manifest describes a backup.
type Manifest struct {
	Format int `json:"format"`
	// Version is the forgeapi build that made the backup.
	Version string `json:"forgeapi_version"`
	// Database is "sqlite" (the backup holds forgeapi.db) or "postgres"
	// (the database is in a pg_dump taken before the backup started).
	Database   string    `json:"database"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Files      []File    `json:"files"`
}

// File is one file of a backup.
type File struct {
	Path   string      `json:"path"` // relative to the backup, slash-separated
	Size   int64       `json:"size"`
	SHA256 string      `json:"sha256"`
	Mode   fs.FileMode `json:"mode"` // permission bits
}

// copier copies files under a root directory and lists them.
type copier struct {
	root  string
	files map[string]File
}

func newCopier(root string) *copier { return &copier{root: root, files: map[string]File{}} }

// path is the file rel (slash-separated) under the root.
func (c *copier) path(rel string) string { return filepath.Join(c.root, filepath.FromSlash(rel)) }

// copyFile copies the regular file src to rel and lists it (flush makes
// the copies durable). gone reports that src does not exist (a writer removed it): nothing
// is copied then.
func (c *copier) copyFile(src, rel string) (gone bool, err error) {
	in, err := os.Open(src)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return false, err
	}
	if !info.Mode().IsRegular() {
		return false, fmt.Errorf("%s is not a regular file", src)
	}
	f := File{Path: rel, Mode: info.Mode().Perm()}
	if f.Size, f.SHA256, err = writeFile(c.path(rel), f.Mode, in); err != nil {
		return false, err
	}
	c.files[rel] = f
	return false, nil
}

// adopt lists the file rel, written under the root by someone else.
func (c *copier) adopt(rel string) error {
	in, err := os.Open(c.path(rel))
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(h, in)
	if err != nil {
		return err
	}
	c.files[rel] = File{Path: rel, Size: n, SHA256: hex.EncodeToString(h.Sum(nil)), Mode: info.Mode().Perm()}
	return nil
}

// drop removes the file rel from the copy and the list.
func (c *copier) drop(rel string) error {
	delete(c.files, rel)
	if err := os.Remove(c.path(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// dropTree removes the directory rel from the copy and its files from
// the list.
func (c *copier) dropTree(rel string) error {
	for path := range c.files {
		if strings.HasPrefix(path, rel+"/") {
			delete(c.files, path)
		}
	}
	return os.RemoveAll(c.path(rel))
}

// copyTree copies the regular files under the directory src to rel,
// leaving out those skip names (and the directories it names, with
// their contents). Files and directories that disappear meanwhile are
// left out; a missing src copies nothing.
func (c *copier) copyTree(src, rel string, skip func(name string, dir bool) bool) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if path == src {
			return nil
		}
		if skip != nil && skip(d.Name(), d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		sub, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		_, err = c.copyFile(path, rel+"/"+filepath.ToSlash(sub))
		return err
	})
}

// bytes is the size of the listed files.
func (c *copier) bytes() int64 {
	var n int64
	for _, f := range c.files {
		n += f.Size
	}
	return n
}

// writeManifest makes the listed files durable and writes m, with them,
// as the backup's last file: to a temporary name, synced, then renamed,
// and the directory synced.
func (c *copier) writeManifest(m *Manifest) error {
	flush()
	m.Files = slices.SortedFunc(maps.Values(c.files), func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(c.root, manifestName+".tmp")
	if _, _, err := writeFile(tmp, 0o644, strings.NewReader(string(body)+"\n")); err != nil {
		return err
	}
	flush()
	if err := os.Rename(tmp, filepath.Join(c.root, manifestName)); err != nil {
		return err
	}
	return syncDir(c.root)
}

// readManifest reads the manifest of the backup in dir.
func readManifest(dir string) (*Manifest, error) {
	body, err := os.ReadFile(filepath.Join(dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		if _, statErr := os.Stat(dir); statErr != nil {
			return nil, fmt.Errorf("no backup at %s: %w", dir, statErr)
		}
		return nil, fmt.Errorf("%s is not a complete backup: it has no %s (a backup cut short writes none)", dir, manifestName)
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("the backup's %s is corrupt: %w", manifestName, err)
	}
	if m.Format != manifestFormat {
		return nil, fmt.Errorf("the backup's format is %d; this forgeapi restores format %d", m.Format, manifestFormat)
	}
	if m.Database != string(store.SQLite) && m.Database != string(store.Postgres) {
		return nil, fmt.Errorf("the backup's %s is corrupt: unknown database %q", manifestName, m.Database)
	}
	for _, f := range m.Files {
		if !fs.ValidPath(f.Path) || f.Path == manifestName {
			return nil, fmt.Errorf("the backup's %s is corrupt: bad path %q", manifestName, f.Path)
		}
	}
	return &m, nil
}

// restoreFile copies the backup's file f from the backup in dir to dst,
// checking its size and digest.
func restoreFile(dir string, f File, dst string) error {
	in, err := os.Open(filepath.Join(dir, filepath.FromSlash(f.Path)))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("the backup is incomplete: %s is missing", f.Path)
	}
	if err != nil {
		return err
	}
	defer in.Close()
	size, digest, err := writeFile(dst, f.Mode, io.LimitReader(in, f.Size+1))
	if err != nil {
		return err
	}
	if size != f.Size || digest != f.SHA256 {
		return fmt.Errorf("the backup is corrupt: %s does not match its size and SHA-256 digest in %s", f.Path, manifestName)
	}
	return nil
}

// writeFile writes r to a new file at path (making its directory) with
// the permission bits perm and returns its size and SHA-256 digest; flush
// makes it durable.
func writeFile(path string, perm fs.FileMode, r io.Reader) (int64, string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, "", err
	}
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm|0o200)
	if err != nil {
		return 0, "", err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), r)
	if closeErr := out.Close(); err == nil {
		err = closeErr
	}
	if err == nil && perm&0o200 == 0 {
		err = os.Chmod(path, perm)
	}
	if err != nil {
		return 0, "", fmt.Errorf("write %s: %w", path, err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// syncDir flushes a directory's entries to disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// newDirectory makes dir, which must not exist or be empty, and returns
// a function that removes what it made (the directory it created, or the
// contents of the empty one it found): a command that fails leaves
// nothing behind.
func newDirectory(dir, what string) (remove func(), err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		return func() { _ = os.RemoveAll(dir) }, nil
	case err != nil:
		return nil, err
	case len(entries) > 0:
		return nil, fmt.Errorf("%s %s is not empty: give a new or empty directory", what, dir)
	}
	return func() {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}, nil
}

// flush makes the files written so far durable: one sync(2) for all of
// them (an fsync of each of a repository's many loose objects costs more
// than their copy).
func flush() {
	syscall.Sync()
}
