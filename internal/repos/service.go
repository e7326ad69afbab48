package repos

import (
	"context"
	"os"
	"path/filepath"
	"strconv"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos/githttp"
	"forgeapi/internal/store"
)

// Service creates repositories with their bare git repositories on disk.
type Service struct {
	DB *store.DB
	// GitRoot is the directory holding one bare repository per id.
	GitRoot string
	// AfterCreate, when set, runs in the creating transaction (the
	// activity spine emits its events there).
	AfterCreate func(ctx context.Context, tx store.Q, r *Repository, actor *accounts.Account) error
}

// GitDir is the directory of the repository's bare git repository. It is
// keyed by id, so renames and case never move it.
func (s *Service) GitDir(id int64) string {
	return filepath.Join(s.GitRoot, strconv.FormatInt(id, 10)+".git")
}

// Create inserts the repository and creates its empty bare git
// repository: a failure of either leaves neither. The bare repository is
// initialised before the transaction, in a temporary directory that the
// transaction only renames, so that the database's write lock is never
// held while git runs.
func (s *Service) Create(ctx context.Context, n NewRepository, actor *accounts.Account) (*Repository, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	staging, err := s.initStaging(n.DefaultBranch)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(staging) // gone already when renamed
	var repo *Repository
	err = s.DB.Tx(ctx, func(tx store.Q) error {
		var err error
		if repo, err = Insert(ctx, tx, n); err != nil {
			return err
		}
		if s.AfterCreate != nil {
			if err := s.AfterCreate(ctx, tx, repo, actor); err != nil {
				return err
			}
		}
		return os.Rename(staging, s.GitDir(repo.ID))
	})
	if err != nil {
		if repo != nil {
			_ = os.RemoveAll(s.GitDir(repo.ID))
		}
		return nil, err
	}
	return repo, nil
}

// initStaging creates an empty bare repository in a new temporary
// directory under GitRoot and returns its path.
func (s *Service) initStaging(branch string) (string, error) {
	if err := os.MkdirAll(s.GitRoot, 0o755); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(s.GitRoot, "new-*.git")
	if err != nil {
		return "", err
	}
	if err := githttp.Init(dir, branch); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// StatsOf returns the counters of a repository object.
func StatsOf(ctx context.Context, q store.Q, id int64) (Stats, error) {
	var st Stats
	err := q.QueryRowContext(ctx, `
		SELECT (SELECT count(*) FROM stars WHERE repository_id = $1),
		       (SELECT count(*) FROM subscriptions WHERE repository_id = $1 AND NOT ignored),
		       (SELECT count(*) FROM repositories WHERE fork_of_id = $1)`, id).
		Scan(&st.Stargazers, &st.Subscribers, &st.Forks)
	return st, err
}
