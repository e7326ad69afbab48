package e2e_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// TestStatistics: the statistics count what the installation holds, from
// its tables: after users, an organization with a team, repositories (one
// a fork), issues, a milestone, comments, a gist and a hook are made, each
// group has grown by exactly what was made; each group's own address
// answers what /enterprise/stats/all has. Users get 404, as on the
// platform.
func TestSiteStatistics(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	root := env.User("root", apptest.UserOpts{SiteAdmin: true})
	adminToken := env.Token(root, "site_admin")
	admin := env.Client(adminToken)
	all := func(t *testing.T) map[string]map[string]int64 {
		resp, body := env.Do("GET", "/enterprise/stats/all", adminToken, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /enterprise/stats/all: %d %s", resp.StatusCode, body)
		}
		var out map[string]map[string]int64
		apptest.Must(t, "stats", json.Unmarshal(body, &out))
		return out
	}
	before := all(t)

	octo := env.User("octo")
	env.User("hubot")
	acme := env.Org("acme", octo)
	rockets := env.Repo(acme, "rockets")
	env.Repo(octo, "rockets", apptest.RepoOpts{ForkOf: rockets})
	c := env.Client(env.Token(octo, "repo", "admin:org", "gist", "admin:repo_hook"))
	_, _, err := c.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "pilots"})
	apptest.Must(t, "team", err)
	ms, _, err := c.Issues.CreateMilestone(ctx, "acme", "rockets", github.CreateMilestoneRequest{Title: "v1"})
	apptest.Must(t, "milestone", err)
	for i := range 3 {
		is, _, err := c.Issues.Create(ctx, "acme", "rockets", github.CreateIssueRequest{Title: "launch", Milestone: ms.Number})
		apptest.Must(t, "issue", err)
		_, _, err = c.Issues.CreateComment(ctx, "acme", "rockets", is.GetNumber(), github.IssueCommentRequest{Body: "go"})
		apptest.Must(t, "comment", err)
		if i == 0 {
			_, _, err = c.Issues.Update(ctx, "acme", "rockets", is.GetNumber(), github.UpdateIssueRequest{State: github.Ptr("closed")})
			apptest.Must(t, "close", err)
		}
	}
	_, _, err = c.Gists.Create(ctx, github.CreateGistRequest{Public: github.Ptr(true), Files: map[github.GistFilename]*github.CreateGistFile{
		"a.txt": {Content: "a"}}})
	apptest.Must(t, "gist", err)
	rc := apptest.NewReceiver(t, "")
	_, _, err = c.Repositories.CreateHook(ctx, "acme", "rockets", &github.Hook{Config: &github.HookConfig{URL: github.Ptr(rc.URL)},
		Active: github.Ptr(false)})
	apptest.Must(t, "hook", err)

	after := all(t)
	want := map[string]map[string]int64{
		"repos":      {"total_repos": 2, "root_repos": 1, "fork_repos": 1, "org_repos": 1},
		"orgs":       {"total_orgs": 1, "total_teams": 1, "total_team_members": 1},
		"users":      {"total_users": 2},
		"issues":     {"total_issues": 3, "open_issues": 2, "closed_issues": 1},
		"milestones": {"total_milestones": 1, "open_milestones": 1},
		"comments":   {"total_issue_comments": 3},
		"gists":      {"total_gists": 1, "public_gists": 1},
		"hooks":      {"total_hooks": 1, "inactive_hooks": 1},
	}
	for group, counts := range after {
		for field, n := range counts {
			if d := n - before[group][field]; d != want[group][field] {
				t.Errorf("%s.%s grew by %d, want %d", group, field, d, want[group][field])
			}
		}
	}
	if len(after) != 10 {
		t.Fatalf("groups: %v", after)
	}
	for group, counts := range after {
		resp, body := env.Do("GET", "/enterprise/stats/"+group, adminToken, nil)
		var got map[string]int64
		apptest.Must(t, group, json.Unmarshal(body, &got))
		if resp.StatusCode != http.StatusOK || !reflect.DeepEqual(got, counts) {
			t.Fatalf("GET /enterprise/stats/%s: %d %s, want %v", group, resp.StatusCode, body, counts)
		}
	}
	s, _, err := admin.Admin.GetAdminStats(ctx)
	apptest.Must(t, "go-github's GetAdminStats", err)
	if s.GetRepos().GetTotalRepos() != int(after["repos"]["total_repos"]) || s.GetUsers().GetAdminUsers() != 1 {
		t.Fatalf("GetAdminStats: %v", s)
	}
	if _, resp, _ := env.Client(env.Token(octo, "site_admin")).Admin.GetAdminStats(ctx); status(resp) != http.StatusNotFound {
		t.Fatalf("statistics for a user: %d, want 404", status(resp))
	}
}
