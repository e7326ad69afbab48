package e2e_test

import (
	"encoding/json"
	"testing"

	"forgeapi/internal/apptest"
)

// TestAuthenticatedUserSeesWritesAtOnce: GET /user reads the account, its
// counters and its profile in one query, kept in the handler's cache; a
// new repository, a follow, an unfollow and a profile change are in the
// very next answer (it fails when a table the query reads is not
// watched), and an account without a profile row answers the empty
// profile.
func TestAuthenticatedUserSeesWritesAtOnce(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.User("mona")
	octoTok := env.Token(octo, "user", "repo")
	hubotTok := env.Token(env.User("hubot"), "user")
	type user struct {
		Login        string  `json:"login"`
		PublicRepos  int     `json:"public_repos"`
		PrivateRepos int     `json:"total_private_repos"`
		OwnedPrivate int     `json:"owned_private_repos"`
		Followers    int     `json:"followers"`
		Following    int     `json:"following"`
		Bio          *string `json:"bio"`
		Hireable     *bool   `json:"hireable"`
	}
	get := func(token string) user {
		t.Helper()
		resp, body := env.Do("GET", "/user", token, nil)
		var u user
		if resp.StatusCode != 200 || json.Unmarshal(body, &u) != nil {
			t.Fatalf("GET /user: %d %s", resp.StatusCode, body)
		}
		return u
	}
	do := func(method, path, token, body string, want int) {
		t.Helper()
		if resp, b := env.DoJSON(method, path, token, body); resp.StatusCode != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
		}
	}
	if u := get(octoTok); u.Login != "octo" || u.PublicRepos != 0 || u.PrivateRepos != 0 || u.Followers != 0 || u.Bio != nil || u.Hireable != nil {
		t.Fatalf("new user: %+v", u)
	}
	env.Repo(octo, "a")
	env.Repo(octo, "b", apptest.RepoOpts{Private: true})
	do("POST", "/user/repos", octoTok, `{"name":"c","private":true}`, 201)
	if u := get(octoTok); u.PublicRepos != 1 || u.PrivateRepos != 2 || u.OwnedPrivate != 2 {
		t.Errorf("after three repositories: %+v", u)
	}
	do("PUT", "/user/following/octo", hubotTok, "", 204)
	do("PUT", "/user/following/mona", octoTok, "", 204)
	if u := get(octoTok); u.Followers != 1 || u.Following != 1 {
		t.Errorf("after the follows: %+v", u)
	}
	if u := get(hubotTok); u.Following != 1 || u.Followers != 0 {
		t.Errorf("the follower: %+v", u)
	}
	do("PATCH", "/user", octoTok, `{"bio":"builds things","hireable":true}`, 200)
	if u := get(octoTok); u.Bio == nil || *u.Bio != "builds things" || u.Hireable == nil || !*u.Hireable {
		t.Errorf("after the profile change: %+v", u)
	}
	do("DELETE", "/user/following/octo", hubotTok, "", 204)
	if u := get(octoTok); u.Followers != 0 {
		t.Errorf("after the unfollow: %+v", u)
	}
}
