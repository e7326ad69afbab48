package settings

import (
	"context"
	"encoding/json"
	"errors"

	"forgeapi/internal/actions"
	"forgeapi/internal/store"
)

// The settings kept as one JSON document per place and name
// (actions_place_settings); a place without one has the platform's
// default.
const (
	settingForkPRPrivate = "fork-pr-workflows-private-repos"
	settingApproval      = "fork-pr-contributor-approval"
	settingOIDCSub       = "oidc-sub"
	settingSelfHosted    = "self-hosted-runners"
)

// ForkPRPrivate is a place's fork-pr-workflows-private-repos: whether
// pull requests from forks into its private repositories run workflows,
// with a write GITHUB_TOKEN, with secrets and variables, and only once
// approved. All false by default.
type ForkPRPrivate struct {
	Run             bool `json:"run_workflows_from_fork_pull_requests"`
	WriteTokens     bool `json:"send_write_tokens_to_workflows"`
	Secrets         bool `json:"send_secrets_and_variables"`
	RequireApproval bool `json:"require_approval_for_fork_pr_workflows"`
}

// looser reports whether p allows something parent does not.
func (p ForkPRPrivate) looser(parent ForkPRPrivate) bool {
	return (p.Run && !parent.Run) || (p.WriteTokens && !parent.WriteTokens) || (p.Secrets && !parent.Secrets) ||
		(!p.RequireApproval && parent.RequireApproval)
}

// The approval policies of fork pull requests' runs, strictest last.
const (
	ApprovalNewToPlatform = "first_time_contributors_new_to_github"
	ApprovalFirstTime     = "first_time_contributors"
	ApprovalAllExternal   = "all_external_contributors"
)

// approvalRank orders the approval policies from loosest to strictest.
var approvalRank = map[string]int{ApprovalNewToPlatform: 0, ApprovalFirstTime: 1, ApprovalAllExternal: 2}

// OIDCSub is a place's OIDC subject customization: an organization's
// claim keys (UseDefault false), a repository's use_default or keys.
type OIDCSub struct {
	UseDefault bool     `json:"use_default"`
	Keys       []string `json:"include_claim_keys"`
}

// DefaultSubKeys are the claim keys of the default subject template.
var DefaultSubKeys = []string{"repo", "context"}

// placeSetting reads the place's setting name into v; false (v left as
// it is) when the place set none.
func placeSetting(ctx context.Context, q store.Q, p Place, name string, v any) (bool, error) {
	var raw string
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT value FROM actions_place_settings WHERE scope = $1 AND scope_id = $2
		AND name = $3`, p.Scope, p.ID, name).Scan(&raw))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal([]byte(raw), v)
}

// setPlaceSetting stores v as the place's setting name.
func (s *Service) setPlaceSetting(ctx context.Context, p Place, name string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	repo, org, ent := policyKeys(p)
	_, err = s.DB.ExecContext(ctx, `INSERT INTO actions_place_settings (scope, scope_id, repository_id, organization_id,
		enterprise_id, name, value, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (scope, scope_id, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		p.Scope, p.ID, repo, org, ent, name, string(raw), now())
	return store.Normalize(err)
}

// parentsOf are the places above p whose policies bind it: a repository's
// organization and the organization's enterprise, an organization's
// enterprise; nearest first. It reads through q, the caller's
// transaction when it has one.
func parentsOf(ctx context.Context, q store.Q, p Place) ([]Place, error) {
	var out []Place
	orgID := p.OrgID
	if p.Scope == ScopeOrg {
		orgID = p.ID
	} else if p.Scope == ScopeRepo && orgID != 0 {
		out = append(out, OrgPlace(orgID))
	}
	if orgID == 0 || p.Scope == ScopeEnterprise {
		return out, nil
	}
	ent, err := enterpriseOf(ctx, q, orgID)
	if err != nil || ent == 0 {
		return out, err
	}
	return append(out, EnterprisePlace(ent)), nil
}

// ForkPRPrivate returns the place's own fork-pr-workflows-private-repos,
// bounded by its parents' (a place never allows more than its
// organization or enterprise allows, and their default allows nothing:
// an organization enables fork pull requests' workflows before its
// repositories can).
func (s *Service) ForkPRPrivate(ctx context.Context, p Place) (ForkPRPrivate, error) {
	return forkPRPrivate(ctx, s.DB, p)
}

// forkPRPrivate is ForkPRPrivate reading through q, the caller's
// transaction when it has one.
func forkPRPrivate(ctx context.Context, q store.Q, p Place) (ForkPRPrivate, error) {
	var own ForkPRPrivate
	if _, err := placeSetting(ctx, q, p, settingForkPRPrivate, &own); err != nil {
		return own, err
	}
	parents, err := parentsOf(ctx, q, p)
	if err != nil {
		return own, err
	}
	for _, pp := range parents {
		var up ForkPRPrivate
		if _, err := placeSetting(ctx, q, pp, settingForkPRPrivate, &up); err != nil {
			return own, err
		}
		own.Run, own.WriteTokens, own.Secrets = own.Run && up.Run, own.WriteTokens && up.WriteTokens, own.Secrets && up.Secrets
		own.RequireApproval = own.RequireApproval || up.RequireApproval
	}
	return own, nil
}

// forkPRBound is the most the place's nearest parent allows its places
// (everything when it has none: a user's repository, an organization
// outside an enterprise).
func (s *Service) forkPRBound(ctx context.Context, p Place) (ForkPRPrivate, error) {
	parents, err := parentsOf(ctx, s.DB, p)
	if err != nil || len(parents) == 0 {
		return ForkPRPrivate{Run: true, WriteTokens: true, Secrets: true}, err
	}
	return s.ForkPRPrivate(ctx, parents[0])
}

// ApprovalPolicy returns the place's approval_policy: its own, or its
// nearest parent's, first_time_contributors by default; never looser
// than a parent's.
func (s *Service) ApprovalPolicy(ctx context.Context, p Place) (string, error) {
	return approvalPolicy(ctx, s.DB, p)
}

// approvalPolicy is ApprovalPolicy reading through q, the caller's
// transaction when it has one.
func approvalPolicy(ctx context.Context, q store.Q, p Place) (string, error) {
	var v struct {
		Policy string `json:"approval_policy"`
	}
	v.Policy = ApprovalFirstTime
	if _, err := placeSetting(ctx, q, p, settingApproval, &v); err != nil {
		return "", err
	}
	parents, err := parentsOf(ctx, q, p)
	if err != nil {
		return "", err
	}
	for _, pp := range parents {
		var up struct {
			Policy string `json:"approval_policy"`
		}
		set, err := placeSetting(ctx, q, pp, settingApproval, &up)
		if err != nil {
			return "", err
		}
		if set && approvalRank[up.Policy] > approvalRank[v.Policy] {
			v.Policy = up.Policy
		}
	}
	return v.Policy, nil
}

// OIDCSub returns the place's own subject customization: an
// organization's keys (DefaultSubKeys when it set none), a repository's
// use_default (true when it set none) and keys.
func (s *Service) OIDCSub(ctx context.Context, p Place) (OIDCSub, error) {
	v := OIDCSub{UseDefault: p.Scope == ScopeRepo, Keys: DefaultSubKeys}
	_, err := placeSetting(ctx, s.DB, p, settingOIDCSub, &v)
	return v, err
}

// SelfHosted returns the organization's enabled_repositories of its
// self-hosted runners: all (the default), selected or none.
func (s *Service) SelfHosted(ctx context.Context, orgID int64) (string, error) {
	v := struct {
		Enabled string `json:"enabled_repositories"`
	}{"all"}
	_, err := placeSetting(ctx, s.DB, OrgPlace(orgID), settingSelfHosted, &v)
	return v.Enabled, err
}

// repoPlaceByID is the repository's place, with its organization, and
// whether it is private; it reads through q, the caller's transaction
// when it has one.
func repoPlaceByID(ctx context.Context, q store.Q, repoID int64) (Place, bool, error) {
	var orgID int64
	var private bool
	err := q.QueryRowContext(ctx, `SELECT CASE WHEN a.type = 'Organization' THEN a.id ELSE 0 END, r.private FROM repositories r
		JOIN accounts a ON a.id = r.owner_id WHERE r.id = $1`, repoID).Scan(&orgID, &private)
	return RepoPlace(repoID, orgID), private, store.Normalize(err)
}

// SelfHostedAllowed reports whether the repository's jobs may run on
// registered (self-hosted) runners (actions.RunSettings): always for a
// user's repository; for an organization's, as its self-hosted-runners
// setting says (all, the selected repositories, none).
func (s *Service) SelfHostedAllowed(ctx context.Context, repoID int64) (bool, error) {
	p, _, err := repoPlaceByID(ctx, s.DB, repoID)
	if err != nil || p.OrgID == 0 {
		return err == nil, err
	}
	mode, err := s.SelfHosted(ctx, p.OrgID)
	if err != nil {
		return false, err
	}
	switch mode {
	case "all":
		return true, nil
	case "selected":
		var n int
		err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM actions_self_hosted_repositories WHERE organization_id = $1
			AND repository_id = $2`, p.OrgID, repoID).Scan(&n)
		return n > 0, store.Normalize(err)
	}
	return false, nil
}

// ForkRunPolicy says how a pull request from a fork runs in the
// repository (actions.RunSettings). It reads through q, the caller's
// transaction when it has one (a pull request's event runs in its
// transaction).
func (s *Service) ForkRunPolicy(ctx context.Context, q store.Q, repoID int64) (actions.ForkRunPolicy, error) {
	p, private, err := repoPlaceByID(ctx, q, repoID)
	if err != nil {
		return actions.ForkRunPolicy{}, err
	}
	out := actions.ForkRunPolicy{Private: private}
	if out.ApprovalPolicy, err = approvalPolicy(ctx, q, p); err != nil {
		return out, err
	}
	if !private {
		out.Run = true // public repositories: read-only token, no secrets, approval by the policy
		return out, nil
	}
	f, err := forkPRPrivate(ctx, q, p)
	out.Run, out.WriteToken, out.Secrets, out.RequireApproval = f.Run, f.WriteTokens, f.Secrets, f.RequireApproval
	return out, err
}

// SubjectClaimKeys are the claim keys of the repository's OIDC subject
// (actions.RunSettings): the repository's own unless it uses the
// default, else its organization's, else DefaultSubKeys.
func (s *Service) SubjectClaimKeys(ctx context.Context, repoID int64) ([]string, error) {
	p, _, err := repoPlaceByID(ctx, s.DB, repoID)
	if err != nil {
		return nil, err
	}
	own, err := s.OIDCSub(ctx, p)
	if err != nil || !own.UseDefault {
		return own.Keys, err
	}
	if p.OrgID == 0 {
		return DefaultSubKeys, nil
	}
	org, err := s.OIDCSub(ctx, OrgPlace(p.OrgID))
	return org.Keys, err
}
