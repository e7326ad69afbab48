// Package gitread reads bare git repositories in-process with go-git: it
// resolves revisions, finds merge bases, reads files and directories at a
// commit, lists the paths changed between two commits and the commits in a
// range. It never writes to a repository and never runs the git binary.
//
// Every failure that a caller may want to map to a client answer is a typed
// error (ErrRepositoryNotFound, ErrRevisionNotFound, ErrPathNotFound,
// ErrNotAFile, ErrNotADirectory, ErrNoMergeBase), wrapped with context so
// that callers test it with errors.Is. Malformed input and empty
// repositories give errors, never panics.
package gitread

import (
	"errors"
	"fmt"
	"os"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Errors returned (wrapped) by this package. Test them with errors.Is.
var (
	// ErrRepositoryNotFound means the directory is missing or is not a git repository.
	ErrRepositoryNotFound = errors.New("repository not found")
	// ErrRevisionNotFound means a revision is malformed, names nothing, or does not name a commit.
	ErrRevisionNotFound = errors.New("revision not found")
	// ErrPathNotFound means a path does not exist in the tree of a commit.
	ErrPathNotFound = errors.New("path not found")
	// ErrNotAFile means a path names a directory, symlink target or submodule where a file was expected.
	ErrNotAFile = errors.New("not a file")
	// ErrNotADirectory means a path names a file where a directory was expected.
	ErrNotADirectory = errors.New("not a directory")
	// ErrNoMergeBase means two commits share no history.
	ErrNoMergeBase = errors.New("no merge base")
)

// Repository is an open bare (or non-bare) repository. A Repository is not
// safe for concurrent use: open one per goroutine (opening is cheap). Close
// releases the pack file descriptors it keeps open.
type Repository struct {
	dir     string
	storage *filesystem.Storage
	repo    *git.Repository
	// sizes remembers blob sizes (objects never change): go-git looks
	// each one up as a loose object first, a file system call per blob.
	sizes map[plumbing.Hash]int64
}

// Open opens the repository whose git directory is dir (for a bare
// repository, the repository directory itself). It fails with
// ErrRepositoryNotFound when dir does not exist or holds no repository.
func Open(dir string) (*Repository, error) {
	info, err := os.Stat(dir)
	if err != nil || !info.IsDir() {
		return nil, fmt.Errorf("gitread: open %s: %w", dir, ErrRepositoryNotFound)
	}
	storage := filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRUDefault(),
		filesystem.Options{KeepDescriptors: true})
	repo, err := git.Open(storage, nil)
	if err != nil {
		_ = storage.Close()
		if errors.Is(err, git.ErrRepositoryNotExists) {
			return nil, fmt.Errorf("gitread: open %s: %w", dir, ErrRepositoryNotFound)
		}
		return nil, fmt.Errorf("gitread: open %s: %w", dir, err)
	}
	return &Repository{dir: dir, storage: storage, repo: repo, sizes: map[plumbing.Hash]int64{}}, nil
}

// Close releases the resources held by r. r must not be used afterwards.
func (r *Repository) Close() error {
	return r.storage.Close()
}

// Dir returns the directory r was opened from.
func (r *Repository) Dir() string { return r.dir }
