package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestUserAdministration: a site administrator creates a user, makes an
// impersonation token for it (a real OAuth token with exactly its scopes,
// one per user: asked again it is answered, with other scopes replaced),
// suspends the user (the token, git over HTTP and a suspended user's
// promotion are refused; a site administrator cannot be suspended),
// unsuspends it (the same token works again), promotes and demotes it,
// renames it (202) and deletes it with its repositories. Users who are not
// site administrators get 403, and so do tokens without site_admin.
func TestUserAdministration(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	root := env.User("root", apptest.UserOpts{SiteAdmin: true})
	octo := env.User("octo")
	admin := env.Client(env.Token(root, "site_admin"))

	apptest.Step(t, "only site administrators with site_admin create users", func(t *testing.T) {
		for name, c := range map[string]*github.Client{
			"a user who is no site administrator":        env.Client(env.Token(octo, "site_admin")),
			"a site administrator's token without scope": env.Client(env.Token(root, "repo", "admin:org")),
		} {
			_, resp, _ := c.Admin.CreateUser(ctx, github.CreateUserRequest{Login: "mona"})
			if status(resp) != http.StatusForbidden {
				t.Fatalf("%s: %d, want 403", name, status(resp))
			}
		}
		if resp, _ := env.DoJSON("POST", "/admin/users", "", `{"login":"mona"}`); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("an anonymous creation: %d, want 404", resp.StatusCode)
		}
		if _, resp, _ := admin.Users.Get(ctx, "mona"); status(resp) != http.StatusNotFound {
			t.Fatalf("refused creations made mona: %d", status(resp))
		}
	})

	var token string
	apptest.Step(t, "a site administrator creates mona and impersonates her", func(t *testing.T) {
		u, resp, err := admin.Admin.CreateUser(ctx, github.CreateUserRequest{Login: "mona", Email: github.Ptr("mona@example.com")})
		apptest.Must(t, "create user", err)
		if resp.StatusCode != http.StatusCreated || u.GetLogin() != "mona" || u.GetSiteAdmin() {
			t.Fatalf("create user: %d %+v", resp.StatusCode, u)
		}
		for _, login := range []string{"MONA", "-mona"} {
			if _, resp, _ := admin.Admin.CreateUser(ctx, github.CreateUserRequest{Login: login}); status(resp) != http.StatusUnprocessableEntity {
				t.Fatalf("create %s: %d, want 422", login, status(resp))
			}
		}
		z, resp, err := admin.Admin.CreateUserImpersonation(ctx, "mona", github.CreateUserImpersonationRequest{Scopes: []string{"repo", "user"}})
		apptest.Must(t, "impersonate", err)
		if resp.StatusCode != http.StatusCreated || z.GetToken() == "" || z.GetHashedToken() == "" {
			t.Fatalf("impersonation: %d %+v", resp.StatusCode, z)
		}
		token = z.GetToken()
		me, resp, err := env.Client(token).Users.Get(ctx, "")
		apptest.Must(t, "GET /user with the impersonation token", err)
		if me.GetLogin() != "mona" || resp.Header.Get("X-OAuth-Scopes") != "repo, user" {
			t.Fatalf("impersonation token: %s, scopes %q", me.GetLogin(), resp.Header.Get("X-OAuth-Scopes"))
		}
		again, resp, err := admin.Admin.CreateUserImpersonation(ctx, "mona", github.CreateUserImpersonationRequest{Scopes: []string{"user", "repo"}})
		apptest.Must(t, "impersonate again", err)
		if resp.StatusCode != http.StatusOK || again.GetID() != z.GetID() || again.GetToken() != "" {
			t.Fatalf("impersonation again: %d %+v", resp.StatusCode, again)
		}
		if _, resp, _ := admin.Admin.CreateUserImpersonation(ctx, "mona", github.CreateUserImpersonationRequest{Scopes: []string{"no-such-scope"}}); status(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("unknown scope: %d, want 422", status(resp))
		}
		_, _, err = env.Client(token).Repositories.Create(ctx, "", &github.Repository{Name: github.Ptr("notes"), Private: github.Ptr(true), AutoInit: github.Ptr(true)})
		apptest.Must(t, "mona creates a repository", err)

		// A user created suspended has a token that does not work.
		_, _, err = admin.Admin.CreateUser(ctx, github.CreateUserRequest{Login: "hubot", Suspended: github.Ptr(true)})
		apptest.Must(t, "create a suspended user", err)
		hz, _, err := admin.Admin.CreateUserImpersonation(ctx, "hubot", github.CreateUserImpersonationRequest{Scopes: []string{"user"}})
		apptest.Must(t, "impersonate hubot", err)
		if _, resp, _ := env.Client(hz.GetToken()).Users.Get(ctx, ""); status(resp) != http.StatusForbidden {
			t.Fatalf("a user created suspended: %d, want 403", status(resp))
		}
	})

	apptest.Step(t, "a suspended user's token and git are refused", func(t *testing.T) {
		if resp, _ := env.DoJSON("PUT", "/users/root/suspended", env.Token(root, "site_admin"), `{}`); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("suspending a site administrator: %d, want 403", resp.StatusCode)
		}
		if resp, _ := env.DoJSON("PUT", "/users/mona/suspended", env.Token(octo, "site_admin"), `{}`); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("suspension by a user: %d, want 403", resp.StatusCode)
		}
		_, err := admin.Users.Suspend(ctx, "mona", &github.UserSuspendOptions{Reason: github.Ptr("Left the company")})
		apptest.Must(t, "suspend", err)
		_, resp, _ := env.Client(token).Users.Get(ctx, "")
		if status(resp) != http.StatusForbidden {
			t.Fatalf("suspended user's token: %d, want 403", status(resp))
		}
		if _, err := apptest.TryGit(t, t.TempDir(), "clone", "-q", env.GitURL("mona", "notes", "mona", token), "notes"); err == nil {
			t.Fatal("git cloned with a suspended user's token")
		}
		if resp, _ := admin.Users.PromoteSiteAdmin(ctx, "mona"); status(resp) != http.StatusForbidden {
			t.Fatalf("promoting a suspended user: %d, want 403", status(resp))
		}
		stats, _, err := admin.Admin.GetAdminStats(ctx)
		apptest.Must(t, "stats", err)
		if stats.GetUsers().GetSuspendedUsers() != 2 {
			t.Fatalf("suspended users: %d, want 2 (mona, hubot)", stats.GetUsers().GetSuspendedUsers())
		}
	})

	apptest.Step(t, "unsuspended, the same token works again, git too", func(t *testing.T) {
		_, err := admin.Users.Unsuspend(ctx, "mona")
		apptest.Must(t, "unsuspend", err)
		me, _, err := env.Client(token).Users.Get(ctx, "")
		apptest.Must(t, "GET /user after unsuspension", err)
		if me.GetLogin() != "mona" {
			t.Fatalf("after unsuspension: %s", me.GetLogin())
		}
		apptest.Git(t, t.TempDir(), "clone", "-q", env.GitURL("mona", "notes", "mona", token), "notes")
	})

	apptest.Step(t, "other scopes replace the impersonation token; deleting it revokes it", func(t *testing.T) {
		z, resp, err := admin.Admin.CreateUserImpersonation(ctx, "mona", github.CreateUserImpersonationRequest{Scopes: []string{"site_admin"}})
		apptest.Must(t, "impersonate with site_admin", err)
		if resp.StatusCode != http.StatusCreated || z.GetToken() == "" || z.GetToken() == token {
			t.Fatalf("replaced impersonation: %d %+v", resp.StatusCode, z)
		}
		if _, resp, _ := env.Client(token).Users.Get(ctx, ""); status(resp) != http.StatusUnauthorized {
			t.Fatalf("the replaced token: %d, want 401", status(resp))
		}
		mona := env.Client(z.GetToken())
		if _, resp, _ := mona.Admin.GetAdminStats(ctx); status(resp) != http.StatusNotFound {
			t.Fatalf("statistics for a user: %d, want 404", status(resp))
		}
		_, err = admin.Users.PromoteSiteAdmin(ctx, "mona")
		apptest.Must(t, "promote", err)
		if u, _, err := admin.Users.Get(ctx, "mona"); err != nil || !u.GetSiteAdmin() {
			t.Fatalf("promoted mona: %v %v", u.GetSiteAdmin(), err)
		}
		_, _, err = mona.Admin.GetAdminStats(ctx)
		apptest.Must(t, "statistics for the promoted user", err)
		_, err = admin.Users.DemoteSiteAdmin(ctx, "mona")
		apptest.Must(t, "demote", err)
		if _, resp, _ := mona.Admin.GetAdminStats(ctx); status(resp) != http.StatusNotFound {
			t.Fatalf("statistics after demotion: %d, want 404", status(resp))
		}
		_, err = admin.Admin.DeleteUserImpersonation(ctx, "mona")
		apptest.Must(t, "delete impersonation", err)
		if _, resp, _ := mona.Users.Get(ctx, ""); status(resp) != http.StatusUnauthorized {
			t.Fatalf("the deleted impersonation token: %d, want 401", status(resp))
		}
	})

	apptest.Step(t, "a site administrator renames mona, then deletes her with her repository", func(t *testing.T) {
		resp, body := env.DoJSON("PATCH", "/admin/users/mona", env.Token(root, "site_admin"), `{"login":"mona-lisa"}`)
		var res struct{ Message, URL string }
		apptest.Must(t, "rename body", json.Unmarshal(body, &res))
		if resp.StatusCode != http.StatusAccepted || res.Message != "Job queued to rename user. It may take a few minutes to complete." ||
			!strings.HasSuffix(res.URL, "/users/mona-lisa") {
			t.Fatalf("rename: %d %s", resp.StatusCode, body)
		}
		if resp, _ := env.DoJSON("PATCH", "/admin/users/mona-lisa", env.Token(root, "site_admin"), `{"login":"octo"}`); resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("rename to a taken login: %d, want 422", resp.StatusCode)
		}
		u, _, err := admin.Users.Get(ctx, "mona-lisa")
		apptest.Must(t, "renamed user", err)
		if u.GetLogin() != "mona-lisa" {
			t.Fatalf("renamed user: %s", u.GetLogin())
		}
		if resp, _ := admin.Admin.DeleteUser(ctx, "root"); status(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("deleting oneself: %d, want 422", status(resp))
		}
		_, err = admin.Admin.DeleteUser(ctx, "mona-lisa")
		apptest.Must(t, "delete user", err)
		if _, resp, _ := admin.Users.Get(ctx, "mona-lisa"); status(resp) != http.StatusNotFound {
			t.Fatalf("deleted user: %d, want 404", status(resp))
		}
		if _, resp, _ := admin.Repositories.Get(ctx, "mona-lisa", "notes"); status(resp) != http.StatusNotFound {
			t.Fatalf("deleted user's repository: %d, want 404", status(resp))
		}
		if resp, _ := admin.Admin.DeleteUser(ctx, "mona-lisa"); status(resp) != http.StatusNotFound {
			t.Fatalf("deleting again: %d, want 404", status(resp))
		}
	})
}

// TestDeletingAnOwnerWhileTheOtherLeavesKeepsOne: a site administrator
// deletes one of an organization's two owners while the other leaves it,
// each held at its commit until both have checked the owners
// (apptest.CommitGate): one change is refused (the deletion's 422 or the
// removal's 403) and one owner remains. The deletion checked the owners
// outside its transaction, unlocked: both passed and the organization
// was left with none. PostgreSQL only.
func TestDeletingAnOwnerWhileTheOtherLeavesKeepsOne(t *testing.T) {
	apptest.SkipUnlessPostgres(t, "concurrent transactions that overlap (CommitGate)")
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	root := env.User("root", apptest.UserOpts{SiteAdmin: true})
	octo, hubot := env.User("octo"), env.User("hubot")
	acme := env.Org("acme", octo, hubot)
	admin, byOcto := env.Client(env.Token(root, "site_admin")), env.Client(env.Token(octo, "admin:org"))
	_, _, err := byOcto.Organizations.EditOrgMembership(ctx, "hubot", "acme", &github.Membership{Role: github.Ptr("admin")})
	apptest.Must(t, "make hubot an owner", err)

	got := env.CommitGate(t, "DELETE", "org_members", "OLD.role = 'owner'").Run(func() int {
		resp, _ := admin.Admin.DeleteUser(ctx, "hubot")
		return status(resp)
	}, func() int {
		resp, _ := byOcto.Organizations.RemoveOrgMembership(ctx, "octo", "acme")
		return status(resp)
	})
	d, l := got[0], got[1]
	if !(d == http.StatusNoContent && l == http.StatusForbidden || d == http.StatusUnprocessableEntity && l == http.StatusNoContent) {
		t.Errorf("deletion %d, removal %d: want one refused (204 and 403, or 422 and 204)", d, l)
	}
	var owners int
	apptest.Must(t, "count the owners", env.Q().QueryRowContext(ctx,
		`SELECT count(*) FROM org_members WHERE org_id = $1 AND role = 'owner'`, acme.ID).Scan(&owners))
	if owners != 1 {
		t.Fatalf("%d owners left, want 1", owners)
	}
}
