package webhooks_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
	"forgeapi/internal/testwait"
)

// TestNextEventHonoursHookChanges: the events sink keeps each
// repository's and organization's hooks in a cache; a hook created,
// edited, deactivated, reactivated or deleted (repository and
// organization hooks) must decide the deliveries of the very next event.
// Every event's deliveries are committed with the API call, so they are
// counted in the table right after it.
func TestNextEventHonoursHookChanges(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, loopback)
	owner := env.User(apptest.Unique("owner"))
	org := env.Org(apptest.Unique("org"), owner)
	repo := env.Repo(org, "cached")
	token := env.Token(owner, "repo", "admin:repo_hook", "admin:org_hook")
	client := env.Client(token)
	rcv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(rcv.Close)

	events := 0
	event := func() {
		t.Helper()
		events++
		editDescription(t, env, token, repo.FullName(), fmt.Sprintf("d%d", events))
	}
	// deliveries counts the repository events delivered to each hook.
	deliveries := func(ids ...int64) []int {
		t.Helper()
		out := make([]int, len(ids))
		for i, id := range ids {
			err := env.Q().QueryRowContext(apptest.Ctx(), `SELECT count(*) FROM hook_deliveries
				WHERE hook_id = $1 AND event = 'repository'`, id).Scan(&out[i])
			apptest.Must(t, "count deliveries", store.Normalize(err))
		}
		return out
	}
	// A delivery handed over to the dispatcher is in the log once
	// written, when sent: check waits for the counts.
	check := func(step string, ids []int64, want ...int) {
		t.Helper()
		testwait.For(t, fmt.Sprintf("%s: deliveries per hook %v", step, want), func() error {
			if got := deliveries(ids...); fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("got %v", got)
			}
			return nil
		})
	}
	hookOf := func(path string, events ...string) *github.Hook {
		return &github.Hook{Config: &github.HookConfig{URL: github.Ptr(rcv.URL + path), ContentType: github.Ptr("json")}, Events: events}
	}
	ctx := apptest.Ctx()

	event() // the cache holds "no hooks" now
	a, _, err := client.Repositories.CreateHook(ctx, org.Login, repo.Name, hookOf("/a", "repository"))
	apptest.Must(t, "create a", err)
	event()
	ids := []int64{a.GetID()}
	check("repository hook created", ids, 1)

	b, _, err := client.Repositories.CreateHook(ctx, org.Login, repo.Name, hookOf("/b", "push"))
	apptest.Must(t, "create b", err)
	event()
	ids = append(ids, b.GetID())
	check("hook not subscribed", ids, 2, 0)

	_, _, err = client.Repositories.EditHook(ctx, org.Login, repo.Name, b.GetID(), &github.Hook{Events: []string{"repository"}})
	apptest.Must(t, "edit b", err)
	event()
	check("hook edited to subscribe", ids, 3, 1)

	_, _, err = client.Repositories.EditHook(ctx, org.Login, repo.Name, a.GetID(), &github.Hook{Active: github.Ptr(false)})
	apptest.Must(t, "deactivate a", err)
	event()
	check("hook deactivated", ids, 3, 2)

	_, err = client.Repositories.DeleteHook(ctx, org.Login, repo.Name, b.GetID())
	apptest.Must(t, "delete b", err)
	_, _, err = client.Repositories.EditHook(ctx, org.Login, repo.Name, a.GetID(), &github.Hook{Active: github.Ptr(true)})
	apptest.Must(t, "reactivate a", err)
	event()
	check("hook deleted, other reactivated", ids, 4, 2)

	o, _, err := client.Organizations.CreateHook(ctx, org.Login, hookOf("/o", "repository"))
	apptest.Must(t, "create organization hook", err)
	event()
	ids = append(ids, o.GetID())
	check("organization hook created", ids, 5, 2, 1)

	_, _, err = client.Organizations.EditHook(ctx, org.Login, o.GetID(), &github.Hook{Events: []string{"push"}})
	apptest.Must(t, "edit organization hook", err)
	event()
	check("organization hook edited to unsubscribe", ids, 6, 2, 1)

	_, err = client.Organizations.DeleteHook(ctx, org.Login, o.GetID())
	apptest.Must(t, "delete organization hook", err)
	_, err = client.Repositories.DeleteHook(ctx, org.Login, repo.Name, a.GetID())
	apptest.Must(t, "delete a", err)
	event()
	check("every hook deleted", ids, 6, 2, 1)
}

// TestEventToManyHooks: an event's deliveries are written several rows
// per INSERT; with more hooks than one statement holds, each hook still
// gets exactly one delivery.
func TestEventToManyHooks(t *testing.T) {
	t.Parallel()
	const hooks = 150 // two full statements and a partial one
	env := apptest.Start(t, loopback)
	owner := env.User(apptest.Unique("owner"))
	repo := env.Repo(owner, "many")
	token := env.Token(owner, "repo")
	rcv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(rcv.Close)
	ctx := apptest.Ctx()
	now := time.Now().UTC()
	err := env.App.DB.Tx(ctx, func(tx *store.Tx) error {
		for i := range hooks {
			if _, err := tx.ExecContext(ctx, `INSERT INTO hooks (repo_id, events, url, content_type, created_at, updated_at)
				VALUES ($1, '["repository"]', $2, 'json', $3, $3)`, repo.ID, fmt.Sprintf("%s/%d", rcv.URL, i), now); err != nil {
				return err
			}
		}
		return nil
	})
	apptest.Must(t, "insert hooks", err)
	editDescription(t, env, token, repo.FullName(), "to many")
	// Written by the API's transaction, or by the dispatcher as it sends
	// them (handed over): wait for them all.
	var deliveries, distinct int
	testwait.For(t, fmt.Sprintf("a delivery to each of %d hooks", hooks), func() error {
		err = env.Q().QueryRowContext(ctx, `SELECT count(*), count(DISTINCT d.hook_id) FROM hook_deliveries d
			JOIN hooks h ON h.id = d.hook_id WHERE h.repo_id = $1 AND d.event = 'repository'`, repo.ID).Scan(&deliveries, &distinct)
		apptest.Must(t, "count deliveries", store.Normalize(err))
		if deliveries < hooks {
			return fmt.Errorf("%d deliveries to %d hooks", deliveries, distinct)
		}
		return nil
	})
	if deliveries != hooks || distinct != hooks {
		t.Fatalf("%d deliveries to %d hooks, want one to each of %d", deliveries, distinct, hooks)
	}
}

// TestClaimedDeliveryHonoursHookEdits: the dispatcher keeps the hooks of
// the deliveries it claims in a cache; a hook edited right after a
// claimed delivery (a redelivery) was sent must decide the next one: its
// new URL and secret.
func TestClaimedDeliveryHonoursHookEdits(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, loopback)
	owner := env.User(apptest.Unique("owner"))
	repo := env.Repo(owner, "edited")
	token := env.Token(owner, "repo", "admin:repo_hook")
	client := env.Client(token)
	type receipt struct{ path, secretOK string }
	got := make(chan receipt, 16)
	secret := "first"
	var mu sync.Mutex
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		key := secret
		mu.Unlock()
		_, err := github.ValidatePayload(r, []byte(key))
		got <- receipt{r.URL.Path, fmt.Sprint(err == nil)}
	}))
	t.Cleanup(rcv.Close)
	next := func(step string, want receipt) {
		t.Helper()
		select {
		case r := <-got:
			if r != want {
				t.Fatalf("%s: received %+v, want %+v", step, r, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: nothing received", step)
		}
	}
	ctx := apptest.Ctx()
	hook := hookOn(t, client, owner.Login, repo.Name, rcv.URL+"/a", "json", "first", "repository")
	next("ping", receipt{"/a", "true"})
	var ping int64
	testwait.Until(t, "the ping to be logged", func() bool {
		logged, _, err := client.Repositories.ListHookDeliveries(ctx, owner.Login, repo.Name, hook.GetID(), nil)
		apptest.Must(t, "list deliveries", err)
		if len(logged) == 0 {
			return false
		}
		ping = logged[0].GetID()
		return true
	})
	if _, err := redeliver(client, owner.Login, repo.Name, hook.GetID(), ping); err != nil {
		t.Fatal(err)
	}
	next("redelivery before the edit", receipt{"/a", "true"})

	mu.Lock()
	secret = "second"
	mu.Unlock()
	_, _, err := client.Repositories.EditHook(ctx, owner.Login, repo.Name, hook.GetID(), &github.Hook{
		Config: &github.HookConfig{URL: github.Ptr(rcv.URL + "/b"), ContentType: github.Ptr("json"), Secret: github.Ptr("second")}})
	apptest.Must(t, "edit hook", err)
	if _, err := redeliver(client, owner.Login, repo.Name, hook.GetID(), ping); err != nil {
		t.Fatal(err)
	}
	next("redelivery after the edit", receipt{"/b", "true"})
}
