package e2e_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// orgEvent names an organization delivery "action user by sender in org".
func orgEvent(d apptest.Delivery) string {
	e, ok := d.Parsed.(*github.OrganizationEvent)
	if !ok {
		return ""
	}
	who := e.GetMembership().GetUser().GetLogin()
	if e.GetAction() == "member_invited" {
		who = e.GetInvitation().GetLogin()
	}
	return e.GetAction() + " " + who + " by " + e.GetSender().GetLogin() + " in " + e.GetOrganization().GetLogin()
}

// TestInvitationFlow: an owner invites a user (pending, listed as an
// invitation, no access yet), the user accepts (active, access at once),
// the owner changes the role and removes the member; the organization's
// hook receives member_invited, member_added and member_removed, which
// go-github parses.
func TestInvitationFlow(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	hubot := env.User("hubot")
	acme := env.Org("acme", octo)
	env.Repo(acme, "secret", apptest.RepoOpts{Private: true})
	owner := env.Client(env.Token(octo, "admin:org", "admin:org_hook"))
	invitee := env.Client(env.Token(hubot, "read:org", "repo"))
	rc := apptest.NewReceiver(t, "s")
	_, _, err := owner.Organizations.CreateHook(ctx, "acme", &github.Hook{Name: github.Ptr("web"), Events: []string{"organization"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "org hook", err)

	// Invite: pending, listed, no access.
	m, _, err := owner.Organizations.EditOrgMembership(ctx, "hubot", "acme", &github.Membership{Role: github.Ptr("member")})
	apptest.Must(t, "invite", err)
	if m.GetState() != "pending" || m.GetRole() != "member" || m.GetUser().GetLogin() != "hubot" || m.GetOrganization().GetLogin() != "acme" {
		t.Fatalf("invitation: %+v", m)
	}
	invites, _, err := owner.Organizations.ListPendingOrgInvitations(ctx, "acme", nil)
	apptest.Must(t, "invitations", err)
	if len(invites) != 1 || invites[0].GetLogin() != "hubot" || invites[0].GetInviter().GetLogin() != "octo" || invites[0].GetRole() != "direct_member" {
		t.Fatalf("invitations: %+v", invites)
	}
	if _, resp, _ := invitee.Repositories.Get(ctx, "acme", "secret"); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("invitee reads the private repository before accepting: %d", apptest.ResponseStatus(resp))
	}
	mine, _, err := invitee.Organizations.ListOrgMemberships(ctx, &github.ListOrgMembershipsOptions{State: "pending"})
	apptest.Must(t, "own pending memberships", err)
	if len(mine) != 1 || mine[0].GetOrganization().GetLogin() != "acme" {
		t.Fatalf("own pending memberships: %+v", mine)
	}

	// Accept: active, access at once; no invitation left.
	m, _, err = invitee.Organizations.EditOrgMembership(ctx, "", "acme", &github.Membership{State: github.Ptr("active")})
	apptest.Must(t, "accept", err)
	if m.GetState() != "active" {
		t.Fatalf("accepted membership: %+v", m)
	}
	if _, _, err := invitee.Repositories.Get(ctx, "acme", "secret"); err != nil {
		t.Fatalf("member reads the private repository: %v", err)
	}
	if invites, _, _ := owner.Organizations.ListPendingOrgInvitations(ctx, "acme", nil); len(invites) != 0 {
		t.Fatalf("invitations after accepting: %d", len(invites))
	}

	// Role change of a member is immediate; the last owner stays.
	m, _, err = owner.Organizations.EditOrgMembership(ctx, "hubot", "acme", &github.Membership{Role: github.Ptr("admin")})
	apptest.Must(t, "promote", err)
	if m.GetState() != "active" || m.GetRole() != "admin" {
		t.Fatalf("promoted: %+v", m)
	}
	_, _, err = owner.Organizations.EditOrgMembership(ctx, "hubot", "acme", &github.Membership{Role: github.Ptr("member")})
	apptest.Must(t, "demote", err)
	if _, resp, _ := owner.Organizations.EditOrgMembership(ctx, "octo", "acme", &github.Membership{Role: github.Ptr("member")}); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("demoting the last owner: %d, want 422", apptest.ResponseStatus(resp))
	}
	if resp, _ := owner.Organizations.RemoveOrgMembership(ctx, "octo", "acme"); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("removing the last owner: %d, want 403", apptest.ResponseStatus(resp))
	}
	if _, resp, _ := invitee.Organizations.EditOrgMembership(ctx, "octo", "acme", &github.Membership{Role: github.Ptr("member")}); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("a member manages memberships: %d, want 403", apptest.ResponseStatus(resp))
	}

	// Remove: access ends at once.
	_, err = owner.Organizations.RemoveMember(ctx, "acme", "hubot")
	apptest.Must(t, "remove member", err)
	if _, resp, _ := invitee.Repositories.Get(ctx, "acme", "secret"); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("removed member reads the private repository: %d", apptest.ResponseStatus(resp))
	}
	if _, resp, _ := owner.Organizations.GetOrgMembership(ctx, "hubot", "acme"); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("membership after removal: %d", apptest.ResponseStatus(resp))
	}

	got := rc.WaitCount(t, orgEvent, 3)
	want := []string{"member_invited hubot by octo in acme", "member_added hubot by hubot in acme", "member_removed hubot by octo in acme"}
	if len(got) != len(want) {
		t.Fatalf("organization events %v, want %v", got, want)
	}
	for _, w := range want { // deliveries may arrive in any order
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("organization events %v lack %q", got, w)
		}
	}
}

// TestInvitationCancelledAndBadInput: an invitation is cancelled with
// DELETE .../memberships/{username}; bad roles and states are 422s.
func TestInvitationCancelledAndBadInput(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	hubot := env.User("hubot")
	env.Org("acme", octo)
	ownerToken := env.Token(octo, "admin:org")
	owner := env.Client(ownerToken)
	_, _, err := owner.Organizations.EditOrgMembership(ctx, "hubot", "acme", nil)
	apptest.Must(t, "invite with the default role", err)
	_, err = owner.Organizations.RemoveOrgMembership(ctx, "hubot", "acme")
	apptest.Must(t, "cancel", err)
	invitee := env.Client(env.Token(hubot, "read:org"))
	if _, resp, _ := invitee.Organizations.EditOrgMembership(ctx, "", "acme", &github.Membership{State: github.Ptr("active")}); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("accepting a cancelled invitation: %d, want 404", apptest.ResponseStatus(resp))
	}
	for _, c := range []struct{ method, path, token, body string }{
		{"PUT", "/orgs/acme/memberships/hubot", ownerToken, `{"role":"boss"}`},
		{"PATCH", "/user/memberships/orgs/acme", env.Token(hubot, "read:org"), `{"state":"pending"}`},
		{"PATCH", "/user/memberships/orgs/acme", env.Token(hubot, "read:org"), `{}`},
		{"GET", "/user/memberships/orgs?state=gone", env.Token(hubot, "read:org"), ``},
	} {
		if resp, body := env.DoJSON(c.method, c.path, c.token, c.body); resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("%s %s %s: %d %s, want 422", c.method, c.path, c.body, resp.StatusCode, body)
		}
	}
}

// TestOwnersRemovingEachOtherKeepOne has an organization's two owners
// remove each other at once, each removal held at its commit until both
// have counted the owners (apptest.CommitGate): one removal succeeds, the
// other is refused (403), and one owner remains. Counting without the
// organization's row locked first, each counted two owners and the
// organization was left with none. PostgreSQL only.
func TestOwnersRemovingEachOtherKeepOne(t *testing.T) {
	apptest.SkipUnlessPostgres(t, "concurrent transactions that overlap (CommitGate)")
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, hubot := env.User("octo"), env.User("hubot")
	acme := env.Org("acme", octo, hubot)
	byOcto, byHubot := env.Client(env.Token(octo, "admin:org")), env.Client(env.Token(hubot, "admin:org"))
	_, _, err := byOcto.Organizations.EditOrgMembership(ctx, "hubot", "acme", &github.Membership{Role: github.Ptr("admin")})
	apptest.Must(t, "make hubot an owner", err)

	remove := func(by *github.Client, whom string) func() int {
		return func() int {
			resp, _ := by.Organizations.RemoveOrgMembership(ctx, whom, "acme")
			return apptest.ResponseStatus(resp)
		}
	}
	got := env.CommitGate(t, "DELETE", "org_members", "OLD.role = 'owner'").Run(remove(byOcto, "hubot"), remove(byHubot, "octo"))
	slices.Sort(got)
	if !slices.Equal(got, []int{http.StatusNoContent, http.StatusForbidden}) {
		t.Errorf("removals answered %v, want one 204 and one 403", got)
	}
	var owners int
	apptest.Must(t, "count the owners", env.Q().QueryRowContext(ctx,
		`SELECT count(*) FROM org_members WHERE org_id = $1 AND role = 'owner'`, acme.ID).Scan(&owners))
	if owners != 1 {
		t.Fatalf("%d owners left, want 1", owners)
	}
}
