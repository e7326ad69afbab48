package webhooks_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// octoWidgets starts a server delivering to loopback with the repository
// octo/widgets, and returns it, a repo-scoped token of octo and a
// receiver checking the secret "s".
func octoWidgets(t *testing.T) (*apptest.Env, string, *receiver) {
	t.Helper()
	env := apptest.Start(t, loopback)
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	return env, env.Token(owner, "repo"), newReceiver(t, "s")
}

// burst changes the repository's description to prefix0, prefix1, ... through the
// API at url until a request fails or n succeeded, calling after(i) after
// each success. It returns the descriptions whose change succeeded.
func burst(url, token, fullName, prefix string, n int, after func(i int)) []string {
	var ok []string
	client := &http.Client{Timeout: 10 * time.Second}
	for i := range n {
		desc := fmt.Sprintf("%s%d", prefix, i)
		req, _ := http.NewRequest("PATCH", url+"/repos/"+fullName, strings.NewReader(fmt.Sprintf(`{"description":%q}`, desc)))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return ok
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return ok
		}
		ok = append(ok, desc)
		after(i)
	}
	return ok
}

// waitDescriptions waits until every hook got a repository event for
// every description.
func waitDescriptions(t *testing.T, rc *receiver, hookIDs []int64, descriptions []string) {
	t.Helper()
	testwait.For(t, "every hook's repository event of every description", func() error {
		seen := map[string]bool{}
		for _, r := range rc.events("repository") {
			if d, _ := field(r.Payload, "repository", "description").(string); d != "" {
				seen[r.HookID+"/"+d] = true
			}
		}
		var missing []string
		for _, id := range hookIDs {
			for _, d := range descriptions {
				if key := fmt.Sprintf("%d/%s", id, d); !seen[key] {
					missing = append(missing, key)
				}
			}
		}
		if len(missing) != 0 {
			return fmt.Errorf("%d of %d events not delivered: %v", len(missing), len(descriptions), missing)
		}
		return nil
	})
}

func TestRestartInTheMiddleOfABurstLosesNothing(t *testing.T) {
	t.Parallel()
	env, token, rc := octoWidgets(t)
	var hookIDs []int64
	for i := range 3 { // several hooks, so that stopping finds deliveries at every stage
		h := hookOn(t, env.Client(token), "octo", "widgets", fmt.Sprintf("%s/%d", rc.URL(), i), "json", "s", "repository")
		hookIDs = append(hookIDs, h.GetID())
	}
	var stop sync.Once
	sent := burst(env.URL, token, "octo/widgets", "e", 400, func(i int) {
		if i == 60 {
			go stop.Do(env.Stop)
		}
	})
	stop.Do(env.Stop)
	if len(sent) < 60 {
		t.Fatalf("only %d events before the stop", len(sent))
	}
	apptest.StartConfig(t, env.Config)
	waitDescriptions(t, rc, hookIDs, sent)
}

var listening = regexp.MustCompile(`listening on (http://[0-9.:]+)`)

// serveBinary runs the real forgeapi binary on the test's data and
// returns its URL once it listens, and the running command.
func serveBinary(t *testing.T, bin string, env *apptest.Env) (string, *exec.Cmd) {
	t.Helper()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data", env.DataDir, "--webhook-allowed-hosts", "loopback",
		"--webhook-timeout", "1s"}
	if env.Config.DatabaseURL != "" {
		args = append(args, "--database", env.Config.DatabaseURL)
	}
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	apptest.Must(t, "stderr pipe", err)
	cmd.Stdout = io.Discard
	apptest.Must(t, "start forgeapi", cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stderr)
		for scanner.Scan() {
			if m := listening.FindStringSubmatch(scanner.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case url := <-found:
		return url, cmd
	case <-time.After(60 * time.Second):
		t.Fatal("forgeapi did not start listening")
		return "", nil
	}
}

func TestKilledServerLosesNoDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the forgeapi binary")
	}
	t.Parallel()
	bin := apptest.ServerBinary(t, t.TempDir())
	// Set up with an in-process server on the same data, then hand the
	// data to the binary.
	env, token, rc := octoWidgets(t)
	hook := hookOn(t, env.Client(token), "octo", "widgets", rc.URL(), "json", "s", "repository")
	rc.waitEvents("ping", 1)
	env.Stop()

	// A slow receiver keeps deliveries in flight when the process dies.
	rc.Delay.Store(int64(200 * time.Millisecond))
	url, cmd := serveBinary(t, bin, env)
	sent := burst(url, token, "octo/widgets", "e", 100, func(int) {})
	if len(sent) != 100 {
		t.Fatalf("%d of 100 events accepted", len(sent))
	}
	testwait.Until(t, "ten deliveries to reach the slow receiver", func() bool { return rc.Started.Load() >= 10 })
	_ = cmd.Process.Kill() // with deliveries in flight, others due
	_ = cmd.Wait()
	inFlight := len(rc.events("repository"))
	rc.Delay.Store(0)
	serveBinary(t, bin, env)
	// Deliveries claimed when the process died are sent again once their
	// lease (timeout + 10 s) ends.
	restarted := time.Now()
	waitDescriptions(t, rc, []int64{hook.GetID()}, sent)
	t.Logf("%d events sent, %d received before the kill, all within %s of the restart", len(sent), inFlight, time.Since(restarted))
	if inFlight == len(sent) {
		t.Errorf("every event was delivered before the kill; the test proves nothing")
	}
}

func TestTwoServersOnPostgresShareTheDeliveries(t *testing.T) {
	if !apptest.Postgres() {
		t.Skip("several servers share one database only on PostgreSQL")
	}
	t.Parallel()
	first, token, rc := octoWidgets(t)
	var hookIDs []int64
	for i := range 4 {
		h := hookOn(t, first.Client(token), "octo", "widgets", fmt.Sprintf("%s/%d", rc.URL(), i), "json", "s", "repository")
		hookIDs = append(hookIDs, h.GetID())
	}
	second := apptest.StartConfig(t, first.Config) // same database and data directory
	var sent []string
	for i, env := range []*apptest.Env{first, second, first, second} {
		sent = append(sent, burst(env.URL, token, "octo/widgets", fmt.Sprintf("s%d-", i), 25, func(int) {})...)
	}
	if len(sent) != 100 {
		t.Fatalf("%d of 100 events accepted", len(sent))
	}
	waitDescriptions(t, rc, hookIDs, sent)
	seen := map[string]int{}
	for _, r := range rc.events("repository") {
		seen[r.HookID+"/"+r.GUID]++
	}
	for key, n := range seen {
		if n > 1 {
			t.Errorf("delivery %s sent %d times", key, n)
		}
	}
}

// TestRestartReleasesTheLastRunsLeases: deliveries leased by a process
// that died (as after a kill -9 in the middle of their sends) go out as
// soon as the next server on the SQLite database starts, not when their
// lease ends (an hour on here): a delivery row leased to it, and one
// handed over to it unwritten, listed in its payload's outbox.
func TestRestartReleasesTheLastRunsLeases(t *testing.T) {
	if apptest.Postgres() {
		t.Skip("only the one server of a SQLite database knows that a lease it finds is a dead process's")
	}
	t.Parallel()
	env, token, rc := octoWidgets(t)
	hook := hookOn(t, env.Client(token), "octo", "widgets", rc.URL(), "json", "s", "repository")
	rc.waitEvents("ping", 1)
	if sent := burst(env.URL, token, "octo/widgets", "leased", 2, func(int) {}); len(sent) != 2 {
		t.Fatal("PATCH failed")
	}
	rc.waitEvents("repository", 2)
	ctx := apptest.Ctx()
	var ids [2]int64
	var payloads [2]int64
	testwait.For(t, "the two deliveries to be logged", func() error {
		rows, err := env.App.DB.QueryContext(ctx, `SELECT id, payload_id FROM hook_deliveries WHERE event = 'repository' AND state = 'done' ORDER BY id`)
		apptest.Must(t, "list deliveries", err)
		n := 0
		for rows.Next() && n < 2 {
			apptest.Must(t, "scan", rows.Scan(&ids[n], &payloads[n]))
			n++
		}
		rows.Close()
		if n != 2 {
			return fmt.Errorf("%d of 2 logged", n)
		}
		return nil
	})
	// As a process killed while sending them left them: the first one
	// pending, leased; the second one unwritten, in its payload's outbox.
	inAnHour := time.Now().Add(time.Hour)
	_, err := env.App.DB.ExecContext(ctx, `UPDATE hook_deliveries SET state = 'pending', lease_owner = 'killed', due_at = $1
		WHERE id = $2`, inAnHour, ids[0])
	apptest.Must(t, "lease the first delivery to a dead process", err)
	_, err = env.App.DB.ExecContext(ctx, `DELETE FROM hook_deliveries WHERE id = $1`, ids[1])
	apptest.Must(t, "unwrite the second delivery", err)
	_, err = env.App.DB.ExecContext(ctx, `INSERT INTO hook_outboxes (payload_id, hooks, owner, lease_until) VALUES ($1, $2, 'killed', $3)`,
		payloads[1], strconv.FormatInt(hook.GetID(), 10), inAnHour)
	apptest.Must(t, "hand the second delivery to a dead process", err)
	env.Stop()

	apptest.StartConfig(t, env.Config)
	if got := rc.waitEvents("repository", 4); len(got) != 4 {
		t.Fatalf("%d repository deliveries, want the two and their sends after the restart", len(got))
	}
}
