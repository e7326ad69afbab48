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
	"sync"

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
	sizes *Sizes
}

// Sizes remembers the sizes of blobs, for the Repositories that share it
// (OpenShared): a blob's size never changes, so what one opening of a
// repository learnt serves the next (after a push, say). It keeps at
// most maxRememberedSizes of them, forgetting all of them when full (a
// repository that lives long keeps learning the sizes of its new
// blobs), and is safe for concurrent use.
type Sizes struct {
	mu sync.Mutex
	m  map[plumbing.Hash]int64
}

// NewSizes returns an empty Sizes.
func NewSizes() *Sizes { return &Sizes{m: map[plumbing.Hash]int64{}} }

func (s *Sizes) get(h plumbing.Hash) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	size, ok := s.m[h]
	return size, ok
}

func (s *Sizes) put(h plumbing.Hash, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= maxRememberedSizes {
		clear(s.m)
	}
	s.m[h] = size
}

// Open opens the repository whose git directory is dir (for a bare
// repository, the repository directory itself). It fails with
// ErrRepositoryNotFound when dir does not exist or holds no repository.
func Open(dir string) (*Repository, error) {
	return OpenShared(dir, NewSizes())
}

// OpenShared is Open with the blob sizes that other openings of the same
// repository remember, and will remember with them (Repository.Sizes).
func OpenShared(dir string, sizes *Sizes) (*Repository, error) {
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
	return &Repository{dir: dir, storage: storage, repo: repo, sizes: sizes}, nil
}

// Sizes returns the blob sizes r remembers, to share with a later
// opening of the repository (OpenShared).
func (r *Repository) Sizes() *Sizes { return r.sizes }

// Close releases the resources held by r. r must not be used afterwards.
func (r *Repository) Close() error {
	return r.storage.Close()
}

// Dir returns the directory r was opened from.
func (r *Repository) Dir() string { return r.dir }
