package repos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/store"
)

// Service creates repositories with their bare git repositories on disk.
type Service struct {
	DB *store.DB
	// Accounts, when set, serves the acting accounts of writes (nil
	// reads them from DB).
	Accounts *accounts.Cache
	// GitRoot is the directory holding one bare repository per id.
	GitRoot string
	// DefaultLabels, when set, gives a new repository the platform's
	// default labels in its creating transaction, before AfterCreate
	// (issues.CreateDefaultLabels), unless NewRepository.NoDefaultLabels.
	DefaultLabels func(ctx context.Context, tx store.Q, repoID int64) error
	// AfterCreate, when set, runs in the creating transaction (the
	// activity spine emits its events there).
	AfterCreate func(ctx context.Context, tx *store.Tx, r *Repository, actor *accounts.Account) error
	// AfterUpdate, when set, runs in the updating transaction with the
	// repository before and after the change. When the change keeps the
	// name and owner (Changes.keepsPlace), it runs before the repository's
	// row is written, so that on PostgreSQL the row, which concurrent
	// writers of the repository wait for, is locked only from that last
	// statement to the commit: AfterUpdate must take the new state from
	// after, not from the row. A rename or transfer writes the row first
	// (its name conflict is refused before AfterUpdate's checks run).
	AfterUpdate func(ctx context.Context, tx *store.Tx, before, after *Repository, actor *accounts.Account) error
	// AfterFork, when set, runs in the transaction that creates a fork
	// through Fork, after AfterCreate (the activity spine emits ForkEvent
	// and the fork webhook event there).
	AfterFork func(ctx context.Context, tx *store.Tx, src, fork *Repository, actor *accounts.Account) error
	// Filled, when set, runs in the creating transaction of a repository
	// created with content (auto_init, a fork), once its git directory
	// gitDir is in place: what is read from the files (the license) is
	// read there.
	Filled func(ctx context.Context, tx *store.Tx, r *Repository, gitDir string) error
	// BeforeDelete, when set, runs in the deleting transaction before the
	// repository's row goes (the activity spine emits repository deleted).
	BeforeDelete func(ctx context.Context, tx *store.Tx, r *Repository, actor *accounts.Account) error
	// ServerPush, when set, moves references of a repository as a push by
	// the actor (githost.Handler.ServerPush): Generate pushes a generated
	// repository's branches with it. Nil leaves them unpushed.
	ServerPush func(ctx context.Context, r *Repository, actor *accounts.Account, updates []githttp.RefUpdate) error
	// StatsCache, when set, serves Stats (NewStatsCache); nil reads the
	// counters from DB every time.
	StatsCache *StatsCache
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
//
// With n.Files the bare repository gets their root commit on its default
// branch, "Initial commit" by the actor, before the transaction too: the
// repository is created with it, as the platform's auto_init is, and no
// push is recorded (the platform sends none: a repository's hooks do not
// exist before it).
func (s *Service) Create(ctx context.Context, n NewRepository, actor *accounts.Account) (*Repository, error) {
	if len(n.Files) > 0 {
		if err := n.Validate(); err != nil { // the default branch the commit goes on
			return nil, err
		}
		now := store.Now()
		n.PushedAt = &now // not empty: the contents API reads it
		return s.create(ctx, n, actor, s.initialize(ctx, n, actor), nil)
	}
	return s.create(ctx, n, actor, nil, nil)
}

// Fork creates a fork of src named name for owner: a repository of the
// same network (ForkOfID) whose git data holds src's branches and tags
// (only its default branch when defaultBranchOnly), copied before the
// transaction as Create's empty repository is.
func (s *Service) Fork(ctx context.Context, src *Repository, owner *accounts.Account, name string, defaultBranchOnly bool, actor *accounts.Account) (*Repository, error) {
	n := NewRepository{Owner: owner, Name: name, Private: src.Private, DefaultBranch: src.DefaultBranch,
		Description: src.Description, ForkOfID: src.ID, PushedAt: src.PushedAt}
	refspecs := []string{"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"}
	if defaultBranchOnly {
		refspecs = []string{"+refs/heads/" + src.DefaultBranch + ":refs/heads/" + src.DefaultBranch}
	}
	fill := func(staging string) error {
		args := append([]string{"fetch", "--quiet", "--no-tags", s.GitDir(src.ID)}, refspecs...)
		if err := gitcmd.In(staging).Run(ctx, args...); err != nil {
			return fmt.Errorf("copy %s into its fork: %w", src.FullName(), err)
		}
		return nil
	}
	return s.create(ctx, n, actor, fill, func(tx *store.Tx, fork *Repository) error {
		if s.AfterFork == nil {
			return nil
		}
		return s.AfterFork(ctx, tx, src, fork, actor)
	})
}

// create is Create, with fill run on the new bare repository before the
// transaction (nil for an empty one) and after run in it after
// AfterCreate (nil for nothing).
func (s *Service) create(ctx context.Context, n NewRepository, actor *accounts.Account,
	fill func(staging string) error, after func(tx *store.Tx, r *Repository) error) (*Repository, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	staging, err := s.initStaging(n.DefaultBranch)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(staging) // gone already when renamed
	// An empty repository's size is 0; a fork's is measured here.
	var sizeKB int64
	if fill != nil {
		if err := fill(staging); err != nil {
			return nil, err
		}
		if sizeKB, err = gitread.SizeKB(staging); err != nil {
			return nil, err
		}
	}
	var repo *Repository
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		if repo, err = Insert(ctx, tx, n); err != nil {
			return err
		}
		if sizeKB > 0 {
			if err := setSize(ctx, tx, repo.ID, sizeKB); err != nil {
				return err
			}
		}
		if s.DefaultLabels != nil && !n.NoDefaultLabels {
			if err := s.DefaultLabels(ctx, tx, repo.ID); err != nil {
				return err
			}
		}
		if s.AfterCreate != nil {
			if err := s.AfterCreate(ctx, tx, repo, actor); err != nil {
				return err
			}
		}
		if after != nil {
			if err := after(tx, repo); err != nil {
				return err
			}
		}
		if err := os.Rename(staging, s.GitDir(repo.ID)); err != nil {
			return err
		}
		if fill != nil && s.Filled != nil {
			return s.Filled(ctx, tx, repo, s.GitDir(repo.ID))
		}
		return nil
	})
	if err != nil {
		if repo != nil {
			_ = os.RemoveAll(s.GitDir(repo.ID))
		}
		return nil, err
	}
	return repo, nil
}

// Update changes the repository's name, description, visibility, default
// branch or owner (a transfer) in one transaction with AfterUpdate. A new
// default branch must exist unless the repository has no branch yet; the bare
// repository's HEAD follows it once the transaction commits (git never
// runs while the database's write lock is held).
func (s *Service) Update(ctx context.Context, r *Repository, c Changes, actor *accounts.Account) (*Repository, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.DefaultBranch != nil && *c.DefaultBranch != r.DefaultBranch {
		if err := checkBranch(ctx, s.GitDir(r.ID), *c.DefaultBranch); err != nil {
			return nil, err
		}
	}
	var before, after *Repository
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		if before, err = ByID(ctx, tx, r.ID); err != nil {
			return err
		}
		now := tx.Now()
		if c.keepsPlace(before) {
			after = before.with(c, now)
			if err := s.afterUpdate(ctx, tx, before, after, actor); err != nil {
				return err
			}
			// Last: the row stays locked only until the commit.
			return Update(ctx, tx, before, c, now)
		}
		if err := Update(ctx, tx, before, c, now); err != nil {
			return err
		}
		if c.Owner != nil && c.Owner.ID != before.Owner.ID {
			// The old owner's fine-grained tokens no longer select it.
			if err := auth.ForgetRepository(ctx, tx, before.Owner.ID, r.ID); err != nil {
				return err
			}
		}
		if after, err = ByID(ctx, tx, r.ID); err != nil {
			return err
		}
		return s.afterUpdate(ctx, tx, before, after, actor)
	})
	if err != nil {
		return nil, err
	}
	if after.DefaultBranch != before.DefaultBranch {
		return after, setHead(context.WithoutCancel(ctx), s.GitDir(r.ID), after.DefaultBranch)
	}
	return after, nil
}

// afterUpdate runs AfterUpdate, when set.
func (s *Service) afterUpdate(ctx context.Context, tx *store.Tx, before, after *Repository, actor *accounts.Account) error {
	if s.AfterUpdate == nil {
		return nil
	}
	return s.AfterUpdate(ctx, tx, before, after, actor)
}

// checkBranch refuses a branch that does not exist in a repository that
// has branches.
func checkBranch(ctx context.Context, dir, branch string) error {
	git := gitcmd.In(dir)
	heads, err := git.Output(ctx, nil, "for-each-ref", "--count=1", "--format=%(refname)", "refs/heads/")
	if err != nil {
		return fmt.Errorf("in %s: %w", dir, err)
	}
	if len(heads) == 0 {
		return nil
	}
	if _, found, err := gitread.ResolveCommit(ctx, git, "refs/heads/"+branch); err != nil {
		return fmt.Errorf("in %s: %w", dir, err)
	} else if !found {
		return apierr.Custom("Repository", "default_branch", "The branch %s was not found. Push it before making it the default branch.", branch)
	}
	return nil
}

// setHead points the bare repository's HEAD at the branch.
func setHead(ctx context.Context, dir, branch string) error {
	if err := gitcmd.In(dir).Run(ctx, "symbolic-ref", "HEAD", "refs/heads/"+branch); err != nil {
		return fmt.Errorf("in %s: %w", dir, err)
	}
	return nil
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

// StatsOf returns the counters of a repository object, which triggers
// keep in repository_counts (migrations 00044 and 00052) as stars,
// subscriptions, forks and issues change, with the git data's size that
// the writers of git data measure (MeasureSize): a read of the
// repository's row, however popular the repository, and for a fork one
// more of its network root's (networkForks).
func StatsOf(ctx context.Context, q store.Q, id int64) (Stats, error) {
	var st Stats
	var forkOf int64
	err := q.QueryRowContext(ctx, `SELECT COALESCE(r.fork_of_id, 0), COALESCE(c.stars, 0), COALESCE(c.subscribers, 0),
		COALESCE(c.forks, 0), COALESCE(c.open_issues, 0), COALESCE(c.size_kb, 0), COALESCE(l.license_key, '')
		FROM repositories r LEFT JOIN repository_counts c ON c.repository_id = r.id
		LEFT JOIN repository_licenses l ON l.repository_id = r.id WHERE r.id = $1`, id).
		Scan(&forkOf, &st.Stargazers, &st.Subscribers, &st.Forks, &st.OpenIssues, &st.SizeKB, &st.LicenseKey)
	if errors.Is(err, sql.ErrNoRows) {
		return Stats{}, nil // no such repository
	}
	if err != nil || forkOf == 0 {
		st.Network = st.Forks
		return st, err
	}
	st.Network, err = networkForks(ctx, q, forkOf)
	return st, err
}

// networkForks returns the forks count of the root of the network of the
// repository id: the repository reached by following fork_of_id up from
// it (at most maxNetworkDepth steps, as the JSON's source is), 0 when it
// is not reached within them.
func networkForks(ctx context.Context, q store.Q, id int64) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `
		WITH RECURSIVE up(id, parent, depth) AS (
			SELECT id, fork_of_id, 0 FROM repositories WHERE id = $1
			UNION ALL
			SELECT r.id, r.fork_of_id, up.depth + 1 FROM up JOIN repositories r ON r.id = up.parent WHERE up.depth < $2)
		SELECT COALESCE(max(c.forks), 0) FROM up LEFT JOIN repository_counts c ON c.repository_id = up.id
		WHERE up.parent IS NULL`, id, maxNetworkDepth).Scan(&n)
	return n, err
}
