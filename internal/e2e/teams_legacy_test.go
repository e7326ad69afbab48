package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestTeamsByID drives the legacy routes of a team by its id
// (/teams/{team_id}/...) beside the organization's: get, update, child
// teams (also as /orgs/{org}/teams/{team_slug}/teams through go-github),
// members (the legacy add refuses users outside the organization with
// the platform's 422), memberships, repositories, delete; checked as the
// organization routes are: a user outside the organization sees no team,
// a member who does not maintain it changes nothing, a bad id is a 404.
func TestTeamsByID(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, dev, hubot := env.User("octo"), env.User("dev"), env.User("hubot")
	env.Org("acme", octo, dev)
	ownerToken := env.Token(octo, "admin:org", "repo")
	owner := env.Client(ownerToken)
	devToken := env.Token(dev, "admin:org", "repo")
	hubotToken := env.Token(hubot, "read:org", "repo")
	_, _, err := owner.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("app")})
	apptest.Must(t, "create repo", err)

	core, _, err := owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "Core", Privacy: github.Ptr("closed")})
	apptest.Must(t, "create team", err)
	web, _, err := owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "Web", ParentTeamID: core.ID})
	apptest.Must(t, "create child team", err)
	path := fmt.Sprintf("/teams/%d", core.GetID())

	want := func(t *testing.T, method, p, token, body string, status int) []byte {
		t.Helper()
		resp, b := env.DoJSON(method, p, token, body)
		if resp.StatusCode != status {
			t.Fatalf("%s %s: %d %s, want %d", method, p, resp.StatusCode, b, status)
		}
		return b
	}

	apptest.Step(t, "get and update by id", func(t *testing.T) {
		var got github.Team
		apptest.Must(t, "decode", json.Unmarshal(want(t, "GET", path, devToken, "", 200), &got))
		if got.GetSlug() != "core" || got.GetOrganization().GetLogin() != "acme" {
			t.Fatalf("team %s of %s", got.GetSlug(), got.GetOrganization().GetLogin())
		}
		apptest.Must(t, "decode", json.Unmarshal(want(t, "PATCH", path, ownerToken, `{"name":"Core","description":"the core"}`, 200), &got))
		if got.GetDescription() != "the core" {
			t.Fatalf("description %q", got.GetDescription())
		}
		want(t, "PATCH", path, devToken, `{"description":"mine"}`, 403) // a member who does not maintain it
		want(t, "GET", path, hubotToken, "", 404)
		want(t, "GET", "/teams/nope", ownerToken, "", 404)
		want(t, "GET", "/teams/999999", ownerToken, "", 404)
	})

	apptest.Step(t, "child teams", func(t *testing.T) {
		var kids []github.Team
		apptest.Must(t, "decode", json.Unmarshal(want(t, "GET", path+"/teams", devToken, "", 200), &kids))
		if len(kids) != 1 || kids[0].GetID() != web.GetID() || kids[0].GetParent().GetID() != core.GetID() {
			t.Fatalf("children %+v, want web", kids)
		}
		list, _, err := owner.Teams.ListChildTeamsByParentSlug(ctx, "acme", "core", nil)
		apptest.Must(t, "children by slug", err)
		if len(list) != 1 || list[0].GetSlug() != "web" {
			t.Fatalf("children by slug %v", list)
		}
		list, _, err = owner.Teams.ListChildTeamsByParentSlug(ctx, "acme", "web", nil)
		apptest.Must(t, "children of a leaf", err)
		if len(list) != 0 {
			t.Fatalf("web has children %v", list)
		}
	})

	apptest.Step(t, "members by id", func(t *testing.T) {
		want(t, "GET", path+"/members/dev", ownerToken, "", 404)
		want(t, "PUT", path+"/members/dev", ownerToken, "", 204)
		want(t, "GET", path+"/members/dev", ownerToken, "", 204)
		b := want(t, "PUT", path+"/members/hubot", ownerToken, "", 422)
		var e struct {
			Errors []struct{ Code string } `json:"errors"`
		}
		if json.Unmarshal(b, &e) != nil || len(e.Errors) != 1 || e.Errors[0].Code != "unaffiliated" {
			t.Fatalf("adding a user outside the organization: %s", b)
		}
		want(t, "PUT", path+"/members/acme", ownerToken, "", 422)
		var members []github.User
		apptest.Must(t, "decode", json.Unmarshal(want(t, "GET", path+"/members", ownerToken, "", 200), &members))
		logins := map[string]bool{}
		for _, m := range members {
			logins[m.GetLogin()] = true
		}
		if !logins["dev"] || !logins["octo"] {
			t.Fatalf("members %v", logins)
		}
		var m github.Membership
		apptest.Must(t, "decode", json.Unmarshal(want(t, "GET", path+"/memberships/dev", devToken, "", 200), &m))
		if m.GetState() != "active" || m.GetRole() != "member" {
			t.Fatalf("membership %s %s", m.GetState(), m.GetRole())
		}
		want(t, "DELETE", path+"/members/dev", ownerToken, "", 204)
		want(t, "GET", path+"/members/dev", ownerToken, "", 404)
		apptest.Must(t, "decode", json.Unmarshal(want(t, "PUT", path+"/memberships/dev", ownerToken, `{"role":"maintainer"}`, 200), &m))
		if m.GetRole() != "maintainer" {
			t.Fatalf("membership role %s", m.GetRole())
		}
		// A maintainer manages the team through its id too.
		want(t, "PATCH", path, devToken, `{"description":"kept by dev"}`, 200)
		want(t, "DELETE", path+"/memberships/dev", ownerToken, "", 204)
	})

	apptest.Step(t, "repositories by id", func(t *testing.T) {
		want(t, "PUT", path+"/repos/acme/app", ownerToken, `{"permission":"push"}`, 204)
		var list []github.Repository
		apptest.Must(t, "decode", json.Unmarshal(want(t, "GET", path+"/repos", ownerToken, "", 200), &list))
		if len(list) != 1 || list[0].GetFullName() != "acme/app" || !list[0].GetPermissions().GetPush() {
			t.Fatalf("repos %v", list)
		}
		resp, b := env.Do("GET", path+"/repos/acme/app", ownerToken, nil, "Accept", "application/vnd.github.v3.repository+json")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("check repository: %d %s", resp.StatusCode, b)
		}
		want(t, "GET", path+"/repos/acme/app", ownerToken, "", 204)
		want(t, "DELETE", path+"/repos/acme/app", ownerToken, "", 204)
		want(t, "GET", path+"/repos/acme/app", ownerToken, "", 404)
	})

	apptest.Step(t, "delete by id", func(t *testing.T) {
		want(t, "DELETE", path, ownerToken, "", 204)
		want(t, "GET", path, ownerToken, "", 404)
		want(t, "GET", fmt.Sprintf("/teams/%d", web.GetID()), ownerToken, "", 404) // children go with their parent
	})
}
