package settings

import (
	"context"

	"forgeapi/internal/store"
)

// RunPolicy returns what the runs of the repository take from its Actions
// settings (actions.Policies): the GITHUB_TOKEN's default permissions,
// "read" or "write" (the repository's, but "read" when its organization
// chose read: an organization's restriction binds its repositories, as on
// the platform), and its artifact and log retention in days (no more
// than its organization or enterprise allows).
func (s *Service) RunPolicy(ctx context.Context, repoID int64) (defaultPermissions string, retentionDays int, err error) {
	var orgID int64
	err = s.DB.QueryRowContext(ctx, `SELECT CASE WHEN a.type = 'Organization' THEN a.id ELSE 0 END FROM repositories r
		JOIN accounts a ON a.id = r.owner_id WHERE r.id = $1`, repoID).Scan(&orgID)
	if err != nil {
		return "", 0, store.Normalize(err)
	}
	place := RepoPlace(repoID, orgID)
	pol, err := s.Policy(ctx, place)
	if err != nil {
		return "", 0, err
	}
	defaultPermissions = pol.DefaultWorkflowPermissions
	if orgID != 0 {
		org, err := s.Policy(ctx, OrgPlace(orgID))
		if err != nil {
			return "", 0, err
		}
		if org.DefaultWorkflowPermissions == "read" {
			defaultPermissions = "read"
		}
	}
	max, err := s.MaxRetentionDays(ctx, place)
	return defaultPermissions, min(pol.RetentionDays, max), err
}

// AccessLevel returns who outside the repository may use its workflows
// and actions (actions.AccessPolicies): its Actions access level, "none"
// unless it was set (PUT .../actions/permissions/access). It reads
// through q, the caller's transaction when it has one (a run's workflow
// is resolved in the transaction that creates the run).
func (s *Service) AccessLevel(ctx context.Context, q store.Q, repoID int64) (string, error) {
	var orgID int64
	err := q.QueryRowContext(ctx, `SELECT CASE WHEN a.type = 'Organization' THEN a.id ELSE 0 END FROM repositories r
		JOIN accounts a ON a.id = r.owner_id WHERE r.id = $1`, repoID).Scan(&orgID)
	if err != nil {
		return "", store.Normalize(err)
	}
	pol, err := policy(ctx, q, RepoPlace(repoID, orgID))
	if err != nil {
		return "", err
	}
	return pol.AccessLevel, nil
}
