package deployments

import (
	"context"
	"errors"
	"time"

	"forgeapi/internal/store"
)

// The deployment branch policies of an environment.
const (
	PolicyAll       = ""          // any branch or tag deploys
	PolicyProtected = "protected" // protected branches only
	PolicyCustom    = "custom"    // branches and tags matching the environment's name patterns
)

// Environment is a deployment environment of a repository.
type Environment struct {
	ID                int64
	RepoID            int64
	Name              string
	WaitTimer         int // minutes
	PreventSelfReview bool
	BranchPolicy      string // PolicyAll, PolicyProtected or PolicyCustom
	Reviewers         []Reviewer
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// Reviewer is a required reviewer of an environment: a user or a team.
type Reviewer struct {
	Kind string // User | Team
	ID   int64
}

// EnvironmentChange is what changes in an environment; a nil field is
// left as it is (a new environment's default: no wait timer, no
// reviewers, any branch).
type EnvironmentChange struct {
	WaitTimer         *int
	PreventSelfReview *bool
	Reviewers         *[]Reviewer
	BranchPolicy      *string
}

// ensureEnvironment returns the id of the repository's environment name,
// creating it with the defaults when there is none.
func ensureEnvironment(ctx context.Context, tx store.Q, repoID int64, name string) (int64, error) {
	now := store.Now()
	if _, err := tx.ExecContext(ctx, `INSERT INTO environments (repository_id, name, created_at, updated_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, repoID, name, now, now); err != nil {
		return 0, store.Normalize(err)
	}
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM environments WHERE repository_id = $1 AND lower(name) = lower($2)`, repoID, name).Scan(&id)
	return id, store.Normalize(err)
}

// environmentColumns are the columns queryEnvironments reads.
const environmentColumns = `id, repository_id, name, wait_timer, prevent_self_review, branch_policy, created_at, updated_at`

// Environments returns a page of the repository's environments by name,
// and how many it has.
func (s *Service) Environments(ctx context.Context, repoID int64, limit, offset int) ([]*Environment, int, error) {
	var total int
	if err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM environments WHERE repository_id = $1`, repoID).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	list, err := s.queryEnvironments(ctx, s.DB, `SELECT `+environmentColumns+` FROM environments WHERE repository_id = $1
		ORDER BY lower(name), id LIMIT $2 OFFSET $3`, repoID, limit, offset)
	return list, total, err
}

// Environment returns the repository's environment name, in any case
// (store.ErrNotFound when there is none).
func (s *Service) Environment(ctx context.Context, repoID int64, name string) (*Environment, error) {
	return s.environment(ctx, s.DB, repoID, name)
}

// environment is Environment read through q, the caller's transaction
// when it has one.
func (s *Service) environment(ctx context.Context, q store.Q, repoID int64, name string) (*Environment, error) {
	list, err := s.queryEnvironments(ctx, q, `SELECT `+environmentColumns+` FROM environments
		WHERE repository_id = $1 AND lower(name) = lower($2)`, repoID, name)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// PutEnvironment creates the repository's environment name or changes
// it as c says, and returns it.
func (s *Service) PutEnvironment(ctx context.Context, repoID int64, name string, c EnvironmentChange) (*Environment, error) {
	var env *Environment
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		id, err := ensureEnvironment(ctx, tx, repoID, name)
		if err != nil {
			return err
		}
		if err := applyChange(ctx, tx, id, c); err != nil {
			return err
		}
		env, err = s.environment(ctx, tx, repoID, name)
		return err
	})
	return env, err
}

// applyChange writes the set fields of c to environment id.
func applyChange(ctx context.Context, tx store.Q, id int64, c EnvironmentChange) error {
	set := func(query string, v any) error {
		_, err := tx.ExecContext(ctx, query, v, store.Now(), id)
		return err
	}
	if c.WaitTimer != nil {
		if err := set(`UPDATE environments SET wait_timer = $1, updated_at = $2 WHERE id = $3`, *c.WaitTimer); err != nil {
			return err
		}
	}
	if c.PreventSelfReview != nil {
		if err := set(`UPDATE environments SET prevent_self_review = $1, updated_at = $2 WHERE id = $3`, *c.PreventSelfReview); err != nil {
			return err
		}
	}
	if c.BranchPolicy != nil {
		if err := set(`UPDATE environments SET branch_policy = $1, updated_at = $2 WHERE id = $3`, *c.BranchPolicy); err != nil {
			return err
		}
	}
	if c.Reviewers == nil {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE environments SET updated_at = $1 WHERE id = $2`, store.Now(), id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM environment_reviewers WHERE environment_id = $1`, id); err != nil {
		return err
	}
	for i, r := range *c.Reviewers {
		if _, err := tx.ExecContext(ctx, `INSERT INTO environment_reviewers (environment_id, position, kind, reviewer_id)
			VALUES ($1, $2, $3, $4)`, id, i, r.Kind, r.ID); err != nil {
			return store.Normalize(err)
		}
	}
	return nil
}

// DeleteEnvironment removes the environment, its reviewers and branch
// policies; its deployments stay.
func (s *Service) DeleteEnvironment(ctx context.Context, env *Environment) error {
	_, err := s.DB.ExecContext(ctx, `DELETE FROM environments WHERE id = $1`, env.ID)
	return store.Normalize(err)
}

// queryEnvironments runs a query of environmentColumns and loads each
// environment's reviewers.
func (s *Service) queryEnvironments(ctx context.Context, q store.Q, query string, args ...any) ([]*Environment, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []*Environment{}
	for rows.Next() {
		e := &Environment{}
		if err := rows.Scan(&e.ID, &e.RepoID, &e.Name, &e.WaitTimer, &e.PreventSelfReview, &e.BranchPolicy, &e.CreatedAt, &e.UpdatedAt); err != nil {
			return nil, store.Normalize(err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, store.Normalize(err)
	}
	rows.Close()
	for _, e := range out {
		if e.Reviewers, err = reviewersOf(ctx, q, e.ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// reviewersOf returns the environment's required reviewers in order.
func reviewersOf(ctx context.Context, q store.Q, envID int64) ([]Reviewer, error) {
	rows, err := q.QueryContext(ctx, `SELECT kind, reviewer_id FROM environment_reviewers WHERE environment_id = $1 ORDER BY position`, envID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var out []Reviewer
	for rows.Next() {
		var r Reviewer
		if err := rows.Scan(&r.Kind, &r.ID); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// isNotFound reports whether err is store.ErrNotFound.
func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// EnvironmentByID returns the environment id of any repository
// (store.ErrNotFound when there is none).
func (s *Service) EnvironmentByID(ctx context.Context, id int64) (*Environment, error) {
	return s.environmentByID(ctx, s.DB, id)
}

// environmentByID is EnvironmentByID read through q, the caller's
// transaction when it has one.
func (s *Service) environmentByID(ctx context.Context, q store.Q, id int64) (*Environment, error) {
	list, err := s.queryEnvironments(ctx, q, `SELECT `+environmentColumns+` FROM environments WHERE id = $1`, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}
