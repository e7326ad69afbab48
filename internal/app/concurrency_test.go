package app_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

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
	testwait.Until(t, what, cond)
}

// TestConcurrentRefWritesAnswerTruly races writes that move references
// (new branches and tags through POST git/refs, contents writes on a
// branch) with pull request updates and reads that list references
// (branches, matching refs), while git writes the lock files of the
// references it moves: no request answers 5xx, no listing shows a lock
// file, and every reference whose creation was answered with an error
// does not exist (the others do).
func TestConcurrentRefWritesAnswerTruly(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	owner := env.User("octo")
	env.Repo(owner, "race")
	token := env.Token(owner, "repo")
	c := env.Client(token)
	first, _, err := c.Repositories.CreateFile(ctx, "octo", "race", "README.md", &github.RepositoryContentFileOptions{
		Message: github.Ptr("first"), Content: []byte("hello\n")})
	apptest.Must(t, "first commit", err)
	base := first.Commit.GetSHA()
	_, _, err = c.Git.CreateRef(ctx, "octo", "race", github.CreateRef{Ref: "refs/heads/topic", SHA: base})
	apptest.Must(t, "topic branch", err)
	_, _, err = c.Repositories.CreateFile(ctx, "octo", "race", "topic.txt", &github.RepositoryContentFileOptions{
		Message: github.Ptr("topic"), Content: []byte("topic\n"), Branch: github.Ptr("topic")})
	apptest.Must(t, "commit on topic", err)
	pull, _, err := c.PullRequests.Create(ctx, "octo", "race", github.CreatePullRequest{Title: github.Ptr("race"), Head: "topic", Base: "main"})
	apptest.Must(t, "open a pull request", err)

	const creators, refsEach, writes, edits = 3, 20, 12, 12
	var mu sync.Mutex
	var problems []string
	created := map[string]bool{} // ref name: whether its creation was answered 201
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	check := func(what string, resp *http.Response, body []byte) {
		if resp.StatusCode >= 500 {
			report("%s: %d %s", what, resp.StatusCode, body)
		}
	}
	var writers, readers sync.WaitGroup
	for w := range creators {
		writers.Go(func() {
			for i := range refsEach {
				ref := fmt.Sprintf("refs/heads/race-%d-%d", w, i)
				if i%3 == 2 {
					ref = fmt.Sprintf("refs/tags/race-%d-%d", w, i)
				}
				resp, body := env.DoJSON("POST", "/repos/octo/race/git/refs", token, `{"ref":"`+ref+`","sha":"`+base+`"}`)
				check("create "+ref, resp, body)
				mu.Lock()
				created[ref] = resp.StatusCode == http.StatusCreated
				mu.Unlock()
			}
		})
	}
	writers.Go(func() {
		for i := range writes {
			path := fmt.Sprintf("/repos/octo/race/contents/race-%d.txt", i)
			resp, body := env.DoJSON("PUT", path, token, `{"message":"race","content":"cmFjZQo=","branch":"topic"}`)
			check("write "+path, resp, body)
		}
	})
	writers.Go(func() {
		for i := range edits {
			resp, body := env.DoJSON("PATCH", fmt.Sprintf("/repos/octo/race/pulls/%d", pull.GetNumber()), token,
				fmt.Sprintf(`{"title":"race %d"}`, i))
			check("edit the pull request", resp, body)
		}
	})
	done := make(chan struct{})
	readers.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			path := "/repos/octo/race/branches?per_page=100"
			if i%2 == 1 {
				path = "/repos/octo/race/git/matching-refs/heads/race"
			}
			resp, body := env.Do("GET", path, token, nil)
			check("list "+path, resp, body)
			if strings.Contains(string(body), ".lock") {
				report("%s lists a lock file: %s", path, body)
			}
		}
	})
	writers.Wait()
	close(done)
	readers.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	exists := map[string]bool{}
	for _, prefix := range []string{"heads/race", "tags/race"} {
		refs, _, err := c.Git.ListMatchingRefs(ctx, "octo", "race", prefix)
		apptest.Must(t, "list the references made", err)
		for _, ref := range refs {
			exists[ref.GetRef()] = true
		}
	}
	for ref, ok := range created {
		if exists[ref] != ok {
			t.Errorf("%s: creation answered 201: %v, exists: %v", ref, ok, exists[ref])
		}
	}
	if len(exists) != len(created) {
		t.Errorf("%d references made, %d asked for", len(exists), len(created))
	}
}
