package siteadmin

import (
	"context"
	"net/http"

	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// statGroup is one group of GET /enterprise/stats: its fields, each
// counted by one scalar subquery of the group's one query. Counts of what
// forgeapi does not have (wikis, Pages sites, disabled organizations)
// are the constant 0 they truly are.
type statGroup struct {
	name   string
	fields []string
	query  string
}

// statGroups are the routes' groups: "all" first (every other group),
// then each group.
var statGroups = []statGroup{
	{name: "all"},
	{"repos", []string{"total_repos", "root_repos", "fork_repos", "org_repos", "total_pushes", "total_wikis"}, `SELECT
		(SELECT COUNT(*) FROM repositories),
		(SELECT COUNT(*) FROM repositories WHERE fork_of_id IS NULL),
		(SELECT COUNT(*) FROM repositories WHERE fork_of_id IS NOT NULL),
		(SELECT COUNT(*) FROM repositories r JOIN accounts o ON o.id = r.owner_id WHERE o.type = 'Organization'),
		(SELECT COUNT(*) FROM push_log),
		0`},
	{"hooks", []string{"total_hooks", "active_hooks", "inactive_hooks"}, `SELECT
		(SELECT COUNT(*) FROM hooks WHERE deleted_at IS NULL),
		(SELECT COUNT(*) FROM hooks WHERE deleted_at IS NULL AND active),
		(SELECT COUNT(*) FROM hooks WHERE deleted_at IS NULL AND NOT active)`},
	{"pages", []string{"total_pages"}, `SELECT 0`},
	{"orgs", []string{"total_orgs", "disabled_orgs", "total_teams", "total_team_members"}, `SELECT
		(SELECT COUNT(*) FROM accounts WHERE type = 'Organization'),
		0,
		(SELECT COUNT(*) FROM teams),
		(SELECT COUNT(*) FROM team_members)`},
	{"users", []string{"total_users", "admin_users", "suspended_users"}, `SELECT
		(SELECT COUNT(*) FROM accounts WHERE type = 'User'),
		(SELECT COUNT(*) FROM accounts WHERE type = 'User' AND site_admin),
		(SELECT COUNT(*) FROM accounts WHERE type = 'User' AND suspended_at IS NOT NULL)`},
	{"pulls", []string{"total_pulls", "merged_pulls", "mergeable_pulls", "unmergeable_pulls"}, `SELECT
		(SELECT COUNT(*) FROM pull_requests),
		(SELECT COUNT(*) FROM pull_requests WHERE merged_at IS NOT NULL),
		(SELECT COUNT(*) FROM pull_requests WHERE merged_at IS NULL AND mergeable = TRUE),
		(SELECT COUNT(*) FROM pull_requests WHERE merged_at IS NULL AND mergeable = FALSE)`},
	{"issues", []string{"total_issues", "open_issues", "closed_issues"}, `SELECT
		(SELECT COUNT(*) FROM issues WHERE NOT is_pull_request),
		(SELECT COUNT(*) FROM issues WHERE NOT is_pull_request AND state = 'open'),
		(SELECT COUNT(*) FROM issues WHERE NOT is_pull_request AND state = 'closed')`},
	{"milestones", []string{"total_milestones", "open_milestones", "closed_milestones"}, `SELECT
		(SELECT COUNT(*) FROM milestones),
		(SELECT COUNT(*) FROM milestones WHERE state = 'open'),
		(SELECT COUNT(*) FROM milestones WHERE state = 'closed')`},
	{"gists", []string{"total_gists", "private_gists", "public_gists"}, `SELECT
		(SELECT COUNT(*) FROM gists),
		(SELECT COUNT(*) FROM gists WHERE NOT public),
		(SELECT COUNT(*) FROM gists WHERE public)`},
	{"comments", []string{"total_commit_comments", "total_gist_comments", "total_issue_comments", "total_pull_request_comments"}, `SELECT
		(SELECT COUNT(*) FROM commit_comments),
		(SELECT COUNT(*) FROM gist_comments),
		(SELECT COUNT(*) FROM issue_comments c JOIN issues i ON i.id = c.issue_id WHERE NOT i.is_pull_request),
		(SELECT COUNT(*) FROM issue_comments c JOIN issues i ON i.id = c.issue_id WHERE i.is_pull_request)
			+ (SELECT COUNT(*) FROM pull_request_review_comments)`},
}

// Stats counts one group from the real tables, in one query.
func (s *Service) Stats(ctx context.Context, g statGroup) (map[string]int64, error) {
	vals := make([]int64, len(g.fields))
	dest := make([]any, len(vals))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := s.DB.QueryRowContext(ctx, g.query).Scan(dest...); err != nil {
		return nil, store.Normalize(err)
	}
	out := make(map[string]int64, len(vals))
	for i, f := range g.fields {
		out[f] = vals[i]
	}
	return out, nil
}

// stats serves GET /enterprise/stats/{group}; "all" has every group.
func (h *Handler) stats(g statGroup) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		groups := []statGroup{g}
		if g.name == "all" {
			groups = statGroups[1:]
		}
		out := make(map[string]map[string]int64, len(groups))
		for _, sg := range groups {
			counts, err := h.Service.Stats(r.Context(), sg)
			if err != nil {
				return err
			}
			out[sg.name] = counts
		}
		if g.name != "all" {
			httpapi.WriteJSON(w, http.StatusOK, out[g.name])
			return nil
		}
		httpapi.WriteJSON(w, http.StatusOK, out)
		return nil
	}
}
