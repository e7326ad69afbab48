package githttp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Push notes: while a push is served, a file in Config.StateDir names its
// repository and is locked (flock) by the serving process. A process that
// dies (even by SIGKILL) loses its locks, so at the next start
// RemoveStale knows which repositories may hold the quarantine directory
// of a push cut short, without walking every repository.
const (
	notePrefix     = "push-"
	noteTempPrefix = "tmp-"
	// quarantineGlob matches the quarantine directories of git 2.39's
	// receive-pack (tmp-objdir.c: "<objects>/tmp_objdir-incoming-XXXXXX").
	quarantineGlob = "tmp_objdir-incoming-*"
)

// pushNote is the note of one push in progress.
type pushNote struct {
	f    *os.File
	path string
}

// notePush writes and locks the note of a push to repoDir. It returns nil
// when the Server keeps no notes.
func (s *Server) notePush(repoDir string) (*pushNote, error) {
	if s.stateDir == "" {
		return nil, nil
	}
	f, err := os.CreateTemp(s.stateDir, noteTempPrefix+"*")
	if err != nil {
		return nil, err
	}
	// Locked before it gets the name RemoveStale looks at, so that it is
	// never seen unlocked while its push runs.
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
	if err == nil {
		_, err = f.WriteString(repoDir)
	}
	path := filepath.Join(s.stateDir, notePrefix+strings.TrimPrefix(filepath.Base(f.Name()), noteTempPrefix))
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		_ = f.Close()
		return nil, err
	}
	return &pushNote{f: f, path: path}, nil
}

// done removes the note at the end of its push.
func (n *pushNote) done() {
	if n == nil {
		return
	}
	_ = os.Remove(n.path)
	_ = n.f.Close()
}

// RemoveStale removes what pushes cut short by the death of their server
// left behind: their quarantine directories (objects/tmp_objdir-incoming-*,
// holding objects that were never accepted) and their notes. Call it at
// start. It reads only Config.StateDir and the repositories named by
// notes of dead processes, so its cost is that of the pushes in progress
// at the crash, not of the number of repositories.
//
// Several servers may share the repositories (and StateDir): a
// repository with a push in progress in a live process is left for a
// later start, and only quarantine directories older than the call are
// removed. This relies on flock(2) working on StateDir's file system.
// It returns how many quarantine directories it removed.
func (s *Server) RemoveStale() (int, error) {
	if s.stateDir == "" {
		return 0, nil
	}
	start := time.Now()
	entries, err := os.ReadDir(s.stateDir)
	if err != nil {
		return 0, fmt.Errorf("githttp: read push notes: %w", err)
	}
	live := map[string]bool{}
	var dead []*deadNote
	var errs []error
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), notePrefix) {
			continue
		}
		d, repoDir, err := openNote(filepath.Join(s.stateDir, e.Name()))
		switch {
		case err != nil:
			errs = append(errs, err)
		case d == nil:
			live[repoDir] = true
		default:
			dead = append(dead, d)
		}
	}
	removed := 0
	for _, d := range dead {
		if !live[d.repoDir] {
			n, err := removeQuarantines(d.repoDir, start)
			removed += n
			if err == nil {
				err = os.Remove(d.path)
			}
			errs = append(errs, err)
		}
		_ = d.f.Close()
	}
	return removed, errors.Join(errs...)
}

// deadNote is the note of a push whose process is gone, locked by us.
type deadNote struct {
	path, repoDir string
	f             *os.File
}

// openNote reads the note at path; it returns a deadNote when no process
// holds its lock, nil and the repository when one does.
func openNote(path string) (*deadNote, string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", nil // its push just ended
	}
	if err != nil {
		return nil, "", err
	}
	content, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		f.Close()
		return nil, "", err
	}
	repoDir := string(content)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, repoDir, nil
		}
		return nil, "", err
	}
	return &deadNote{path: path, repoDir: repoDir, f: f}, repoDir, nil
}

// removeQuarantines removes the quarantine directories of repoDir last
// changed before t.
func removeQuarantines(repoDir string, t time.Time) (int, error) {
	if !filepath.IsAbs(repoDir) || !isRepository(repoDir) {
		return 0, nil // the repository was deleted meanwhile
	}
	dirs, err := filepath.Glob(filepath.Join(repoDir, "objects", quarantineGlob))
	if err != nil {
		return 0, err
	}
	removed := 0
	var errs []error
	for _, dir := range dirs {
		info, err := os.Lstat(dir)
		if err != nil || !info.IsDir() || !info.ModTime().Before(t) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}
