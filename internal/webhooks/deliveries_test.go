package webhooks_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// loopback lets deliveries reach receivers on 127.0.0.1.
var loopback = apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"})

// hookOn creates a repository hook through the API and returns it.
func hookOn(t *testing.T, client *github.Client, owner, repo, url, contentType, secret string, events ...string) *github.Hook {
	t.Helper()
	cfg := &github.HookConfig{URL: github.Ptr(url), ContentType: github.Ptr(contentType)}
	if secret != "" {
		cfg.Secret = github.Ptr(secret)
	}
	h, _, err := client.Repositories.CreateHook(apptest.Ctx(), owner, repo, &github.Hook{Config: cfg, Events: events, Active: github.Ptr(true)})
	apptest.Must(t, "create hook", err)
	return h
}

// orgHookOn creates an organization hook through the API and returns it.
func orgHookOn(t *testing.T, client *github.Client, org, url, secret string, events ...string) *github.Hook {
	t.Helper()
	cfg := &github.HookConfig{URL: github.Ptr(url), ContentType: github.Ptr("json"), Secret: github.Ptr(secret)}
	h, _, err := client.Organizations.CreateHook(apptest.Ctx(), org, &github.Hook{Name: github.Ptr("web"), Config: cfg, Events: events})
	apptest.Must(t, "create org hook", err)
	return h
}

// editDescription changes a repository's description (a repository
// "edited" event).
func editDescription(t *testing.T, env *apptest.Env, token, fullName, description string) {
	t.Helper()
	resp, body := env.DoJSON("PATCH", "/repos/"+fullName, token, fmt.Sprintf(`{"description":%q}`, description))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PATCH /repos/%s: %d %s", fullName, resp.StatusCode, body)
	}
}

func TestDeliveriesAreSignedInBothContentTypes(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, loopback)
	owner := env.User("octo")
	repo := env.Repo(owner, "widgets")
	token := env.Token(owner, "repo", "admin:repo_hook")
	client := env.Client(token)
	asJSON, asForm := newReceiver(t, "json-secret"), newReceiver(t, "form-secret")
	jsonHook := hookOn(t, client, "octo", "widgets", asJSON.URL(), "json", "json-secret", "repository", "push")
	formHook := hookOn(t, client, "octo", "widgets", asForm.URL(), "form", "form-secret", "*")

	for _, c := range []struct {
		rc        *receiver
		hook      *github.Hook
		mediaType string
	}{{asJSON, jsonHook, "application/json"}, {asForm, formHook, "application/x-www-form-urlencoded"}} {
		ping := c.rc.waitEvents("ping", 1)[0]
		h := ping.Header
		if h.Get("X-Service-Hook-ID") != strconv.FormatInt(c.hook.GetID(), 10) ||
			h.Get("X-Service-Hook-Installation-Target-ID") != strconv.FormatInt(repo.ID, 10) ||
			h.Get("X-Service-Hook-Installation-Target-Type") != "repository" ||
			!strings.HasPrefix(h.Get("User-Agent"), "Service-Hookshot/") || h.Get("Content-Type") != c.mediaType ||
			!strings.HasPrefix(h.Get("X-Hub-Signature-256"), "sha256=") || !strings.HasPrefix(h.Get("X-Hub-Signature"), "sha1=") ||
			len(ping.GUID) != 36 {
			t.Errorf("ping headers: %v", h)
		}
		p := ping.Payload
		hook, _ := p["hook"].(map[string]any)
		if p["zen"] == "" || p["hook_id"] != float64(c.hook.GetID()) || hook["id"] != float64(c.hook.GetID()) ||
			field(p, "repository", "full_name") != "octo/widgets" || field(p, "sender", "login") != "octo" {
			t.Errorf("ping payload: %v", p)
		}
		if cfg, _ := hook["config"].(map[string]any); cfg["secret"] != nil && cfg["secret"] != "********" {
			t.Errorf("ping payload shows the secret: %v", cfg)
		}
		if strings.Contains(string(ping.Raw), "-secret") {
			t.Errorf("the secret is in the payload: %s", ping.Raw)
		}
	}

	editDescription(t, env, token, "octo/widgets", "signed")
	a, b := asJSON.waitEvents("repository", 1)[0], asForm.waitEvents("repository", 1)[0]
	if a.GUID != b.GUID || a.GUID == "" {
		t.Errorf("one event's deliveries have GUIDs %q and %q", a.GUID, b.GUID)
	}
	for _, r := range []received{a, b} {
		if r.Payload["action"] != "edited" || field(r.Payload, "repository", "description") != "signed" {
			t.Errorf("repository payload: %v", r.Payload)
		}
	}
	if !strings.HasPrefix(string(b.Raw), "payload=") {
		t.Errorf("form body: %.60s", b.Raw)
	}
}

// field reads payload[object][name].
func field(payload map[string]any, object, name string) any {
	o, _ := payload[object].(map[string]any)
	return o[name]
}

func TestEveryEventReachesRepositoryAndOrganizationHooks(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, loopback)
	owner := env.User("boss")
	env.Org("acme", owner)
	token := env.Token(owner, "repo", "admin:repo_hook", "admin:org_hook")
	client := env.Client(token)
	orgRC := newReceiver(t, "org-secret")
	orgHookOn(t, client, "acme", orgRC.URL(), "org-secret", "*")
	orgRC.waitEvents("ping", 1)

	resp, body := env.DoJSON("POST", "/orgs/acme/repos", token, `{"name":"gadgets","private":true}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create repository: %d %s", resp.StatusCode, body)
	}
	created := orgRC.waitEvents("repository", 1)[0]
	if created.Payload["action"] != "created" || field(created.Payload, "organization", "login") != "acme" {
		t.Errorf("repository created payload: %v", created.Payload)
	}
	repoRC := newReceiver(t, "repo-secret")
	repoHook := hookOn(t, client, "acme", "gadgets", repoRC.URL(), "json", "repo-secret", "*")
	repoRC.waitEvents("ping", 1)

	work := apptest.WorkTree(t, map[string]string{"README.md": "hello\n"})
	url := env.GitURL("acme", "gadgets", "boss", token)
	apptest.Git(t, work, "push", "-q", url, "main")
	apptest.Git(t, work, "push", "-q", url, "main:topic")
	apptest.Git(t, work, "push", "-q", url, "--delete", "topic")
	if _, err := client.Activity.Star(apptest.Ctx(), "acme", "gadgets"); err != nil {
		t.Fatal(err)
	}
	resp, body = env.DoJSON("PATCH", "/repos/acme/gadgets", token, `{"private":false}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("publicize: %d %s", resp.StatusCode, body)
	}

	for _, rc := range []*receiver{repoRC, orgRC} {
		pushes := rc.waitEvents("push", 3)
		if pushes[0].Payload["ref"] != "refs/heads/main" || field(pushes[0].Payload, "pusher", "name") == nil {
			t.Errorf("push payload: %v", pushes[0].Payload)
		}
		creates := rc.waitEvents("create", 2)
		if creates[1].Payload["ref"] != "topic" || creates[1].Payload["ref_type"] != "branch" {
			t.Errorf("create payload: %v", creates[1].Payload)
		}
		if d := rc.waitEvents("delete", 1)[0]; d.Payload["ref"] != "topic" {
			t.Errorf("delete payload: %v", d.Payload)
		}
		if s := rc.waitEvents("star", 1)[0]; s.Payload["action"] != "created" {
			t.Errorf("star payload: %v", s.Payload)
		}
		if w := rc.waitEvents("watch", 1)[0]; w.Payload["action"] != "started" {
			t.Errorf("watch payload: %v", w.Payload)
		}
		rc.waitEvents("public", 1)
		if field(rc.waitEvents("public", 1)[0].Payload, "organization", "login") != "acme" {
			t.Errorf("public payload without the organization")
		}
	}

	repoRC.waitFor("the repository hook's publicized event", func([]received) bool {
		return len(repoRC.events("repository")) == 1
	})
	if _, err := client.Repositories.DeleteHook(apptest.Ctx(), "acme", "gadgets", repoHook.GetID()); err != nil {
		t.Fatal(err)
	}
	meta := repoRC.waitEvents("meta", 1)[0]
	if meta.Payload["action"] != "deleted" || meta.Payload["hook_id"] != float64(repoHook.GetID()) {
		t.Errorf("meta payload: %v", meta.Payload)
	}
	editDescription(t, env, token, "acme/gadgets", "after the repository hook went")
	orgRC.waitFor("the organization hook's edited event", func([]received) bool {
		for _, r := range orgRC.events("repository") {
			if r.Payload["action"] == "edited" {
				return true
			}
		}
		return false
	})
	if n := len(repoRC.events("repository")); n != 1 { // publicized only
		t.Errorf("the deleted hook received %d repository events", n)
	}
}

// loggedDeliveries waits until the hook has n deliveries, none pending,
// and returns them newest first.
func loggedDeliveries(t *testing.T, client *github.Client, owner, repo string, hookID int64, n int) []*github.HookDelivery {
	t.Helper()
	return awaitLogged(t, fmt.Sprintf("%s/%s hook %d", owner, repo, hookID), n, func() []*github.HookDelivery {
		list, _, err := client.Repositories.ListHookDeliveries(apptest.Ctx(), owner, repo, hookID, &github.ListCursorOptions{PerPage: 100})
		apptest.Must(t, "list deliveries", err)
		return list
	})
}

// awaitLogged polls list until it holds at least n deliveries, none
// pending, and returns them.
func awaitLogged(t *testing.T, what string, n int, list func() []*github.HookDelivery) []*github.HookDelivery {
	t.Helper()
	var got []*github.HookDelivery
	testwait.For(t, fmt.Sprintf("%s: %d deliveries logged done", what, n), func() error {
		got = list()
		pending := 0
		for _, d := range got {
			if d.GetStatus() == "pending" {
				pending++
			}
		}
		if len(got) < n || pending > 0 {
			return fmt.Errorf("%d logged, %d of them pending", len(got), pending)
		}
		return nil
	})
	return got
}

func TestDeliveriesAPI(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, loopback)
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	token := env.Token(owner, "repo", "admin:repo_hook")
	client := env.Client(token)
	rc := newReceiver(t, "")
	hook := hookOn(t, client, "octo", "widgets", rc.URL(), "json", "", "repository")
	for i := range 5 {
		editDescription(t, env, token, "octo/widgets", fmt.Sprintf("d%d", i))
	}
	all := loggedDeliveries(t, client, "octo", "widgets", hook.GetID(), 6)
	for i, d := range all {
		if i > 0 && d.GetID() >= all[i-1].GetID() {
			t.Fatalf("deliveries not newest first: %v", all)
		}
		if d.GetStatus() != "OK" || d.GetStatusCode() != 200 || d.DeliveredAt == nil || d.GetRepositoryID() == 0 {
			t.Errorf("delivery %d: %v", i, d)
		}
	}
	if all[len(all)-1].GetEvent() != "ping" || all[0].GetAction() != "edited" {
		t.Errorf("events: first %s last %s", all[len(all)-1].GetEvent(), all[0].GetAction())
	}

	// Cursor pages: 2 + 2 + 2, with next and prev links.
	var paged []int64
	opts := &github.ListCursorOptions{PerPage: 2}
	for pages := 0; ; pages++ {
		list, resp, err := client.Repositories.ListHookDeliveries(apptest.Ctx(), "octo", "widgets", hook.GetID(), opts)
		apptest.Must(t, "list page", err)
		for _, d := range list {
			paged = append(paged, d.GetID())
		}
		link := resp.Header.Get("Link")
		if (pages > 0) != strings.Contains(link, `rel="prev"`) {
			t.Errorf("page %d Link: %s", pages, link)
		}
		if resp.Cursor == "" {
			break
		}
		opts.Cursor = resp.Cursor
	}
	if fmt.Sprint(paged) != fmt.Sprint(ids(all)) {
		t.Errorf("pages gave %v, want %v", paged, ids(all))
	}

	// Failures, the status filter and last_response.
	rc.Status.Store(http.StatusInternalServerError)
	if _, err := client.Repositories.PingHook(apptest.Ctx(), "octo", "widgets", hook.GetID()); err != nil {
		t.Fatal(err)
	}
	all = loggedDeliveries(t, client, "octo", "widgets", hook.GetID(), 7)
	failures := deliveriesWithStatus(t, client, "repos/octo/widgets", hook.GetID(), "failure")
	if len(failures) != 1 || failures[0].GetStatusCode() != 500 || failures[0].GetStatus() != "Invalid HTTP Response: 500" {
		t.Errorf("failures: %v", failures)
	}
	successes := deliveriesWithStatus(t, client, "repos/octo/widgets", hook.GetID(), "success")
	if len(successes) != 6 {
		t.Errorf("%d successes, want 6", len(successes))
	}
	got, _, err := client.Repositories.GetHook(apptest.Ctx(), "octo", "widgets", hook.GetID())
	apptest.Must(t, "get hook", err)
	if lr := got.LastResponse; lr["code"] != float64(500) || lr["message"] != "Invalid HTTP Response: 500" {
		t.Errorf("last_response: %v", lr)
	}
	for _, bad := range []struct {
		query  string
		status int
	}{{"status=sometimes", 422}, {"cursor=nonsense", 400}, {"per_page=x", 422}} {
		resp, body := env.Do("GET", fmt.Sprintf("/repos/octo/widgets/hooks/%d/deliveries?%s", hook.GetID(), bad.query), token, nil)
		if resp.StatusCode != bad.status || !strings.Contains(string(body), `"message"`) {
			t.Errorf("%s: %d %s", bad.query, resp.StatusCode, body)
		}
	}

	// Detail.
	rc.Status.Store(0)
	d, _, err := client.Repositories.GetHookDelivery(apptest.Ctx(), "octo", "widgets", hook.GetID(), all[1].GetID())
	apptest.Must(t, "get delivery", err)
	if d.Request.GetHeader("X-Service-Event") != "repository" ||
		d.Request.GetHeader("X-Service-Delivery") != d.GetGUID() || d.Response.GetHeader("x-receiver") != "test" ||
		string(d.Response.GetRawPayload()) != `"thanks"` {
		t.Errorf("delivery detail: %v", d)
	}
	if !strings.Contains(string(d.Request.GetRawPayload()), `"action":"edited"`) {
		t.Errorf("request payload: %v", d.Request)
	}
	resp, body := env.Do("GET", fmt.Sprintf("/repos/octo/widgets/hooks/%d/deliveries/%d", hook.GetID(), all[1].GetID()), token, nil)
	if !strings.Contains(string(body), fmt.Sprintf(`"url":%q`, rc.URL())) {
		t.Errorf("delivery detail without its url: %s", body)
	}
	resp, _ = env.Do("GET", fmt.Sprintf("/repos/octo/widgets/hooks/%d/deliveries/999999", hook.GetID()), token, nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown delivery: %d", resp.StatusCode)
	}

	// Redelivery: a new delivery with the same GUID.
	if rresp, err := redeliver(client, "octo", "widgets", hook.GetID(), all[1].GetID()); err != nil || rresp.StatusCode != http.StatusAccepted {
		t.Fatalf("redeliver: %v %v", rresp, err)
	}
	rc.waitFor("the redelivery", func(got []received) bool { return countGUID(got, d.GetGUID()) == 2 })
	all = loggedDeliveries(t, client, "octo", "widgets", hook.GetID(), 8)
	if all[0].GetGUID() != d.GetGUID() || !all[0].GetRedelivery() {
		t.Errorf("redelivery logged as %v", all[0])
	}
}

func redeliver(client *github.Client, owner, repo string, hookID, id int64) (*github.Response, error) {
	_, resp, err := client.Repositories.RedeliverHookDelivery(apptest.Ctx(), owner, repo, hookID, id)
	var accepted *github.AcceptedError
	if errors.As(err, &accepted) {
		err = nil
	}
	return resp, err
}

func countGUID(got []received, guid string) int {
	n := 0
	for _, r := range got {
		if r.GUID == guid {
			n++
		}
	}
	return n
}

func ids(list []*github.HookDelivery) []int64 {
	out := make([]int64, len(list))
	for i, d := range list {
		out[i] = d.GetID()
	}
	return out
}

// deliveriesWithStatus lists a hook's deliveries with the status filter
// (go-github has no option for it).
func deliveriesWithStatus(t *testing.T, client *github.Client, target string, hookID int64, status string) []*github.HookDelivery {
	t.Helper()
	req, err := client.NewRequest(apptest.Ctx(), "GET", fmt.Sprintf("%s/hooks/%d/deliveries?per_page=100&status=%s", target, hookID, status), nil)
	apptest.Must(t, "request", err)
	var list []*github.HookDelivery
	_, err = client.Do(req, &list)
	apptest.Must(t, "list deliveries by status", err)
	return list
}

// TestPendingDeliveryHasDeliveredAt checks that a delivery that has not
// been attempted yet (its receiver has not answered) is listed as pending
// with delivered_at set to the time it was queued, never null: the
// platform's description requires a date-time.
func TestPendingDeliveryHasDeliveredAt(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, loopback)
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	client := env.Client(env.Token(owner, "repo", "admin:repo_hook"))
	release := make(chan struct{})
	blocking := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	t.Cleanup(blocking.Close)
	t.Cleanup(func() { close(release) })
	before := time.Now().Add(-time.Second)
	hook := hookOn(t, client, "octo", "widgets", blocking.URL, "json", "")
	list, _, err := client.Repositories.ListHookDeliveries(apptest.Ctx(), "octo", "widgets", hook.GetID(), nil)
	apptest.Must(t, "list", err)
	if len(list) != 1 || list[0].GetStatus() != "pending" || list[0].DeliveredAt == nil ||
		list[0].GetDeliveredAt().Before(before) || list[0].GetDeliveredAt().After(time.Now().Add(time.Second)) {
		t.Fatalf("pending ping delivery: %+v", list)
	}
	got, _, err := client.Repositories.GetHookDelivery(apptest.Ctx(), "octo", "widgets", hook.GetID(), list[0].GetID())
	apptest.Must(t, "get", err)
	if got.DeliveredAt == nil || !got.GetDeliveredAt().Equal(list[0].GetDeliveredAt()) {
		t.Fatalf("detail delivered_at %v, list %v", got.DeliveredAt, list[0].DeliveredAt)
	}
}
