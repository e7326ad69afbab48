package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
)

// TestEditOrganizationAndItsSettings: owners edit the organization's
// profile; the base repository permission decides what members do with
// its repositories at once (none hides private ones, write lets them
// push), and members_can_create_repositories false keeps members from
// creating repositories; owners' fields are shown to owners only.
func TestEditOrganizationAndItsSettings(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	hubot := env.User("hubot")
	env.Org("acme", octo, hubot)
	env.Repo(env.Org("other", octo), "x")
	owner := env.Client(env.Token(octo, "admin:org", "repo"))
	memberToken := env.Token(hubot, "repo")
	member := env.Client(memberToken)
	env.Repo(mustUser(t, env, "acme"), "secret", apptest.RepoOpts{Private: true})

	org, _, err := owner.Organizations.Edit(ctx, "acme", &github.Organization{
		Name: github.Ptr("Acme Corp"), Description: github.Ptr("Rockets"), Blog: github.Ptr("https://acme.example"),
		Location: github.Ptr("Desert"), Company: github.Ptr("ACME"), BillingEmail: github.Ptr("bills@acme.example"),
		DefaultRepoPermission: github.Ptr("none"), MembersCanCreateRepos: github.Ptr(false),
	})
	apptest.Must(t, "edit", err)
	if org.GetName() != "Acme Corp" || org.GetDescription() != "Rockets" || org.GetBlog() != "https://acme.example" ||
		org.GetLocation() != "Desert" || org.GetCompany() != "ACME" || org.GetBillingEmail() != "bills@acme.example" ||
		org.GetDefaultRepoPermission() != "none" || org.GetMembersCanCreateRepos() {
		t.Fatalf("edited organization: %+v", org)
	}
	seen, _, err := member.Organizations.Get(ctx, "acme")
	apptest.Must(t, "get as a member", err)
	if seen.GetBlog() != "https://acme.example" || seen.BillingEmail != nil || seen.DefaultRepoPermission != nil {
		t.Fatalf("a member sees %+v; the owners' fields are for owners", seen)
	}

	// Base permission none: the member no longer reads the private
	// repository; members may not create repositories.
	if _, resp, _ := member.Repositories.Get(ctx, "acme", "secret"); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("member reads a private repository with base permission none: %d", apptest.ResponseStatus(resp))
	}
	if _, resp, _ := member.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("mine")}); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("member creates a repository: %d, want 403", apptest.ResponseStatus(resp))
	}
	if _, _, err := owner.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("owned")}); err != nil {
		t.Fatalf("owner creates a repository: %v", err)
	}

	// Base permission write: the member reads and pushes.
	_, _, err = owner.Organizations.Edit(ctx, "acme", &github.Organization{DefaultRepoPermission: github.Ptr("write"), MembersCanCreateRepos: github.Ptr(true)})
	apptest.Must(t, "edit to write", err)
	if _, _, err := member.Repositories.Get(ctx, "acme", "secret"); err != nil {
		t.Fatalf("member reads with base permission write: %v", err)
	}
	work := apptest.WorkTree(t, map[string]string{"README.md": "hi\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("acme", "secret", "hubot", memberToken), "HEAD:refs/heads/main")
	if _, _, err := member.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("mine")}); err != nil {
		t.Fatalf("member creates a repository once allowed: %v", err)
	}

	// Bad input and non-owners.
	for _, body := range []string{`{"default_repository_permission":"maintain"}`, `{"email":"not-an-address"}`, `{"twitter_username":"0123456789abcdef"}`} {
		if resp, b := env.DoJSON("PATCH", "/orgs/acme", env.Token(octo, "admin:org"), body); resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("PATCH /orgs/acme %s: %d %s, want 422", body, resp.StatusCode, b)
		}
	}
	if _, resp, _ := env.Client(env.Token(hubot, "admin:org")).Organizations.Edit(ctx, "acme", &github.Organization{Name: github.Ptr("x")}); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("member edits the organization: %d, want 403", apptest.ResponseStatus(resp))
	}
}

// TestEditAuthenticatedUser: PATCH /user changes the profile, which
// GET /user and GET /users/{username} show.
func TestEditAuthenticatedUser(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	env.User("octo")
	c := env.Client(env.Token(mustUser(t, env, "octo"), "user"))
	u, _, err := c.Users.Update(ctx, github.UserUpdateRequest{Name: github.Ptr("The Octocat"), Bio: github.Ptr("Eight arms"),
		Blog: github.Ptr("https://octo.example"), Location: github.Ptr("Sea"), Company: github.Ptr("@acme"),
		Hireable: github.Ptr(true), TwitterUsername: github.Ptr("octo")})
	apptest.Must(t, "edit user", err)
	if u.GetName() != "The Octocat" || u.GetBio() != "Eight arms" || !u.GetHireable() || u.GetTwitterUsername() != "octo" {
		t.Fatalf("edited user: %+v", u)
	}
	pub, _, err := env.Client("").Users.Get(ctx, "octo")
	apptest.Must(t, "get user", err)
	if pub.GetBlog() != "https://octo.example" || pub.GetLocation() != "Sea" || pub.GetCompany() != "@acme" || pub.GetName() != "The Octocat" {
		t.Fatalf("public user: %+v", pub)
	}
	if _, resp, _ := env.Client(env.Token(mustUser(t, env, "octo"), "repo")).Users.Update(ctx, github.UserUpdateRequest{Name: github.Ptr("x")}); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("PATCH /user without the user scope: %d, want 403", apptest.ResponseStatus(resp))
	}
	long := make([]byte, 161)
	for i := range long {
		long[i] = 'a'
	}
	if resp, b := env.DoJSON("PATCH", "/user", env.Token(mustUser(t, env, "octo"), "user"), `{"bio":"`+string(long)+`"}`); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a 161-character bio: %d %s", resp.StatusCode, b)
	}
}

func mustUser(t *testing.T, env *apptest.Env, login string) *accounts.Account {
	t.Helper()
	a, err := accounts.ByLogin(apptest.Ctx(), env.Q(), login)
	apptest.Must(t, "account "+login, err)
	return a
}

// TestEmailAddresses: the user's addresses are listed (the one the user
// was created with is primary), added in the three body forms the
// platform takes, deleted (never the primary one), the primary one's
// visibility changes, and PATCH /user takes only an address of the
// user's as its public email.
func TestEmailAddresses(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	hubot := env.User("hubot")
	token := env.Token(octo, "user")
	c := env.Client(token)
	list, _, err := c.Users.ListEmails(ctx, nil)
	apptest.Must(t, "list", err)
	if len(list) != 1 || list[0].GetEmail() != "octo@example.com" || !list[0].GetPrimary() || !list[0].GetVerified() || list[0].GetVisibility() != "public" {
		t.Fatalf("emails: %+v", list)
	}
	added, _, err := c.Users.AddEmails(ctx, []string{"a@example.com", "b@example.com"})
	apptest.Must(t, "add", err)
	if len(added) != 2 || added[0].GetPrimary() {
		t.Fatalf("added: %+v", added)
	}
	for _, body := range []string{`["c@example.com"]`, `"d@example.com"`} {
		if resp, b := env.DoJSON("POST", "/user/emails", token, body); resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST /user/emails %s: %d %s", body, resp.StatusCode, b)
		}
	}
	list, _, err = c.Users.ListEmails(ctx, &github.ListOptions{PerPage: 100})
	apptest.Must(t, "list", err)
	if len(list) != 5 {
		t.Fatalf("%d addresses, want 5: %+v", len(list), list)
	}
	_, err = c.Users.DeleteEmails(ctx, []string{"a@example.com", "c@example.com"})
	apptest.Must(t, "delete", err)
	if resp, _ := c.Users.DeleteEmails(ctx, []string{"octo@example.com"}); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("deleting the primary address: %d, want 422", apptest.ResponseStatus(resp))
	}
	if resp, _ := c.Users.DeleteEmails(ctx, []string{"nobody@example.com"}); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("deleting an address the user lacks: %d, want 404", apptest.ResponseStatus(resp))
	}
	// Another user cannot take an address in use.
	if resp, b := env.DoJSON("POST", "/user/emails", env.Token(hubot, "user"), `{"emails":["b@example.com"]}`); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("taking another user's address: %d %s", resp.StatusCode, b)
	}
	for _, body := range []string{`{"emails":[]}`, `{"emails":["not an address"]}`, `42`} {
		if resp, b := env.DoJSON("POST", "/user/emails", token, body); resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("POST /user/emails %s: %d %s, want 422", body, resp.StatusCode, b)
		}
	}

	// Visibility of the primary address, and the public list.
	_, _, err = c.Users.SetEmailVisibility(ctx, "private")
	apptest.Must(t, "private", err)
	if public, _, err := env.Client(env.Token(octo, "user:email")).Users.ListEmails(ctx, nil); err != nil || len(public) != 3 {
		t.Fatalf("user:email lists the addresses: %d %v", len(public), err)
	}
	if resp, b := env.Do("GET", "/user/public_emails", token, nil); resp.StatusCode != http.StatusOK || strings.TrimSpace(string(b)) != "[]" {
		t.Fatalf("public emails of a private primary address: %d %s", resp.StatusCode, b)
	}
	// The public email of the profile must be one of the user's.
	if _, resp, _ := c.Users.Update(ctx, github.UserUpdateRequest{Email: github.Ptr("zzz@example.com")}); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("PATCH /user with someone else's address: %d, want 422", apptest.ResponseStatus(resp))
	}
	u, _, err := c.Users.Update(ctx, github.UserUpdateRequest{Email: github.Ptr("b@example.com")})
	apptest.Must(t, "PATCH /user email", err)
	if u.GetEmail() != "b@example.com" {
		t.Fatalf("email %q", u.GetEmail())
	}
	if _, resp, _ := env.Client(env.Token(octo, "repo")).Users.ListEmails(ctx, nil); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("listing addresses without user or user:email: %d, want 403", apptest.ResponseStatus(resp))
	}
}
