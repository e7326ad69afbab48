package backup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"forgeapi/internal/git/gitcmd"
)

// Bounds of the copy of one repository's objects, which git may repack
// (git gc) while it runs.
const (
	// maxObjectRounds is how many times the objects are listed again
	// after files disappeared under the copy (each time git gc replaced
	// them).
	maxObjectRounds = 20
	// maxCheckRounds is how many times the copy's connectivity is
	// checked, each failure followed by another copy of the objects.
	maxCheckRounds = 3
)

// copyRepository copies the bare repository src (the git directory of a
// repository being served) to rel. gone reports that the repository went
// away meanwhile (deleted): its copy is dropped then.
//
// The references are copied before the objects: every object a copied
// reference (or reflog entry) needs was in the repository when the
// reference was read, and git never deletes a reachable object, nor a
// recent unreachable one (gc's prune delay), so it is there when the
// objects are copied next, though maybe repacked. Loose references are
// copied before packed-refs, which git gc rewrites before it removes the
// loose ones. The reflogs come after the references, so they may hold
// entries newer than the copied values: restore drops those
// (githost.RefRestorer). Packs are copied only once their index exists
// (git writes it last), and a file that disappears under the copy (git
// gc packed or repacked it) has the objects listed again. At last `git
// fsck --connectivity-only` must find every object the copied references
// and reflogs need; what it misses is copied again. Hooks are not copied:
// restore writes them.
func (c *copier) copyRepository(ctx context.Context, src, rel string) (gone bool, err error) {
	for _, name := range []string{"HEAD", "config"} {
		if gone, err := c.copyFile(filepath.Join(src, name), rel+"/"+name); err != nil || gone {
			return c.repositoryGone(rel, gone, err)
		}
	}
	if err := c.copyTree(filepath.Join(src, "refs"), rel+"/refs", skipLocks); err != nil {
		return c.repositoryGone(rel, false, err)
	}
	if _, err := c.copyFile(filepath.Join(src, "packed-refs"), rel+"/packed-refs"); err != nil {
		return c.repositoryGone(rel, false, err)
	}
	if err := c.copyTree(filepath.Join(src, "logs"), rel+"/logs", skipLocks); err != nil {
		return c.repositoryGone(rel, false, err)
	}
	// git takes a directory for a repository only with these, which hold
	// no file in an empty one.
	for _, sub := range []string{"refs", "objects"} {
		if err := os.MkdirAll(c.path(rel+"/"+sub), 0o755); err != nil {
			return c.repositoryGone(rel, false, err)
		}
	}
	var checkErr error
	for range maxCheckRounds {
		if err := c.copyObjects(src, rel); err != nil {
			return c.repositoryGone(rel, false, err)
		}
		if _, err := os.Stat(filepath.Join(src, "HEAD")); errors.Is(err, fs.ErrNotExist) {
			return c.repositoryGone(rel, true, nil)
		}
		if checkErr = checkConnectivity(ctx, c.path(rel)); checkErr == nil {
			return false, nil
		}
	}
	return false, fmt.Errorf("copy of %s: %w", src, checkErr)
}

// repositoryGone drops the partial copy rel when the repository is gone
// (or the copy failed) and passes gone and err on.
func (c *copier) repositoryGone(rel string, gone bool, err error) (bool, error) {
	if gone || err != nil {
		if dropErr := c.dropTree(rel); err == nil {
			err = dropErr
		}
	}
	return gone, err
}

// skipLocks leaves out git's lock files (a reference being written).
func skipLocks(name string, dir bool) bool { return !dir && strings.HasSuffix(name, ".lock") }

// copyObjects copies the objects of the repository src to rel: the loose
// objects and the packs with an index, each file once; it lists them again
// while files disappear under the copy.
func (c *copier) copyObjects(src, rel string) error {
	for range maxObjectRounds {
		vanished, err := c.copyObjectFiles(filepath.Join(src, "objects"), rel+"/objects")
		if err != nil || !vanished {
			return err
		}
	}
	return fmt.Errorf("the objects of %s kept changing under the copy (git gc); try again", src)
}

// copyObjectFiles copies the object files of the objects directory src
// not copied yet to rel and reports whether some disappeared first. Loose
// objects are listed before the packs: one that git gc packs and removes
// meanwhile is in a pack the listing then finds.
func (c *copier) copyObjectFiles(src, rel string) (vanished bool, err error) {
	dirs, err := readDir(src)
	if err != nil {
		return false, err
	}
	for _, d := range dirs {
		if !d.IsDir() || len(d.Name()) != 2 || !isHex(d.Name()) {
			continue // pack/, info/, quarantines (tmp_objdir-incoming-*), ...
		}
		files, err := readDir(filepath.Join(src, d.Name()))
		if err != nil {
			return false, err
		}
		for _, f := range files {
			if (len(f.Name()) != 38 && len(f.Name()) != 62) || !isHex(f.Name()) {
				continue // tmp_obj_* being written
			}
			name := rel + "/" + d.Name() + "/" + f.Name()
			if _, done := c.files[name]; done {
				continue
			}
			gone, err := c.copyFile(filepath.Join(src, d.Name(), f.Name()), name)
			if err != nil {
				return false, err
			}
			vanished = vanished || gone
		}
	}
	packs, err := readDir(filepath.Join(src, "pack"))
	if err != nil {
		return false, err
	}
	for _, p := range packs {
		base, ok := strings.CutSuffix(p.Name(), ".idx")
		if !ok || !strings.HasPrefix(base, "pack-") {
			continue
		}
		gone, err := c.copyPack(filepath.Join(src, "pack", base), rel+"/pack/"+base)
		if err != nil {
			return false, err
		}
		vanished = vanished || gone
	}
	return vanished, nil
}

// copyPack copies the pack base.pack, its index base.idx and, for a
// cruft pack (git gc's unreachable objects), its base.mtimes, all or
// none: gone reports that one of them disappeared. Other files of a pack
// (.rev, .bitmap) are derived, and git does without them.
func (c *copier) copyPack(src, rel string) (gone bool, err error) {
	if _, done := c.files[rel+".idx"]; done {
		return false, nil
	}
	_, statErr := os.Stat(src + ".mtimes")
	exts := []string{".pack", ".idx", ".mtimes"}
	if statErr != nil {
		exts = exts[:2]
	}
	for _, ext := range exts {
		if gone, err = c.copyFile(src+ext, rel+ext); err != nil || gone {
			return gone, errors.Join(err, c.drop(rel+".pack"), c.drop(rel+".idx"), c.drop(rel+".mtimes"))
		}
	}
	return false, nil
}

// readDir lists a directory; a missing one has nothing.
func readDir(dir string) ([]os.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return entries, err
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// checkConnectivity runs `git fsck --connectivity-only` in the bare
// repository dir: every object its references, reflogs and their
// history need is there.
func checkConnectivity(ctx context.Context, dir string) error {
	return runGit(ctx, dir, "fsck", "--connectivity-only", "--no-dangling", "--no-progress")
}

// runGit runs git in the bare repository dir, without the user's or the
// system's configuration.
func runGit(ctx context.Context, dir string, args ...string) error {
	if err := gitcmd.In(dir).Run(ctx, args...); err != nil {
		return fmt.Errorf("in %s: %w", dir, err)
	}
	return nil
}
