package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/teams"
)

// TestNestedTeams checks that a child team inherits the repositories of
// every team above it, as on the platform: dev, a member of a grandchild
// team only, clones and pushes over git the private repository its
// grandparent team holds with push, and sees it in /user/repos; the
// child teams list it in their repositories and the repository check
// answers for them. The parent's members list includes dev with inherited
// true (the creator is a direct maintainer), and dev's membership of the
// parent reads active. Un-nesting the middle team takes the access away at
// once, nesting it again gives it back, and deleting the top team (with
// its child teams) removes it.
func TestNestedTeams(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, dev := env.User("octo"), env.User("dev")
	env.Org("acme", octo, dev)
	ownerToken := env.Token(octo, "admin:org", "repo")
	owner := env.Client(ownerToken)
	devToken := env.Token(dev, "read:org", "repo")
	devGH := env.Client(devToken)
	_, _, err := owner.Organizations.Edit(ctx, "acme", &github.Organization{DefaultRepoPermission: github.Ptr("none")})
	apptest.Must(t, "base permission none", err)
	_, _, err = owner.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("secret"), Private: github.Ptr(true)})
	apptest.Must(t, "create repo", err)
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("acme", "secret", "octo", ownerToken), "HEAD:refs/heads/main")
	devURL := env.GitURL("acme", "secret", "dev", devToken)
	canClone := func() bool {
		_, err := apptest.TryGit(t, t.TempDir(), "clone", "-q", devURL, "c")
		return err == nil
	}

	top, _, err := owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "Platform", Privacy: github.Ptr("closed")})
	apptest.Must(t, "create top team", err)
	mid, _, err := owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "Backend", ParentTeamID: github.Ptr(top.GetID())})
	apptest.Must(t, "create child team", err)
	_, _, err = owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "Storage", ParentTeamID: github.Ptr(mid.GetID())})
	apptest.Must(t, "create grandchild team", err)
	_, _, err = owner.Teams.AddTeamMembershipBySlug(ctx, "acme", "storage", "dev", &github.TeamAddTeamMembershipOptions{Role: "member"})
	apptest.Must(t, "add dev to the grandchild team", err)
	if canClone() {
		t.Fatal("dev clones before any team holds the repository")
	}
	_, err = owner.Teams.AddTeamRepoBySlug(ctx, "acme", "platform", "acme", "secret", &github.TeamAddTeamRepoOptions{Permission: "push"})
	apptest.Must(t, "give the top team push", err)

	// Git: the grandchild's member clones and pushes.
	clone := t.TempDir()
	apptest.Git(t, clone, "clone", "-q", devURL, "c")
	apptest.Commit(t, clone+"/c", "from dev", map[string]string{"b.txt": "2\n"})
	apptest.Git(t, clone+"/c", "push", "-q", "origin", "HEAD:refs/heads/main")
	mine, _, err := devGH.Repositories.ListByAuthenticatedUser(ctx, &github.RepositoryListByAuthenticatedUserOptions{Affiliation: "organization_member"})
	apptest.Must(t, "dev's repositories", err)
	found := false
	for _, r := range mine {
		found = found || r.GetFullName() == "acme/secret"
	}
	if !found {
		t.Errorf("/user/repos of the grandchild's member lacks acme/secret")
	}

	// The child teams list the inherited repository and the check finds it.
	for _, slug := range []string{"backend", "storage"} {
		list, _, err := devGH.Teams.ListTeamReposBySlug(ctx, "acme", slug, nil)
		apptest.Must(t, slug+" repositories", err)
		if len(list) != 1 || list[0].GetFullName() != "acme/secret" || !list[0].GetPermissions().GetPush() || list[0].GetPermissions().GetAdmin() {
			t.Errorf("%s repositories = %v, want acme/secret with push", slug, list)
		}
		checked, _, err := devGH.Teams.IsTeamRepoBySlug(ctx, "acme", slug, "acme", "secret")
		apptest.Must(t, slug+" repository check", err)
		if checked.GetFullName() != "acme/secret" {
			t.Errorf("%s check = %v", slug, checked)
		}
	}

	// Members of the top team include the grandchild's, inherited.
	resp, body := env.Do("GET", "/orgs/acme/teams/platform/members", ownerToken, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("top team members: %d %s", resp.StatusCode, body)
	}
	var members []struct {
		Login     string `json:"login"`
		Role      string `json:"role"`
		Inherited bool   `json:"inherited"`
	}
	apptest.Must(t, "members JSON", json.Unmarshal(body, &members))
	if got := fmt.Sprint(members); got != "[{dev member true} {octo maintainer false}]" {
		t.Errorf("top team members = %s", got)
	}
	users, _, err := devGH.Teams.ListTeamMembersBySlug(ctx, "acme", "backend", &github.TeamListTeamMembersOptions{Role: "maintainer"})
	apptest.Must(t, "maintainers of the child team", err)
	if len(users) != 1 || users[0].GetLogin() != "octo" {
		t.Errorf("maintainers of backend = %v, want octo only", users)
	}
	ms, _, err := devGH.Teams.GetTeamMembershipBySlug(ctx, "acme", "platform", "dev")
	apptest.Must(t, "dev's membership of the top team", err)
	if ms.GetState() != "active" || ms.GetRole() != "member" {
		t.Errorf("membership = %v", ms)
	}

	// Un-nesting the middle team takes the access away; nesting it back returns it.
	_, _, err = owner.Teams.UpdateTeamBySlug(ctx, "acme", "backend", github.UpdateTeamRequest{Name: github.Ptr("Backend"), RemoveParentTeam: true})
	apptest.Must(t, "un-nest", err)
	if canClone() {
		t.Error("dev clones after the middle team left the top team")
	}
	if _, resp, err := devGH.Teams.IsTeamRepoBySlug(ctx, "acme", "storage", "acme", "secret"); status(resp) != http.StatusNotFound {
		t.Errorf("storage check after un-nesting: %d %v", status(resp), err)
	}
	_, _, err = owner.Teams.UpdateTeamBySlug(ctx, "acme", "backend", github.UpdateTeamRequest{Name: github.Ptr("Backend"), ParentTeamID: github.Ptr(top.GetID())})
	apptest.Must(t, "nest again", err)
	if !canClone() {
		t.Error("dev cannot clone after the middle team was nested again")
	}

	// Deleting the top team deletes its child teams and the access.
	_, err = owner.Teams.DeleteTeamBySlug(ctx, "acme", "platform")
	apptest.Must(t, "delete top team", err)
	if canClone() {
		t.Error("dev clones after the top team was deleted")
	}
}

// manyTeams makes n teams in the organization through the teams service:
// a chain of depth nested teams under a top team that holds push on the
// repository, and the rest top-level teams each holding pull on it. It
// returns the deepest team of the chain.
func manyTeams(tb testing.TB, env *apptest.Env, org, actor *accounts.Account, repo *repos.Repository, n, depth int) *teams.Team {
	ctx := env.Context()
	var parent *teams.Team
	for i := range n {
		f := teams.New{Fields: teams.Fields{Name: github.Ptr(fmt.Sprintf("team %d", i)), Privacy: github.Ptr(teams.PrivacyClosed)}}
		if i < depth && parent != nil {
			f.ParentID = &parent.ID
		}
		tm, err := env.App.Teams.Create(ctx, org, actor, f)
		if err != nil {
			tb.Fatalf("create team %d: %v", i, err)
		}
		switch {
		case i == 0:
			err = env.App.Teams.SetRepo(ctx, tm, repo, actor, "push")
		case i >= depth:
			err = env.App.Teams.SetRepo(ctx, tm, repo, actor, "pull")
		}
		if err != nil {
			tb.Fatalf("team %d repository: %v", i, err)
		}
		if i < depth {
			parent = tm
		}
	}
	return parent
}

// TestNestedTeamsAtScale checks the access lookup with 1,000 teams: a
// member of the 50th team of a chain gets the top team's push (the
// highest grant wins over 950 teams holding pull), and a member of no
// team gets nothing. BenchmarkGrantedPermission1000Teams measures the
// lookup.
func TestNestedTeamsAtScale(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, dev, other := env.User("octo"), env.User("dev"), env.User("other")
	org := env.Org("acme", octo, dev, other)
	repo := env.Repo(org, "secret", apptest.RepoOpts{Private: true})
	deepest := manyTeams(t, env, org, octo, repo, 1000, 50)
	ctx := env.Context()
	if _, err := env.App.Teams.SetMembership(ctx, deepest, dev, octo, teams.RoleMember); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		user *accounts.Account
		want string
	}{{dev, "push"}, {other, ""}} {
		got, err := repos.GrantedPermission(ctx, env.Q(), repo.ID, c.user.ID)
		apptest.Must(t, "granted permission", err)
		if got != c.want {
			t.Errorf("%s: granted %q, want %q", c.user.Login, got, c.want)
		}
	}
	if !apptest.Postgres() {
		wantUserFirstPlan(t, env, repo.ID, dev.ID)
	}
}

// wantUserFirstPlan checks SQLite's plan of the access lookup: the teams
// part starts from the user's team memberships and probes an index at
// each step, never walking the teams that hold the repository (950 here).
func wantUserFirstPlan(t *testing.T, env *apptest.Env, repoID, userID int64) {
	var steps []string
	for _, detail := range env.QueryPlan(t, `SELECT g.permission FROM repo_grants g
		WHERE g.repository_id = $1 AND g.user_id = $2 ORDER BY g.rank DESC LIMIT 1`, repoID, userID) {
		if strings.Contains(detail, " tm ") || strings.Contains(detail, " ta ") || strings.Contains(detail, " tr ") {
			steps = append(steps, detail)
		}
	}
	if len(steps) != 3 || !strings.HasPrefix(steps[0], "SEARCH tm USING INDEX team_members_user") ||
		!strings.HasPrefix(steps[1], "SEARCH ta ") || !strings.HasPrefix(steps[2], "SEARCH tr ") {
		t.Errorf("plan of the teams part of repo_grants = %q, want a search from the user's memberships", steps)
	}
}

// BenchmarkGrantedPermission1000Teams measures the access lookup (the
// repo_grants view) for a member of the 50th team of a chain among 1,000
// teams.
func BenchmarkGrantedPermission1000Teams(b *testing.B) {
	env := apptest.Start(b)
	octo, dev := env.User("octo"), env.User("dev")
	org := env.Org("acme", octo, dev)
	repo := env.Repo(org, "secret", apptest.RepoOpts{Private: true})
	deepest := manyTeams(b, env, org, octo, repo, 1000, 50)
	ctx := env.Context()
	if _, err := env.App.Teams.SetMembership(ctx, deepest, dev, octo, teams.RoleMember); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if perm, err := repos.GrantedPermission(ctx, env.Q(), repo.ID, dev.ID); err != nil || perm != "push" {
			b.Fatalf("granted %q, %v", perm, err)
		}
	}
}

// TestTeamsNestedUnderEachOtherAtOnce makes two teams each other's
// parent at once, each change held at its commit until both have checked
// for a cycle (apptest.CommitGate): one is refused (422) and the teams
// form no cycle. Checking without the organization locked first, each
// found none and the two teams nested each other. PostgreSQL only.
func TestTeamsNestedUnderEachOtherAtOnce(t *testing.T) {
	apptest.SkipUnlessPostgres(t, "concurrent transactions that overlap (CommitGate)")
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Org("acme", octo)
	owner := env.Client(env.Token(octo, "admin:org"))
	var ids []int64
	for _, name := range []string{"Left", "Right"} {
		team, _, err := owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: name, Privacy: github.Ptr("closed")})
		apptest.Must(t, "create team "+name, err)
		ids = append(ids, team.GetID())
	}

	nestUnder := func(slug string, parent int64) func() int {
		return func() int {
			_, resp, _ := owner.Teams.UpdateTeamBySlug(ctx, "acme", slug, github.UpdateTeamRequest{ParentTeamID: github.Ptr(parent)})
			return apptest.ResponseStatus(resp)
		}
	}
	got := env.CommitGate(t, "UPDATE", "teams", "NEW.parent_id IS DISTINCT FROM OLD.parent_id").Run(
		nestUnder("left", ids[1]), nestUnder("right", ids[0]))
	if got[0]+got[1] != http.StatusOK+http.StatusUnprocessableEntity {
		t.Errorf("the two changes answered %v, want one 200 and one 422", got)
	}
	var nested int
	apptest.Must(t, "count the nested teams", env.Q().QueryRowContext(ctx,
		`SELECT count(*) FROM teams WHERE id IN ($1, $2) AND parent_id IS NOT NULL`, ids[0], ids[1]).Scan(&nested))
	if nested != 1 {
		t.Fatalf("%d of the two teams nested, want 1 (no cycle)", nested)
	}
}
