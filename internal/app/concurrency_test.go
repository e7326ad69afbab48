package app_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestConcurrentWritesNeverSeeALockedDatabase creates repositories at once
// over HTTP (several users, racing for the same names too) while the CLI
// writes to the same store through its own connections, and reads go on.
// Every request must succeed or fail as a client error: never a 500
// ("database is locked").
func TestConcurrentWritesNeverSeeALockedDatabase(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	const users, perUser = 4, 6
	tokens := make([]string, users)
	for i := range users {
		tokens[i] = env.Token(env.User(fmt.Sprintf("user%d", i)), "repo")
	}
	flags := storeFlags(env)

	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for u := range users {
		for r := range perUser {
			wg.Go(func() {
				_, resp, err := env.Client(tokens[u]).Repositories.Create(apptest.Ctx(), "",
					&github.Repository{Name: github.Ptr(fmt.Sprintf("repo-%d", r)), Private: github.Ptr(r%2 == 0)})
				if err != nil {
					errs <- fmt.Sprintf("user%d repo-%d: %v (status %d)", u, r, err, apptest.ResponseStatus(resp))
				}
			})
		}
		// Two requests race for one name: one wins, the other is a 422.
		statuses := make(chan int, 2)
		for range 2 {
			wg.Go(func() {
				resp, _ := env.DoJSON("POST", "/user/repos", tokens[u], `{"name":"contested"}`)
				statuses <- resp.StatusCode
			})
		}
		wg.Go(func() {
			a, b := <-statuses, <-statuses
			if a+b != 201+422 {
				errs <- fmt.Sprintf("user%d contested name: statuses %d and %d, want 201 and 422", u, a, b)
			}
		})
		wg.Go(func() {
			for range perUser {
				resp, body := env.Do("GET", "/user/repos", tokens[u], nil)
				if resp.StatusCode != 200 {
					errs <- fmt.Sprintf("user%d list: %d %s", u, resp.StatusCode, body)
				}
			}
		})
	}
	for i := range 6 {
		wg.Go(func() {
			if code, _, stderr := cliRun(t, append([]string{"user", "create", fmt.Sprintf("cli%d", i)}, flags...)...); code != 0 {
				errs <- "cli user create: " + stderr
			}
			if code, _, stderr := cliRun(t, append([]string{"token", "create", "--user", "user0", "--scopes", "repo"}, flags...)...); code != 0 {
				errs <- "cli token create: " + stderr
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	var n int
	apptest.Must(t, "count", env.Q().QueryRowContext(context.Background(), `SELECT count(*) FROM repositories`).Scan(&n))
	if n != users*(perUser+1) {
		t.Errorf("%d repositories, want %d", n, users*(perUser+1))
	}
}

// TestGracefulShutdownFinishesInFlightRequests starts a request, closes
// the server while the request body is still arriving, and checks that
// the request completes and Close waits for it.
func TestGracefulShutdownFinishesInFlightRequests(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithMetrics())
	token := env.Token(env.User("octocat"), "repo")

	conn, err := net.Dial("tcp", strings.TrimPrefix(env.URL, "http://"))
	apptest.Must(t, "dial", err)
	defer conn.Close()
	body := `{"name":"in-flight"}`
	head := "POST /user/repos HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token +
		"\r\nContent-Type: application/json\r\nContent-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n"
	_, err = conn.Write([]byte(head + body[:5]))
	apptest.Must(t, "write head", err)
	// The handler now waits for the rest of the body. The metrics are
	// scraped on their own port, so one in flight is ours.
	pollUntil(t, "the request to be in flight", func() bool { return inFlight(t, env) >= 1 })

	closed := make(chan error, 1)
	go func() { closed <- env.Main.Close() }()
	pollUntil(t, "the listener to close", func() bool {
		c, err := net.Dial("tcp", strings.TrimPrefix(env.URL, "http://"))
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	select {
	case err := <-closed:
		t.Fatalf("Close returned before the in-flight request finished: %v", err)
	default:
	}
	_, err = conn.Write([]byte(body[5:]))
	apptest.Must(t, "write rest", err)
	status, err := bufio.NewReader(conn).ReadString('\n')
	apptest.Must(t, "read status", err)
	if !strings.Contains(status, "201") {
		t.Fatalf("in-flight request answered %q", status)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// inFlight reads forgeapi_http_requests_in_flight from /metrics.
func inFlight(t testing.TB, env *apptest.Env) float64 {
	return gauge(t, env, "forgeapi_http_requests_in_flight")
}

// gauge reads the value of an unlabelled metric from /metrics.
func gauge(t testing.TB, env *apptest.Env, name string) float64 {
	t.Helper()
	resp, err := http.Get(env.Main.MetricsURL())
	apptest.Must(t, "scrape metrics", err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	apptest.Must(t, "read metrics", err)
	for line := range strings.SplitSeq(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return 0
}

// pollUntil polls cond until it holds, failing after ten seconds.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}
