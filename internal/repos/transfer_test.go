package repos_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// TestTransferRepository: an admin transfers a repository with pushed
// history and a hook to an organization under a new name: go-github's
// Transfer gets 202 with the new owner, the old name redirects for the
// API and git, the content and the repository's hook stay, the hook gets
// repository transferred (the old owner in changes, as go-github parses
// it), and the old owner's fine-grained token no longer selects it.
// Transfers the platform would not make at once are refused.
func TestTransferRepository(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	hubot := env.User("hubot")
	env.Org("acme", octo)
	env.Org("other", hubot)
	repo := env.Repo(octo, "hello", apptest.RepoOpts{Private: true})
	env.Repo(octo, "taken")
	token := env.Token(octo, "repo", "admin:repo_hook")
	c := env.Client(token)
	fine := env.FineGrainedToken(octo, octo, []*repos.Repository{repo}, "administration:write")

	var mu sync.Mutex
	var transfers []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		payload, err := github.ValidatePayload(r, []byte("s"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		apptest.CheckWebhook(t, github.WebHookType(r), payload)
		if e, err := github.ParseWebHook(github.WebHookType(r), payload); err == nil {
			if re, ok := e.(*github.RepositoryEvent); ok && re.GetAction() == "transferred" {
				mu.Lock()
				transfers = append(transfers, re.GetChanges().GetOwner().GetOwnerInfo().GetUser().GetLogin()+" -> "+re.GetRepo().GetFullName())
				mu.Unlock()
			}
		}
	}))
	t.Cleanup(srv.Close)
	_, _, err := c.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"repository"},
		Config: &github.HookConfig{URL: github.Ptr(srv.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	work := apptest.WorkTree(t, map[string]string{"README.md": "hello\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")

	// Refusals first: nothing moves.
	for _, c := range []struct {
		token, body string
		want        int
	}{
		{token, `{}`, http.StatusUnprocessableEntity},
		{token, `{"new_owner":"nobody"}`, http.StatusUnprocessableEntity},
		{token, `{"new_owner":"hubot"}`, http.StatusUnprocessableEntity},
		{token, `{"new_owner":"other"}`, http.StatusUnprocessableEntity},
		{token, `{"new_owner":"octo"}`, http.StatusUnprocessableEntity},
		{token, `{"new_owner":"octo","new_name":"x/y"}`, http.StatusUnprocessableEntity},
		{env.Token(hubot, "repo"), `{"new_owner":"other"}`, http.StatusNotFound}, // hubot cannot see it
		{fine, `{"new_owner":"acme"}`, http.StatusForbidden},                     // app user tokens only
	} {
		if resp, body := env.DoJSON("POST", "/repos/octo/hello/transfer", c.token, c.body); resp.StatusCode != c.want {
			t.Errorf("transfer %s: %d %s, want %d", c.body, resp.StatusCode, body, c.want)
		}
	}
	if resp, body := env.DoJSON("POST", "/repos/octo/hello/transfer", token, `{"new_owner":"octo","new_name":"taken"}`); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("transfer onto a taken name: %d %s", resp.StatusCode, body)
	}

	// go-github reads the 202 as an AcceptedError carrying the body.
	_, resp, err := c.Repositories.Transfer(ctx, "octo", "hello", github.TransferRequest{NewOwner: "acme", NewName: github.Ptr("greeting")})
	accepted, ok := err.(*github.AcceptedError)
	if !ok || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("transfer: %v", err)
	}
	var moved github.Repository
	apptest.Must(t, "transferred repository", json.Unmarshal(accepted.Raw, &moved))
	if moved.GetFullName() != "acme/greeting" || moved.GetOwner().GetLogin() != "acme" || moved.GetID() != repo.ID {
		t.Fatalf("transferred: %s", accepted.Raw)
	}
	old, _, err := c.Repositories.Get(ctx, "octo", "hello")
	apptest.Must(t, "old name", err)
	if old.GetFullName() != "acme/greeting" {
		t.Fatalf("the old name leads to %s", old.GetFullName())
	}
	hooks, _, err := c.Repositories.ListHooks(ctx, "acme", "greeting", nil)
	apptest.Must(t, "hooks", err)
	if len(hooks) != 1 {
		t.Fatalf("hooks after the transfer: %d", len(hooks))
	}
	for _, url := range []string{env.GitURL("acme", "greeting", "octo", token), env.GitURL("octo", "hello", "octo", token)} {
		dir := t.TempDir()
		apptest.Git(t, dir, "clone", "-q", url, "clone")
		apptest.Git(t, dir+"/clone", "cat-file", "-e", "HEAD:README.md")
	}
	if resp, body := env.Do("GET", "/repos/acme/greeting", fine, nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the old owner's fine-grained token still selects the repository: %d %s", resp.StatusCode, body)
	}

	testwait.Until(t, "the transferred event", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(transfers) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(transfers, ",") != "octo -> acme/greeting" {
		t.Fatalf("transferred events: %v", transfers)
	}
}
