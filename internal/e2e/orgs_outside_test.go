package e2e_test

import (
	"net/http"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestOutsideCollaborators follows outside collaborators through
// go-github: a user who accepts an invitation to one of the
// organization's repositories is listed; a member converted to an outside
// collaborator leaves the organization and keeps, as a collaborator, the
// permission a team gave; removing an outside collaborator takes every
// repository of the organization away. Members, the last owner and
// non-members are refused as the platform refuses them.
func TestOutsideCollaborators(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, dev, ann, hubot := env.User("octo"), env.User("dev"), env.User("ann"), env.User("hubot")
	env.Org("acme", octo, dev, ann)
	owner := env.Client(env.Token(octo, "admin:org", "repo"))
	hubotGH := env.Client(env.Token(hubot, "repo"))
	devGH := env.Client(env.Token(dev, "repo", "read:org"))
	_, _, err := owner.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("app"), Private: github.Ptr(true)})
	apptest.Must(t, "create repo", err)
	_, _, err = owner.Organizations.Edit(ctx, "acme", &github.Organization{DefaultRepoPermission: github.Ptr("none")})
	apptest.Must(t, "base permission none", err)
	core, _, err := owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "Core", Privacy: github.Ptr("closed")})
	apptest.Must(t, "create team", err)
	_, _, err = owner.Teams.AddTeamMembershipBySlug(ctx, "acme", core.GetSlug(), "dev", nil)
	apptest.Must(t, "add dev to the team", err)
	_, err = owner.Teams.AddTeamRepoBySlug(ctx, "acme", core.GetSlug(), "acme", "app", &github.TeamAddTeamRepoOptions{Permission: "push"})
	apptest.Must(t, "give the team push", err)

	logins := func(t *testing.T) []string {
		t.Helper()
		list, _, err := owner.Organizations.ListOutsideCollaborators(ctx, "acme", nil)
		apptest.Must(t, "list outside collaborators", err)
		var out []string
		for _, u := range list {
			out = append(out, u.GetLogin())
		}
		return out
	}
	permission := func(t *testing.T, login string) string {
		t.Helper()
		p, _, err := owner.Repositories.GetPermissionLevel(ctx, "acme", "app", login)
		apptest.Must(t, "permission of "+login, err)
		return p.GetPermission()
	}

	apptest.Step(t, "an accepted invitation makes an outside collaborator", func(t *testing.T) {
		_, _, err := owner.Repositories.AddCollaborator(ctx, "acme", "app", "hubot", &github.RepositoryAddCollaboratorOptions{Permission: "pull"})
		apptest.Must(t, "invite hubot", err)
		if got := logins(t); len(got) != 0 {
			t.Fatalf("outside collaborators before accepting: %v", got)
		}
		invs, _, err := hubotGH.Users.ListInvitations(ctx, nil)
		apptest.Must(t, "hubot's invitations", err)
		if len(invs) != 1 {
			t.Fatalf("%d invitations", len(invs))
		}
		_, err = hubotGH.Users.AcceptInvitation(ctx, invs[0].GetID())
		apptest.Must(t, "accept", err)
		if got := logins(t); len(got) != 1 || got[0] != "hubot" {
			t.Fatalf("outside collaborators %v, want hubot", got)
		}
		list, _, err := owner.Organizations.ListOutsideCollaborators(ctx, "acme", &github.ListOutsideCollaboratorsOptions{Filter: "2fa_disabled"})
		apptest.Must(t, "without two-factor", err)
		if len(list) != 1 {
			t.Fatalf("2fa_disabled: %d users", len(list))
		}
	})

	apptest.Step(t, "a member converted keeps the team's permission as a collaborator", func(t *testing.T) {
		if got := permission(t, "dev"); got != "write" {
			t.Fatalf("dev's permission %s before, want write", got)
		}
		resp, err := owner.Organizations.ConvertMemberToOutsideCollaborator(ctx, "acme", "dev")
		apptest.Must(t, "convert dev", err)
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("status %d, want 204", resp.StatusCode)
		}
		member, _, err := owner.Organizations.IsMember(ctx, "acme", "dev")
		apptest.Must(t, "is dev a member", err)
		if member {
			t.Fatal("dev is still a member")
		}
		if got := permission(t, "dev"); got != "write" {
			t.Fatalf("dev's permission %s after, want write", got)
		}
		if _, _, err := devGH.Repositories.Get(ctx, "acme", "app"); err != nil {
			t.Fatalf("dev reads the repository: %v", err)
		}
		if got := logins(t); len(got) != 2 || got[0] != "dev" || got[1] != "hubot" {
			t.Fatalf("outside collaborators %v, want dev and hubot", got)
		}
	})

	apptest.Step(t, "refusals", func(t *testing.T) {
		resp, err := owner.Organizations.ConvertMemberToOutsideCollaborator(ctx, "acme", "hubot")
		if apptest.ResponseStatus(resp) != http.StatusForbidden {
			t.Fatalf("converting a non-member: %v", err)
		}
		resp, err = owner.Organizations.ConvertMemberToOutsideCollaborator(ctx, "acme", "octo")
		if apptest.ResponseStatus(resp) != http.StatusForbidden {
			t.Fatalf("converting the last owner: %v", err)
		}
		resp, err = owner.Organizations.RemoveOutsideCollaborator(ctx, "acme", "ann")
		if apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("removing a member as an outside collaborator: %v", err)
		}
		annGH := env.Client(env.Token(ann, "admin:org"))
		resp, err = annGH.Organizations.ConvertMemberToOutsideCollaborator(ctx, "acme", "octo")
		if apptest.ResponseStatus(resp) != http.StatusForbidden {
			t.Fatalf("a member who is not an owner converts: %v", err)
		}
	})

	apptest.Step(t, "async conversion answers 202", func(t *testing.T) {
		resp, b := env.DoJSON("PUT", "/orgs/acme/outside_collaborators/ann", env.Token(octo, "admin:org"), `{"async":true}`)
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("async: %d %s", resp.StatusCode, b)
		}
		member, _, err := owner.Organizations.IsMember(ctx, "acme", "ann")
		apptest.Must(t, "is ann a member", err)
		if member {
			t.Fatal("ann is still a member")
		}
	})

	apptest.Step(t, "removing an outside collaborator", func(t *testing.T) {
		_, err := owner.Organizations.RemoveOutsideCollaborator(ctx, "acme", "dev")
		apptest.Must(t, "remove dev", err)
		if _, resp, err := devGH.Repositories.Get(ctx, "acme", "app"); apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("dev still reads the repository: %v", err)
		}
		if got := logins(t); len(got) != 1 || got[0] != "hubot" {
			t.Fatalf("outside collaborators %v, want hubot", got)
		}
	})
}
