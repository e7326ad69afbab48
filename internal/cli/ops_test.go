package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
)

func TestVersionCommandFlagAndHealthz(t *testing.T) {
	t.Parallel()
	build := app.ReadBuildInfo()
	if build.GoVersion != runtime.Version() || build.Version == "" {
		t.Fatalf("build info %+v", build)
	}
	want := "forgeapi " + build.String() + "\n"
	if out := cliOK(t, "version"); out != want {
		t.Errorf("forgeapi version = %q, want %q", out, want)
	}
	if out := cliOK(t, "--version"); out != want {
		t.Errorf("forgeapi --version = %q, want %q", out, want)
	}

	env := apptest.Start(t)
	resp, body := env.Get("/healthz", "")
	apptest.WantStatus(t, "healthz", resp, body, 200)
	var health struct {
		Status string        `json:"status"`
		Build  app.BuildInfo `json:"build"`
	}
	if err := json.Unmarshal(body, &health); err != nil || health.Status != "ok" || health.Build != build {
		t.Errorf("healthz %s, want build %+v", body, build)
	}
}

func TestCLIBadLogFlags(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "untouched")
	for _, args := range [][]string{
		{"serve", "--log-format", "xml"},
		{"serve", "--log-level", "loud"},
		{"user", "create", "octocat", "--log-format", "xml"},
	} {
		code, out, errOut := cliRun(t, append(args, "--data", data)...)
		if code != 1 || out != "" || !strings.HasPrefix(errOut, "forgeapi: --log-") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("forgeapi %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, errOut)
		}
	}
}

func TestCLISaysWhenItCreatesANewStore(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "typo")
	code, out, errOut := cliRun(t, "user", "create", "octocat", "--data", data)
	if code != 0 || !strings.Contains(errOut, "created a new, empty store") || !strings.Contains(errOut, filepath.Join(data, "forgeapi.db")) {
		t.Fatalf("first command on a new --data: exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, `"login": "octocat"`) {
		t.Errorf("stdout %q", out)
	}
	code, _, errOut = cliRun(t, "user", "create", "hubot", "--data", data)
	if code != 0 || errOut != "" {
		t.Errorf("second command on the same store: exit %d, stderr %q", code, errOut)
	}
}

// The admin commands render url fields with --base-url or FORGEAPI_BASE_URL.
func TestCLIPrintsURLsWithTheBaseURL(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	flags := storeFlags(env)
	var user struct {
		URL string `json:"url"`
	}
	out := cliOK(t, append([]string{"user", "create", "octocat", "--base-url", "https://forge.example.test/api/v3/"}, flags...)...)
	if err := json.Unmarshal([]byte(out), &user); err != nil || user.URL != "https://forge.example.test/api/v3/users/octocat" {
		t.Errorf("user url %q (%v)", user.URL, err)
	}
	var repo struct {
		URL string `json:"url"`
	}
	out = cliOK(t, append([]string{"repo", "create", "octocat/hello", "--base-url", "https://forge.example.test"}, flags...)...)
	if err := json.Unmarshal([]byte(out), &repo); err != nil || repo.URL != "https://forge.example.test/repos/octocat/hello" {
		t.Errorf("repo url %q (%v)", repo.URL, err)
	}
}

// TestServeRefusesBadLimitFlags checks that serve refuses malformed git
// and timeout limits before it starts.
func TestServeRefusesBadLimitFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ flag, want string }{
		{"--max-push-size=lots", "--max-push-size: want a positive size such as 2GiB"},
		{"--max-push-size=0", "--max-push-size: want a positive size"},
		{"--max-push-size=9000000TiB", "--max-push-size: want a positive size"},
		{"--max-git-processes=0", "--max-git-processes: want a positive number"},
		{"--header-timeout=soon", "--header-timeout: want a positive duration"},
		{"--idle-timeout=-1s", "--idle-timeout: want a positive duration"},
		{"--body-timeout=0", "--body-timeout: want a positive duration"},
	} {
		data := filepath.Join(t.TempDir(), "data")
		code, _, stderr := cliRun(t, "serve", "--addr", "127.0.0.1:0", "--data", data, tc.flag)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("serve %s: exit %d, stderr %q, want %q", tc.flag, code, stderr, tc.want)
		}
	}
}

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
