package settings

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/store"
)

// DefaultGroupName is the name of every organization's default runner
// group, which new organization runners join.
const DefaultGroupName = "Default"

// RunnerGroup is an organization's group of runners and the repositories
// it serves (all, private ones, or selected ones).
type RunnerGroup struct {
	ID                       int64
	OrgID                    int64
	Name                     string
	Visibility               string // all | selected | private
	Default                  bool
	AllowsPublicRepositories bool
	RestrictedToWorkflows    bool
	SelectedWorkflows        []string
	CreatedAt                time.Time
}

// GroupChange is what a runner group's write sets; nil fields stay (or
// take their defaults on creation).
type GroupChange struct {
	Name                     *string
	Visibility               *string
	AllowsPublicRepositories *bool
	RestrictedToWorkflows    *bool
	SelectedWorkflows        *[]string
	Repositories             *[]int64
	Runners                  *[]int64
}

// ensureDefaultGroup returns the organization's default group's id,
// making it on first use: all repositories, but no public one unless
// allows_public_repositories is set, as the platform's default group.
func ensureDefaultGroup(ctx context.Context, q store.Q, orgID int64) (int64, error) {
	if _, err := q.ExecContext(ctx, `INSERT INTO runner_groups (organization_id, name, visibility, is_default, allows_public_repositories,
		created_at) VALUES ($1, $2, 'all', TRUE, FALSE, $3) ON CONFLICT DO NOTHING`, orgID, DefaultGroupName, now()); err != nil {
		return 0, store.Normalize(err)
	}
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM runner_groups WHERE organization_id = $1 AND is_default`, orgID).Scan(&id)
	return id, store.Normalize(err)
}

// groupForRegistration is the id of the organization's group named name,
// its default group for "", a 422 for a name it has no group of.
func (s *Service) groupForRegistration(ctx context.Context, q store.Q, orgID int64, name string) (int64, error) {
	def, err := ensureDefaultGroup(ctx, q, orgID)
	if err != nil || name == "" {
		return def, err
	}
	var id int64
	err = q.QueryRowContext(ctx, `SELECT id FROM runner_groups WHERE organization_id = $1 AND lower(name) = lower($2)`, orgID, name).Scan(&id)
	if errors.Is(store.Normalize(err), store.ErrNotFound) {
		return 0, apierr.Validation(apierr.FieldError{Resource: "Runner", Field: "runner_group", Code: apierr.CodeInvalid,
			Message: "The organization has no runner group of that name"})
	}
	return id, store.Normalize(err)
}

// groupColumns are the columns scanGroups reads.
const groupColumns = `id, organization_id, name, visibility, is_default, allows_public_repositories, restricted_to_workflows,
	selected_workflows, created_at`

// RunnerGroups returns a page of the organization's runner groups by id
// (its default group first made), and how many it has.
func (s *Service) RunnerGroups(ctx context.Context, orgID int64, limit, offset int) ([]*RunnerGroup, int, error) {
	if _, err := ensureDefaultGroup(ctx, s.DB, orgID); err != nil {
		return nil, 0, err
	}
	var total int
	if err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM runner_groups WHERE organization_id = $1`, orgID).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	list, err := scanGroups(ctx, s.DB, `SELECT `+groupColumns+` FROM runner_groups WHERE organization_id = $1 ORDER BY id
		LIMIT $2 OFFSET $3`, orgID, limit, offset)
	return list, total, err
}

// RunnerGroup returns the organization's group id (store.ErrNotFound
// when none).
func (s *Service) RunnerGroup(ctx context.Context, orgID, id int64) (*RunnerGroup, error) {
	if _, err := ensureDefaultGroup(ctx, s.DB, orgID); err != nil {
		return nil, err
	}
	return groupByID(ctx, s.DB, orgID, id)
}

// groupByID is RunnerGroup on q, without making the default group.
func groupByID(ctx context.Context, q store.Q, orgID, id int64) (*RunnerGroup, error) {
	list, err := scanGroups(ctx, q, `SELECT `+groupColumns+` FROM runner_groups WHERE organization_id = $1 AND id = $2`, orgID, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// errGroupExists refuses a group name the organization has.
var errGroupExists = apierr.Validation(apierr.FieldError{Resource: "RunnerGroup", Field: "name", Code: "already_exists",
	Message: "A runner group with this name already exists"})

// CreateRunnerGroup makes the organization's group c.Name (visibility all
// unless c says), with c's repositories and runners.
func (s *Service) CreateRunnerGroup(ctx context.Context, orgID int64, c GroupChange) (*RunnerGroup, error) {
	var g *RunnerGroup
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		if _, err := ensureDefaultGroup(ctx, tx, orgID); err != nil {
			return err
		}
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO runner_groups (organization_id, name, created_at) VALUES ($1, $2, $3) RETURNING id`,
			orgID, *c.Name, now()).Scan(&id)
		if errors.Is(store.Normalize(err), store.ErrConflict) {
			return errGroupExists
		} else if err != nil {
			return store.Normalize(err)
		}
		if g, err = groupByID(ctx, tx, orgID, id); err != nil {
			return err
		}
		c.Name = nil
		return updateGroup(ctx, tx, g, c)
	})
	if err != nil {
		return nil, err
	}
	return s.RunnerGroup(ctx, orgID, g.ID)
}

// UpdateRunnerGroup changes the group as c says; the default group keeps
// its name and visibility.
func (s *Service) UpdateRunnerGroup(ctx context.Context, g *RunnerGroup, c GroupChange) (*RunnerGroup, error) {
	err := s.DB.Tx(ctx, func(tx *store.Tx) error { return updateGroup(ctx, tx, g, c) })
	if errors.Is(err, store.ErrConflict) {
		return nil, errGroupExists
	}
	if err != nil {
		return nil, err
	}
	return s.RunnerGroup(ctx, g.OrgID, g.ID)
}

// updateGroup writes c to g.
func updateGroup(ctx context.Context, tx store.Q, g *RunnerGroup, c GroupChange) error {
	n := *g
	setIf(&n.Name, c.Name)
	setIf(&n.Visibility, c.Visibility)
	setIf(&n.AllowsPublicRepositories, c.AllowsPublicRepositories)
	setIf(&n.RestrictedToWorkflows, c.RestrictedToWorkflows)
	setIf(&n.SelectedWorkflows, c.SelectedWorkflows)
	if n.SelectedWorkflows == nil {
		n.SelectedWorkflows = []string{}
	}
	wf, err := json.Marshal(n.SelectedWorkflows)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runner_groups SET name = $1, visibility = $2, allows_public_repositories = $3,
		restricted_to_workflows = $4, selected_workflows = $5 WHERE id = $6`, n.Name, n.Visibility, n.AllowsPublicRepositories,
		n.RestrictedToWorkflows, string(wf), g.ID); err != nil {
		return store.Normalize(err)
	}
	if c.Repositories != nil {
		if err := setGroupRepositories(ctx, tx, g.ID, *c.Repositories); err != nil {
			return err
		}
	}
	if c.Runners != nil {
		return setGroupRunners(ctx, tx, g, *c.Runners)
	}
	return nil
}

// errDefaultGroup refuses deleting an organization's default group.
var errDefaultGroup = apierr.New(http.StatusUnprocessableEntity, "The default runner group cannot be deleted")

// DeleteRunnerGroup removes the group; its runners join the default
// group. The default group cannot be deleted (422).
func (s *Service) DeleteRunnerGroup(ctx context.Context, g *RunnerGroup) error {
	if g.Default {
		return errDefaultGroup
	}
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		def, err := ensureDefaultGroup(ctx, tx, g.OrgID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runners SET runner_group_id = $1 WHERE runner_group_id = $2`, def, g.ID); err != nil {
			return store.Normalize(err)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM runner_groups WHERE id = $1`, g.ID)
		return store.Normalize(err)
	})
}

// GroupRepositories returns a page of the repository ids the group
// serves when its visibility is selected, and how many.
func (s *Service) GroupRepositories(ctx context.Context, g *RunnerGroup, limit, offset int) ([]int64, int, error) {
	var total int
	if err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM runner_group_repositories WHERE runner_group_id = $1`, g.ID).
		Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	ids, err := int64s(ctx, s.DB, `SELECT repository_id FROM runner_group_repositories WHERE runner_group_id = $1
		ORDER BY repository_id LIMIT $2 OFFSET $3`, g.ID, limit, offset)
	return ids, total, err
}

// SetGroupRepositories replaces the repositories the group serves.
func (s *Service) SetGroupRepositories(ctx context.Context, g *RunnerGroup, ids []int64) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error { return setGroupRepositories(ctx, tx, g.ID, ids) })
}

// setGroupRepositories is SetGroupRepositories on q.
func setGroupRepositories(ctx context.Context, tx store.Q, groupID int64, ids []int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM runner_group_repositories WHERE runner_group_id = $1`, groupID); err != nil {
		return store.Normalize(err)
	}
	for _, id := range ids {
		if err := addGroupRepository(ctx, tx, groupID, id); err != nil {
			return err
		}
	}
	return nil
}

// AddGroupRepository adds a repository the group serves.
func (s *Service) AddGroupRepository(ctx context.Context, g *RunnerGroup, repoID int64) error {
	return addGroupRepository(ctx, s.DB, g.ID, repoID)
}

// addGroupRepository is AddGroupRepository on q.
func addGroupRepository(ctx context.Context, q store.Q, groupID, repoID int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO runner_group_repositories (runner_group_id, repository_id) VALUES ($1, $2)
		ON CONFLICT DO NOTHING`, groupID, repoID)
	return store.Normalize(err)
}

// RemoveGroupRepository removes a repository the group serves.
func (s *Service) RemoveGroupRepository(ctx context.Context, g *RunnerGroup, repoID int64) error {
	_, err := s.DB.ExecContext(ctx, `DELETE FROM runner_group_repositories WHERE runner_group_id = $1 AND repository_id = $2`,
		g.ID, repoID)
	return store.Normalize(err)
}

// GroupRunners returns a page of the group's runners, and how many.
func (s *Service) GroupRunners(ctx context.Context, g *RunnerGroup, limit, offset int) ([]*Runner, int, error) {
	var total int
	if err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM runners WHERE runner_group_id = $1`, g.ID).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	list, err := scanRunners(ctx, s.DB, OrgPlace(g.OrgID), `SELECT `+runnerColumns+` FROM runners WHERE runner_group_id = $1
		ORDER BY id LIMIT $2 OFFSET $3`, g.ID, limit, offset)
	return list, total, err
}

// SetGroupRunners makes ids the group's runners; runners it had that are
// not in ids join the default group.
func (s *Service) SetGroupRunners(ctx context.Context, g *RunnerGroup, ids []int64) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error { return setGroupRunners(ctx, tx, g, ids) })
}

// setGroupRunners is SetGroupRunners on q.
func setGroupRunners(ctx context.Context, tx store.Q, g *RunnerGroup, ids []int64) error {
	def, err := ensureDefaultGroup(ctx, tx, g.OrgID)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runners SET runner_group_id = $1 WHERE runner_group_id = $2`, def, g.ID); err != nil {
		return store.Normalize(err)
	}
	for _, id := range ids {
		if err := moveRunner(ctx, tx, g, id); err != nil {
			return err
		}
	}
	return nil
}

// AddGroupRunner moves the organization's runner into the group.
func (s *Service) AddGroupRunner(ctx context.Context, g *RunnerGroup, runnerID int64) error {
	return moveRunner(ctx, s.DB, g, runnerID)
}

// RemoveGroupRunner moves the group's runner back to the default group.
func (s *Service) RemoveGroupRunner(ctx context.Context, g *RunnerGroup, runnerID int64) error {
	def, err := ensureDefaultGroup(ctx, s.DB, g.OrgID)
	if err != nil {
		return err
	}
	_, err = s.DB.ExecContext(ctx, `UPDATE runners SET runner_group_id = $1 WHERE runner_group_id = $2 AND id = $3`, def, g.ID, runnerID)
	return store.Normalize(err)
}

// moveRunner puts the organization's runner id in group g
// (store.ErrNotFound when the organization has no such runner).
func moveRunner(ctx context.Context, q store.Q, g *RunnerGroup, id int64) error {
	res, err := q.ExecContext(ctx, `UPDATE runners SET runner_group_id = $1 WHERE scope = 'org' AND scope_id = $2 AND id = $3`,
		g.ID, g.OrgID, id)
	if err != nil {
		return store.Normalize(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// scanGroups runs a query of groupColumns.
func scanGroups(ctx context.Context, q store.Q, query string, args ...any) ([]*RunnerGroup, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []*RunnerGroup{}
	for rows.Next() {
		g := &RunnerGroup{}
		var wf string
		if err := rows.Scan(&g.ID, &g.OrgID, &g.Name, &g.Visibility, &g.Default, &g.AllowsPublicRepositories,
			&g.RestrictedToWorkflows, &wf, &g.CreatedAt); err != nil {
			return nil, store.Normalize(err)
		}
		if err := json.Unmarshal([]byte(wf), &g.SelectedWorkflows); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, store.Normalize(rows.Err())
}

// int64s runs a query of one int64 column.
func int64s(ctx context.Context, q store.Q, query string, args ...any) ([]int64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, store.Normalize(rows.Err())
}
