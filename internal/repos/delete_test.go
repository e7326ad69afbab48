package repos_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// TestDeleteRepository: an admin deletes a repository through the API:
// it is gone for the API and git, the organization's hook gets
// repository deleted, the feed keeps its events, and the name can be
// used again. Non-admins and tokens without delete_repo are refused.
func TestDeleteRepository(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	hubot := env.User("hubot")
	acme := env.Org("acme", octo, hubot)
	env.Repo(acme, "rockets")
	token := env.Token(octo, "repo", "delete_repo", "admin:org_hook")
	owner := env.Client(token)
	var mu sync.Mutex
	var actions []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		payload, err := github.ValidatePayload(r, []byte("s"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if e, err := github.ParseWebHook(github.WebHookType(r), payload); err == nil {
			if re, ok := e.(*github.RepositoryEvent); ok {
				mu.Lock()
				actions = append(actions, re.GetAction()+" "+re.GetRepo().GetFullName()+" by "+re.GetSender().GetLogin())
				mu.Unlock()
			}
		}
	}))
	t.Cleanup(srv.Close)
	_, _, err := owner.Organizations.CreateHook(ctx, "acme", &github.Hook{Name: github.Ptr("web"), Events: []string{"repository"},
		Config: &github.HookConfig{URL: github.Ptr(srv.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "org hook", err)
	work := apptest.WorkTree(t, map[string]string{"README.md": "hi\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("acme", "rockets", "octo", token), "HEAD:refs/heads/main")

	if resp, _ := env.Client(env.Token(hubot, "repo", "delete_repo")).Repositories.Delete(ctx, "acme", "rockets"); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("a member deletes: %d, want 403", apptest.ResponseStatus(resp))
	}
	if resp, _ := env.Client(env.Token(octo, "repo")).Repositories.Delete(ctx, "acme", "rockets"); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("deleting without delete_repo: %d, want 403", apptest.ResponseStatus(resp))
	}
	_, err = owner.Repositories.Delete(ctx, "acme", "rockets")
	apptest.Must(t, "delete", err)
	if _, resp, _ := owner.Repositories.Get(ctx, "acme", "rockets"); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("deleted repository: %d", apptest.ResponseStatus(resp))
	}
	if out, err := apptest.TryGit(t, t.TempDir(), "clone", "-q", env.GitURL("acme", "rockets", "octo", token), "c"); err == nil {
		t.Fatalf("cloned a deleted repository: %s", out)
	}
	events, _, err := owner.Activity.ListEventsForOrganization(ctx, "acme", nil)
	apptest.Must(t, "org events", err)
	if len(events) == 0 || events[0].GetRepo().GetName() != "acme/rockets" {
		t.Fatalf("the feed lost the deleted repository's events: %d events", len(events))
	}
	testwait.Until(t, "the organization hook's delivery", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(actions) > 0
	})
	mu.Lock()
	got := strings.Join(actions, "; ")
	mu.Unlock()
	if got != "deleted acme/rockets by octo" {
		t.Fatalf("organization hook got %q, want the repository deleted event", got)
	}
	// The name is free again.
	if _, _, err := owner.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("rockets")}); err != nil {
		t.Fatalf("recreate: %v", err)
	}
}
