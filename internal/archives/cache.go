package archives

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
	"golang.org/x/sync/singleflight"

	"forgeapi/internal/git/gitcmd"
)

// DefaultMaxCacheBytes bounds the archive cache when Config.MaxCacheBytes
// is 0: 2 GiB.
const DefaultMaxCacheBytes = 2 << 30

// staleTemp is how old a half-written archive (of a build that a crash
// cut short) is before the cache removes it.
const staleTemp = time.Hour

// Cache keeps built archives as files under a directory, one per
// repository, commit, format and prefix, and bounds their total size: after
// each build, the least recently served archives are removed until the
// total is at most MaxBytes (an archive larger than MaxBytes is served once
// and removed). A file is written under a temporary name and renamed into
// place, so servers sharing the directory never serve a partial archive;
// within one process, concurrent requests for one archive wait for one
// build. It is safe for concurrent use.
type Cache struct {
	// Dir holds the archives.
	Dir string
	// MaxBytes bounds the total size of the archives kept.
	MaxBytes int64
	// Now is the clock for the served time of an archive (time.Now if
	// nil).
	Now func() time.Time

	builds singleflight.Group
}

// entry names one archive of the cache.
type entry struct {
	repoID int64
	sha    string
	format Format
	prefix string // the archive's root directory, with a trailing '/'
}

// path is where the entry's file lives: DIR/REPO/SHA-PREFIX.EXT. The
// prefix is part of the name because a rename of the repository or its
// owner changes an archive's root directory.
func (c *Cache) path(e entry) string {
	name := e.sha + "-" + strings.TrimSuffix(e.prefix, "/") + e.format.ext()
	return filepath.Join(c.Dir, fmt.Sprint(e.repoID), name)
}

// Open returns the archive of the entry, building it from the bare
// repository gitDir when the cache does not hold it. The caller closes the
// file.
func (c *Cache) Open(ctx context.Context, gitDir string, e entry) (*os.File, error) {
	p := c.path(e)
	if f, err := c.openHit(p); err == nil {
		return f, nil
	}
	// The build runs detached from one caller's context: another caller
	// may be waiting for it.
	_, err, _ := c.builds.Do(p, func() (any, error) {
		return nil, c.build(context.WithoutCancel(ctx), gitDir, e, p)
	})
	if err != nil {
		return nil, err
	}
	f, err := c.openHit(p)
	if err != nil {
		return nil, err
	}
	c.evict(p)
	return f, nil
}

// openHit opens a cached archive and marks it as just served.
func (c *Cache) openHit(p string) (*os.File, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	now := c.now()
	_ = os.Chtimes(p, now, now)
	return f, nil
}

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// build writes the archive of the entry to p.
func (c *Cache) build(ctx context.Context, gitDir string, e entry, p string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	err = write(ctx, gitDir, e, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// write streams the archive of the entry to w: git archive's tar through
// gzip, or git archive's zip as it is.
func write(ctx context.Context, gitDir string, e entry, w io.Writer) error {
	args := []string{"archive", "--format=" + e.format.gitFormat(), "--prefix=" + e.prefix, e.sha}
	cmd := gitcmd.In(gitDir).Command(ctx, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	copyErr := copyArchive(w, out, e.format)
	if copyErr != nil {
		_, _ = io.Copy(io.Discard, out) // let git finish, then report
	}
	if err := cmd.Wait(); err != nil {
		return &gitcmd.Error{Args: args, Err: err, Stderr: strings.TrimSpace(stderr.String())}
	}
	return copyErr
}

// copyArchive copies git archive's output to w, compressing a tarball.
// The gzip stream names no file and no time (as gzip -n), so an archive of
// a commit is the same bytes every time it is built.
func copyArchive(w io.Writer, r io.Reader, f Format) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	if f == Zipball {
		if _, err := io.Copy(bw, r); err != nil {
			return err
		}
		return bw.Flush()
	}
	zw, err := gzip.NewWriterLevel(bw, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	if _, err := io.Copy(zw, r); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

// cached is one file of the cache, for eviction.
type cached struct {
	path   string
	size   int64
	served time.Time
}

// evict removes the least recently served archives until the cache holds
// at most MaxBytes, and half-written files older than staleTemp. keep (the
// archive being served) goes last; an open file stays readable after its
// removal.
func (c *Cache) evict(keep string) {
	var files []cached
	var total int64
	now := c.now()
	_ = filepath.WalkDir(c.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".tmp-") {
			if now.Sub(info.ModTime()) > staleTemp {
				_ = os.Remove(p)
			}
			return nil
		}
		files = append(files, cached{path: p, size: info.Size(), served: info.ModTime()})
		total += info.Size()
		return nil
	})
	max := c.MaxBytes
	if max <= 0 {
		max = DefaultMaxCacheBytes
	}
	slices.SortFunc(files, func(a, b cached) int {
		if (a.path == keep) != (b.path == keep) {
			if a.path == keep {
				return 1
			}
			return -1
		}
		return a.served.Compare(b.served)
	})
	for _, f := range files {
		if total <= max {
			break
		}
		if err := os.Remove(f.path); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= f.size
		}
	}
}
