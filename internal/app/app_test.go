package app_test

import (
	"net/http"
	"testing"

	"forgeapi/internal/apptest"
)

func TestGetRepositoryWithEachCredential(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("octocat", apptest.UserOpts{Password: "correct horse"})
	org := env.Org("acme", owner)
	private := env.Repo(org, "widgets", apptest.RepoOpts{Private: true})
	env.Repo(owner, "public")

	ctx := apptest.Ctx()
	repo, _, err := env.Client(env.Token(owner, "repo")).Repositories.Get(ctx, "ACME", "Widgets")
	apptest.Must(t, "get private repo with classic token", err)
	if repo.GetID() != private.ID || !repo.GetPrivate() || !repo.GetPermissions().GetAdmin() {
		t.Fatalf("got %+v", repo)
	}
	if _, resp, err := env.Client("").Repositories.Get(ctx, "acme", "widgets"); err == nil || apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("anonymous on private: want 404, got %v", err)
	}
	if _, _, err := env.Client("").Repositories.Get(ctx, "octocat", "public"); err != nil {
		t.Fatalf("anonymous on public: %v", err)
	}
	if _, _, err := env.BasicClient("octocat", "correct horse", "").Repositories.Get(ctx, "acme", "widgets"); err != nil {
		t.Fatalf("basic: %v", err)
	}
}
