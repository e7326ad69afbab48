package deployments

import (
	"context"
	"time"

	"forgeapi/internal/actions"

	"forgeapi/internal/auth"
	"forgeapi/internal/githost"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/statuses"
	"forgeapi/internal/store"
)

// Handler serves the deployments and environments endpoints.
type Handler struct {
	Service  *Service
	Repos    *repos.Service
	Statuses *statuses.Service // the commit statuses required_contexts checks
	Git      *githost.Handler  // moves a branch for auto_merge
	// Protected reports whether the repository's branch is protected, for
	// the protected_branches deployment branch policy, reading through q
	// (the caller's transaction when it has one); nil means no branch is
	// protected.
	Protected func(ctx context.Context, q store.Q, repo *repos.Repository, branch string) (bool, error)
	// Teams renders the teams that are required reviewers (a team of the
	// repository's organization, by id, as the platform's team object);
	// nil refuses team reviewers.
	Teams TeamReviewers
	// RuleApps finds the apps of custom deployment protection rules,
	// which the deployment_protection_rules routes need.
	RuleApps RuleApps
	// Actions holds the runs and jobs that environments gate (Gates,
	// the pending deployments routes); Admit and Finished need none.
	Actions *actions.Service
	// Now is the clock of wait timers; nil is time.Now.
	Now func() time.Time
}

// TeamReviewers finds the teams an environment names as required
// reviewers. Both methods read through q: the caller's transaction when
// it has one, else the DB.
type TeamReviewers interface {
	// TeamJSON returns the team id of the organization orgID as the
	// platform's team object, and false when the organization has no such
	// team.
	TeamJSON(ctx context.Context, q store.Q, base string, orgID, id int64) (any, bool, error)
	// TeamMember reports whether the user is a member of the team or of
	// one of its child teams.
	TeamMember(ctx context.Context, q store.Q, teamID, userID int64) (bool, error)
}

// Routes is the deployments and environments route table, with the
// platform's access: deployments and their statuses are read with read
// access (Deployments read; public repositories anonymously) and written
// with push access (classic tokens: repo_deployment or repo; Deployments
// write); environments and their branch policies are read with read
// access (Actions read) and written by administrators (repo; Administration
// write). A run's pending deployments and reviews are read as
// environments are; required reviewers review them, and the apps of
// custom rules answer for their rules.
func (h *Handler) Routes() []httpapi.Route {
	read := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
		Permissions: auth.Perm("deployments:read"), TokenTypes: auth.AllTokenTypes}
	write := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleWrite, Scopes: []string{"repo_deployment"},
		Permissions: auth.Perm("deployments:write"), TokenTypes: auth.AllTokenTypes}
	envRead := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
		Permissions: auth.Perm("actions:read"), TokenTypes: auth.AllTokenTypes}
	envWrite := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin, Scopes: []string{"repo"},
		Permissions: auth.Perm("administration:write"), TokenTypes: auth.AllTokenTypes}
	const dep = "/repos/{owner}/{repo}/deployments"
	const env = "/repos/{owner}/{repo}/environments"
	const policies = env + "/{environment_name}/deployment-branch-policies"
	const rules = env + "/{environment_name}/deployment_protection_rules"
	const runs = "/repos/{owner}/{repo}/actions/runs/{run_id}"
	// A required reviewer reviews with read access (the handler checks
	// that the caller is one); apps cannot (the description's
	// enabledForGitHubApps is false): they answer for their own custom
	// rules through the callback, with an installation token alone.
	review := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Scopes: []string{"repo"},
		Permissions: auth.Perm("deployments:read"), TokenTypes: auth.UAT | auth.FPAT}
	ruleReview := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Scopes: []string{"repo"},
		Permissions: auth.Perm("deployments:read"), TokenTypes: auth.IAT}
	return []httpapi.Route{
		{Method: "GET", Pattern: dep, Handle: h.list, Auth: read},
		{Method: "POST", Pattern: dep, Handle: h.create, Auth: write},
		{Method: "GET", Pattern: dep + "/{deployment_id}", Handle: h.get, Auth: read},
		{Method: "DELETE", Pattern: dep + "/{deployment_id}", Handle: h.delete, Auth: write},
		{Method: "GET", Pattern: dep + "/{deployment_id}/statuses", Handle: h.listStatuses, Auth: read},
		{Method: "POST", Pattern: dep + "/{deployment_id}/statuses", Handle: h.createStatus, Auth: write},
		{Method: "GET", Pattern: dep + "/{deployment_id}/statuses/{status_id}", Handle: h.getStatus, Auth: read},

		{Method: "GET", Pattern: env, Handle: h.listEnvironments, Auth: envRead},
		{Method: "GET", Pattern: env + "/{environment_name}", Handle: h.getEnvironment, Auth: envRead},
		{Method: "PUT", Pattern: env + "/{environment_name}", Handle: h.putEnvironment, Auth: envWrite},
		{Method: "DELETE", Pattern: env + "/{environment_name}", Handle: h.deleteEnvironment, Auth: envWrite},
		{Method: "GET", Pattern: policies, Handle: h.listPolicies, Auth: envRead},
		{Method: "POST", Pattern: policies, Handle: h.createPolicy, Auth: envWrite},
		{Method: "GET", Pattern: policies + "/{branch_policy_id}", Handle: h.getPolicy, Auth: envRead},
		{Method: "PUT", Pattern: policies + "/{branch_policy_id}", Handle: h.updatePolicy, Auth: envWrite},
		{Method: "DELETE", Pattern: policies + "/{branch_policy_id}", Handle: h.deletePolicy, Auth: envWrite},
		{Method: "GET", Pattern: rules, Handle: h.listRules, Auth: envRead},
		{Method: "POST", Pattern: rules, Handle: h.createRule, Auth: envWrite},
		{Method: "GET", Pattern: rules + "/apps", Handle: h.availableRuleApps, Auth: envRead},
		{Method: "GET", Pattern: rules + "/{protection_rule_id}", Handle: h.getRule, Auth: envRead},
		{Method: "DELETE", Pattern: rules + "/{protection_rule_id}", Handle: h.deleteRule, Auth: envWrite},

		{Method: "GET", Pattern: runs + "/pending_deployments", Handle: h.listPending, Auth: envRead},
		{Method: "POST", Pattern: runs + "/pending_deployments", Handle: h.reviewPending, Auth: review},
		{Method: "GET", Pattern: runs + "/approvals", Handle: h.listApprovals, Auth: envRead},
		{Method: "POST", Pattern: runs + "/deployment_protection_rule", Handle: h.reviewRule, Auth: ruleReview},
	}
}
