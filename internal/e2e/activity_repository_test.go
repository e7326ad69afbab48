package e2e_test

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

func TestRepositoryCreationEmitsCreateEvent(t *testing.T) {
	t.Parallel()
	rec := &apptest.Recorder{}
	env := apptest.Start(t, apptest.WithEventSink(rec))
	alice := env.User("alice")
	org := env.Org("acme", alice)
	client := env.Client(env.Token(alice, "repo"))
	ctx := apptest.Ctx()

	_, _, err := client.Repositories.Create(ctx, "", &github.Repository{Name: github.Ptr("hello"), Description: github.Ptr("says hi")})
	apptest.Must(t, "create user repository", err)
	_, _, err = client.Repositories.Create(ctx, org.Login, &github.Repository{Name: github.Ptr("tools"), Private: github.Ptr(true)})
	apptest.Must(t, "create org repository", err)

	creates := ofType(feed(t, env, "/repos/alice/hello/events", ""), "CreateEvent")
	if len(creates) != 1 || !creates[0].Public || creates[0].Actor.Login != "alice" {
		t.Fatalf("CreateEvent of alice/hello: %+v", creates)
	}
	var payload map[string]any
	apptest.Must(t, "payload", json.Unmarshal(creates[0].Payload, &payload))
	want := map[string]any{"ref": nil, "full_ref": "", "ref_type": "repository", "master_branch": "main", "description": "says hi", "pusher_type": "user"}
	for k, v := range want {
		if payload[k] != v {
			t.Errorf("payload[%s] = %#v, want %#v", k, payload[k], v)
		}
	}
	private := ofType(feed(t, env, "/repos/acme/tools/events", env.Token(alice, "repo")), "CreateEvent")
	if len(private) != 1 || private[0].Public {
		t.Fatalf("CreateEvent of the private acme/tools must be private: %+v", private)
	}
	hooks := rec.Hook("repository")
	if len(hooks) != 2 || hooks[0].HookPayload["action"] != "created" || hooks[1].Org == nil || hooks[1].Org.ID != org.ID {
		t.Fatalf("repository webhook events: %+v", hooks)
	}
	for _, e := range ofType(feed(t, env, "/events", ""), "CreateEvent") {
		if e.Repo.Name == "acme/tools" {
			t.Fatal("the private repository's CreateEvent is in the public feed")
		}
	}
}

func TestPatchRepository(t *testing.T) {
	t.Parallel()
	rec := &apptest.Recorder{}
	env := apptest.Start(t, apptest.WithEventSink(rec))
	alice, bob := env.User("alice"), env.User("bob")
	org := env.Org("acme", alice, bob)
	repo := env.Repo(org, "widgets", apptest.RepoOpts{Private: true, Description: "old"})
	client := env.Client(env.Token(alice, "repo"))
	ctx := apptest.Ctx()
	env.Do("PUT", "/user/starred/acme/widgets", env.Token(alice, "repo"), nil) // a private event

	edited, _, err := client.Repositories.Edit(ctx, "acme", "widgets", &github.Repository{
		Name: github.Ptr("gadgets"), Description: github.Ptr("new"), DefaultBranch: github.Ptr("trunk")})
	apptest.Must(t, "edit", err)
	if edited.GetName() != "gadgets" || edited.GetDescription() != "new" || edited.GetDefaultBranch() != "trunk" ||
		!edited.GetPrivate() || edited.GetID() != repo.ID || !edited.GetPermissions().GetAdmin() {
		t.Fatalf("edited: %+v", edited)
	}
	head, err := exec.Command("git", "--git-dir="+env.App.Repos.GitDir(repo.ID), "symbolic-ref", "HEAD").Output()
	apptest.Must(t, "read HEAD", err)
	if strings.TrimSpace(string(head)) != "refs/heads/trunk" {
		t.Fatalf("HEAD of the bare repository: %s", head)
	}
	if renamed := rec.Hook("repository"); len(renamed) < 3 || renamed[1].HookPayload["action"] != "renamed" || renamed[2].HookPayload["action"] != "edited" {
		t.Fatalf("repository webhook events: %+v", renamed)
	}

	edited, _, err = client.Repositories.Edit(ctx, "acme", "gadgets", &github.Repository{Visibility: github.Ptr("public")})
	apptest.Must(t, "make public", err)
	if edited.GetPrivate() || edited.GetVisibility() != "public" {
		t.Fatalf("made public: %+v", edited)
	}
	publics := ofType(feed(t, env, "/events", ""), "PublicEvent")
	if len(publics) != 1 || !publics[0].Public || publics[0].Repo.Name != "acme/gadgets" || string(publics[0].Payload) != "{}" {
		t.Fatalf("PublicEvent in the public feed: %+v", publics)
	}
	if len(rec.Hook("public")) != 1 {
		t.Fatalf("public webhook events: %d", len(rec.Hook("public")))
	}
	if n := len(ofType(feed(t, env, "/events", ""), "WatchEvent")); n != 0 {
		t.Fatal("an event stored while the repository was private became public")
	}

	// Back to private: its public events leave the public feeds.
	_, _, err = client.Repositories.Edit(ctx, "acme", "gadgets", &github.Repository{Private: github.Ptr(true)})
	apptest.Must(t, "make private", err)
	if n := len(ofType(feed(t, env, "/events", ""), "PublicEvent")); n != 0 {
		t.Fatal("a privatized repository's events stay in the public feed")
	}
	if last := rec.Hook("repository"); last[len(last)-1].HookPayload["action"] != "privatized" {
		t.Fatalf("last repository webhook: %+v", last[len(last)-1].HookPayload)
	}

	checks := []struct {
		name, token, body string
		want              int
	}{
		{"member is not admin", env.Token(bob, "repo"), `{"description":"x"}`, http.StatusForbidden},
		{"bad visibility", env.Token(alice, "repo"), `{"visibility":"secret"}`, http.StatusUnprocessableEntity},
		{"contradiction", env.Token(alice, "repo"), `{"visibility":"public","private":true}`, http.StatusUnprocessableEntity},
		{"bad name", env.Token(alice, "repo"), `{"name":"a b"}`, http.StatusUnprocessableEntity},
		{"bad branch", env.Token(alice, "repo"), `{"default_branch":"a..b"}`, http.StatusUnprocessableEntity},
		{"wrong type", env.Token(alice, "repo"), `{"private":"no"}`, http.StatusUnprocessableEntity},
		{"anonymous", "", `{"description":"x"}`, http.StatusNotFound}, // the description documents no 401
		{"fine-grained without administration", env.FineGrainedToken(alice, org, apptest.AllRepos, "contents:write"), `{"description":"x"}`, http.StatusForbidden},
		{"fine-grained administration:write", env.FineGrainedToken(alice, org, apptest.AllRepos, "administration:write"), `{"description":"y"}`, http.StatusOK},
	}
	for _, c := range checks {
		resp, body := env.DoJSON("PATCH", "/repos/acme/gadgets", c.token, c.body)
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, resp.StatusCode, body, c.want)
		}
	}

	env.Repo(org, "taken")
	resp, body := env.DoJSON("PATCH", "/repos/acme/gadgets", env.Token(alice, "repo"), `{"name":"TAKEN"}`)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), "already_exists") {
		t.Errorf("rename onto an existing name: %d %s", resp.StatusCode, body)
	}
	env.Repo(alice, "open")
	resp, body = env.DoJSON("PATCH", "/repos/alice/open", env.Token(alice, "public_repo"), `{"private":true}`)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("public_repo making a repository private: %d %s", resp.StatusCode, body)
	}
}
