package settings

import (
	"context"
	"encoding/json"
	"errors"

	"forgeapi/internal/store"
)

// DefaultRetentionDays is the artifact and log retention of a place that
// set none, and the most any organization may set (the self-managed
// edition's default maximum).
const DefaultRetentionDays = 90

// Policy is the Actions permissions of a repository or an organization.
type Policy struct {
	Enabled             bool   // repositories: whether workflows run
	EnabledRepositories string // organizations: all | none | selected
	AllowedActions      string // all | local_only | selected
	SHAPinningRequired  bool
	GitHubOwnedAllowed  bool // selected actions
	VerifiedAllowed     bool
	PatternsAllowed     []string
	// DefaultWorkflowPermissions is the GITHUB_TOKEN's default: read or
	// write.
	DefaultWorkflowPermissions string
	CanApproveReviews          bool
	// AccessLevel is who outside a private repository may use its actions
	// and reusable workflows: none | user | organization | enterprise.
	AccessLevel   string
	RetentionDays int
}

// DefaultPolicy is the platform's default policy of a place that set
// none.
func DefaultPolicy() Policy {
	return Policy{Enabled: true, EnabledRepositories: "all", AllowedActions: "all", GitHubOwnedAllowed: true,
		PatternsAllowed: []string{}, DefaultWorkflowPermissions: "read", AccessLevel: "none", RetentionDays: DefaultRetentionDays}
}

// Policy returns the place's (ScopeRepo or ScopeOrg) Actions policy, the
// default when it set none.
func (s *Service) Policy(ctx context.Context, p Place) (Policy, error) {
	return policy(ctx, s.DB, p)
}

func policy(ctx context.Context, q store.Q, p Place) (Policy, error) {
	pol := DefaultPolicy()
	var patterns string
	err := q.QueryRowContext(ctx, `SELECT enabled, enabled_repositories, allowed_actions, sha_pinning_required, github_owned_allowed,
		verified_allowed, patterns_allowed, default_workflow_permissions, can_approve_reviews, access_level, retention_days
		FROM actions_policies WHERE scope = $1 AND scope_id = $2`, p.Scope, p.ID).Scan(&pol.Enabled, &pol.EnabledRepositories,
		&pol.AllowedActions, &pol.SHAPinningRequired, &pol.GitHubOwnedAllowed, &pol.VerifiedAllowed, &patterns,
		&pol.DefaultWorkflowPermissions, &pol.CanApproveReviews, &pol.AccessLevel, &pol.RetentionDays)
	if err := store.Normalize(err); errors.Is(err, store.ErrNotFound) {
		return pol, nil
	} else if err != nil {
		return pol, err
	}
	if err := json.Unmarshal([]byte(patterns), &pol.PatternsAllowed); err != nil {
		return pol, err
	}
	return pol, nil
}

// UpdatePolicy changes the place's policy with change, in one
// transaction, and stores it.
func (s *Service) UpdatePolicy(ctx context.Context, p Place, change func(*Policy)) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		pol, err := policy(ctx, tx, p)
		if err != nil {
			return err
		}
		change(&pol)
		if pol.PatternsAllowed == nil {
			pol.PatternsAllowed = []string{}
		}
		patterns, err := json.Marshal(pol.PatternsAllowed)
		if err != nil {
			return err
		}
		repo, org, _ := p.foreignKeys()
		_, err = tx.ExecContext(ctx, `INSERT INTO actions_policies (scope, scope_id, repository_id, organization_id, enabled,
			enabled_repositories, allowed_actions, sha_pinning_required, github_owned_allowed, verified_allowed, patterns_allowed,
			default_workflow_permissions, can_approve_reviews, access_level, retention_days, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
			ON CONFLICT (scope, scope_id) DO UPDATE SET enabled = excluded.enabled, enabled_repositories = excluded.enabled_repositories,
			allowed_actions = excluded.allowed_actions, sha_pinning_required = excluded.sha_pinning_required,
			github_owned_allowed = excluded.github_owned_allowed, verified_allowed = excluded.verified_allowed,
			patterns_allowed = excluded.patterns_allowed, default_workflow_permissions = excluded.default_workflow_permissions,
			can_approve_reviews = excluded.can_approve_reviews, access_level = excluded.access_level,
			retention_days = excluded.retention_days, updated_at = excluded.updated_at`,
			p.Scope, p.ID, repo, org, pol.Enabled, pol.EnabledRepositories, pol.AllowedActions, pol.SHAPinningRequired,
			pol.GitHubOwnedAllowed, pol.VerifiedAllowed, string(patterns), pol.DefaultWorkflowPermissions, pol.CanApproveReviews,
			pol.AccessLevel, pol.RetentionDays, now())
		return store.Normalize(err)
	})
}

// MaxRetentionDays is the longest retention the place may set: a
// repository of an organization no more than the organization's.
func (s *Service) MaxRetentionDays(ctx context.Context, p Place) (int, error) {
	if p.Scope != ScopeRepo || p.OrgID == 0 {
		return DefaultRetentionDays, nil
	}
	org, err := s.Policy(ctx, OrgPlace(p.OrgID))
	return org.RetentionDays, err
}

// ActionsEnabled reports whether workflows of the repository run: its own
// policy enables them and, for an organization's repository, the
// organization enables them for all repositories or selected it.
func (s *Service) ActionsEnabled(ctx context.Context, repoID, orgID int64) (bool, error) {
	pol, err := s.Policy(ctx, RepoPlace(repoID, orgID))
	if err != nil || !pol.Enabled || orgID == 0 {
		return pol.Enabled, err
	}
	org, err := s.Policy(ctx, OrgPlace(orgID))
	if err != nil {
		return false, err
	}
	switch org.EnabledRepositories {
	case "all":
		return true, nil
	case "selected":
		var n int
		err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM actions_enabled_repositories WHERE organization_id = $1
			AND repository_id = $2`, orgID, repoID).Scan(&n)
		return n > 0, store.Normalize(err)
	}
	return false, nil
}

// EnabledRepositories returns a page of the repository ids the
// organization selected for Actions, and how many there are.
func (s *Service) EnabledRepositories(ctx context.Context, orgID int64, limit, offset int) ([]int64, int, error) {
	var total int
	if err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM actions_enabled_repositories WHERE organization_id = $1`,
		orgID).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT repository_id FROM actions_enabled_repositories WHERE organization_id = $1
		ORDER BY repository_id LIMIT $2 OFFSET $3`, orgID, limit, offset)
	if err != nil {
		return nil, 0, store.Normalize(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, 0, err
		}
		ids = append(ids, id)
	}
	return ids, total, store.Normalize(rows.Err())
}

// SetEnabledRepositories replaces the organization's selected
// repositories (the caller checked they are its own).
func (s *Service) SetEnabledRepositories(ctx context.Context, orgID int64, ids []int64) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM actions_enabled_repositories WHERE organization_id = $1`, orgID); err != nil {
			return store.Normalize(err)
		}
		for _, id := range ids {
			if err := enableRepository(ctx, tx, orgID, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// EnableRepository selects one more repository of the organization.
func (s *Service) EnableRepository(ctx context.Context, orgID, repoID int64) error {
	return enableRepository(ctx, s.DB, orgID, repoID)
}

func enableRepository(ctx context.Context, q store.Q, orgID, repoID int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO actions_enabled_repositories (organization_id, repository_id) VALUES ($1, $2)
		ON CONFLICT DO NOTHING`, orgID, repoID)
	return store.Normalize(err)
}

// DisableRepository unselects a repository of the organization.
func (s *Service) DisableRepository(ctx context.Context, orgID, repoID int64) error {
	_, err := s.DB.ExecContext(ctx, `DELETE FROM actions_enabled_repositories WHERE organization_id = $1 AND repository_id = $2`,
		orgID, repoID)
	return store.Normalize(err)
}
