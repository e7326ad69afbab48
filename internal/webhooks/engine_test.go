package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// offsetClock is the real time moved by an adjustable offset.
type offsetClock struct{ offset atomic.Int64 }

func (c *offsetClock) Now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *offsetClock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

func TestPingAndTestsEndpoints(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, loopback)
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	token := env.Token(owner, "repo", "admin:repo_hook")
	client := env.Client(token)
	pushRC, otherRC := newReceiver(t, "s"), newReceiver(t, "s")
	pushHook := hookOn(t, client, "octo", "widgets", pushRC.URL(), "json", "s", "push")
	otherHook := hookOn(t, client, "octo", "widgets", otherRC.URL(), "json", "s", "star")
	pushRC.waitEvents("ping", 1)
	otherRC.waitEvents("ping", 1)

	if resp, err := client.Repositories.PingHook(apptest.Ctx(), "octo", "widgets", pushHook.GetID()); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("ping: %v %v", resp, err)
	}
	pushRC.waitEvents("ping", 2)

	// No push yet: the tests endpoint sends nothing.
	if resp, err := client.Repositories.TestHook(apptest.Ctx(), "octo", "widgets", pushHook.GetID()); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("tests: %v %v", resp, err)
	}
	work := apptest.WorkTree(t, map[string]string{"a.txt": "a\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "widgets", "octo", token), "main")
	first := pushRC.waitEvents("push", 1)[0]
	apptest.Must(t, "tests", must(client.Repositories.TestHook(apptest.Ctx(), "octo", "widgets", pushHook.GetID())))
	again := pushRC.waitEvents("push", 2)[1]
	if again.Payload["after"] != first.Payload["after"] || again.GUID == first.GUID {
		t.Errorf("tests re-sent %v (guid %s) after %v (guid %s)", again.Payload["after"], again.GUID, first.Payload["after"], first.GUID)
	}
	// A hook not subscribed to push: 204 and nothing sent. Its ping,
	// sent after the test, arrives alone.
	apptest.Must(t, "tests", must(client.Repositories.TestHook(apptest.Ctx(), "octo", "widgets", otherHook.GetID())))
	apptest.Must(t, "ping", must(client.Repositories.PingHook(apptest.Ctx(), "octo", "widgets", otherHook.GetID())))
	otherRC.waitEvents("ping", 2)
	if got := eventNames(otherRC.all()); len(got) != 2 {
		t.Errorf("hook without push received %v", got)
	}
	resp, _ := env.Do("POST", "/repos/octo/widgets/hooks/999999/pings", token, nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("ping of an unknown hook: %d", resp.StatusCode)
	}
}

func must(resp *github.Response, err error) error {
	if err == nil && resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return err
}

func TestRedeliveryWindow(t *testing.T) {
	t.Parallel()
	clock := &offsetClock{}
	env := apptest.Start(t, loopback, apptest.WithClock(clock.Now))
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	client := env.Client(env.Token(owner, "repo"))
	rc := newReceiver(t, "")
	hook := hookOn(t, client, "octo", "widgets", rc.URL(), "json", "", "push")
	ping := loggedDeliveries(t, client, "octo", "widgets", hook.GetID(), 1)[0]

	clock.Advance(webhooks.DefaultRedeliveryWindow - time.Hour)
	if resp, err := redeliver(client, "octo", "widgets", hook.GetID(), ping.GetID()); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("redeliver within the window: %v %v", resp, err)
	}
	rc.waitEvents("ping", 2)
	clock.Advance(2 * time.Hour)
	_, err := redeliver(client, "octo", "widgets", hook.GetID(), ping.GetID())
	if apptest.ResponseStatus(errResponse(err)) != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "3 days") {
		t.Errorf("redeliver after the window: %v", err)
	}
}

func errResponse(err error) *github.Response {
	if e, ok := err.(*github.ErrorResponse); ok {
		return &github.Response{Response: e.Response}
	}
	return nil
}

func TestThrottledDeliveriesWaitAndCarryThrottledAt(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback", RateLimit: 5}))
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	token := env.Token(owner, "repo")
	client := env.Client(token)
	rc := newReceiver(t, "")
	hook := hookOn(t, client, "octo", "widgets", rc.URL(), "json", "", "create")
	// One push of 12 new branches: 12 create events at once, over the
	// bucket of 5.
	const branches = 12
	args := []string{"push", "-q", env.GitURL("octo", "widgets", "octo", token)}
	for i := range branches {
		args = append(args, fmt.Sprintf("main:b%d", i))
	}
	apptest.Git(t, apptest.WorkTree(t, map[string]string{"a.txt": "a\n"}), args...)
	rc.waitEvents("create", branches)
	throttled := 0
	for _, d := range loggedDeliveries(t, client, "octo", "widgets", hook.GetID(), branches+1) {
		if d.ThrottledAt != nil {
			throttled++
		}
	}
	if throttled < branches-5 {
		t.Errorf("%d deliveries of %d at 5 per second carry throttled_at, want at least %d", throttled, branches, branches-5)
	}
}

func TestDeliveriesToForbiddenAddressesAreRefusedAndLogged(t *testing.T) {
	t.Parallel()
	rebind := resolver{"hooks.example.test": netip.MustParseAddr("127.0.0.1")}
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{Resolver: rebind})) // allow list: external
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	client := env.Client(env.Token(owner, "repo"))
	rc := newReceiver(t, "")
	port := rc.srv.URL[strings.LastIndex(rc.srv.URL, ":")+1:]
	for _, url := range []string{rc.URL(), "http://hooks.example.test:" + port + "/hook", "http://169.254.169.254/latest/meta-data"} {
		hook := hookOn(t, client, "octo", "widgets", url, "json", "", "push")
		d := loggedDeliveries(t, client, "octo", "widgets", hook.GetID(), 1)[0]
		if d.GetStatusCode() != 0 || !strings.HasPrefix(d.GetStatus(), "refused") {
			t.Errorf("delivery to %s: %d %q", url, d.GetStatusCode(), d.GetStatus())
		}
		failures := deliveriesWithStatus(t, client, "repos/octo/widgets", hook.GetID(), "failure")
		if len(failures) != 1 {
			t.Errorf("delivery to %s is not listed as a failure", url)
		}
	}
	if got := rc.all(); len(got) != 0 {
		t.Errorf("the receiver on 127.0.0.1 got %d deliveries", len(got))
	}
}

// resolver resolves host names from a table.
type resolver map[string]netip.Addr

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

func TestSlowReceiverDoesNotHoldUpOtherHooks(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, loopback)
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	token := env.Token(owner, "repo")
	client := env.Client(token)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	hookOn(t, client, "octo", "widgets", slow.URL+"/hook", "json", "", "repository")
	rc := newReceiver(t, "")
	hookOn(t, client, "octo", "widgets", rc.URL(), "json", "", "repository")
	const events = 50 // more than one hook's concurrent sends
	for i := range events {
		editDescription(t, env, token, "octo/widgets", fmt.Sprintf("d%d", i))
	}
	rc.waitEvents("repository", events)
}

func TestAutomaticRetries(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback", Retries: 2, RetryBackoff: time.Millisecond}))
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	client := env.Client(env.Token(owner, "repo"))
	failing := newReceiver(t, "")
	failing.Status.Store(http.StatusServiceUnavailable)
	hook := hookOn(t, client, "octo", "widgets", failing.URL(), "json", "", "push")
	list := loggedDeliveries(t, client, "octo", "widgets", hook.GetID(), 3)
	if len(list) != 3 {
		t.Fatalf("%d deliveries, want the ping and 2 retries", len(list))
	}
	for i, d := range list {
		if d.GetGUID() != list[2].GetGUID() || d.GetRedelivery() != (i < 2) || d.GetStatusCode() != 503 {
			t.Errorf("delivery %d: %v", i, d)
		}
	}
	if n := len(failing.events("ping")); n != 3 {
		t.Errorf("receiver got %d pings, want 3", n)
	}
}

func TestPrunerDeletesDeliveriesPastRetention(t *testing.T) {
	t.Parallel()
	clock := &offsetClock{}
	env := apptest.Start(t, loopback, apptest.WithClock(clock.Now))
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	client := env.Client(env.Token(owner, "repo"))
	rc := newReceiver(t, "")
	hook := hookOn(t, client, "octo", "widgets", rc.URL(), "json", "", "push")
	loggedDeliveries(t, client, "octo", "widgets", hook.GetID(), 1)

	pruner := webhooks.NewPruner(env.App.Webhooks)
	if n, err := pruner.Prune(apptest.Ctx()); err != nil || n != 0 {
		t.Fatalf("prune of a fresh log: %d %v", n, err)
	}
	clock.Advance(webhooks.DefaultRetention + time.Hour)
	if n, err := pruner.Prune(apptest.Ctx()); err != nil || n != 1 {
		t.Fatalf("prune past retention: %d %v", n, err)
	}
	list, _, err := client.Repositories.ListHookDeliveries(apptest.Ctx(), "octo", "widgets", hook.GetID(), nil)
	apptest.Must(t, "list", err)
	var payloads int
	apptest.Must(t, "count payloads", env.Q().QueryRowContext(apptest.Ctx(), `SELECT count(*) FROM hook_payloads`).Scan(&payloads))
	if len(list) != 0 || payloads != 0 {
		t.Errorf("after pruning: %d deliveries, %d payloads", len(list), payloads)
	}
	got, _, err := client.Repositories.GetHook(apptest.Ctx(), "octo", "widgets", hook.GetID())
	apptest.Must(t, "get hook", err)
	if got.LastResponse["status"] != nil || got.LastResponse["code"] != nil {
		t.Errorf("last_response 30 days after the last delivery: %v", got.LastResponse)
	}
}

// TestPrunerDeletesTheLogInTheOrderWritten checks the pruner's walk by
// id: a delivery created before the cutoff but written after one created
// since (a backlog's) waits for the newer one, a pending one is never
// deleted, and what is newer than the cutoff stays.
func TestPrunerDeletesTheLogInTheOrderWritten(t *testing.T) {
	t.Parallel()
	clock := &offsetClock{}
	env := apptest.Start(t, loopback, apptest.WithClock(clock.Now))
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	client := env.Client(env.Token(owner, "repo"))
	hook := hookOn(t, client, "octo", "widgets", newReceiver(t, "").URL(), "json", "", "push")
	ping := loggedDeliveries(t, client, "octo", "widgets", hook.GetID(), 1)[0]
	logAnother := func(state string, created time.Time) int64 {
		t.Helper()
		var id int64
		apptest.Must(t, "log a delivery", env.Q().QueryRowContext(apptest.Ctx(), `INSERT INTO hook_deliveries
			(hook_id, payload_id, guid, event, state, due_at, created_at)
			SELECT hook_id, payload_id, guid, event, $2, due_at, $3 FROM hook_deliveries WHERE id = $1 RETURNING id`,
			ping.GetID(), state, created).Scan(&id))
		return id
	}
	pruner := webhooks.NewPruner(env.App.Webhooks)
	old := clock.Now().Add(-webhooks.DefaultRetention - time.Hour)
	backlogged := logAnother("done", old) // written after the ping, created before the cutoff
	if n, err := pruner.Prune(apptest.Ctx()); err != nil || n != 0 {
		t.Fatalf("prune with the ping newer than the cutoff first: %d %v, want 0 deleted", n, err)
	}
	clock.Advance(webhooks.DefaultRetention + time.Hour)
	pending := logAnother("pending", old)
	fresh := logAnother("done", clock.Now())
	if n, err := pruner.Prune(apptest.Ctx()); err != nil || n != 2 {
		t.Fatalf("prune past the ping's retention: %d %v, want 2 deleted", n, err)
	}
	var left []int64
	rows, err := env.Q().QueryContext(apptest.Ctx(), `SELECT id FROM hook_deliveries ORDER BY id`)
	apptest.Must(t, "list the log", err)
	for rows.Next() {
		var id int64
		apptest.Must(t, "scan", rows.Scan(&id))
		left = append(left, id)
	}
	apptest.Must(t, "list the log", rows.Err())
	if want := []int64{pending, fresh}; !slices.Equal(left, want) {
		t.Errorf("log after pruning = %v, want the pending and the fresh delivery %v (ping %d, backlogged %d deleted)",
			left, want, ping.GetID(), backlogged)
	}
}

func TestOrganizationHookDeliveries(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, loopback)
	owner := env.User("boss")
	env.Org("acme", owner)
	client := env.Client(env.Token(owner, "admin:org_hook"))
	rc := newReceiver(t, "s")
	hook := orgHookOn(t, client, "acme", rc.URL(), "s", "*")
	ping := rc.waitEvents("ping", 1)[0]
	if ping.Header.Get("X-Service-Hook-Installation-Target-Type") != "organization" ||
		field(ping.Payload, "organization", "login") != "acme" || ping.Payload["repository"] != nil {
		t.Errorf("organization ping: %v %v", ping.Header, ping.Payload)
	}
	if resp, err := client.Organizations.PingHook(apptest.Ctx(), "acme", hook.GetID()); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("ping: %v %v", resp, err)
	}
	rc.waitEvents("ping", 2)
	var list []*github.HookDelivery
	testwait.For(t, "both pings to be logged", func() error {
		var err error
		list, _, err = client.Organizations.ListHookDeliveries(apptest.Ctx(), "acme", hook.GetID(), nil)
		apptest.Must(t, "list", err)
		if len(list) < 2 || list[0].GetStatus() == "pending" {
			return fmt.Errorf("deliveries: %v", list)
		}
		return nil
	})
	d, _, err := client.Organizations.GetHookDelivery(apptest.Ctx(), "acme", hook.GetID(), list[1].GetID())
	apptest.Must(t, "get delivery", err)
	if d.GetEvent() != "ping" || d.Request.GetHeader("X-Service-Hook-Installation-Target-Type") != "organization" {
		t.Errorf("delivery: %v", d)
	}
	_, _, err = client.Organizations.RedeliverHookDelivery(apptest.Ctx(), "acme", hook.GetID(), d.GetID())
	var accepted *github.AcceptedError
	if err != nil && !errors.As(err, &accepted) {
		t.Fatalf("redeliver: %v", err)
	}
	rc.waitFor("the redelivery", func(got []received) bool { return countGUID(got, d.GetGUID()) == 2 })
	resp, _ := env.Do("POST", fmt.Sprintf("/orgs/acme/hooks/%d/tests", hook.GetID()), env.Token(owner, "admin:org_hook"), nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("tests on an organization hook: %d", resp.StatusCode)
	}
}
