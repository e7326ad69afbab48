package settings

import (
	"context"
	"encoding/json"
	"errors"

	"forgeapi/internal/store"
)

// DefaultRetentionDays is the artifact and log retention of a place that
// set none, and the most an organization outside an enterprise may set
// (the self-managed edition's default maximum).
const DefaultRetentionDays = 90

// MaxEnterpriseRetentionDays is the most an enterprise may set, as the
// self-managed edition allows.
const MaxEnterpriseRetentionDays = 400

// Policy is the Actions permissions of a repository or an organization.
type Policy struct {
	Enabled             bool   // repositories: whether workflows run
	EnabledRepositories string // organizations' repositories, enterprises' organizations: all | none | selected
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

// Policy returns the place's (ScopeRepo, ScopeOrg or ScopeEnterprise)
// Actions policy, the default when it set none.
func (s *Service) Policy(ctx context.Context, p Place) (Policy, error) {
	return policy(ctx, s.DB, p)
}

// policy is Policy on q.
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
		repo, org, ent := policyKeys(p)
		_, err = tx.ExecContext(ctx, `INSERT INTO actions_policies (scope, scope_id, repository_id, organization_id, enterprise_id,
			enabled, enabled_repositories, allowed_actions, sha_pinning_required, github_owned_allowed, verified_allowed, patterns_allowed,
			default_workflow_permissions, can_approve_reviews, access_level, retention_days, updated_at)
			VALUES ($1, $2, $3, $4, $17, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
			ON CONFLICT (scope, scope_id) DO UPDATE SET enabled = excluded.enabled, enabled_repositories = excluded.enabled_repositories,
			allowed_actions = excluded.allowed_actions, sha_pinning_required = excluded.sha_pinning_required,
			github_owned_allowed = excluded.github_owned_allowed, verified_allowed = excluded.verified_allowed,
			patterns_allowed = excluded.patterns_allowed, default_workflow_permissions = excluded.default_workflow_permissions,
			can_approve_reviews = excluded.can_approve_reviews, access_level = excluded.access_level,
			retention_days = excluded.retention_days, updated_at = excluded.updated_at`,
			p.Scope, p.ID, repo, org, pol.Enabled, pol.EnabledRepositories, pol.AllowedActions, pol.SHAPinningRequired,
			pol.GitHubOwnedAllowed, pol.VerifiedAllowed, string(patterns), pol.DefaultWorkflowPermissions, pol.CanApproveReviews,
			pol.AccessLevel, pol.RetentionDays, now(), ent)
		return store.Normalize(err)
	})
}

// policyKeys are the place's repository, organization and enterprise
// columns of actions_policies.
func policyKeys(p Place) (repo, org, ent *int64) {
	id := p.ID
	switch p.Scope {
	case ScopeRepo:
		return &id, nil, nil
	case ScopeOrg:
		return nil, &id, nil
	}
	return nil, nil, &id
}

// enterpriseOf is the id of the enterprise the organization belongs to,
// 0 when none.
func enterpriseOf(ctx context.Context, q store.Q, orgID int64) (int64, error) {
	var id int64
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT enterprise_id FROM enterprise_orgs WHERE org_id = $1`, orgID).Scan(&id))
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	return id, err
}

// MaxRetentionDays is the longest retention the place may set: an
// enterprise MaxEnterpriseRetentionDays, an organization of an enterprise
// no more than the enterprise's, a repository of an organization no more
// than the organization's (as bounded), others DefaultRetentionDays.
func (s *Service) MaxRetentionDays(ctx context.Context, p Place) (int, error) {
	switch {
	case p.Scope == ScopeEnterprise:
		return MaxEnterpriseRetentionDays, nil
	case p.Scope == ScopeOrg:
		ent, err := enterpriseOf(ctx, s.DB, p.ID)
		if err != nil || ent == 0 {
			return DefaultRetentionDays, err
		}
		pol, err := s.Policy(ctx, EnterprisePlace(ent))
		return pol.RetentionDays, err
	case p.OrgID != 0:
		org, err := s.Policy(ctx, OrgPlace(p.OrgID))
		if err != nil {
			return 0, err
		}
		max, err := s.MaxRetentionDays(ctx, OrgPlace(p.OrgID))
		return min(org.RetentionDays, max), err
	}
	return DefaultRetentionDays, nil
}

// ActionsEnabled reports whether workflows of the repository run: its own
// policy enables them and, for an organization's repository, the
// organization enables them for all repositories or selected it, and the
// organization's enterprise, if any, for all organizations or selected
// the organization.
func (s *Service) ActionsEnabled(ctx context.Context, repoID, orgID int64) (bool, error) {
	pol, err := s.Policy(ctx, RepoPlace(repoID, orgID))
	if err != nil || !pol.Enabled || orgID == 0 {
		return pol.Enabled, err
	}
	on, err := s.enables(ctx, OrgPlace(orgID), `SELECT count(*) FROM actions_enabled_repositories WHERE organization_id = $1
		AND repository_id = $2`, repoID)
	if err != nil || !on {
		return false, err
	}
	ent, err := enterpriseOf(ctx, s.DB, orgID)
	if err != nil || ent == 0 {
		return err == nil, err
	}
	return s.enables(ctx, EnterprisePlace(ent), `SELECT count(*) FROM actions_enabled_organizations WHERE enterprise_id = $1
		AND organization_id = $2`, orgID)
}

// enables reports whether the organization or enterprise p enables
// Actions in its repository or organization id: for all, or selected
// (selectedQuery counts the selection of p.ID and id).
func (s *Service) enables(ctx context.Context, p Place, selectedQuery string, id int64) (bool, error) {
	pol, err := s.Policy(ctx, p)
	if err != nil {
		return false, err
	}
	switch pol.EnabledRepositories {
	case "all":
		return true, nil
	case "selected":
		var n int
		err := s.DB.QueryRowContext(ctx, selectedQuery, p.ID, id).Scan(&n)
		return n > 0, store.Normalize(err)
	}
	return false, nil
}

// selection is a table of the members an owner selected (an
// organization's repositories or an enterprise's organizations selected
// for Actions, an organization's repositories selected for its
// self-hosted runners), and its two columns.
type selection struct{ table, owner, member string }

// selfHostedRepos is the organizations' repositories selected for their
// self-hosted runners.
var selfHostedRepos = selection{"actions_self_hosted_repositories", "organization_id", "repository_id"}

// orgEnabledRepos is the organizations' repositories selected for
// Actions; enterprisesEnabledOrgs the enterprises' organizations.
var (
	orgEnabledRepos        = selection{"actions_enabled_repositories", "organization_id", "repository_id"}
	enterprisesEnabledOrgs = selection{"actions_enabled_organizations", "enterprise_id", "organization_id"}
)

// enabledOf is the selection table of the place's scope.
func enabledOf(p Place) selection {
	if p.Scope == ScopeEnterprise {
		return enterprisesEnabledOrgs
	}
	return orgEnabledRepos
}

// page returns a page of owner's selected ids, in id order, and how many
// there are.
func (t selection) page(ctx context.Context, q store.Q, owner int64, limit, offset int) ([]int64, int, error) {
	var total int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM `+t.table+` WHERE `+t.owner+` = $1`, owner).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	ids, err := int64s(ctx, q, `SELECT `+t.member+` FROM `+t.table+` WHERE `+t.owner+` = $1 ORDER BY `+t.member+`
		LIMIT $2 OFFSET $3`, owner, limit, offset)
	return ids, total, err
}

// replace makes ids owner's whole selection, in one transaction (the
// caller checked the ids).
func (t selection) replace(ctx context.Context, db *store.DB, owner int64, ids []int64) error {
	return db.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t.table+` WHERE `+t.owner+` = $1`, owner); err != nil {
			return store.Normalize(err)
		}
		for _, id := range ids {
			if err := t.add(ctx, tx, owner, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// add adds id to owner's selection (once).
func (t selection) add(ctx context.Context, q store.Q, owner, id int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO `+t.table+` (`+t.owner+`, `+t.member+`) VALUES ($1, $2) ON CONFLICT DO NOTHING`, owner, id)
	return store.Normalize(err)
}

// remove removes id from owner's selection.
func (t selection) remove(ctx context.Context, q store.Q, owner, id int64) error {
	_, err := q.ExecContext(ctx, `DELETE FROM `+t.table+` WHERE `+t.owner+` = $1 AND `+t.member+` = $2`, owner, id)
	return store.Normalize(err)
}

// Enabled returns a page of the ids of the repositories the organization
// p (or the organizations the enterprise p) selected for Actions, and how
// many there are.
func (s *Service) Enabled(ctx context.Context, p Place, limit, offset int) ([]int64, int, error) {
	return enabledOf(p).page(ctx, s.DB, p.ID, limit, offset)
}

// SetEnabled replaces p's selection (the caller checked the ids).
func (s *Service) SetEnabled(ctx context.Context, p Place, ids []int64) error {
	return enabledOf(p).replace(ctx, s.DB, p.ID, ids)
}

// Enable adds id to p's selection.
func (s *Service) Enable(ctx context.Context, p Place, id int64) error {
	return enabledOf(p).add(ctx, s.DB, p.ID, id)
}

// Disable removes id from p's selection.
func (s *Service) Disable(ctx context.Context, p Place, id int64) error {
	return enabledOf(p).remove(ctx, s.DB, p.ID, id)
}
