// Package archive writes organization migration archives: gzip-compressed
// tarballs in the layout the platform's migration tooling reads.
//
// An archive holds SchemaFile, one JSON array per kind of record
// (OrganizationsFile, UsersFile, RepositoriesFile, ...) and, under
// RepositoriesDir/<org>/<repo>.git, complete bare git repositories. A Writer
// streams all of it to an io.Writer — typically the write end of an
// io.Pipe whose read end goes to blob storage — so memory use does not
// grow with the size of the repositories:
//
//	w := archive.NewWriter(dst)
//	err := w.WriteSchema()
//	err = w.AddJSON(archive.OrganizationsFile, []archive.Organization{org})
//	err = w.AddBareRepository(ctx, "octo-org", "hello-world", "/data/repos/1.git")
//	err = w.Close()
package archive

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"forgeapi/internal/git/gitcmd"

	"github.com/klauspost/compress/gzip"
)

// CompressionLevel is the gzip level of archives. Most of an archive is
// git pack data, already zlib-compressed, so a higher level costs CPU time
// for almost no gain; klauspost/compress at level 1 also passes
// incompressible blocks through quickly.
const CompressionLevel = gzip.BestSpeed

// ErrClosed is returned by the methods of a Writer after Close.
var ErrClosed = errors.New("archive: writer is closed")

// Writer writes one archive. Its methods must not be called concurrently.
// An error from any method leaves the archive incomplete: discard it. Once
// part of an entry has been written, the error sticks: every later call
// returns it.
type Writer struct {
	// TempDir is where AddBareRepository makes its snapshot of a
	// repository. Empty means os.TempDir(). On the file system of the
	// repositories, the snapshot hard-links objects instead of copying them.
	TempDir string
	// GitEnv is added to the environment of the git commands the Writer
	// runs (gitcmd's, which already keeps them from the system's and the
	// user's configuration).
	GitEnv []string

	gz      *gzip.Writer
	tar     *tar.Writer
	dirs    map[string]bool // directories already written
	created time.Time       // modification time of JSON files and directories
	err     error           // sticky: the first write error, or ErrClosed
}

// NewWriter returns a Writer that writes a gzip-compressed tar stream to
// dst. The caller must call Close to complete the archive; Close does not
// close dst.
func NewWriter(dst io.Writer) *Writer {
	gz, _ := gzip.NewWriterLevel(dst, CompressionLevel) // the level is valid
	return &Writer{
		gz:      gz,
		tar:     tar.NewWriter(gz),
		dirs:    make(map[string]bool),
		created: time.Now().Truncate(time.Second),
	}
}

// WriteSchema writes SchemaFile with SchemaVersion.
func (w *Writer) WriteSchema() error {
	data, err := json.Marshal(Schema{Version: SchemaVersion})
	if err != nil {
		return err
	}
	return w.writeFile(SchemaFile, data)
}

// jsonFileName matches the names AddJSON accepts: one file at the top of
// the archive, like "users_000001.json".
var jsonFileName = regexp.MustCompile(`^[a-z][a-z0-9_]*\.json$`)

// AddJSON writes a top-level file name holding records encoded as JSON.
// records must encode as a JSON array (a slice or array; a nil slice is
// written as []). The encoded file is held in memory while it is written:
// metadata is small next to git data.
func (w *Writer) AddJSON(name string, records any) error {
	if !jsonFileName.MatchString(name) {
		return fmt.Errorf("archive: invalid JSON file name %q", name)
	}
	data, err := json.Marshal(records)
	if err != nil {
		return fmt.Errorf("archive: encode %s: %w", name, err)
	}
	if bytes.Equal(data, []byte("null")) {
		data = []byte("[]")
	}
	if data[0] != '[' {
		return fmt.Errorf("archive: %s: records must encode as a JSON array, not %T", name, records)
	}
	return w.writeFile(name, data)
}

// segmentName matches org and repository names usable as one path segment.
var segmentName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// AddBareRepository writes a complete copy of the bare repository at
// srcDir to RepositoriesDir/<org>/<repo>.git.
//
// It first snapshots srcDir with "git clone --mirror --no-local" into
// TempDir, which reads the refs before the objects, so that a push
// arriving during the export yields the state before or after it, never
// refs without their objects. Objects borrowed from alternates are copied in, the snapshot's
// remote (which names srcDir) is removed, and the snapshot is streamed
// file by file, leaving out hooks and lock files.
func (w *Writer) AddBareRepository(ctx context.Context, org, repo, srcDir string) error {
	if w.err != nil {
		return w.err
	}
	if !validSegment(org) || !validSegment(repo) {
		return fmt.Errorf("archive: invalid organization or repository name %q/%q", org, repo)
	}
	tmp, err := os.MkdirTemp(w.TempDir, "archive-snapshot-*")
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	defer os.RemoveAll(tmp)
	snapshot := filepath.Join(tmp, "repo.git")
	if err := w.snapshot(ctx, srcDir, snapshot); err != nil {
		return fmt.Errorf("archive: snapshot %s/%s: %w", org, repo, err)
	}
	if err := w.writeDirTree(ctx, snapshot, repositoryPath(org, repo)); err != nil {
		if w.err == nil {
			w.err = fmt.Errorf("archive: write %s/%s: %w", org, repo, err)
		}
		return w.err
	}
	return nil
}

func validSegment(name string) bool {
	return segmentName.MatchString(name) && name != "." && name != ".."
}

// snapshot makes dst a self-contained mirror of the bare repository src.
func (w *Writer) snapshot(ctx context.Context, src, dst string) error {
	// --no-local: the objects come through upload-pack rather than as a
	// copy of srcDir's objects directory, which a push writing its
	// quarantine directory at the same time makes fail.
	if err := w.git(ctx, "", "clone", "--mirror", "--no-local", "--quiet", "--", src, dst); err != nil {
		return err
	}
	if err := w.git(ctx, dst, "remote", "remove", "origin"); err != nil {
		return err
	}
	return w.dissociate(ctx, dst)
}

// dissociate copies into repo the objects it borrows from other
// repositories through objects/info/alternates, and drops that file.
func (w *Writer) dissociate(ctx context.Context, repo string) error {
	alternates := filepath.Join(repo, "objects", "info", "alternates")
	if _, err := os.Stat(alternates); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := w.git(ctx, repo, "repack", "-a", "-d", "-q"); err != nil {
		return err
	}
	return os.Remove(alternates)
}

// git runs git with args in dir (or the current directory if dir is "").
func (w *Writer) git(ctx context.Context, dir string, args ...string) error {
	return gitcmd.Git{Dir: dir, Env: w.GitEnv}.Run(ctx, args...)
}

// skipInRepository reports whether a path of a bare repository, relative to
// its root, stays out of the archive: hooks are the server's own and lock
// and temporary files are not repository data.
func skipInRepository(rel string, isDir bool) bool {
	base := path.Base(rel)
	switch {
	case rel == "hooks" || rel == "FETCH_HEAD" || rel == "gc.pid" || rel == "gc.log":
		return true
	case strings.HasSuffix(base, ".lock"):
		return true
	case !isDir && strings.HasPrefix(base, "tmp_"): // objects/pack/tmp_pack_*
		return true
	}
	return false
}

// writeDirTree streams the directory tree at root into the archive under
// prefix, one file at a time, in lexical order.
func (w *Writer) writeDirTree(ctx context.Context, root, prefix string) error {
	if err := w.writeParents(prefix); err != nil {
		return err
	}
	return filepath.WalkDir(root, func(file string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(root, file)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel != "." && skipInRepository(rel, entry.IsDir()) {
			if entry.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		name := path.Join(prefix, rel)
		switch {
		case entry.IsDir():
			return w.writeDir(name)
		case entry.Type().IsRegular():
			return w.copyFile(name, file)
		default:
			return nil // bare repositories hold no symlinks or devices worth keeping
		}
	})
}

// writeParents writes the directory entries above name not yet written.
func (w *Writer) writeParents(name string) error {
	parent := path.Dir(name)
	if parent == "." {
		return nil
	}
	if err := w.writeParents(parent); err != nil {
		return err
	}
	return w.writeDir(parent)
}

func (w *Writer) writeDir(name string) error {
	if w.dirs[name] {
		return nil
	}
	w.dirs[name] = true
	return w.writeHeader(&tar.Header{
		Typeflag: tar.TypeDir,
		Name:     name + "/",
		Mode:     0o755,
		ModTime:  w.created,
	})
}

// copyFile streams the regular file at file into the archive as name.
func (w *Writer) copyFile(name, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	err = w.writeHeader(&tar.Header{
		Typeflag: tar.TypeReg,
		Name:     name,
		Size:     info.Size(),
		Mode:     int64(info.Mode().Perm()),
		ModTime:  info.ModTime().Truncate(time.Second),
	})
	if err != nil {
		return err
	}
	if _, err := io.Copy(w.tar, f); err != nil {
		return w.fail(err)
	}
	return nil
}

// writeFile writes a top-level regular file holding data.
func (w *Writer) writeFile(name string, data []byte) error {
	err := w.writeHeader(&tar.Header{
		Typeflag: tar.TypeReg,
		Name:     name,
		Size:     int64(len(data)),
		Mode:     0o644,
		ModTime:  w.created,
	})
	if err != nil {
		return err
	}
	if _, err := w.tar.Write(data); err != nil {
		return w.fail(err)
	}
	return nil
}

func (w *Writer) writeHeader(hdr *tar.Header) error {
	if w.err != nil {
		return w.err
	}
	if err := w.tar.WriteHeader(hdr); err != nil {
		return w.fail(err)
	}
	return nil
}

// fail records err as the Writer's sticky error and returns it.
func (w *Writer) fail(err error) error {
	w.err = fmt.Errorf("archive: %w", err)
	return w.err
}

// Close writes the end of the tar stream and flushes the gzip stream. It
// does not close the destination. After Close, every method returns
// ErrClosed; a second Close returns nil.
func (w *Writer) Close() error {
	if errors.Is(w.err, ErrClosed) {
		return nil
	}
	if w.err != nil {
		return w.err
	}
	w.err = ErrClosed
	if err := w.tar.Close(); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	if err := w.gz.Close(); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	return nil
}
