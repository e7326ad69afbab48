package deployments

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Service stores deployments, their statuses and environments, and emits
// their events.
type Service struct {
	DB     *store.DB
	Events *events.Bus
}

// Create stores the deployment d of repo by actor, creating its
// environment when the repository has none of that name, and emits the
// deployment event, whose fields payload fills from the stored
// deployment. d.SHA is resolved by the caller.
func (s *Service) Create(ctx context.Context, repo *repos.Repository, actor *accounts.Account, d Deployment, payload func(*Deployment) map[string]any) (*Deployment, error) {
	var out *Deployment
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = s.create(ctx, tx, repo, actor, d, payload)
		return err
	})
	return out, err
}

// create is Create in tx.
func (s *Service) create(ctx context.Context, tx *store.Tx, repo *repos.Repository, actor *accounts.Account, d Deployment, payload func(*Deployment) map[string]any) (*Deployment, error) {
	now := tx.Now()
	d.RepoID, d.Creator, d.CreatedAt, d.UpdatedAt = repo.ID, actor, now, now
	if _, err := ensureEnvironment(ctx, tx, repo.ID, d.Environment); err != nil {
		return nil, err
	}
	err := tx.QueryRowContext(ctx, `INSERT INTO deployments (repository_id, sha, ref, task, environment, original_environment,
		description, payload, transient, production, creator_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id`,
		repo.ID, d.SHA, d.Ref, d.Task, d.Environment, d.OriginalEnvironment, d.Description, string(d.Payload),
		d.Transient, d.Production, actor.ID, now, now).Scan(&d.ID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	err = s.Events.Emit(ctx, tx, &events.Event{HookEvent: "deployment", HookPayload: payload(&d),
		Actor: actor, Repo: repo, Public: !repo.Private, CreatedAt: now})
	return &d, err
}

// deploymentColumns are the columns scanDeployments reads.
const deploymentColumns = `id, repository_id, sha, ref, task, environment, original_environment, description, payload,
	transient, production, creator_id, created_at, updated_at`

// Get returns the repository's deployment id (store.ErrNotFound when it
// has none).
func (s *Service) Get(ctx context.Context, repoID, id int64) (*Deployment, error) {
	list, err := s.queryDeployments(ctx, s.DB, `SELECT `+deploymentColumns+` FROM deployments WHERE repository_id = $1 AND id = $2`, repoID, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// List returns a page of the repository's deployments that match f,
// newest first, and whether there are more.
func (s *Service) List(ctx context.Context, repoID int64, f Filter, limit, offset int) ([]*Deployment, bool, error) {
	where := []string{"repository_id = $1"}
	args := []any{repoID}
	add := func(cond, v string) {
		if v != "" {
			args = append(args, v)
			where = append(where, strings.ReplaceAll(cond, "?", "$"+itoa(len(args))))
		}
	}
	add("sha = ?", f.SHA)
	add("ref = ?", f.Ref)
	add("task = ?", f.Task)
	add("lower(environment) = lower(?)", f.Environment)
	args = append(args, limit+1, offset)
	list, err := s.queryDeployments(ctx, s.DB, store.Dynamic+`SELECT `+deploymentColumns+` FROM deployments WHERE `+
		strings.Join(where, " AND ")+` ORDER BY id DESC LIMIT $`+itoa(len(args)-1)+` OFFSET $`+itoa(len(args)), args...)
	if err != nil {
		return nil, false, err
	}
	more := len(list) > limit
	if more {
		list = list[:limit]
	}
	return list, more, nil
}

// ErrActiveDeployment is the platform's refusal to delete an active
// deployment.
var ErrActiveDeployment = apierr.New(http.StatusUnprocessableEntity,
	"We cannot delete an active deployment unless it is the only deployment in a given environment.")

// Delete removes the deployment and its statuses. An active deployment
// (its latest status is success) is refused with ErrActiveDeployment
// unless it is the only deployment of its environment.
func (s *Service) Delete(ctx context.Context, d *Deployment) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		state, err := latestState(ctx, tx, d.ID)
		if err != nil {
			return err
		}
		if state == StateSuccess {
			var others int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM deployments WHERE repository_id = $1
				AND lower(environment) = lower($2) AND id <> $3`, d.RepoID, d.Environment, d.ID).Scan(&others); err != nil {
				return err
			}
			if others > 0 {
				return ErrActiveDeployment
			}
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM deployments WHERE id = $1`, d.ID)
		return err
	})
}

// latestState is the state of the deployment's latest status, "" when it
// has none.
func latestState(ctx context.Context, q store.Q, deploymentID int64) (string, error) {
	var state string
	err := q.QueryRowContext(ctx, `SELECT state FROM deployment_statuses WHERE deployment_id = $1 ORDER BY id DESC LIMIT 1`,
		deploymentID).Scan(&state)
	if err := store.Normalize(err); err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	return state, nil
}

// queryDeployments runs a query of deploymentColumns and loads each
// deployment's creator.
func (s *Service) queryDeployments(ctx context.Context, q store.Q, query string, args ...any) ([]*Deployment, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []*Deployment{}
	var creators []*int64
	for rows.Next() {
		d := &Deployment{}
		var creator *int64
		var payload string
		if err := rows.Scan(&d.ID, &d.RepoID, &d.SHA, &d.Ref, &d.Task, &d.Environment, &d.OriginalEnvironment, &d.Description,
			&payload, &d.Transient, &d.Production, &creator, &d.CreatedAt, &d.UpdatedAt); err != nil {
			return nil, store.Normalize(err)
		}
		d.Payload = []byte(payload)
		out, creators = append(out, d), append(creators, creator)
	}
	if err := rows.Err(); err != nil {
		return nil, store.Normalize(err)
	}
	rows.Close()
	people := accountCache{}
	for i, id := range creators {
		if out[i].Creator, err = people.get(ctx, q, id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// accountCache loads accounts by id once each.
type accountCache map[int64]*accounts.Account

// get returns the account id, nil for a nil id or an account that is
// gone.
func (c accountCache) get(ctx context.Context, q store.Q, id *int64) (*accounts.Account, error) {
	if id == nil {
		return nil, nil
	}
	if a, ok := c[*id]; ok {
		return a, nil
	}
	a, err := accounts.ByID(ctx, q, *id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	c[*id] = a
	return a, nil
}

// ByID returns the deployment id of any repository (store.ErrNotFound
// when there is none); the caller checks that its repository is visible.
func (s *Service) ByID(ctx context.Context, id int64) (*Deployment, error) {
	return s.byID(ctx, s.DB, id)
}

// byID is ByID read through q, the caller's transaction when it has one.
func (s *Service) byID(ctx context.Context, q store.Q, id int64) (*Deployment, error) {
	list, err := s.queryDeployments(ctx, q, `SELECT `+deploymentColumns+` FROM deployments WHERE id = $1`, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}
