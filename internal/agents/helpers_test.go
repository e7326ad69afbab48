package agents_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
)

// fixture is an enterprise "acme-corp" owned by boss, with the
// organization "acme" (owned by dev and boss) and its .service-private
// repository. boss may push as an enterprise owner; dev only as an
// organization owner.
type fixture struct {
	env       *apptest.Env
	ent       *accounts.Enterprise
	boss, dev *accounts.Account
	acme      *accounts.Account
	repo      *repos.Repository
	bossToken string // classic: admin:enterprise, repo
	devToken  string // classic: admin:enterprise, repo (but dev owns no enterprise)
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	env := apptest.Start(t)
	f := &fixture{env: env, boss: env.User("boss"), dev: env.User("dev")}
	f.acme = env.Org("acme", f.dev)
	apptest.Must(t, "boss owns acme", accounts.SetMember(context.Background(), env.Q(), f.acme.ID, f.boss.ID, accounts.RoleOwner))
	f.repo = env.Repo(f.acme, ".service-private", apptest.RepoOpts{Private: true})
	f.ent = env.Enterprise("acme-corp", f.boss, f.acme)
	f.bossToken = env.Token(f.boss, "admin:enterprise", "repo")
	f.devToken = env.Token(f.dev, "admin:enterprise", "repo")
	return f
}

// org makes another organization of the enterprise, owned by boss and
// dev, with a .service-private repository.
func (f *fixture) org(t *testing.T, login string) (*accounts.Account, *repos.Repository) {
	t.Helper()
	o := f.env.Org(login, f.dev)
	apptest.Must(t, "boss owns "+login, accounts.SetMember(context.Background(), f.env.Q(), o.ID, f.boss.ID, accounts.RoleOwner))
	apptest.Must(t, "add to enterprise", accounts.AddEnterpriseOrg(context.Background(), f.env.Q(), f.ent.ID, o.ID))
	return o, f.env.Repo(o, ".service-private")
}

const base = "/enterprises/acme-corp/assistant/custom-agents"

// call sends a request and returns the status and the body.
func (f *fixture) call(method, path, token, body string) (*http.Response, []byte) {
	f.env.T.Helper()
	if body == "" {
		return f.env.Do(method, path, token, nil)
	}
	return f.env.DoJSON(method, path, token, body)
}

// mustCall sends a request and fails the test unless it answers want.
func (f *fixture) mustCall(t testing.TB, want int, method, path, token, body string) []byte {
	t.Helper()
	resp, b := f.call(method, path, token, body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d\n%s", method, path, resp.StatusCode, want, b)
	}
	return b
}

// putSource makes the organization the source and returns the answer.
func (f *fixture) putSource(t testing.TB, org *accounts.Account, createRuleset *bool) sourceAnswer {
	t.Helper()
	body := map[string]any{"organization_id": org.ID}
	if createRuleset != nil {
		body["create_ruleset"] = *createRuleset
	}
	raw, _ := json.Marshal(body)
	var out sourceAnswer
	decode(t, f.mustCall(t, 200, "PUT", base+"/source", f.bossToken, string(raw)), &out)
	return out
}

type sourceAnswer struct {
	Organization *struct {
		ID        int64   `json:"id"`
		Login     string  `json:"login"`
		AvatarURL *string `json:"avatar_url"`
	} `json:"organization"`
	Repository *struct {
		ID       int64  `json:"id"`
		Name     string `json:"name"`
		FullName string `json:"full_name"`
	} `json:"repository"`
	Ruleset *struct {
		ID          int64  `json:"id"`
		Name        string `json:"name"`
		Enforcement string `json:"enforcement"`
	} `json:"ruleset"`
}

type agent struct {
	Name     string `json:"name"`
	FilePath string `json:"file_path"`
	URL      string `json:"url"`
}

// listAgents returns the custom agents (nil for null) of a GET.
func (f *fixture) listAgents(t *testing.T, query string) ([]agent, *http.Response) {
	t.Helper()
	resp, b := f.call("GET", base+query, f.bossToken, "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s%s: %d\n%s", base, query, resp.StatusCode, b)
	}
	var out struct {
		CustomAgents []agent `json:"custom_agents"`
	}
	decode(t, b, &out)
	return out.CustomAgents, resp
}

func names(list []agent) string {
	var out []string
	for _, a := range list {
		out = append(out, a.Name+"="+a.FilePath)
	}
	return strings.Join(out, ",")
}

func decode(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}

type apiError struct {
	Message string `json:"message"`
	Errors  []struct {
		Resource string `json:"resource"`
		Field    string `json:"field"`
		Code     string `json:"code"`
		Message  string `json:"message"`
	} `json:"errors"`
}

// gitURL is the clone URL of a repository with a user's credentials.
func (f *fixture) gitURL(repo *repos.Repository, user *accounts.Account, token string) string {
	return f.env.GitURL(repo.Owner.Login, repo.Name, user.Login, token)
}

// bossPush pushes the work tree's main to the repository as boss.
func (f *fixture) bossPush(t testing.TB, work string, repo *repos.Repository) {
	t.Helper()
	apptest.Git(t, work, "push", "-q", f.gitURL(repo, f.boss, f.bossToken), "HEAD:refs/heads/main")
}

// serverHead is the commit main points at in the repository ("" if none).
func (f *fixture) serverHead(t *testing.T, repo *repos.Repository) string {
	t.Helper()
	out, err := apptest.TryGit(t, t.TempDir(), "ls-remote", f.gitURL(repo, f.boss, f.bossToken), "refs/heads/main")
	if err != nil {
		t.Fatalf("ls-remote: %v\n%s", err, out)
	}
	sha, _, _ := strings.Cut(strings.TrimSpace(out), "\t")
	return sha
}

func ptr[T any](v T) *T { return &v }
