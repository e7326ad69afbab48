package deployments

import (
	"context"
	"strconv"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// CreateStatus stores the status st of deployment d by actor and emits
// the deployment_status event, whose fields payload fills from the
// stored status and the deployment as it is then. A status naming
// another environment moves the deployment there (creating the
// environment when needed). A success status with autoInactive marks
// inactive every earlier deployment of the environment whose latest
// status is success (those inactive statuses send no event). More than
// MaxStatusesPerDeployment statuses is a 422.
func (s *Service) CreateStatus(ctx context.Context, repo *repos.Repository, d *Deployment, actor *accounts.Account, st Status,
	autoInactive bool, payload func(*Status, *Deployment) map[string]any) (*Status, error) {
	var out *Status
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = s.createStatus(ctx, tx, repo, d, actor, st, autoInactive, payload)
		return err
	})
	return out, err
}

// createStatus is CreateStatus in tx (d is changed even when tx later
// rolls back).
func (s *Service) createStatus(ctx context.Context, tx *store.Tx, repo *repos.Repository, d *Deployment, actor *accounts.Account, st Status,
	autoInactive bool, payload func(*Status, *Deployment) map[string]any) (*Status, error) {
	now := tx.Now()
	st.DeploymentID, st.Creator, st.CreatedAt = d.ID, actor, now
	moved := *d
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM deployment_statuses WHERE deployment_id = $1`, d.ID).Scan(&n); err != nil {
		return nil, err
	}
	if n >= MaxStatusesPerDeployment {
		return nil, apierr.Custom("DeploymentStatus", "deployment_id", "This deployment has reached the maximum number of statuses (%d).", MaxStatusesPerDeployment)
	}
	if err := s.moveTo(ctx, tx, &moved, st.Environment, now); err != nil {
		return nil, err
	}
	if err := insertStatus(ctx, tx, &st, actor); err != nil {
		return nil, err
	}
	if autoInactive && st.State == StateSuccess {
		if err := inactivateEarlier(ctx, tx, &moved, actor, now); err != nil {
			return nil, err
		}
	}
	if err := s.Events.Emit(ctx, tx, &events.Event{HookEvent: "deployment_status", HookPayload: payload(&st, &moved),
		Actor: actor, Repo: repo, Public: !repo.Private, CreatedAt: now}); err != nil {
		return nil, err
	}
	*d = moved
	return &st, nil
}

// moveTo puts the deployment in the environment env (when it names
// another one) and touches its updated_at.
func (s *Service) moveTo(ctx context.Context, tx *store.Tx, d *Deployment, env string, now time.Time) error {
	if env != d.Environment {
		if _, err := ensureEnvironment(ctx, tx, d.RepoID, env); err != nil {
			return err
		}
		d.Environment = env
	}
	d.UpdatedAt = now
	_, err := tx.ExecContext(ctx, `UPDATE deployments SET environment = $1, updated_at = $2 WHERE id = $3`, d.Environment, now, d.ID)
	return err
}

// insertStatus stores st, setting its id.
func insertStatus(ctx context.Context, tx store.Q, st *Status, actor *accounts.Account) error {
	err := tx.QueryRowContext(ctx, `INSERT INTO deployment_statuses (deployment_id, state, description, environment, target_url,
		log_url, environment_url, creator_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
		st.DeploymentID, st.State, st.Description, st.Environment, st.TargetURL, st.LogURL, st.EnvironmentURL, actor.ID,
		st.CreatedAt).Scan(&st.ID)
	return store.Normalize(err)
}

// inactivateEarlier adds an inactive status to each deployment of d's
// environment created before d whose latest status is success.
func inactivateEarlier(ctx context.Context, tx *store.Tx, d *Deployment, actor *accounts.Account, now time.Time) error {
	rows, err := tx.QueryContext(ctx, `SELECT s.deployment_id, s.environment, s.environment_url FROM deployment_statuses s
		JOIN deployments d ON d.id = s.deployment_id
		WHERE d.repository_id = $1 AND lower(d.environment) = lower($2) AND d.id < $3 AND s.state = 'success'
		AND s.id = (SELECT max(id) FROM deployment_statuses WHERE deployment_id = d.id)`, d.RepoID, d.Environment, d.ID)
	if err != nil {
		return err
	}
	var earlier []Status
	for rows.Next() {
		st := Status{State: StateInactive, CreatedAt: now}
		if err := rows.Scan(&st.DeploymentID, &st.Environment, &st.EnvironmentURL); err != nil {
			rows.Close()
			return err
		}
		earlier = append(earlier, st)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range earlier {
		if err := insertStatus(ctx, tx, &earlier[i], actor); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE deployments SET updated_at = $1 WHERE id = $2`, now, earlier[i].DeploymentID); err != nil {
			return err
		}
	}
	return nil
}

// statusColumns are the columns queryStatuses reads.
const statusColumns = `id, deployment_id, state, description, environment, target_url, log_url, environment_url, creator_id, created_at`

// Statuses returns a page of the deployment's statuses, newest first,
// and whether there are more.
func (s *Service) Statuses(ctx context.Context, deploymentID int64, limit, offset int) ([]*Status, bool, error) {
	list, err := s.queryStatuses(ctx, `SELECT `+statusColumns+` FROM deployment_statuses WHERE deployment_id = $1
		ORDER BY id DESC LIMIT $2 OFFSET $3`, deploymentID, limit+1, offset)
	if err != nil {
		return nil, false, err
	}
	more := len(list) > limit
	if more {
		list = list[:limit]
	}
	return list, more, nil
}

// Status returns the deployment's status id (store.ErrNotFound when it
// has none).
func (s *Service) Status(ctx context.Context, deploymentID, id int64) (*Status, error) {
	list, err := s.queryStatuses(ctx, `SELECT `+statusColumns+` FROM deployment_statuses WHERE deployment_id = $1 AND id = $2`, deploymentID, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// LatestStatuses returns the latest status of each of the deployments,
// by deployment id (none for a deployment without statuses).
func (s *Service) LatestStatuses(ctx context.Context, ids []int64) (map[int64]*Status, error) {
	out := map[int64]*Status{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	params := ""
	for i, id := range ids {
		args[i] = id
		if i > 0 {
			params += ", "
		}
		params += "$" + strconv.Itoa(i+1)
	}
	list, err := s.queryStatuses(ctx, store.Dynamic+`SELECT `+statusColumns+` FROM deployment_statuses WHERE id IN
		(SELECT max(id) FROM deployment_statuses WHERE deployment_id IN (`+params+`) GROUP BY deployment_id)`, args...)
	if err != nil {
		return nil, err
	}
	for _, st := range list {
		out[st.DeploymentID] = st
	}
	return out, nil
}

// queryStatuses runs a query of statusColumns and loads each status's
// creator.
func (s *Service) queryStatuses(ctx context.Context, query string, args ...any) ([]*Status, error) {
	rows, err := s.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []*Status{}
	var creators []*int64
	for rows.Next() {
		st := &Status{}
		var creator *int64
		if err := rows.Scan(&st.ID, &st.DeploymentID, &st.State, &st.Description, &st.Environment, &st.TargetURL, &st.LogURL,
			&st.EnvironmentURL, &creator, &st.CreatedAt); err != nil {
			return nil, store.Normalize(err)
		}
		out, creators = append(out, st), append(creators, creator)
	}
	if err := rows.Err(); err != nil {
		return nil, store.Normalize(err)
	}
	rows.Close()
	people := accountCache{}
	for i, id := range creators {
		if out[i].Creator, err = people.get(ctx, s.DB, id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// StatusByID returns the deployment status id of any deployment
// (store.ErrNotFound when there is none).
func (s *Service) StatusByID(ctx context.Context, id int64) (*Status, error) {
	list, err := s.queryStatuses(ctx, `SELECT `+statusColumns+` FROM deployment_statuses WHERE id = $1`, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}
