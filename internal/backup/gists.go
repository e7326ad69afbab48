package backup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"forgeapi/internal/gists"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/store"
)

// gistDir matches the directory of a gist's repository under DATA/gists
// (gists.Service.Dir).
var gistDir = regexp.MustCompile(`^([0-9a-f]+)\.git$`)

// snapshotGists returns the names of the gists of the SQLite snapshot at
// path: the gists whose repositories the backup holds.
func snapshotGists(ctx context.Context, path string) (map[string]bool, error) {
	snap, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	names, err := gists.Names(ctx, snap)
	if err != nil {
		return nil, fmt.Errorf("read the snapshot's gists: %w", err)
	}
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out, nil
}

// copyGists copies the gists' repositories under root (DATA/gists) to
// gists/ and returns how many it copied: those of the snapshot's gists
// (known), or every one when known is nil (PostgreSQL, whose dump is
// taken before: restore gives a gist copied without its row no row, and
// a row without its copy an empty repository).
func copyGists(ctx context.Context, c *copier, root string, known map[string]bool, say func(string, ...any)) (int, error) {
	entries, err := readDir(root)
	if err != nil {
		return 0, err
	}
	entries = slices.DeleteFunc(entries, func(e fs.DirEntry) bool {
		m := gistDir.FindStringSubmatch(e.Name())
		return !e.IsDir() || m == nil || (known != nil && !known[m[1]])
	})
	if len(entries) > 0 {
		say("copying %d gists ...", len(entries))
	}
	n := 0
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		gone, err := c.copyRepository(ctx, filepath.Join(root, e.Name()), "gists/"+e.Name())
		if err != nil {
			return n, err
		}
		if !gone {
			n++
		}
	}
	return n, nil
}

// restoreGists gives every gist of db its repository under root: the
// copy, with forgeapi's configuration and hooks written again, or an
// empty one (noted) when the backup holds none.
func restoreGists(ctx context.Context, db *store.DB, root string, s *Summary) error {
	names, err := gists.Names(ctx, db)
	if err != nil {
		return err
	}
	for _, name := range names {
		dir := filepath.Join(root, name+".git")
		_, statErr := os.Stat(filepath.Join(dir, "HEAD"))
		if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
			return statErr
		}
		for _, sub := range []string{"refs", "objects"} {
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
				return err
			}
		}
		if err := githttp.Init(dir, gists.Branch); err != nil {
			return err
		}
		if statErr != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("gist %s had no copy in the backup (created while the backup ran): restored empty", name))
			continue
		}
		if err := checkConnectivity(ctx, dir); err != nil {
			return fmt.Errorf("gist %s: %w", name, err)
		}
	}
	return nil
}
