package app_test

import (
	"encoding/json"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
)

// TestRepositoryRoleByCaller pins the role the access guard computes for
// GET /repos/{owner}/{repo} (it reads the repository and the caller's
// organization membership in one query): who sees the repository, and
// the permissions object each caller gets.
func TestRepositoryRoleByCaller(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octocat := env.User("octocat")
	hubot := env.User("hubot")
	stranger := env.User("stranger")
	acme := env.Org("acme", octocat, hubot)
	widgets := env.Repo(acme, "widgets", apptest.RepoOpts{Private: true})
	env.Repo(acme, "gadgets")
	env.Repo(hubot, "diary", apptest.RepoOpts{Private: true})

	admin := &repos.Permissions{Admin: true, Maintain: true, Push: true, Triage: true, Pull: true}
	read := &repos.Permissions{Pull: true}
	for _, c := range []struct {
		name, path, token string
		status            int
		want              *repos.Permissions // nil: no permissions object
	}{
		{"org owner, private", "/repos/acme/widgets", env.Token(octocat, "repo"), 200, admin},
		{"org member, private", "/repos/ACME/Widgets", env.Token(hubot, "repo"), 200, read},
		{"org member without repo scope", "/repos/acme/widgets", env.Token(hubot, "public_repo"), 404, nil},
		{"non-member, private", "/repos/acme/widgets", env.Token(stranger, "repo"), 404, nil},
		{"non-member, public", "/repos/acme/gadgets", env.Token(stranger, "repo"), 200, read},
		{"anonymous, public", "/repos/acme/gadgets", "", 200, nil},
		{"anonymous, private", "/repos/acme/widgets", "", 404, nil},
		{"user's own private repository", "/repos/hubot/diary", env.Token(hubot, "repo"), 200, admin},
		{"another user's private repository", "/repos/hubot/diary", env.Token(octocat, "repo"), 404, nil},
		{"fine-grained, selected", "/repos/acme/widgets",
			env.FineGrainedToken(hubot, acme, []*repos.Repository{widgets}, "contents:read"), 200, read},
		{"fine-grained, not selected", "/repos/acme/widgets",
			env.FineGrainedToken(hubot, acme, nil, "contents:read"), 404, nil},
		{"installation, selected", "/repos/acme/widgets",
			env.InstallationToken(acme, []*repos.Repository{widgets}, "contents:read"), 200, admin},
		{"unknown repository", "/repos/acme/nope", env.Token(octocat, "repo"), 404, nil},
	} {
		resp, body := env.Do("GET", c.path, c.token, nil)
		wantStatus(t, c.name, resp, body, c.status)
		if c.status != 200 {
			continue
		}
		var got struct {
			FullName    string             `json:"full_name"`
			Permissions *repos.Permissions `json:"permissions"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		switch {
		case (got.Permissions == nil) != (c.want == nil):
			t.Errorf("%s: permissions %+v, want %+v", c.name, got.Permissions, c.want)
		case got.Permissions != nil && *got.Permissions != *c.want:
			t.Errorf("%s: permissions %+v, want %+v", c.name, *got.Permissions, *c.want)
		}
	}
}
