package e2e_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// teamEvent names the team, team_add and membership deliveries with the
// team, repository and member they are about.
func teamEvent(d apptest.Delivery) string {
	switch e := d.Parsed.(type) {
	case *github.TeamEvent:
		what := "team " + e.GetAction() + " " + e.GetTeam().GetSlug()
		if e.Repo != nil {
			what += " " + e.GetRepo().GetFullName()
		}
		return what
	case *github.TeamAddEvent:
		return "team_add " + e.GetTeam().GetSlug() + " " + e.GetRepo().GetFullName()
	case *github.MembershipEvent:
		return "membership " + e.GetAction() + " " + e.GetScope() + " " + e.GetMember().GetLogin() + " " + e.GetTeam().GetSlug()
	}
	return ""
}

// TestTeams drives teams through go-github and git: an owner creates a
// team (becoming its maintainer), adds a member and gives the team push
// on a private repository of an organization whose members otherwise
// have no access; the member clones and pushes over git, sees the
// repository in /user/repos and the team in /user/teams and
// /repos/{owner}/{repo}/teams; with pull the push is refused. A user
// outside the organization is invited through the team and joins it on
// accepting; leaving the organization leaves its teams. Secret teams are
// hidden from other members, nested teams are closed and go with their
// parent. The organization hook receives team, team_add and membership,
// and the audit log has the team.* actions.
func TestTeams(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, dev, hubot := env.User("octo"), env.User("dev"), env.User("hubot")
	env.Org("acme", octo, dev)
	env.Repo(env.Org("other", octo), "elsewhere")
	ownerToken := env.Token(octo, "admin:org", "admin:org_hook", "repo", "read:audit_log")
	owner := env.Client(ownerToken)
	devToken := env.Token(dev, "read:org", "repo")
	devGH := env.Client(devToken)
	hubotGH := env.Client(env.Token(hubot, "read:org", "repo"))

	rc := apptest.NewReceiver(t, "s")
	_, _, err := owner.Organizations.CreateHook(ctx, "acme", &github.Hook{Name: github.Ptr("web"),
		Events: []string{"team", "team_add", "membership"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "org hook", err)
	_, _, err = owner.Organizations.Edit(ctx, "acme", &github.Organization{DefaultRepoPermission: github.Ptr("none")})
	apptest.Must(t, "base permission none", err)
	_, _, err = owner.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("secret"), Private: github.Ptr(true)})
	apptest.Must(t, "create repo", err)
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("acme", "secret", "octo", ownerToken), "HEAD:refs/heads/main")
	devURL := env.GitURL("acme", "secret", "dev", devToken)
	if out, err := apptest.TryGit(t, t.TempDir(), "clone", "-q", devURL, "c"); err == nil {
		t.Fatalf("dev clones before any team gives access: %s", out)
	}
	clone := t.TempDir() // dev's clone, which the steps push from

	var team *github.Team
	apptest.Step(t, "the owner creates a team and becomes its maintainer", func(t *testing.T) {
		var resp *github.Response
		var err error
		team, resp, err = owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "Core Devs",
			Description: github.Ptr("the core"), Privacy: github.Ptr("closed")})
		apptest.Must(t, "create team", err)
		if status(resp) != http.StatusCreated || team.GetSlug() != "core-devs" || team.GetPrivacy() != "closed" ||
			team.GetMembersCount() != 1 || team.GetOrganization().GetLogin() != "acme" || team.GetPermission() != "pull" {
			t.Fatalf("created team %d: %+v", status(resp), team)
		}
		if _, resp, _ := owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "core devs"}); status(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("a second team of the same slug: %d", status(resp))
		}
		if _, resp, _ := owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "x", Privacy: github.Ptr("open")}); status(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("privacy open: %d", status(resp))
		}
		m, _, err := owner.Teams.GetTeamMembershipBySlug(ctx, "acme", "core-devs", "octo")
		apptest.Must(t, "creator's membership", err)
		if m.GetRole() != "maintainer" || m.GetState() != "active" {
			t.Fatalf("creator's membership: %+v", m)
		}
	})

	apptest.Step(t, "a member joins and the team gets push: the member clones and pushes", func(t *testing.T) {
		m, _, err := owner.Teams.AddTeamMembershipBySlug(ctx, "acme", "core-devs", "dev", &github.TeamAddTeamMembershipOptions{Role: "member"})
		apptest.Must(t, "add dev", err)
		if m.GetState() != "active" || m.GetRole() != "member" {
			t.Fatalf("dev's membership: %+v", m)
		}
		if _, resp, _ := devGH.Teams.UpdateTeamBySlug(ctx, "acme", "core-devs", github.UpdateTeamRequest{Description: github.Ptr("mine")}); status(resp) != http.StatusForbidden {
			t.Fatalf("a member who is no maintainer edits the team: %d", status(resp))
		}
		_, err = owner.Teams.AddTeamRepoBySlug(ctx, "acme", "core-devs", "acme", "secret", &github.TeamAddTeamRepoOptions{Permission: "push"})
		apptest.Must(t, "add repo", err)
		apptest.Git(t, clone, "clone", "-q", devURL, "c")
		apptest.Commit(t, clone+"/c", "by dev", map[string]string{"b.txt": "2\n"})
		apptest.Git(t, clone+"/c", "push", "-q", "origin", "HEAD:refs/heads/main")
	})

	apptest.Step(t, "the member sees the repository through the team", func(t *testing.T) {
		mine, _, err := devGH.Repositories.ListByAuthenticatedUser(ctx, nil)
		apptest.Must(t, "dev's repositories", err)
		if !slices.ContainsFunc(mine, func(r *github.Repository) bool {
			return r.GetFullName() == "acme/secret" && r.GetPermissions().GetPush() && !r.GetPermissions().GetAdmin()
		}) {
			t.Fatalf("/user/repos of dev lacks acme/secret with push")
		}
		evs, _, err := devGH.Activity.ListEventsPerformedByUser(ctx, "dev", false, nil)
		apptest.Must(t, "dev's events", err)
		if !slices.ContainsFunc(evs, func(e *github.Event) bool {
			return e.GetType() == "PushEvent" && e.GetRepo().GetName() == "acme/secret"
		}) {
			t.Fatalf("dev's feed lacks the push to acme/secret, which the team lets dev read")
		}
		level, _, err := owner.Repositories.GetPermissionLevel(ctx, "acme", "secret", "dev")
		apptest.Must(t, "dev's permission level", err)
		if level.GetPermission() != "write" {
			t.Fatalf("dev's permission level through the team: %q", level.GetPermission())
		}
		collaborators, _, err := owner.Repositories.ListCollaborators(ctx, "acme", "secret", nil)
		apptest.Must(t, "collaborators", err)
		if !slices.ContainsFunc(collaborators, func(u *github.User) bool { return u.GetLogin() == "dev" && u.GetPermissions().GetPush() }) {
			t.Fatalf("collaborators (affiliation all) lack dev with push")
		}
		repoTeams, _, err := devGH.Repositories.ListTeams(ctx, "acme", "secret", nil)
		apptest.Must(t, "repository teams", err)
		if len(repoTeams) != 1 || repoTeams[0].GetSlug() != "core-devs" {
			t.Fatalf("repository teams: %+v", repoTeams)
		}
		checked, _, err := devGH.Teams.IsTeamRepoBySlug(ctx, "acme", "core-devs", "acme", "secret")
		apptest.Must(t, "check team repo", err)
		if !checked.GetPermissions().GetPush() || checked.GetPermissions().GetAdmin() {
			t.Fatalf("team repo permissions: %v", checked.GetPermissions())
		}
		teamRepos, _, err := devGH.Teams.ListTeamReposBySlug(ctx, "acme", "core-devs", nil)
		apptest.Must(t, "team repos", err)
		if len(teamRepos) != 1 || teamRepos[0].GetRoleName() != "write" {
			t.Fatalf("team repos: %+v", teamRepos)
		}
	})

	apptest.Step(t, "with pull the member's push is refused and fetching still works", func(t *testing.T) {
		_, err := owner.Teams.AddTeamRepoBySlug(ctx, "acme", "core-devs", "acme", "secret", &github.TeamAddTeamRepoOptions{Permission: "pull"})
		apptest.Must(t, "downgrade", err)
		apptest.Commit(t, clone+"/c", "refused", map[string]string{"c.txt": "3\n"})
		if out, err := apptest.TryGit(t, clone+"/c", "push", "-q", "origin", "HEAD:refs/heads/main"); err == nil {
			t.Fatalf("a pull team's member pushes: %s", out)
		}
		apptest.Git(t, clone+"/c", "fetch", "-q", "origin")
		if resp, _ := owner.Teams.AddTeamRepoBySlug(ctx, "acme", "core-devs", "other", "elsewhere", nil); status(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("another organization's repository: %d", status(resp))
		}
	})

	apptest.Step(t, "an outsider invited through the team joins on accepting", func(t *testing.T) {
		m, _, err := owner.Teams.AddTeamMembershipBySlug(ctx, "acme", "core-devs", "hubot", nil)
		apptest.Must(t, "invite hubot", err)
		if m.GetState() != "pending" || m.GetRole() != "member" {
			t.Fatalf("hubot's membership: %+v", m)
		}
		_, _, err = hubotGH.Organizations.EditOrgMembership(ctx, "", "acme", &github.Membership{State: github.Ptr("active")})
		apptest.Must(t, "accept", err)
		m, _, err = owner.Teams.GetTeamMembershipBySlug(ctx, "acme", "core-devs", "hubot")
		apptest.Must(t, "hubot's membership", err)
		if m.GetState() != "active" {
			t.Fatalf("hubot's membership after accepting: %+v", m)
		}
		mineTeams, _, err := hubotGH.Teams.ListUserTeams(ctx, nil)
		apptest.Must(t, "hubot's teams", err)
		if len(mineTeams) != 1 || mineTeams[0].GetSlug() != "core-devs" {
			t.Fatalf("hubot's teams: %+v", mineTeams)
		}
		maintainers, _, err := owner.Teams.ListTeamMembersBySlug(ctx, "acme", "core-devs", &github.TeamListTeamMembersOptions{Role: "maintainer"})
		apptest.Must(t, "maintainers", err)
		if len(maintainers) != 1 || maintainers[0].GetLogin() != "octo" {
			t.Fatalf("maintainers: %+v", maintainers)
		}
	})

	apptest.Step(t, "secret teams are hidden from members, nested teams are closed, a new name makes a new slug", func(t *testing.T) {
		ops, _, err := owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "Ops"})
		apptest.Must(t, "create secret team", err)
		if ops.GetPrivacy() != "secret" {
			t.Fatalf("default privacy: %q", ops.GetPrivacy())
		}
		if _, resp, _ := hubotGH.Teams.GetTeamBySlug(ctx, "acme", "ops"); status(resp) != http.StatusNotFound {
			t.Fatalf("a member reads a secret team: %d", status(resp))
		}
		seen, _, err := hubotGH.Teams.ListTeams(ctx, "acme", nil)
		apptest.Must(t, "member's team list", err)
		if len(seen) != 1 || seen[0].GetSlug() != "core-devs" {
			t.Fatalf("member's team list: %+v", seen)
		}
		child, _, err := owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "Core Web", ParentTeamID: github.Ptr(team.GetID())})
		apptest.Must(t, "create child team", err)
		if child.GetPrivacy() != "closed" || child.GetParent().GetSlug() != "core-devs" {
			t.Fatalf("child team: %+v", child)
		}
		if _, resp, _ := owner.Teams.UpdateTeamBySlug(ctx, "acme", "core-devs", github.UpdateTeamRequest{ParentTeamID: github.Ptr(child.GetID())}); status(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("a team nested under its child: %d", status(resp))
		}
		edited, _, err := owner.Teams.UpdateTeamBySlug(ctx, "acme", "core-devs", github.UpdateTeamRequest{Name: github.Ptr("Core Team")})
		apptest.Must(t, "rename team", err)
		if edited.GetSlug() != "core-team" {
			t.Fatalf("renamed team: %+v", edited)
		}
	})

	apptest.Step(t, "leaving the organization leaves its teams; a team goes with its children", func(t *testing.T) {
		_, err := owner.Organizations.RemoveMember(ctx, "acme", "dev")
		apptest.Must(t, "remove dev from acme", err)
		if _, resp, _ := owner.Teams.GetTeamMembershipBySlug(ctx, "acme", "core-team", "dev"); status(resp) != http.StatusNotFound {
			t.Fatalf("dev's team membership after leaving the organization: %d", status(resp))
		}
		_, err = owner.Teams.RemoveTeamMembershipBySlug(ctx, "acme", "core-team", "hubot")
		apptest.Must(t, "remove hubot", err)
		_, err = owner.Teams.RemoveTeamRepoBySlug(ctx, "acme", "core-team", "acme", "secret")
		apptest.Must(t, "remove repo", err)
		_, err = owner.Teams.DeleteTeamBySlug(ctx, "acme", "core-team")
		apptest.Must(t, "delete team", err)
		if _, resp, _ := owner.Teams.GetTeamBySlug(ctx, "acme", "core-web"); status(resp) != http.StatusNotFound {
			t.Fatalf("child team after its parent's deletion: %d", status(resp))
		}
	})

	apptest.Step(t, "the organization hook receives team, team_add and membership", func(t *testing.T) {
		rc.WaitFor(t, teamEvent, "team created core-devs", "membership added team octo core-devs", "membership added team dev core-devs",
			"team added_to_repository core-devs acme/secret", "team_add core-devs acme/secret",
			"team edited core-devs acme/secret", "membership added team hubot core-devs", "team edited core-team",
			"membership removed team hubot core-team", "team removed_from_repository core-team acme/secret", "team deleted core-team")
	})

	apptest.Step(t, "the audit log has the team actions", func(t *testing.T) {
		log, _, err := owner.Organizations.GetAuditLog(ctx, "acme", &github.GetAuditLogOptions{Phrase: github.Ptr("action:team")})
		apptest.Must(t, "audit log", err)
		var got []string
		for _, e := range log {
			got = append(got, e.GetAction())
		}
		for _, want := range []string{"team.create", "team.add_member", "team.add_repository", "team.update_repository_permission",
			"team.remove_member", "team.remove_repository", "team.destroy"} {
			if !slices.Contains(got, want) {
				t.Errorf("audit log lacks %s: %v", want, got)
			}
		}
	})
}
