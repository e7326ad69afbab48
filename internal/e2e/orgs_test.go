package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
)

func loginList[T interface{ GetLogin() string }](list []T) string {
	var out []string
	for _, a := range list {
		out = append(out, a.GetLogin())
	}
	return strings.Join(out, ",")
}

// TestMembersAndPublicMembers: members see every member, others the
// public ones; a member shows and conceals only their own membership;
// the checks answer 204, 404 and, to outsiders, 302 as the platform.
func TestMembersAndPublicMembers(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	owner := env.User("octo")
	hubot := env.User("hubot", apptest.UserOpts{TOTPSecret: "JBSWY3DPEHPK3PXP"})
	outsider := env.User("stranger")
	env.Org("acme", owner, hubot)
	member := env.Client(env.Token(hubot, "user"))
	ownerClient := env.Client(env.Token(owner, "read:org"))
	anonymous := env.Client("")
	stranger := env.Client(env.Token(outsider, "user"))

	// New memberships are concealed: members see both, others none.
	list, _, err := member.Organizations.ListMembers(ctx, "acme", nil)
	apptest.Must(t, "members as a member", err)
	if loginList(list) != "octo,hubot" {
		t.Fatalf("members as a member: %s", loginList(list))
	}
	for name, c := range map[string]*github.Client{"anonymous": anonymous, "stranger": stranger} {
		list, _, err := c.Organizations.ListMembers(ctx, "acme", nil)
		apptest.Must(t, "members as "+name, err)
		if len(list) != 0 {
			t.Fatalf("%s sees concealed members %s", name, loginList(list))
		}
	}

	// hubot shows the membership; octo may not show it for hubot.
	if resp, err := ownerClient.Organizations.PublicizeMembership(ctx, "acme", "hubot"); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("publicize another user's membership: %d %v", apptest.ResponseStatus(resp), err)
	}
	if resp, err := stranger.Organizations.PublicizeMembership(ctx, "acme", "stranger"); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("publicize by a non-member: %d %v, want 404", apptest.ResponseStatus(resp), err)
	}
	_, err = member.Organizations.PublicizeMembership(ctx, "acme", "hubot")
	apptest.Must(t, "publicize", err)
	list, _, err = anonymous.Organizations.ListMembers(ctx, "acme", &github.ListMembersOptions{PublicOnly: true})
	apptest.Must(t, "public members", err)
	if loginList(list) != "hubot" {
		t.Fatalf("public members: %s", loginList(list))
	}
	list, _, err = stranger.Organizations.ListMembers(ctx, "acme", nil)
	apptest.Must(t, "members as a stranger", err)
	if loginList(list) != "hubot" {
		t.Fatalf("members as a stranger: %s", loginList(list))
	}

	// Checks: a member gets 204/404; an outsider is sent (302) to the
	// public check, which go-github follows.
	for _, c := range []struct {
		client *github.Client
		who    string
		user   string
		want   bool
	}{
		{ownerClient, "owner", "hubot", true}, {ownerClient, "owner", "stranger", false},
		{stranger, "stranger", "hubot", true}, {stranger, "stranger", "octo", false},
		{anonymous, "anonymous", "hubot", true}, {anonymous, "anonymous", "octo", false},
	} {
		got, _, err := c.client.Organizations.IsMember(ctx, "acme", c.user)
		apptest.Must(t, "is member", err)
		if got != c.want {
			t.Errorf("%s asks whether %s is a member: %v, want %v", c.who, c.user, got, c.want)
		}
	}
	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirects.Get(env.URL + "/orgs/acme/members/octo")
	apptest.Must(t, "member check", err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != env.URL+"/orgs/acme/public_members/octo" {
		t.Fatalf("outsider's member check: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if ok, _, err := anonymous.Organizations.IsPublicMember(ctx, "acme", "octo"); err != nil || ok {
		t.Fatalf("octo is not a public member: %v %v", ok, err)
	}

	// Filters: role, and 2fa_disabled for owners only.
	list, _, err = ownerClient.Organizations.ListMembers(ctx, "acme", &github.ListMembersOptions{Role: "admin"})
	apptest.Must(t, "admins", err)
	if loginList(list) != "octo" {
		t.Fatalf("role=admin: %s", loginList(list))
	}
	list, _, err = ownerClient.Organizations.ListMembers(ctx, "acme", &github.ListMembersOptions{Filter: "2fa_disabled"})
	apptest.Must(t, "2fa disabled", err)
	if loginList(list) != "octo" {
		t.Fatalf("filter=2fa_disabled as owner: %s", loginList(list))
	}
	list, _, err = member.Organizations.ListMembers(ctx, "acme", &github.ListMembersOptions{Filter: "2fa_disabled"})
	apptest.Must(t, "2fa disabled as a member", err)
	if loginList(list) != "octo,hubot" {
		t.Fatalf("filter=2fa_disabled as a member (ignored): %s", loginList(list))
	}
	if resp, body := env.Do("GET", "/orgs/acme/members?role=boss", "", nil); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("role=boss: %d %s", resp.StatusCode, body)
	}

	// Concealing hides hubot from outsiders again.
	_, err = member.Organizations.ConcealMembership(ctx, "acme", "hubot")
	apptest.Must(t, "conceal", err)
	if ok, _, _ := anonymous.Organizations.IsPublicMember(ctx, "acme", "hubot"); ok {
		t.Fatal("hubot still public after concealing")
	}
}

// TestOrganizationLists: /user/orgs (every membership, with the right
// scopes), /users/{username}/orgs (public ones) and /organizations
// (all, paged by since).
func TestOrganizationLists(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	var orgs []*accounts.Account
	for _, name := range []string{"acme", "globex", "initech", "umbrella", "hooli"} {
		orgs = append(orgs, env.Org(name, octo))
	}
	hubot := env.User("hubot")
	env.Org("solo", hubot)
	c := env.Client(env.Token(octo, "read:org"))
	mine, _, err := c.Organizations.List(ctx, "", nil)
	apptest.Must(t, "/user/orgs", err)
	if loginList(mine) != "acme,globex,initech,umbrella,hooli" {
		t.Fatalf("/user/orgs: %s", loginList(mine))
	}
	if _, resp, _ := env.Client(env.Token(octo, "repo")).Organizations.List(ctx, "", nil); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("/user/orgs without user or read:org: %d, want 403", apptest.ResponseStatus(resp))
	}
	fine := env.Client(env.FineGrainedToken(octo, orgs[1], nil, "members:read"))
	mine, _, err = fine.Organizations.List(ctx, "", nil)
	apptest.Must(t, "/user/orgs with a fine-grained token", err)
	if loginList(mine) != "globex" {
		t.Fatalf("/user/orgs with a fine-grained token on globex: %s", loginList(mine))
	}

	// Public memberships only, to everyone (octo included).
	public, _, err := c.Organizations.List(ctx, "octo", nil)
	apptest.Must(t, "/users/octo/orgs", err)
	if len(public) != 0 {
		t.Fatalf("/users/octo/orgs before publicizing: %s", loginList(public))
	}
	_, err = env.Client(env.Token(octo, "user")).Organizations.PublicizeMembership(ctx, "initech", "octo")
	apptest.Must(t, "publicize", err)
	public, _, err = env.Client("").Organizations.List(ctx, "octo", nil)
	apptest.Must(t, "/users/octo/orgs", err)
	if loginList(public) != "initech" {
		t.Fatalf("/users/octo/orgs: %s", loginList(public))
	}

	// Every organization, two at a time, following Link.
	var all []*github.Organization
	opts := &github.OrganizationsListOptions{PerPage: 2}
	for pages := 0; pages < 10; pages++ {
		page, resp, err := env.Client("").Organizations.ListAll(ctx, opts)
		apptest.Must(t, "/organizations", err)
		all = append(all, page...)
		if resp.NextPage == 0 { // go-github reads since of the next Link into NextPage
			break
		}
		opts.Since = int64(resp.NextPage)
	}
	if loginList(all) != "acme,globex,initech,umbrella,hooli,solo" {
		t.Fatalf("/organizations: %s", loginList(all))
	}
}

// TestMembersWithFineGrainedTokens: concealed members need the Members
// permission on the organization; installation tokens cannot publicize.
func TestMembersWithFineGrainedTokens(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	hubot := env.User("hubot")
	acme := env.Org("acme", octo, hubot)
	for _, c := range []struct {
		name, token, want string
	}{
		{"fine-grained without members", env.FineGrainedToken(octo, acme, nil, "organization_hooks:read"), ""},
		{"fine-grained with members:read", env.FineGrainedToken(octo, acme, nil, "members:read"), "octo,hubot"},
		{"installation with members:read", env.InstallationToken(acme, nil, "members:read"), "octo,hubot"},
	} {
		list, _, err := env.Client(c.token).Organizations.ListMembers(ctx, "acme", nil)
		apptest.Must(t, c.name, err)
		if loginList(list) != c.want {
			t.Errorf("%s sees members %q, want %q", c.name, loginList(list), c.want)
		}
	}
	iat := env.Client(env.InstallationToken(acme, nil, "members:write"))
	if resp, err := iat.Organizations.PublicizeMembership(ctx, "acme", "octo"); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("installation token publicizes: %d %v, want 403", apptest.ResponseStatus(resp), err)
	}
	uat := env.Client(env.AppUserToken(hubot, acme, nil, "members:write"))
	_, err := uat.Organizations.PublicizeMembership(ctx, "acme", "hubot")
	apptest.Must(t, "publicize with an app user token", err)
}
