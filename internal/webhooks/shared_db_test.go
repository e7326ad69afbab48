package webhooks_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// TestTwoServersOnPostgresSendABurstOnce runs two servers on one
// PostgreSQL database through a burst of 6,000 deliveries to 10 hooks,
// triggered through both servers at once, and counts what a receiver
// got: every delivery once, none twice. Their recorders write the same
// hooks' last_response at the same time; a lock-order deadlock or a
// serialization failure that dropped a recorded batch would leave its
// deliveries leased, to be sent again when the lease ends.
func TestTwoServersOnPostgresSendABurstOnce(t *testing.T) {
	if !apptest.Postgres() {
		t.Skip("several servers share one database only on PostgreSQL")
	}
	t.Parallel()
	const hooks, workers, perWorker = 10, 4, 75 // 2 servers × 4 × 75 = 600 events × 10 hooks
	cfg := apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback", Timeout: 2 * time.Second})
	first := apptest.Start(t, cfg)
	owner := first.User("octo")
	first.Repo(owner, "widgets")
	token := first.Token(owner, "repo")
	rc := newReceiver(t, "s")
	var hookIDs []int64
	for i := range hooks {
		h := hookOn(t, first.Client(token), "octo", "widgets", fmt.Sprintf("%s/%d", rc.URL(), i), "json", "s", "repository")
		hookIDs = append(hookIDs, h.GetID())
	}
	rc.waitEvents("ping", hooks)
	second := apptest.StartConfig(t, first.Config) // same database and data directory

	var mu sync.Mutex
	var sent []string
	var wg sync.WaitGroup
	for s, env := range []*apptest.Env{first, second} {
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok := burst(env.URL, token, "octo/widgets", fmt.Sprintf("s%dw%d-", s, w), perWorker, func(int) {})
				mu.Lock()
				sent = append(sent, ok...)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	if want := 2 * workers * perWorker; len(sent) != want {
		t.Fatalf("%d of %d events accepted", len(sent), want)
	}
	waitDescriptions(t, rc, hookIDs, sent)
	// A delivery whose outcome was not recorded stays pending and is sent
	// again when its lease ends: wait until none is left.
	waitNoPending(t, first)

	byGUID, byEvent := map[string]int{}, map[string]int{}
	for _, r := range rc.events("repository") {
		byGUID[r.HookID+"/"+r.GUID]++
		d, _ := field(r.Payload, "repository", "description").(string)
		byEvent[r.HookID+"/"+d]++
	}
	dupGUID, dupEvent := 0, 0
	for _, n := range byGUID {
		dupGUID += n - 1
	}
	for _, n := range byEvent {
		dupEvent += n - 1
	}
	t.Logf("%d events, %d deliveries received, %d sent twice (same delivery), %d events delivered twice to one hook",
		len(sent), len(rc.events("repository")), dupGUID, dupEvent)
	if dupGUID != 0 || dupEvent != 0 {
		t.Errorf("%d deliveries sent twice, %d events delivered twice to one hook; want 0", dupGUID, dupEvent)
	}
}

// waitNoPending waits until no delivery is left pending.
func waitNoPending(t *testing.T, env *apptest.Env) {
	t.Helper()
	testwait.For(t, "no delivery to be left pending", func() error {
		var n int
		err := env.App.DB.QueryRowContext(apptest.Ctx(), `SELECT count(*) FROM hook_deliveries WHERE state = 'pending'`).Scan(&n)
		apptest.Must(t, "count pending deliveries", err)
		if n != 0 {
			return fmt.Errorf("%d deliveries still pending", n)
		}
		return nil
	})
}
