package e2e_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// memberEvent names a member delivery "action member permission-change by
// sender on repository".
func memberEvent(d apptest.Delivery) string {
	e, ok := d.Parsed.(*github.MemberEvent)
	if !ok {
		return ""
	}
	change := ""
	if p := e.GetChanges().GetPermission(); p != nil {
		change = " " + p.GetFrom() + "->" + p.GetTo()
	}
	return e.GetAction() + " " + e.GetMember().GetLogin() + change + " by " + e.GetSender().GetLogin() + " on " + e.GetRepo().GetFullName()
}

// TestCollaboratorFlow: the owner of a private repository invites a user
// (201 with the invitation; no access yet), the user accepts (push access
// at once: the API and git), the owner lowers the permission to pull (git
// refuses the push) and the collaborator leaves; the repository's hook
// receives member added, edited and removed, which go-github parses, and
// the feed shows MemberEvent.
func TestCollaboratorFlow(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	bob := env.User("bob")
	env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	ownerToken := env.Token(octo, "repo", "admin:repo_hook")
	owner := env.Client(ownerToken)
	bobToken := env.Token(bob, "repo")
	bobClient := env.Client(bobToken)
	rc := apptest.NewReceiver(t, "s")
	_, _, err := owner.Repositories.CreateHook(ctx, "octo", "secret", &github.Hook{Events: []string{"member"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "secret", "octo", ownerToken), "HEAD:refs/heads/main")

	inv, resp, err := owner.Repositories.AddCollaborator(ctx, "octo", "secret", "bob", &github.RepositoryAddCollaboratorOptions{Permission: "push"})
	apptest.Must(t, "invite", err)
	if resp.StatusCode != http.StatusCreated || inv.GetInvitee().GetLogin() != "bob" || inv.GetPermissions() != "write" ||
		inv.GetInviter().GetLogin() != "octo" || inv.GetRepo().GetFullName() != "octo/secret" {
		t.Fatalf("invitation: %d %+v", resp.StatusCode, inv)
	}
	if _, resp, err := bobClient.Repositories.Get(ctx, "octo", "secret"); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("an invitee sees the repository before accepting: %v", err)
	}
	pending, _, err := owner.Repositories.ListInvitations(ctx, "octo", "secret", nil)
	apptest.Must(t, "repository invitations", err)
	mine, _, err := bobClient.Users.ListInvitations(ctx, nil)
	apptest.Must(t, "user invitations", err)
	if len(pending) != 1 || len(mine) != 1 || mine[0].GetID() != inv.GetID() {
		t.Fatalf("invitations: repository %d, user %d", len(pending), len(mine))
	}
	if _, err := env.Client(env.Token(env.User("eve"), "repo")).Users.AcceptInvitation(ctx, inv.GetID()); err == nil {
		t.Fatal("another user accepted bob's invitation")
	}
	_, err = bobClient.Users.AcceptInvitation(ctx, inv.GetID())
	apptest.Must(t, "accept", err)

	repo, _, err := bobClient.Repositories.Get(ctx, "octo", "secret")
	apptest.Must(t, "collaborator reads", err)
	if !repo.GetPermissions().GetPush() || repo.GetPermissions().GetAdmin() {
		t.Fatalf("collaborator's permissions: %v", repo.GetPermissions())
	}
	is, _, err := owner.Repositories.IsCollaborator(ctx, "octo", "secret", "bob")
	apptest.Must(t, "is collaborator", err)
	level, _, err := owner.Repositories.GetPermissionLevel(ctx, "octo", "secret", "bob")
	apptest.Must(t, "permission level", err)
	if !is || level.GetPermission() != "write" || level.GetRoleName() != "write" || level.GetUser().GetLogin() != "bob" {
		t.Fatalf("is %v, level %+v", is, level)
	}
	list, _, err := owner.Repositories.ListCollaborators(ctx, "octo", "secret", nil)
	apptest.Must(t, "list", err)
	if got := logins(list); got != "octo:admin bob:write" {
		t.Fatalf("collaborators: %s", got)
	}
	apptest.Commit(t, work, "by bob", map[string]string{"b.txt": "2\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "secret", "bob", bobToken), "HEAD:refs/heads/main")

	_, resp, err = owner.Repositories.AddCollaborator(ctx, "octo", "secret", "bob", &github.RepositoryAddCollaboratorOptions{Permission: "pull"})
	apptest.Must(t, "lower the permission", err)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("changing a collaborator's permission: %d, want 204", resp.StatusCode)
	}
	apptest.Commit(t, work, "refused", map[string]string{"c.txt": "3\n"})
	if out, err := apptest.TryGit(t, work, "push", "-q", env.GitURL("octo", "secret", "bob", bobToken), "HEAD:refs/heads/main"); err == nil {
		t.Fatalf("a pull collaborator pushed: %s", out)
	}
	if _, err := bobClient.Repositories.RemoveCollaborator(ctx, "octo", "secret", "octo"); err == nil {
		t.Fatal("a pull collaborator removed the owner")
	}
	_, err = bobClient.Repositories.RemoveCollaborator(ctx, "octo", "secret", "bob")
	apptest.Must(t, "leave", err)
	if _, resp, err := bobClient.Repositories.Get(ctx, "octo", "secret"); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a former collaborator still reads the repository: %v", err)
	}

	// Deliveries of one hook are sent concurrently, so they may arrive in
	// any order, as the platform's may.
	got := rc.WaitCount(t, memberEvent, 3)
	slices.Sort(got)
	want := []string{"added bob ->write by bob on octo/secret", "edited bob write->read by octo on octo/secret", "removed bob by bob on octo/secret"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("member events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	feed, _, err := owner.Activity.ListRepositoryEvents(ctx, "octo", "secret", nil)
	apptest.Must(t, "feed", err)
	members := 0
	for _, e := range feed {
		if e.GetType() == "MemberEvent" {
			members++
		}
	}
	if members != 1 {
		t.Fatalf("MemberEvents in the feed: %d, want 1", members)
	}
}

// TestOrganizationCollaborators: a member of the owning organization is
// added at once (204, no invitation); the list's affiliations and
// permission filter tell owners, members, direct and outside
// collaborators apart; bad input is refused.
func TestOrganizationCollaborators(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	mona := env.User("mona")
	outsider := env.User("outsider")
	acme := env.Org("acme", octo, mona)
	env.Repo(acme, "tools", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo")
	owner := env.Client(token)

	_, resp, err := owner.Repositories.AddCollaborator(ctx, "acme", "tools", "mona", &github.RepositoryAddCollaboratorOptions{Permission: "maintain"})
	apptest.Must(t, "add a member", err)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("adding an organization member: %d, want 204", resp.StatusCode)
	}
	inv, resp, err := owner.Repositories.AddCollaborator(ctx, "acme", "tools", "outsider", &github.RepositoryAddCollaboratorOptions{Permission: "triage"})
	apptest.Must(t, "invite an outsider", err)
	if resp.StatusCode != http.StatusCreated || inv.GetPermissions() != "triage" {
		t.Fatalf("inviting an outsider: %d %+v", resp.StatusCode, inv)
	}
	updated, _, err := owner.Repositories.UpdateInvitation(ctx, "acme", "tools", inv.GetID(), "read")
	apptest.Must(t, "update invitation", err)
	if updated.GetPermissions() != "read" {
		t.Fatalf("updated invitation: %+v", updated)
	}
	_, err = env.Client(env.Token(env.User("x"), "repo")).Users.AcceptInvitation(ctx, inv.GetID())
	if err == nil {
		t.Fatal("a stranger accepted the invitation")
	}
	_, err = env.Client(env.Token(outsider, "repo")).Users.AcceptInvitation(ctx, inv.GetID())
	apptest.Must(t, "accept", err)

	for _, c := range []struct {
		opts *github.ListCollaboratorsOptions
		want string
	}{
		{nil, "octo:admin mona:maintain outsider:read"},
		{&github.ListCollaboratorsOptions{Affiliation: "direct"}, "mona:maintain outsider:read"},
		{&github.ListCollaboratorsOptions{Affiliation: "outside"}, "outsider:read"},
		{&github.ListCollaboratorsOptions{Permission: "admin"}, "octo:admin"},
	} {
		list, _, err := owner.Repositories.ListCollaborators(ctx, "acme", "tools", c.opts)
		apptest.Must(t, "list", err)
		if got := logins(list); got != c.want {
			t.Errorf("collaborators %+v: %s, want %s", c.opts, got, c.want)
		}
	}
	level, _, err := owner.Repositories.GetPermissionLevel(ctx, "acme", "tools", "mona")
	apptest.Must(t, "permission level", err)
	if level.GetPermission() != "write" || level.GetRoleName() != "maintain" {
		t.Fatalf("maintainer's level: %+v", level)
	}

	// Bad input and refusals.
	for _, c := range []struct {
		method, path, token, body string
		want                      int
	}{
		{"PUT", "/repos/acme/tools/collaborators/outsider", token, `{"permission":"superuser"}`, http.StatusUnprocessableEntity},
		{"PUT", "/repos/acme/tools/collaborators/nobody", token, `{}`, http.StatusNotFound},
		{"PUT", "/repos/acme/tools/collaborators/acme", token, `{}`, http.StatusNotFound},
		{"PUT", "/repos/acme/tools/collaborators/mona", env.Token(mona, "repo"), `{"permission":"admin"}`, http.StatusForbidden},
		{"DELETE", "/repos/acme/tools/collaborators/octo", env.Token(mona, "repo"), ``, http.StatusForbidden},
		{"DELETE", "/repos/acme/tools/collaborators/x", token, ``, http.StatusNotFound},
		{"GET", "/repos/acme/tools/collaborators?affiliation=friends", token, ``, http.StatusUnprocessableEntity},
		{"GET", "/repos/acme/tools/collaborators/x", token, ``, http.StatusNotFound},
		{"PATCH", "/repos/acme/tools/invitations/999", token, `{"permissions":"read"}`, http.StatusNotFound},
		{"PATCH", "/repos/acme/tools/invitations/1", token, `{"permissions":"root"}`, http.StatusUnprocessableEntity},
		{"GET", "/user/repository_invitations", "", ``, http.StatusUnauthorized},
	} {
		if resp, body := env.DoJSON(c.method, c.path, c.token, c.body); resp.StatusCode != c.want {
			t.Errorf("%s %s %s: %d %s, want %d", c.method, c.path, c.body, resp.StatusCode, body, c.want)
		}
	}
	// A user's repository: its owner cannot be a collaborator.
	env.Repo(octo, "mine")
	if resp, body := env.DoJSON("PUT", "/repos/octo/mine/collaborators/octo", token, `{}`); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("owner as collaborator: %d %s", resp.StatusCode, body)
	}
}

func logins(users []*github.User) string {
	var out []string
	for _, u := range users {
		out = append(out, u.GetLogin()+":"+u.GetRoleName())
	}
	return strings.Join(out, " ")
}
