package repos_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// repoView is what TestReadCachesSeeWritesAtOnce reads of GET
// /repos/{owner}/{repo}.
type repoView struct {
	status      int
	location    string
	owner, name string
	private     bool
	stars       int
	watchers    int
	forks       int
	push, admin bool
}

// TestReadCachesSeeWritesAtOnce: GET /repos/{owner}/{repo} is served from
// caches (the access guard's repository with the caller's standing,
// repos.StandingCache, and the counters, Service.Stats), kept here for an
// hour: every write that changes the answer is seen by the very next GET.
// Each step reads first (filling the caches), writes through the API,
// then reads again. It fails if one of the tables the lookups read is not
// watched.
func TestReadCachesSeeWritesAtOnce(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t) // lookup caches, the counters cache too, kept for an hour
	octo := env.User("octo")
	hubot := env.User("hubot")
	mona := env.User("mona")
	org := env.Org("acme", octo, hubot)
	octoTok, hubotTok, monaTok := env.Token(octo, "repo", "admin:org", "user", "delete_repo"), env.Token(hubot, "repo", "user"), env.Token(mona, "repo", "user")
	env.Repo(octo, "tool")
	env.Repo(org, "secret", apptest.RepoOpts{Private: true})

	get := func(t *testing.T, path, token string) repoView {
		t.Helper()
		resp, body := env.Do("GET", path, token, nil)
		v := repoView{status: resp.StatusCode, location: resp.Header.Get("Location")}
		if resp.StatusCode != 200 {
			return v
		}
		var j struct {
			Owner struct {
				Login string `json:"login"`
			} `json:"owner"`
			Name        string `json:"name"`
			Private     bool   `json:"private"`
			Stars       int    `json:"stargazers_count"`
			Watchers    int    `json:"subscribers_count"`
			Forks       int    `json:"forks_count"`
			Permissions *struct {
				Push  bool `json:"push"`
				Admin bool `json:"admin"`
			} `json:"permissions"`
		}
		if err := json.Unmarshal(body, &j); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, body)
		}
		v.owner, v.name, v.private, v.stars, v.watchers, v.forks = j.Owner.Login, j.Name, j.Private, j.Stars, j.Watchers, j.Forks
		if j.Permissions != nil {
			v.push, v.admin = j.Permissions.Push, j.Permissions.Admin
		}
		return v
	}
	do := func(t *testing.T, method, path, token, body string, want int) []byte {
		t.Helper()
		resp, b := env.DoJSON(method, path, token, body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, b)
		}
		return b
	}
	// step is the subtest what: it reads path as token's user, writes and
	// reads again. A write that failed stops the test (the steps after it
	// build on it); an answer found stale does not.
	step := func(what, path, token string, write func(t *testing.T), check func(before, after repoView) bool) {
		t.Helper()
		wrote := false
		t.Run(what, func(t *testing.T) {
			before := get(t, path, token)
			get(t, path, token) // served from the caches when they hold it
			write(t)
			if wrote = !t.Failed(); !wrote {
				return
			}
			if after := get(t, path, token); !check(before, after) {
				t.Errorf("GET %s before %+v, after %+v", path, before, after)
			}
		})
		if !wrote {
			t.FailNow()
		}
	}

	const tool, secret = "/repos/octo/tool", "/repos/acme/secret"
	step("star", tool, monaTok, func(t *testing.T) { do(t, "PUT", "/user/starred/octo/tool", monaTok, "", 204) },
		func(b, a repoView) bool { return a.stars == b.stars+1 })
	step("unstar", tool, monaTok, func(t *testing.T) { do(t, "DELETE", "/user/starred/octo/tool", monaTok, "", 204) },
		func(b, a repoView) bool { return a.stars == b.stars-1 })
	step("watch", tool, monaTok, func(t *testing.T) { do(t, "PUT", "/repos/octo/tool/subscription", monaTok, `{"subscribed":true}`, 200) },
		func(b, a repoView) bool { return a.watchers == b.watchers+1 })
	step("fork", tool, monaTok, func(t *testing.T) { do(t, "POST", "/repos/octo/tool/forks", monaTok, "", 202) },
		func(b, a repoView) bool { return a.forks == b.forks+1 })

	// Collaborators: invited, accepted (now pushes), removed (no longer).
	step("collaborator invited", tool, monaTok, func(t *testing.T) {
		do(t, "PUT", "/repos/octo/tool/collaborators/mona", octoTok, `{"permission":"push"}`, 201)
	}, func(b, a repoView) bool { return !b.push && !a.push })
	var invitations []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(do(t, "GET", "/user/repository_invitations", monaTok, "", 200), &invitations); err != nil || len(invitations) != 1 {
		t.Fatalf("invitations: %v %v", invitations, err)
	}
	step("invitation accepted", tool, monaTok, func(t *testing.T) {
		do(t, "PATCH", "/user/repository_invitations/"+strconv.FormatInt(invitations[0].ID, 10), monaTok, "", 204)
	}, func(b, a repoView) bool { return !b.push && a.push })
	step("collaborator removed", tool, monaTok, func(t *testing.T) { do(t, "DELETE", "/repos/octo/tool/collaborators/mona", octoTok, "", 204) },
		func(b, a repoView) bool { return b.push && !a.push })

	// Organization membership and base permission.
	step("base permission write", secret, hubotTok, func(t *testing.T) {
		do(t, "PATCH", "/orgs/acme", octoTok, `{"default_repository_permission":"write"}`, 200)
	}, func(b, a repoView) bool { return b.status == 200 && !b.push && a.push })
	step("member made owner", secret, hubotTok, func(t *testing.T) {
		do(t, "PUT", "/orgs/acme/memberships/hubot", octoTok, `{"role":"admin"}`, 200)
	}, func(b, a repoView) bool { return !b.admin && a.admin })
	step("member removed", secret, hubotTok, func(t *testing.T) { do(t, "DELETE", "/orgs/acme/members/hubot", octoTok, "", 204) },
		func(b, a repoView) bool { return b.status == 200 && a.status == 404 })

	// Teams: a team that holds the repository, a member added to it.
	do(t, "PUT", "/orgs/acme/memberships/mona", octoTok, `{"role":"member"}`, 200) // invited
	do(t, "PATCH", "/user/memberships/orgs/acme", monaTok, `{"state":"active"}`, 200)
	do(t, "PATCH", "/orgs/acme", octoTok, `{"default_repository_permission":"none"}`, 200)
	do(t, "POST", "/orgs/acme/teams", octoTok, `{"name":"core"}`, 201)
	step("team granted the repository", secret, monaTok, func(t *testing.T) {
		do(t, "PUT", "/orgs/acme/teams/core/repos/acme/secret", octoTok, `{"permission":"push"}`, 204)
	}, func(b, a repoView) bool { return b.status == 404 && a.status == 404 }) // mona is not in the team yet
	step("member added to the team", secret, monaTok, func(t *testing.T) {
		do(t, "PUT", "/orgs/acme/teams/core/memberships/mona", octoTok, "", 200)
	}, func(b, a repoView) bool { return b.status == 404 && a.status == 200 && a.push && !a.admin })
	step("team's permission raised", secret, monaTok, func(t *testing.T) {
		do(t, "PUT", "/orgs/acme/teams/core/repos/acme/secret", octoTok, `{"permission":"admin"}`, 204)
	}, func(b, a repoView) bool { return !b.admin && a.admin })
	step("team deleted", secret, monaTok, func(t *testing.T) { do(t, "DELETE", "/orgs/acme/teams/core", octoTok, "", 204) },
		func(b, a repoView) bool { return b.status == 200 && a.status == 404 })

	// Visibility and rename.
	step("made private", tool, monaTok, func(t *testing.T) { do(t, "PATCH", "/repos/octo/tool", octoTok, `{"private":true}`, 200) },
		func(b, a repoView) bool { return b.status == 200 && a.status == 404 })
	step("renamed", tool, octoTok, func(t *testing.T) { do(t, "PATCH", "/repos/octo/tool", octoTok, `{"name":"gadget"}`, 200) },
		func(b, a repoView) bool { return b.name == "tool" && a.name == "gadget" }) // the client follows the redirect
	step("made public", "/repos/octo/gadget", monaTok, func(t *testing.T) { do(t, "PATCH", "/repos/octo/gadget", octoTok, `{"private":false}`, 200) },
		func(b, a repoView) bool {
			return b.status == 404 && a.status == 200 && a.name == "gadget" && !a.private
		})
	step("transferred", "/repos/octo/gadget", octoTok, func(t *testing.T) {
		do(t, "POST", "/repos/octo/gadget/transfer", octoTok, `{"new_owner":"acme"}`, 202)
	}, func(b, a repoView) bool { return b.owner == "octo" && a.owner == "acme" && a.name == "gadget" }) // redirected
	step("transferred back", "/repos/acme/gadget", octoTok, func(t *testing.T) {
		do(t, "POST", "/repos/acme/gadget/transfer", octoTok, `{"new_owner":"octo"}`, 202)
	}, func(b, a repoView) bool { return b.owner == "acme" && a.owner == "octo" })
	// The lookup of acme/gadget, read before the transfer back, finds the
	// repository moved: the old path redirects (not followed here), it does
	// not serve the repository under its new owner.
	t.Run("the old path of a repository moved back redirects", func(t *testing.T) {
		noFollow := &http.Client{Transport: env.Transport(), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		req, _ := http.NewRequest("GET", env.URL+"/repos/acme/gadget", nil)
		req.Header.Set("Authorization", "Bearer "+octoTok)
		resp, err := noFollow.Do(req)
		apptest.Must(t, "GET the old path", err)
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusMovedPermanently || !strings.HasSuffix(loc, "/repos/octo/gadget") {
			t.Errorf("GET /repos/acme/gadget after the transfer back: %d, Location %q, want a 301 to octo/gadget", resp.StatusCode, loc)
		}
	})
	step("deleted", "/repos/octo/gadget", monaTok, func(t *testing.T) { do(t, "DELETE", "/repos/octo/gadget", octoTok, "", 204) },
		func(b, a repoView) bool { return b.status == 200 && a.status == 404 })
}
