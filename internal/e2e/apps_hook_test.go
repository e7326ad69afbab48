package e2e_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apps"
	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// delivery is one delivery an app receiver got, parsed by go-github.
type delivery struct {
	Event  string
	GUID   string
	Header http.Header
	Body   any // github.ParseWebHook's value
	Path   string
}

// appReceiver receives an app's webhook as an app does with go-github:
// github.ValidatePayload with the app's secret (a bad signature fails the
// test), WebHookType, ParseWebHook; each body is also checked against the
// platform's payload schema (apptest.CheckWebhook).
type appReceiver struct {
	t      *testing.T
	secret string
	srv    *httptest.Server
	mu     sync.Mutex
	got    []delivery
}

func newAppReceiver(t *testing.T, secret string) *appReceiver {
	rc := &appReceiver{t: t, secret: secret}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := github.ValidatePayload(r, []byte(rc.secret))
		if err != nil {
			t.Errorf("delivery %s: %v", github.DeliveryID(r), err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		apptest.CheckWebhook(t, github.WebHookType(r), body)
		parsed, err := github.ParseWebHook(github.WebHookType(r), body)
		if err != nil {
			t.Errorf("parse %s: %v", github.WebHookType(r), err)
		}
		rc.mu.Lock()
		rc.got = append(rc.got, delivery{Event: github.WebHookType(r), GUID: github.DeliveryID(r), Header: r.Header.Clone(),
			Body: parsed, Path: r.URL.Path})
		rc.mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// waitFor waits until cond holds for the deliveries received.
func (rc *appReceiver) waitFor(what string, cond func([]delivery) bool) []delivery {
	rc.t.Helper()
	var got []delivery
	testwait.For(rc.t, what, func() error {
		rc.mu.Lock()
		got = slices.Clone(rc.got)
		rc.mu.Unlock()
		if !cond(got) {
			return fmt.Errorf("received %d deliveries", len(got))
		}
		return nil
	})
	return got
}

func count(ds []delivery, event string) int {
	n := 0
	for _, d := range ds {
		if d.Event == event {
			n++
		}
	}
	return n
}

// TestAppWebhook: an app's webhook receives, as go-github parses them,
// installation created and installation_repositories added about its
// installation, and from the installed repository a push (with
// installation.id), and a commit status and a contents write made with
// its installation token, whose sender is its bot; nothing from a
// repository outside the selection nor an event it did not subscribe to.
// The delivery log, read with the app's JWT through ghinstallation and
// go-github, holds exactly those deliveries; one is redelivered, and the
// config is read and changed.
func TestAppWebhook(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	rc := newAppReceiver(t, "app-s3cret")
	octo := env.User("octo")
	org := env.Org("acme", octo)
	inside := env.Repo(org, "inside", apptest.RepoOpts{Private: true})
	outside := env.Repo(org, "outside", apptest.RepoOpts{Private: true})
	a := env.RegisterApp(org, "Hook Bot", "contents:write,statuses:write", apptest.AppOpts{
		Events: []string{"push", "status"}, WebhookURL: rc.srv.URL + "/hook", WebhookSecret: "app-s3cret"})
	inst := env.Install(a, org, inside)

	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	sha := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	for _, repo := range []string{"inside", "outside"} {
		apptest.Git(t, work, "push", "-q", env.GitURL("acme", repo, "octo", token), "HEAD:refs/heads/main")
	}
	if _, err := env.Client(token).Activity.Star(ctx, "acme", "inside"); err != nil { // not subscribed
		t.Fatal(err)
	}
	atr, err := ghinstallation.NewAppsTransport(env.Transport(), a.ID, a.PrivateKeyPEM)
	apptest.Must(t, "apps transport", err)
	atr.BaseURL = env.APIBase()
	itr := ghinstallation.NewFromAppsTransport(atr, inst.ID)
	ic := env.ClientWith(itr)
	_, _, err = ic.Repositories.CreateStatus(ctx, "acme", "inside", sha, github.RepoStatus{State: github.Ptr("success"), Context: github.Ptr("bot")})
	apptest.Must(t, "status with the installation token", err)
	_, _, err = ic.Repositories.CreateFile(ctx, "acme", "inside", "b.txt", &github.RepositoryContentFileOptions{
		Message: github.Ptr("bot writes"), Content: []byte("2\n"), Branch: github.Ptr("main")})
	apptest.Must(t, "contents write with the installation token", err)
	env.Install(a, org, inside, outside)

	got := rc.waitFor("the installation events, two pushes and a status", func(ds []delivery) bool {
		return count(ds, "installation") == 1 && count(ds, "installation_repositories") == 1 &&
			count(ds, "push") == 2 && count(ds, "status") == 1
	})
	checkAppDeliveries(t, got, a, inst, inside.ID)

	ac := env.ClientWith(atr)
	log, _, err := ac.Apps.ListHookDeliveries(ctx, &github.ListCursorOptions{PerPage: 100})
	apptest.Must(t, "list app hook deliveries", err)
	if len(log) != 5 {
		t.Fatalf("delivery log has %d deliveries, want 5 (nothing from outside, no star): %+v", len(log), log)
	}
	for _, d := range log {
		if d.GetInstallationID() != inst.ID || d.GetRepositoryID() == outside.ID {
			t.Fatalf("delivery %+v", d)
		}
	}
	checkDeliveryRoutes(t, env, ac, rc, log)
	checkTestsEndpoint(t, env, token)
}

// checkTestsEndpoint: a repository hook's tests endpoint re-sends the
// repository's latest push, never the app's copy of it (which names the
// installation).
func checkTestsEndpoint(t *testing.T, env *apptest.Env, token string) {
	t.Helper()
	ctx := apptest.Ctx()
	plain := newAppReceiver(t, "")
	c := env.Client(token)
	hook, _, err := c.Repositories.CreateHook(ctx, "acme", "inside", &github.Hook{Events: []string{"push"},
		Config: &github.HookConfig{URL: github.Ptr(plain.srv.URL), ContentType: github.Ptr("json")}})
	apptest.Must(t, "create a repository hook", err)
	_, err = c.Repositories.TestHook(ctx, "acme", "inside", hook.GetID())
	apptest.Must(t, "test the hook", err)
	got := plain.waitFor("the tests endpoint's push", func(ds []delivery) bool { return count(ds, "push") == 1 })
	for _, d := range got {
		if e, ok := d.Body.(*github.PushEvent); ok && (e.Installation != nil || e.GetSender().GetLogin() != "hook-bot[bot]") {
			t.Fatalf("the tests endpoint sent %+v (installation %+v), want the latest push, the bot's, without installation",
				e, e.Installation)
		}
	}
}

// checkAppDeliveries checks the deliveries' headers and payloads.
func checkAppDeliveries(t *testing.T, got []delivery, a *apps.Created, inst *apps.Installation, insideID int64) {
	t.Helper()
	appID := strconv.FormatInt(a.ID, 10)
	for _, d := range got {
		if d.Header.Get("X-GitHub-Hook-Installation-Target-Type") != "integration" ||
			d.Header.Get("X-GitHub-Hook-Installation-Target-ID") != appID {
			t.Errorf("%s target headers: %v", d.Event, d.Header)
		}
		switch e := d.Body.(type) {
		case *github.InstallationEvent:
			if e.GetAction() != "created" || e.GetInstallation().GetID() != inst.ID || len(e.Repositories) != 1 ||
				e.Repositories[0].GetID() != insideID || e.GetInstallation().GetAppID() != a.ID {
				t.Errorf("installation event %+v", e)
			}
		case *github.InstallationRepositoriesEvent:
			if e.GetAction() != "added" || len(e.RepositoriesAdded) != 1 || e.RepositoriesAdded[0].GetName() != "outside" ||
				e.GetRepositorySelection() != "selected" || e.GetInstallation().GetID() != inst.ID {
				t.Errorf("installation_repositories event %+v", e)
			}
		case *github.PushEvent:
			if e.GetInstallation().GetID() != inst.ID || e.GetInstallation().GetNodeID() == "" || e.GetRepo().GetID() != insideID {
				t.Errorf("push event %+v", e)
			}
			if e.GetSender().GetLogin() != "octo" && (e.GetSender().GetLogin() != "hook-bot[bot]" || e.GetSender().GetType() != "Bot") {
				t.Errorf("push sender %+v", e.GetSender())
			}
		case *github.StatusEvent:
			if e.GetInstallation().GetID() != inst.ID || e.GetSender().GetLogin() != "hook-bot[bot]" || e.GetSender().GetType() != "Bot" {
				t.Errorf("status event %+v, sender %+v", e, e.GetSender())
			}
		default:
			t.Errorf("unexpected %s delivery %T", d.Event, d.Body)
		}
	}
	var senders []string
	for _, d := range got {
		if e, ok := d.Body.(*github.PushEvent); ok {
			senders = append(senders, e.GetSender().GetLogin())
		}
	}
	if slices.Sort(senders); !slices.Equal(senders, []string{"hook-bot[bot]", "octo"}) {
		t.Errorf("push senders %v, want the bot's contents write and octo's push", senders)
	}
}

// checkDeliveryRoutes drives the app's hook routes with go-github:
// delivery detail, redelivery, config read and update, status filter.
func checkDeliveryRoutes(t *testing.T, env *apptest.Env, ac *github.Client, rc *appReceiver, log []*github.HookDelivery) {
	t.Helper()
	ctx := apptest.Ctx()
	var push *github.HookDelivery
	for _, d := range log {
		if d.GetEvent() == "push" {
			push = d
		}
	}
	detail, _, err := ac.Apps.GetHookDelivery(ctx, push.GetID())
	apptest.Must(t, "get app hook delivery", err)
	var payload struct {
		Installation struct {
			ID int64 `json:"id"`
		} `json:"installation"`
	}
	if err := json.Unmarshal(detail.Request.GetRawPayload(), &payload); err != nil || payload.Installation.ID != push.GetInstallationID() ||
		detail.GetStatusCode() != 200 {
		t.Fatalf("delivery detail %+v (%v)", detail, err)
	}

	cfg, _, err := ac.Apps.GetHookConfig(ctx)
	apptest.Must(t, "get app hook config", err)
	if cfg.GetURL() != rc.srv.URL+"/hook" || cfg.GetContentType() != "json" || cfg.GetSecret() != "********" {
		t.Fatalf("config %+v", cfg)
	}
	cfg, _, err = ac.Apps.UpdateHookConfig(ctx, github.HookConfig{URL: github.Ptr(rc.srv.URL + "/v2"), ContentType: github.Ptr("form")})
	apptest.Must(t, "update app hook config", err)
	if cfg.GetURL() != rc.srv.URL+"/v2" || cfg.GetContentType() != "form" || cfg.GetSecret() != "********" {
		t.Fatalf("updated config %+v", cfg)
	}
	if _, resp, err := ac.Apps.RedeliverHookDelivery(ctx, push.GetID()); apptest.ResponseStatus(resp) != http.StatusAccepted {
		t.Fatalf("redeliver: %v", err)
	}
	rc.waitFor("the redelivery, as form to the new URL with the secret kept", func(ds []delivery) bool {
		return slices.ContainsFunc(ds, func(d delivery) bool { return d.GUID == push.GetGUID() && d.Path == "/v2" })
	})
	page, resp, err := ac.Apps.ListHookDeliveries(ctx, &github.ListCursorOptions{PerPage: 2})
	apptest.Must(t, "list a page", err)
	if len(page) != 2 || !page[0].GetRedelivery() || resp.Cursor == "" {
		t.Fatalf("first page %+v, cursor %q", page, resp.Cursor)
	}
	next, _, err := ac.Apps.ListHookDeliveries(ctx, &github.ListCursorOptions{PerPage: 2, Cursor: resp.Cursor})
	apptest.Must(t, "list the next page", err)
	if len(next) != 2 || next[0].GetID() >= page[1].GetID() {
		t.Fatalf("next page %+v", next)
	}
	checkStatusFilter(t, env, ac)
}

// checkStatusFilter lists the failed deliveries (none) with the status
// parameter, which go-github does not send, through the client's
// transport (the app's JWT).
func checkStatusFilter(t *testing.T, env *apptest.Env, ac *github.Client) {
	t.Helper()
	resp, err := ac.Client().Get(env.APIBase() + "/app/hook/deliveries?status=failure")
	apptest.Must(t, "list failed deliveries", err)
	defer resp.Body.Close()
	var failed []any
	if err := json.NewDecoder(resp.Body).Decode(&failed); err != nil || resp.StatusCode != 200 || len(failed) != 0 {
		t.Fatalf("failed deliveries: %d %v %v", resp.StatusCode, failed, err)
	}
}

// TestAppWebhookInstallationLifecycle: the app's delivery log holds, in
// order, installation created, suspend (and no push while suspended),
// unsuspend, a push, installation_repositories removed when the
// installation narrows to selected repositories, and installation
// deleted when the app uninstalls itself.
func TestAppWebhookInstallationLifecycle(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	rc := newAppReceiver(t, "")
	octo := env.User("octo")
	env.Repo(octo, "one", apptest.RepoOpts{})
	two := env.Repo(octo, "two", apptest.RepoOpts{})
	a := env.RegisterApp(octo, "Life Bot", "contents:read", apptest.AppOpts{Events: []string{"push"}, WebhookURL: rc.srv.URL})
	inst := env.Install(a, octo, nil)
	atr, err := ghinstallation.NewAppsTransport(env.Transport(), a.ID, a.PrivateKeyPEM)
	apptest.Must(t, "apps transport", err)
	atr.BaseURL = env.APIBase()
	ac := env.ClientWith(atr)
	if cfg, _, err := ac.Apps.GetHookConfig(ctx); err != nil || cfg.Secret != nil || cfg.GetURL() != rc.srv.URL {
		t.Fatalf("config of a hook without a secret: %+v, %v", cfg, err)
	}
	if _, err := env.Apps().Create(env.Context(), apps.NewApp{Name: "Bad URL", Owner: octo, WebhookURL: "ftp://x"}); !errors.Is(err, apps.ErrInvalid) {
		t.Fatalf("an app with an ftp webhook URL: %v", err)
	}
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	push := func(ref string) {
		apptest.Git(t, work, "push", "-q", env.GitURL("octo", "one", "octo", token), "HEAD:refs/heads/"+ref)
	}

	_, err = ac.Apps.SuspendInstallation(ctx, inst.ID)
	apptest.Must(t, "suspend", err)
	push("main") // not delivered: the installation is suspended
	_, err = ac.Apps.UnsuspendInstallation(ctx, inst.ID)
	apptest.Must(t, "unsuspend", err)
	push("next")
	env.Install(a, octo, two)
	_, err = ac.Apps.DeleteInstallation(ctx, inst.ID)
	apptest.Must(t, "uninstall", err)

	log, _, err := ac.Apps.ListHookDeliveries(ctx, &github.ListCursorOptions{PerPage: 100})
	apptest.Must(t, "list deliveries", err)
	var got []string
	for _, d := range slices.Backward(log) {
		got = append(got, d.GetEvent()+"."+d.GetAction())
	}
	want := []string{"installation.created", "installation.suspend", "installation.unsuspend", "push.",
		"installation_repositories.removed", "installation.deleted"}
	if !slices.Equal(got, want) {
		t.Fatalf("delivery log %v, want %v", got, want)
	}
}
