package e2e_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// receiver is a webhook receiver that answers 200, or 500 while failing.
type receiver struct {
	*httptest.Server
	got     atomic.Int64
	failing atomic.Bool
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.got.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"ok":false}`))
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(r.Close)
	return r
}

// doneDeliveries returns the hook's deliveries that were attempted.
func doneDeliveries(t *testing.T, e *apptest.Env, hookID int64) []*webhooks.Delivery {
	t.Helper()
	list, err := e.App.Webhooks.Deliveries(context.Background(), hookID, webhooks.DeliveryFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []*webhooks.Delivery
	for _, d := range list {
		if !webhooks.DeliveryPending(d) {
			out = append(out, d)
		}
	}
	return out
}

// TestHookDeliveriesRedeliver creates a repository hook through the
// console's form, sees its ping among the Recent Deliveries, opens it
// (headers, pretty-printed payload, response), presses Redeliver and sees
// the new delivery with redelivery true, on the page and through the API.
// The failed-only filter shows only the failures, and the page of
// another user's repository does not exist for a stranger.
func TestHookDeliveriesRedeliver(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	user := e.User(apptest.Unique("mona"), apptest.UserOpts{Password: consolePassword})
	repo := e.Repo(user, "hello")
	rcv := newReceiver(t)
	b := newBrowser(t)
	// The platform's path; the forms post under /console/.
	base := "/" + repo.FullName() + "/settings/hooks"

	b.goTo(e, base)
	b.signIn(user.Login, consolePassword)
	b.run("hooks page", chromedp.WaitVisible(chromedp.CSS("#no-hooks")))
	b.shot("hooks-empty")
	b.run("new hook", chromedp.Click(chromedp.CSS("#add-hook")), chromedp.WaitVisible(chromedp.CSS("#hook-form")))
	b.run("bad url", chromedp.SendKeys(chromedp.CSS("#url"), "ftp://nope.example"), chromedp.Click(chromedp.CSS("#save")),
		chromedp.WaitVisible(chromedp.CSS("#hook-errors")))
	b.shot("hook-invalid")
	b.run("fill hook", chromedp.Clear(chromedp.CSS("#url")), chromedp.SendKeys(chromedp.CSS("#url"), rcv.URL+"/hook"),
		chromedp.SendKeys(chromedp.CSS("#secret"), "s3cret"), chromedp.Clear(chromedp.CSS("#events")),
		chromedp.SendKeys(chromedp.CSS("#events"), "push issues"),
		chromedp.Click(chromedp.CSS("#save")), chromedp.WaitVisible(chromedp.CSS("#deliveries-link")))
	b.shot("hook")
	hooks, err := e.App.Webhooks.RepoHooks(context.Background(), repo.ID)
	if err != nil || len(hooks) != 1 {
		t.Fatalf("hooks after the form: %v %v", hooks, err)
	}
	hook := hooks[0]
	if hook.URL != rcv.URL+"/hook" || strings.Join(hook.Events, ",") != "issues,push" || hook.ContentType != "json" || hook.SealedSecret == "" {
		t.Fatalf("hook stored as %+v", hook)
	}
	testwait.Until(t, "the ping's delivery", func() bool { return len(doneDeliveries(t, e, hook.ID)) == 1 })

	b.run("deliveries", chromedp.Click(chromedp.CSS("#deliveries-link")), chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	b.shot("deliveries")
	if text := b.text("#deliveries"); !strings.Contains(text, "ping") || !strings.Contains(text, "200") {
		t.Fatalf("deliveries page: %q", text)
	}
	b.run("open delivery", chromedp.Click(chromedp.CSS("#deliveries a.guid")), chromedp.WaitVisible(chromedp.CSS("#payload")))
	b.shot("delivery")
	if p := b.text("#payload"); !strings.Contains(p, "\n  \"zen\": ") || !strings.Contains(p, `"hook_id": `+strconv.FormatInt(hook.ID, 10)) {
		t.Fatalf("payload not pretty-printed JSON: %q", p)
	}
	if h := b.text("#request-headers"); !strings.Contains(h, "X-GitHub-Event: ping") || !strings.Contains(h, "X-Hub-Signature-256: sha256=") {
		t.Fatalf("request headers: %q", h)
	}
	if body := b.text("#response-body"); !strings.Contains(body, `"ok": true`) {
		t.Fatalf("response body: %q", body)
	}
	if r := b.text("#redelivery"); r != "no" {
		t.Fatalf("the ping is a redelivery: %q", r)
	}

	b.run("redeliver", chromedp.Click(chromedp.CSS("#redeliver")), chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	testwait.Until(t, "the redelivery", func() bool { return len(doneDeliveries(t, e, hook.ID)) == 2 })
	b.goTo(e, base+"/"+strconv.FormatInt(hook.ID, 10)+"/deliveries")
	b.run("redelivery row", chromedp.WaitVisible(chromedp.CSS("#deliveries tr.redelivery")))
	b.shot("deliveries-redelivered")
	if got := rcv.got.Load(); got != 2 {
		t.Fatalf("the receiver got %d requests", got)
	}
	// The API sees it too: the same GUID, redelivery true.
	token := e.Token(user, "repo")
	list, _, err := e.Client(token).Repositories.ListHookDeliveries(apptest.Ctx(), user.Login, repo.Name, hook.ID, nil)
	if err != nil || len(list) != 2 {
		t.Fatalf("API deliveries: %v %v", list, err)
	}
	if !list[0].GetRedelivery() || list[1].GetRedelivery() || list[0].GetGUID() != list[1].GetGUID() {
		t.Fatalf("API deliveries: redelivery %v/%v, GUIDs %s/%s", list[0].GetRedelivery(), list[1].GetRedelivery(), list[0].GetGUID(), list[1].GetGUID())
	}

	// A failing receiver: Ping, then the failed-only filter.
	rcv.failing.Store(true)
	b.goTo(e, base+"/"+strconv.FormatInt(hook.ID, 10))
	b.run("ping", chromedp.Click(chromedp.CSS("#ping")), chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	testwait.Until(t, "the failed ping", func() bool { return len(doneDeliveries(t, e, hook.ID)) == 3 })
	b.goTo(e, base+"/"+strconv.FormatInt(hook.ID, 10)+"/deliveries?status=failure")
	b.shot("deliveries-failed")
	rows, err := chromedp.Run(b.ctx, chromedp.Nodes(chromedp.CSSAll("#deliveries tr.delivery")))
	if err != nil || len(rows) != 1 {
		t.Fatalf("failed-only rows: %d %v", len(rows), err)
	}
	if text := b.text("#deliveries"); !strings.Contains(text, "500") {
		t.Fatalf("failed-only: %q", text)
	}

	// Edit: deactivate; the secret stays when the field is left empty.
	sealed := hook.SealedSecret
	b.goTo(e, base+"/"+strconv.FormatInt(hook.ID, 10))
	b.run("deactivate", chromedp.Click(chromedp.CSS("#active")), chromedp.Click(chromedp.CSS("#save")), chromedp.WaitVisible(chromedp.CSS("#saved")))
	hooks, _ = e.App.Webhooks.RepoHooks(context.Background(), repo.ID)
	if len(hooks) != 1 || hooks[0].Active || hooks[0].SealedSecret != sealed {
		t.Fatalf("after the edit: %+v", hooks[0])
	}

	// A stranger and a reader get no such page.
	stranger := e.User(apptest.Unique("eve"), apptest.UserOpts{Password: consolePassword})
	c := pageClient(t, e)
	_, _, page := getPage(t, c, e.URL+"/login")
	form(t, c, e.URL+"/session", map[string][]string{"authenticity_token": {apptest.CSRFToken(t, page)}, "login": {stranger.Login}, "password": {consolePassword}})
	for _, p := range []string{"/console" + base, "/console" + base + "/" + strconv.FormatInt(hook.ID, 10) + "/deliveries"} {
		if status, _, _ := getPage(t, c, e.URL+p); status != http.StatusNotFound {
			t.Errorf("stranger GET %s: %d", p, status)
		}
	}

	b.goTo(e, base+"/"+strconv.FormatInt(hook.ID, 10))
	b.run("delete", chromedp.Click(chromedp.CSS("#delete")), chromedp.WaitVisible(chromedp.CSS("#no-hooks")))
	if _, resp, _ := e.Client(token).Repositories.GetHook(apptest.Ctx(), user.Login, repo.Name, hook.ID); resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("hook after delete: %v", resp)
	}
	_ = github.Ptr(0)
}

// TestOrgHooksPage: an organization's owner manages its hooks at the
// platform's path; a member is refused.
func TestOrgHooksPage(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	owner := e.User(apptest.Unique("owner"), apptest.UserOpts{Password: consolePassword})
	member := e.User(apptest.Unique("member"), apptest.UserOpts{Password: consolePassword})
	org := e.Org(apptest.Unique("acme"), owner, member)
	rcv := newReceiver(t)
	base := "/organizations/" + org.Login + "/settings/hooks"

	c := pageClient(t, e)
	_, _, page := getPage(t, c, e.URL+"/login")
	form(t, c, e.URL+"/session", map[string][]string{"authenticity_token": {apptest.CSRFToken(t, page)}, "login": {owner.Login}, "password": {consolePassword}})
	_, _, page = getPage(t, c, e.URL+base+"/new")
	status, loc, _ := form(t, c, e.URL+base, map[string][]string{"authenticity_token": {apptest.CSRFToken(t, page)},
		"url": {rcv.URL}, "content_type": {"json"}, "events": {"*"}, "active": {"1"}})
	if status != http.StatusSeeOther || !strings.HasPrefix(loc, base+"/") {
		t.Fatalf("create org hook: %d %s", status, loc)
	}
	hooks, _ := e.App.Webhooks.OrgHooks(context.Background(), org.ID)
	if len(hooks) != 1 || hooks[0].Events[0] != "*" {
		t.Fatalf("org hooks: %v", hooks)
	}
	token := e.Token(owner, "admin:org_hook")
	api, _, err := e.Client(token).Organizations.ListHooks(apptest.Ctx(), org.Login, nil)
	if err != nil || len(api) != 1 || api[0].GetID() != hooks[0].ID {
		t.Fatalf("API org hooks: %v %v", api, err)
	}

	m := pageClient(t, e)
	_, _, page = getPage(t, m, e.URL+"/login")
	form(t, m, e.URL+"/session", map[string][]string{"authenticity_token": {apptest.CSRFToken(t, page)}, "login": {member.Login}, "password": {consolePassword}})
	if status, _, _ := getPage(t, m, e.URL+base); status != http.StatusNotFound {
		t.Fatalf("member GET org hooks: %d", status)
	}
	_, _, page = getPage(t, m, e.URL+"/settings")
	if status, _, _ := form(t, m, e.URL+base, map[string][]string{"authenticity_token": {apptest.CSRFToken(t, page)}, "url": {rcv.URL}}); status != http.StatusNotFound {
		t.Fatalf("member POST org hook: %d", status)
	}
}

// TestPersonalTokens creates a token in the browser (shown once, then
// only its last eight characters), uses it with the API and revokes it.
func TestPersonalTokens(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t)
	user := e.User(apptest.Unique("mona"), apptest.UserOpts{Password: consolePassword})
	b := newBrowser(t)
	b.goTo(e, "/settings/tokens")
	b.signIn(user.Login, consolePassword)
	b.run("token form", chromedp.WaitVisible(chromedp.CSS("#token-form")),
		chromedp.SendKeys(chromedp.CSS("#note"), "ci"), chromedp.Click(chromedp.CSS(`input[value="repo"]`)),
		chromedp.Click(chromedp.CSS("#generate")), chromedp.WaitVisible(chromedp.CSS("#token-value")))
	b.shot("token-created")
	value := b.text("#token-value")
	if !auth.LooksLikeToken(value) {
		t.Fatalf("token %q", value)
	}
	resp, _ := e.Do("GET", "/user", value, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OAuth-Scopes") != "repo" {
		t.Fatalf("GET /user with the new token: %d %q", resp.StatusCode, resp.Header.Get("X-OAuth-Scopes"))
	}
	b.goTo(e, "/settings/tokens")
	b.shot("tokens")
	if text := b.text("#tokens"); strings.Contains(text, value) || !strings.Contains(text, value[len(value)-8:]) {
		t.Fatalf("tokens list: %q", text)
	}
	b.run("revoke", chromedp.Click(chromedp.CSS("#tokens button.danger")), chromedp.WaitNotPresent(chromedp.CSS("#tokens")))
	if resp, _ := e.Do("GET", "/user", value, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("revoked token: %d", resp.StatusCode)
	}
}

// TestDeliveriesPaging: a hook with more deliveries than a page shows
// gets an "Older deliveries" link to the next page, which starts where
// the first ended and links back to the newest; the failed-only filter
// keeps to its deliveries across pages, and a bad cursor is a 400.
func TestDeliveriesPaging(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	owner := e.User(apptest.Unique("owner"), apptest.UserOpts{Password: consolePassword})
	repo := e.Repo(owner, "paged")
	rcv := newReceiver(t)
	client := e.Client(e.Token(owner, "admin:repo_hook"))
	hook, _, err := client.Repositories.CreateHook(apptest.Ctx(), owner.Login, repo.Name, &github.Hook{
		Config: &github.HookConfig{URL: github.Ptr(rcv.URL), ContentType: github.Ptr("json")}})
	apptest.Must(t, "create hook", err)
	const pings = 104 // with the creation's ping, 105 deliveries: 100 on the first page, 5 on the second
	ping := func(n int) {
		for range n {
			_, err := client.Repositories.PingHook(apptest.Ctx(), owner.Login, repo.Name, hook.GetID())
			apptest.Must(t, "ping", err)
		}
	}
	ping(pings - 3)
	testwait.Until(t, "the pings delivered", func() bool { return rcv.got.Load() >= pings-3+1 })
	rcv.failing.Store(true) // the last three fail
	ping(3)
	testwait.Until(t, "every ping delivered", func() bool { return rcv.got.Load() >= pings+1 })
	testwait.Until(t, "every delivery recorded", func() bool {
		list, err := e.App.Webhooks.Deliveries(context.Background(), hook.GetID(), webhooks.DeliveryFilter{Status: "failure", Limit: 10})
		return err == nil && len(list) == 3
	})

	c := pageClient(t, e)
	_, _, page := getPage(t, c, e.URL+"/login")
	form(t, c, e.URL+"/session", map[string][]string{"authenticity_token": {apptest.CSRFToken(t, page)}, "login": {owner.Login}, "password": {consolePassword}})
	base := e.URL + "/console/" + owner.Login + "/paged/settings/hooks/" + strconv.FormatInt(hook.GetID(), 10) + "/deliveries"
	rows := func(page string) int { return strings.Count(page, `class="delivery`) }
	older := func(page string) string {
		j := strings.Index(page, `" id="older"`)
		i := strings.LastIndex(page[:max(j, 0)], `href="`)
		if j < 0 || i < 0 {
			return ""
		}
		return strings.ReplaceAll(page[i+len(`href="`):j], "&amp;", "&")
	}
	status, _, first := getPage(t, c, base)
	if status != http.StatusOK || rows(first) != 100 || older(first) == "" || strings.Contains(first, `id="newest"`) {
		t.Fatalf("first page: %d, %d rows, older %q", status, rows(first), older(first))
	}
	status, _, second := getPage(t, c, base+older(first))
	if status != http.StatusOK || rows(second) != pings+1-100 || older(second) != "" || !strings.Contains(second, `id="newest"`) {
		t.Fatalf("second page %s: %d, %d rows, older %q", older(first), status, rows(second), older(second))
	}
	list, err := e.App.Webhooks.Deliveries(context.Background(), hook.GetID(), webhooks.DeliveryFilter{Limit: 200})
	apptest.Must(t, "deliveries", err)
	if !strings.Contains(second, `id="delivery-`+strconv.FormatInt(list[100].ID, 10)+`"`) || strings.Contains(second, `id="delivery-`+strconv.FormatInt(list[99].ID, 10)+`"`) {
		t.Fatalf("the second page does not start after the first")
	}
	if _, _, failed := getPage(t, c, base+"?status=failure"); rows(failed) != 3 || older(failed) != "" {
		t.Fatalf("failed only: %d rows, older %q", rows(failed), older(failed))
	}
	for _, bad := range []string{"?before=abc", "?before=-1", "?status=sometimes"} {
		if status, _, _ := getPage(t, c, base+bad); status != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", bad, status)
		}
	}
}
