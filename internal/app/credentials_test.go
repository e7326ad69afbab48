package app_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
)

// credentialWorld is the data the credential tests share: octocat owns
// acme (private widgets, public gadgets) and a public repository of its
// own; hubot is a member of acme; stranger is nobody's member.
type credentialWorld struct {
	env                            *apptest.Env
	octocat, hubot, stranger, acme *accounts.Account
	widgets, gadgets, hello        *repos.Repository
}

func newCredentialWorld(t *testing.T, opts ...apptest.Option) *credentialWorld {
	env := apptest.Start(t, opts...)
	octocat := env.User("octocat", apptest.UserOpts{Password: "correct horse"})
	hubot := env.User("hubot", apptest.UserOpts{Password: "battery staple"})
	stranger := env.User("stranger", apptest.UserOpts{Password: "stranger danger"})
	acme := env.Org("acme", octocat, hubot)
	return &credentialWorld{
		env: env, octocat: octocat, hubot: hubot, stranger: stranger, acme: acme,
		widgets: env.Repo(acme, "widgets", apptest.RepoOpts{Private: true}),
		gadgets: env.Repo(acme, "gadgets"),
		hello:   env.Repo(octocat, "hello"),
	}
}

func TestEveryCredentialFormOnGetRepository(t *testing.T) {
	t.Parallel()
	w := newCredentialWorld(t)
	env := w.env
	octocat := w.octocat
	classic := env.Token(octocat, "repo")

	expired, err := auth.CreateToken(context.Background(), env.App.DB, auth.TokenSpec{
		Kind: auth.KindClassic, UserID: octocat.ID, Scopes: auth.Scopes{"repo"}, ExpiresAt: ptr(time.Now().Add(-time.Minute))})
	apptest.Must(t, "create expired token", err)

	cases := []struct {
		name, authorization string
		status              int
	}{
		{"basic password", basic("octocat", "correct horse"), 200},
		{"basic password, login in another case", basic("OctoCat", "correct horse"), 200},
		{"basic with token as password", basic("octocat", classic), 200},
		{"token scheme", "token " + classic, 200},
		{"bearer scheme", "Bearer " + classic, 200},
		{"bearer scheme in lower case", "bearer " + classic, 200},
		{"schemes in other cases", "TOKEN " + classic, 200},
		{"basic scheme in upper case", "BASIC " + strings.TrimPrefix(basic("octocat", "correct horse"), "Basic "), 200},
		{"a scheme that only starts like one", "Bearerx " + classic, 401},
		{"basic wrong password", basic("octocat", "wrong"), 401},
		{"basic unknown user", basic("nobody", "correct horse"), 401},
		{"basic not base64", "Basic !!!", 401},
		{"basic without colon", "Basic " + "b2N0b2NhdA==", 401},
		{"unknown token", "Bearer " + auth.NewToken(auth.KindClassic), 401},
		{"garbage token", "token not-a-token", 401},
		{"empty bearer", "Bearer ", 401},
		{"expired token", "Bearer " + expired.Value, 401},
		{"unknown scheme", "Digest abc", 401},
	}
	for _, c := range cases {
		resp, body := get(env, "/repos/acme/widgets", c.authorization)
		if c.status == 200 {
			wantStatus(t, c.name, resp, body, 200)
			continue
		}
		e := wantError(t, c.name, resp, body, c.status)
		if e.Message != "Bad credentials" {
			t.Errorf("%s: message %q, want Bad credentials", c.name, e.Message)
		}
	}
}

func TestClassicTokenScopes(t *testing.T) {
	t.Parallel()
	w := newCredentialWorld(t)
	env := w.env
	octocat := w.octocat
	noScope := env.Token(octocat)
	publicRepo := env.Token(octocat, "public_repo", "read:org")
	repo := env.Token(octocat, "repo")

	// Without the repo scope a private repository is hidden, public ones are not.
	resp, body := get(env, "/repos/acme/widgets", "Bearer "+publicRepo)
	wantError(t, "private repo with public_repo scope", resp, body, 404)
	resp, body = get(env, "/repos/acme/gadgets", "Bearer "+noScope)
	wantStatus(t, "public repo with no scope", resp, body, 200)
	if got := resp.Header.Get("X-OAuth-Scopes"); got != "" {
		t.Errorf("X-OAuth-Scopes of a token without scopes: %q", got)
	}
	resp, body = get(env, "/repos/acme/widgets", "Bearer "+repo)
	wantStatus(t, "private repo with repo scope", resp, body, 200)
	if got := resp.Header.Get("X-OAuth-Scopes"); got != "repo" {
		t.Errorf("X-OAuth-Scopes = %q, want repo", got)
	}

	// Creating needs repo or public_repo, and repo for a private repository.
	resp, body = env.DoJSON("POST", "/user/repos", noScope, `{"name":"a"}`)
	wantError(t, "create without scope", resp, body, 403)
	if got := resp.Header.Get("X-Accepted-OAuth-Scopes"); got != "repo, public_repo" {
		t.Errorf("X-Accepted-OAuth-Scopes = %q", got)
	}
	resp, body = env.DoJSON("POST", "/user/repos", publicRepo, `{"name":"b"}`)
	wantStatus(t, "create public with public_repo", resp, body, 201)
	if got := resp.Header.Get("X-OAuth-Scopes"); got != "public_repo, read:org" {
		t.Errorf("X-OAuth-Scopes = %q", got)
	}
	resp, body = env.DoJSON("POST", "/user/repos", publicRepo, `{"name":"c","private":true}`)
	wantError(t, "create private with public_repo", resp, body, 403)
	resp, body = env.DoJSON("POST", "/user/repos", repo, `{"name":"c","private":true}`)
	wantStatus(t, "create private with repo", resp, body, 201)
	if !strings.Contains(resp.Header.Get("Location"), "/repos/octocat/c") {
		t.Errorf("Location = %q", resp.Header.Get("Location"))
	}
}

func TestFineGrainedTokens(t *testing.T) {
	t.Parallel()
	w := newCredentialWorld(t)
	env := w.env
	octocat, acme, hubot := w.octocat, w.acme, w.hubot
	other := env.Org("other", octocat)

	selects := env.FineGrainedToken(octocat, acme, []*repos.Repository{w.widgets}, "contents:read")
	selectsNothing := env.FineGrainedToken(octocat, acme, nil, "contents:read")
	otherOwner := env.FineGrainedToken(octocat, other, apptest.AllRepos, "administration:write")
	admin := env.FineGrainedToken(octocat, acme, apptest.AllRepos, "administration:write")
	memberAdmin := env.FineGrainedToken(hubot, acme, apptest.AllRepos, "administration:write")

	resp, body := get(env, "/repos/acme/widgets", "Bearer "+selects)
	wantStatus(t, "selected private repo", resp, body, 200)
	if got := resp.Header.Get("X-Accepted-Service-Permissions"); got != "metadata=read" {
		t.Errorf("X-Accepted-Service-Permissions = %q", got)
	}
	if resp.Header.Get("X-OAuth-Scopes") != "" {
		t.Errorf("a fine-grained token got X-OAuth-Scopes")
	}
	resp, body = get(env, "/repos/acme/widgets", "Bearer "+selectsNothing)
	wantError(t, "unselected private repo", resp, body, 404)
	resp, body = get(env, "/repos/acme/gadgets", "Bearer "+selectsNothing)
	wantStatus(t, "unselected public repo", resp, body, 200)
	resp, body = get(env, "/repos/acme/widgets", "Bearer "+otherOwner)
	wantError(t, "private repo of another resource owner", resp, body, 404)

	// Permissions: administration:write creates, contents:read does not.
	resp, body = env.DoJSON("POST", "/orgs/acme/repos", selects, `{"name":"nope"}`)
	e := wantError(t, "create without the permission", resp, body, 403)
	if e.Message != "Resource not accessible by personal access token" {
		t.Errorf("message %q", e.Message)
	}
	if got := resp.Header.Get("X-Accepted-Service-Permissions"); got != "administration=write" {
		t.Errorf("X-Accepted-Service-Permissions = %q", got)
	}
	resp, body = env.DoJSON("POST", "/orgs/acme/repos", admin, `{"name":"yes","private":true}`)
	wantStatus(t, "create with administration:write", resp, body, 201)
	resp, body = env.DoJSON("POST", "/orgs/acme/repos", otherOwner, `{"name":"elsewhere"}`)
	wantError(t, "create in an organization that is not the resource owner", resp, body, 404)
	resp, body = env.DoJSON("POST", "/user/repos", admin, `{"name":"mine"}`)
	wantError(t, "create in the user's account with an organization's token", resp, body, 403)
	resp, body = env.DoJSON("POST", "/orgs/acme/repos", memberAdmin, `{"name":"by-member"}`)
	wantStatus(t, "member creates with administration:write", resp, body, 201)
	userAdmin := env.FineGrainedToken(octocat, octocat, apptest.AllRepos, "administration:write")
	resp, body = env.DoJSON("POST", "/user/repos", userAdmin, `{"name":"mine"}`)
	wantStatus(t, "create in the user's account with the user's token", resp, body, 201)

	// GET /user accepts fine-grained PATs.
	resp, body = get(env, "/user", "Bearer "+selects)
	wantStatus(t, "GET /user with a fine-grained PAT", resp, body, 200)
}

func TestInstallationTokenActsAsItsBot(t *testing.T) {
	t.Parallel()
	w := newCredentialWorld(t, apptest.WithRateLimit())
	env := w.env
	acme := w.acme
	octocat := w.octocat
	iat := env.InstallationToken(acme, []*repos.Repository{w.widgets}, "contents:read")
	iatAdmin := env.InstallationToken(acme, apptest.AllRepos, "administration:write")

	resp, body := get(env, "/repos/acme/widgets", "Bearer "+iat)
	wantStatus(t, "selected repo", resp, body, 200)
	resp, body = get(env, "/repos/octocat/hello", "Bearer "+iat)
	wantStatus(t, "public repo elsewhere", resp, body, 200)
	private := env.Repo(octocat, "diary", apptest.RepoOpts{Private: true})
	resp, body = get(env, "/repos/octocat/"+private.Name, "Bearer "+iat)
	wantError(t, "private repo elsewhere", resp, body, 404)

	resp, body = get(env, "/user", "Bearer "+iat)
	e := wantError(t, "GET /user with an installation token", resp, body, 403)
	if e.Message != "Resource not accessible by integration" {
		t.Errorf("message %q", e.Message)
	}
	resp, body = env.DoJSON("POST", "/user/repos", iatAdmin, `{"name":"x"}`)
	wantError(t, "POST /user/repos does not accept installation tokens", resp, body, 403)
	resp, body = env.DoJSON("POST", "/orgs/acme/repos", iat, `{"name":"x"}`)
	wantError(t, "create without administration:write", resp, body, 403)
	resp, body = env.DoJSON("POST", "/orgs/acme/repos", iatAdmin, `{"name":"built-by-bot"}`)
	wantStatus(t, "create with administration:write", resp, body, 201)

	// Both installation tokens act as the one bot account: they share its
	// rate-limit budget, apart from octocat's.
	budget := func(token string) string {
		resp, body := get(env, "/repos/acme/gadgets", "Bearer "+token)
		wantStatus(t, "read for the budget", resp, body, 200)
		return resp.Header.Get("X-Ratelimit-Used")
	}
	botUsed := budget(iat)
	if got := budget(iatAdmin); got != next(botUsed) {
		t.Errorf("second installation token used %s after %s: not the same bot", got, botUsed)
	}
	if got := budget(env.Token(octocat)); got != "1" {
		t.Errorf("octocat's budget used %s, want its own count 1", got)
	}
}

func TestAppUserToken(t *testing.T) {
	t.Parallel()
	w := newCredentialWorld(t)
	env := w.env
	octocat, acme := w.octocat, w.acme
	uat := env.AppUserToken(octocat, acme, []*repos.Repository{w.widgets}, "contents:read,administration:write")

	resp, body := get(env, "/user", "Bearer "+uat)
	wantStatus(t, "GET /user with a user token", resp, body, 200)
	if !strings.Contains(string(body), `"login":"octocat"`) {
		t.Errorf("GET /user: %s", body)
	}
	resp, body = get(env, "/repos/acme/widgets", "Bearer "+uat)
	wantStatus(t, "selected private repo", resp, body, 200)
	resp, body = env.DoJSON("POST", "/orgs/acme/repos", uat, `{"name":"from-app"}`)
	wantStatus(t, "create in the organization", resp, body, 201)
}

func TestPrivateResourcesAreNotFoundNotForbidden(t *testing.T) {
	t.Parallel()
	w := newCredentialWorld(t)
	env := w.env
	stranger := w.stranger
	strangerToken := env.Token(stranger, "repo", "admin:org")

	for _, c := range []struct{ name, authorization string }{
		{"anonymous", ""},
		{"stranger's token", "Bearer " + strangerToken},
		{"stranger's password", basic("stranger", "stranger danger")},
	} {
		resp, body := get(env, "/repos/acme/widgets", c.authorization)
		wantError(t, c.name+" reads a private repository", resp, body, 404)
		resp, body = get(env, "/repos/acme/no-such-repo", c.authorization)
		wantError(t, c.name+" reads a missing repository", resp, body, 404)
	}
	resp, body := env.DoJSON("POST", "/orgs/acme/repos", strangerToken, `{"name":"intruder"}`)
	wantError(t, "non-member creates in the organization", resp, body, 404)
	resp, body = env.DoJSON("POST", "/orgs/acme/repos", "", `{"name":"intruder"}`)
	wantError(t, "anonymous creates in the organization", resp, body, 404)
	resp, body = get(env, "/orgs/acme", "Bearer "+strangerToken)
	wantStatus(t, "organizations themselves are public", resp, body, 200)
	resp, body = get(env, "/user", "")
	wantError(t, "anonymous GET /user", resp, body, 401)
}

func ptr[T any](v T) *T { return &v }

// next returns the decimal string after n.
func next(n string) string {
	v, _ := strconv.Atoi(n)
	return strconv.Itoa(v + 1)
}
