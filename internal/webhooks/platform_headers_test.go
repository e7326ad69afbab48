package webhooks_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
	"forgeapi/internal/webhooks/hookshot"
)

// platformReceiver is a receiver written as integrations are, with
// go-github's webhook helpers: it validates the signature, routes on
// WebHookType (X-GitHub-Event) and parses the payload into its type.
type platformReceiver struct {
	mu     sync.Mutex
	parsed []any
	ids    []string
	failed []string
}

func (p *platformReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	payload, err := github.ValidatePayload(r, []byte("topsecret"))
	if err == nil {
		var event any
		if event, err = github.ParseWebHook(github.WebHookType(r), payload); err == nil {
			p.mu.Lock()
			p.parsed, p.ids = append(p.parsed, event), append(p.ids, github.DeliveryID(r))
			p.mu.Unlock()
			return
		}
	}
	p.mu.Lock()
	p.failed = append(p.failed, err.Error())
	p.mu.Unlock()
	http.Error(w, err.Error(), http.StatusBadRequest)
}

func (p *platformReceiver) wait(t *testing.T, n int) []any {
	t.Helper()
	testwait.For(t, fmt.Sprintf("the receiver to parse %d events", n), func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.failed) == 0 && len(p.parsed) < n {
			return fmt.Errorf("%d parsed", len(p.parsed))
		}
		return nil
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.failed) > 0 || len(p.parsed) < n {
		t.Fatalf("receiver parsed %d events, want %d; failures %v", len(p.parsed), n, p.failed)
	}
	return p.parsed
}

// TestDeliveriesCarryPlatformHeaderNames: by default deliveries carry the
// platform's X-GitHub-* headers beside the spec's X-Service-* ones, so a
// go-github receiver routes and parses them (ping, repository), and the
// delivery log records both; API responses carry X-GitHub-Request-Id
// beside X-Service-Request-Id. With --webhook-header-names service only
// the spec's names are sent.
func TestDeliveriesCarryPlatformHeaderNames(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, loopback)
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	token := env.Token(owner, "repo", "admin:repo_hook")
	client := env.Client(token)
	rc := &platformReceiver{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	hook := hookOn(t, client, "octo", "widgets", srv.URL, "json", "topsecret", "repository")
	editDescription(t, env, token, "octo/widgets", "new words")
	var pings, edits int // deliveries may arrive in either order
	for _, e := range rc.wait(t, 2) {
		switch e := e.(type) {
		case *github.PingEvent:
			pings++
		case *github.RepositoryEvent:
			if e.GetAction() == "edited" && e.GetRepo().GetFullName() == "octo/widgets" {
				edits++
			}
		}
	}
	if pings != 1 || edits != 1 {
		t.Errorf("go-github parsed %d pings and %d edited repository events, want 1 and 1", pings, edits)
	}
	list := loggedDeliveries(t, client, "octo", "widgets", hook.GetID(), 2)
	detail, _, err := client.Repositories.GetHookDelivery(apptest.Ctx(), "octo", "widgets", hook.GetID(), list[0].GetID())
	apptest.Must(t, "delivery detail", err)
	headers := detail.GetRequest().Headers
	for _, name := range []string{"X-GitHub-Event", "X-Service-Event", "X-GitHub-Delivery", "X-Service-Delivery", "X-GitHub-Hook-ID",
		"X-GitHub-Hook-Installation-Target-ID", "X-GitHub-Hook-Installation-Target-Type"} {
		if headers[name] == "" {
			t.Errorf("delivery log lacks %s: %v", name, headers)
		}
	}
	if headers["X-GitHub-Delivery"] != detail.GetGUID() || headers["X-GitHub-Event"] != "repository" {
		t.Errorf("logged platform headers %v for delivery %s", headers, detail.GetGUID())
	}

	resp, _ := env.Do("GET", "/repos/octo/widgets", token, nil)
	if id := resp.Header.Get("X-GitHub-Request-Id"); id == "" || id != resp.Header.Get("X-Service-Request-Id") {
		t.Errorf("request ids: X-GitHub-Request-Id %q, X-Service-Request-Id %q", id, resp.Header.Get("X-Service-Request-Id"))
	}
	// The media type used, in both names, for either vendor name asked.
	for accept, want := range map[string]string{"application/vnd.github+json": "github.v3; format=json",
		"application/vnd.service.raw+json": "github.v3; param=raw; format=json"} {
		resp, _ := env.Do("GET", "/repos/octo/widgets", token, nil, "Accept", accept)
		if got := resp.Header.Get("X-GitHub-Media-Type"); got != want || resp.Header.Get("X-Service-Media-Type") != "service"+want[len("github"):] {
			t.Errorf("Accept %s: X-GitHub-Media-Type %q, X-Service-Media-Type %q", accept, got, resp.Header.Get("X-Service-Media-Type"))
		}
	}

	// Only the spec's names.
	serviceOnly := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback", HeaderNames: hookshot.HeaderNamesService}))
	got := make(chan http.Header, 1)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case got <- r.Header.Clone():
		default:
		}
	}))
	t.Cleanup(plain.Close)
	o2 := serviceOnly.User("octo")
	serviceOnly.Repo(o2, "widgets")
	hookOn(t, serviceOnly.Client(serviceOnly.Token(o2, "repo", "admin:repo_hook")), "octo", "widgets", plain.URL, "json", "")
	select {
	case h := <-got:
		if h.Get("X-Service-Event") != "ping" || h.Get("X-GitHub-Event") != "" || h.Get("X-GitHub-Delivery") != "" {
			t.Errorf("service names only: headers %v", h)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no ping delivery")
	}
}

// TestGoGithubParsesEveryEventForgeapiSends drives every kind of event
// forgeapi delivers (ping, push, create, delete, repository, star, watch,
// public, meta) to a receiver written with go-github's helpers, which
// validates each signature and parses each payload into its typed
// struct; the fields integrations read come out filled.
func TestGoGithubParsesEveryEventForgeapiSends(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, loopback)
	owner := env.User("octo")
	env.Repo(owner, "widgets", apptest.RepoOpts{Private: true})
	token := env.Token(owner, "repo", "admin:repo_hook", "user")
	client := env.Client(token)
	rc := &platformReceiver{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	hook := hookOn(t, client, "octo", "widgets", srv.URL, "json", "topsecret",
		"push", "create", "delete", "repository", "star", "watch", "public")

	work := apptest.WorkTree(t, map[string]string{"README.md": "hello\n"})
	remote := env.GitURL("octo", "widgets", "octo", token)
	apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main")    // push
	apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/feature") // create, push
	apptest.Git(t, work, "push", "-q", remote, ":refs/heads/feature")     // delete, push
	editDescription(t, env, token, "octo/widgets", "now public")          // repository edited
	if resp, body := env.DoJSON("PATCH", "/repos/octo/widgets", token, `{"private":false}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("publicize: %d %s", resp.StatusCode, body) // public, repository publicized
	}
	_, err := client.Activity.Star(apptest.Ctx(), "octo", "widgets") // star created, watch started
	apptest.Must(t, "star", err)
	// Deleting a hook drops its deliveries still queued: wait for them
	// first (under load they can be many seconds behind).
	rc.wait(t, 12)
	_, err = client.Repositories.DeleteHook(apptest.Ctx(), "octo", "widgets", hook.GetID()) // meta deleted
	apptest.Must(t, "delete hook", err)

	seen := map[string]int{}
	for _, e := range rc.wait(t, 13) {
		switch e := e.(type) {
		case *github.PingEvent:
			if e.GetHookID() == hook.GetID() && e.GetZen() != "" {
				seen["ping"]++
			}
		case *github.PushEvent:
			if e.GetRepo().GetFullName() == "octo/widgets" && e.GetPusher().GetName() == "octo" && e.GetSender().GetLogin() == "octo" {
				seen["push"]++
			}
		case *github.CreateEvent:
			if e.GetRefType() == "branch" && e.GetMasterBranch() == "main" {
				seen["create "+e.GetRef()]++
			}
		case *github.DeleteEvent:
			if e.GetRef() == "feature" && e.GetRefType() == "branch" {
				seen["delete"]++
			}
		case *github.RepositoryEvent:
			seen["repository "+e.GetAction()]++
		case *github.PublicEvent:
			if e.GetRepo().GetFullName() == "octo/widgets" && !e.GetRepo().GetPrivate() {
				seen["public"]++
			}
		case *github.StarEvent:
			if e.GetAction() == "created" && e.StarredAt != nil {
				seen["star"]++
			}
		case *github.WatchEvent:
			if e.GetAction() == "started" && e.GetSender().GetLogin() == "octo" {
				seen["watch"]++
			}
		case *github.MetaEvent:
			if e.GetAction() == "deleted" && e.GetHookID() == hook.GetID() {
				seen["meta"]++
			}
		default:
			t.Errorf("unexpected event %T", e)
		}
	}
	want := map[string]int{"ping": 1, "push": 3, "create main": 1, "create feature": 1, "delete": 1, "repository edited": 1,
		"repository publicized": 1, "public": 1, "star": 1, "watch": 1, "meta": 1}
	for k, n := range want {
		if seen[k] != n {
			t.Errorf("go-github parsed %d %s events with the expected fields, want %d (all: %v)", seen[k], k, n, seen)
		}
	}
}
