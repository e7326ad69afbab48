package repos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/githost"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// TestServedCountsFollowAMixedWorkload runs a mixed workload through the
// API and git (repositories created, pushed to, made private and public,
// transferred, forked and deleted; issues and pull requests opened,
// closed, reopened and merged; stars, watches, follows; an issue moved to
// another repository and one deleted, as the platform's GraphQL
// transferIssue and deleteIssue do, in SQL since forgeapi serves neither;
// git gc) and after every step compares every counter the API serves
// with a fresh count from the tables and git: each repository's REST
// object and list entries, each user's GET /users/{username} and GET
// /user, the organization's GET /orgs/{org}, and the repository object
// of the step's webhook delivery.
func TestServedCountsFollowAMixedWorkload(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}), func(c *app.Config) {
		c.GitMaintenance = githost.MaintenanceConfig{Pushes: 2, PollInterval: -1} // gc when the test says
	})
	ctx := apptest.Ctx()
	octo, hubot, mona := env.User("octo"), env.User("hubot"), env.User("mona")
	env.Org("acme", octo)
	w := &workload{t: t, env: env, tokens: map[string]string{
		"octo":  env.Token(octo, "repo", "delete_repo", "user", "admin:org", "admin:repo_hook"),
		"hubot": env.Token(hubot, "repo", "delete_repo", "user"),
		"mona":  env.Token(mona, "repo", "delete_repo", "user"),
	}, rc: apptest.NewReceiver(t, "s")}
	octoC, hubotC, monaC := env.Client(w.tokens["octo"]), env.Client(w.tokens["hubot"]), env.Client(w.tokens["mona"])
	work := apptest.WorkTree(t, map[string]string{"README.md": "# app\n", "app.txt": strings.Repeat("a line of the app\n", 400)})
	apptest.Git(t, work, "remote", "add", "origin", env.GitURL("acme", "app", "octo", w.tokens["octo"]))

	w.step("at the start", nil)
	w.step("repositories created", func(t *testing.T) {
		_, _, err := octoC.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("app")})
		apptest.Must(t, "create acme/app", err)
		for _, r := range []*github.Repository{{Name: github.Ptr("hello")}, {Name: github.Ptr("secret"), Private: github.Ptr(true)},
			{Name: github.Ptr("tmp")}} {
			_, _, err := octoC.Repositories.Create(ctx, "", r)
			apptest.Must(t, "create a repository", err)
		}
		_, _, err = octoC.Repositories.CreateHook(ctx, "acme", "app", &github.Hook{Events: []string{"issues", "pull_request", "star", "fork"},
			Config: &github.HookConfig{URL: github.Ptr(w.rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
		apptest.Must(t, "hook", err)
	})
	w.step("main pushed", func(t *testing.T) { apptest.Git(t, work, "push", "-q", "origin", "main") })

	for i := 1; i <= 3; i++ {
		w.hookStep(fmt.Sprintf("issue %d opened", i), "issues opened", func(t *testing.T) {
			_, _, err := hubotC.Issues.Create(ctx, "acme", "app", github.CreateIssueRequest{Title: fmt.Sprintf("Bug %d", i)})
			apptest.Must(t, "open an issue", err)
		})
	}
	editIssue := func(desc string, number int, state string) {
		w.hookStep(fmt.Sprintf("issue %d %s", number, strings.TrimPrefix(desc, "issues ")), desc, func(t *testing.T) {
			_, _, err := octoC.Issues.Update(ctx, "acme", "app", number, github.UpdateIssueRequest{State: github.Ptr(state)})
			apptest.Must(t, desc, err)
		})
	}
	editIssue("issues closed", 2, "closed")
	editIssue("issues reopened", 2, "open")
	editIssue("issues closed", 3, "closed")

	w.step("feature pushed", func(t *testing.T) {
		apptest.Git(t, work, "checkout", "-q", "-b", "feature")
		apptest.Commit(t, work, "A feature", map[string]string{"feature.txt": "new\n"})
		apptest.Git(t, work, "push", "-q", "origin", "feature")
		apptest.Git(t, work, "checkout", "-q", "main")
	})
	w.hookStep("pull request 4 opened", "pull_request opened", func(t *testing.T) {
		_, _, err := octoC.PullRequests.Create(ctx, "acme", "app", github.CreatePullRequest{Title: github.Ptr("A feature"),
			Head: "feature", Base: "main"})
		apptest.Must(t, "open a pull request", err)
	})
	editPull := func(desc, state string) {
		w.hookStep("pull request 4 "+strings.TrimPrefix(desc, "pull_request "), desc, func(t *testing.T) {
			_, _, err := octoC.PullRequests.Edit(ctx, "acme", "app", 4, &github.PullRequest{State: github.Ptr(state)})
			apptest.Must(t, desc, err)
		})
	}
	editPull("pull_request closed", "closed")
	editPull("pull_request reopened", "open")
	w.hookStep("pull request 4 merged", "pull_request closed", func(t *testing.T) {
		_, _, err := octoC.PullRequests.Merge(ctx, "acme", "app", 4, "", nil)
		apptest.Must(t, "merge", err)
	})

	w.step("issues on octo/tmp", func(t *testing.T) {
		for i := range 2 {
			_, _, err := octoC.Issues.Create(ctx, "octo", "tmp", github.CreateIssueRequest{Title: fmt.Sprintf("Todo %d", i)})
			apptest.Must(t, "open an issue", err)
		}
	})
	w.step("octo/tmp deleted with its open issues", func(t *testing.T) {
		_, err := octoC.Repositories.Delete(ctx, "octo", "tmp")
		apptest.Must(t, "delete octo/tmp", err)
	})

	for _, who := range []struct {
		login string
		c     *github.Client
	}{{"hubot", hubotC}, {"mona", monaC}} {
		w.hookStep(who.login+" stars acme/app", "star created", func(t *testing.T) {
			_, err := who.c.Activity.Star(ctx, "acme", "app")
			apptest.Must(t, "star", err)
		})
	}
	w.hookStep("mona unstars acme/app", "star deleted", func(t *testing.T) {
		_, err := monaC.Activity.Unstar(ctx, "acme", "app")
		apptest.Must(t, "unstar", err)
	})
	w.step("hubot watches", func(t *testing.T) {
		_, _, err := hubotC.Activity.SetRepositorySubscription(ctx, "acme", "app", &github.Subscription{Subscribed: github.Ptr(true)})
		apptest.Must(t, "watch", err)
	})
	w.step("mona ignores", func(t *testing.T) {
		_, _, err := monaC.Activity.SetRepositorySubscription(ctx, "acme", "app", &github.Subscription{Ignored: github.Ptr(true)})
		apptest.Must(t, "ignore", err)
	})

	w.step("follows", func(t *testing.T) {
		for _, c := range []*github.Client{hubotC, monaC} {
			_, err := c.Users.Follow(ctx, "octo")
			apptest.Must(t, "follow", err)
		}
		_, err := octoC.Users.Follow(ctx, "mona")
		apptest.Must(t, "follow back", err)
	})
	w.step("unfollowed", func(t *testing.T) {
		_, err := hubotC.Users.Unfollow(ctx, "octo")
		apptest.Must(t, "unfollow", err)
	})

	w.hookStep("hubot forks acme/app", "fork ", func(t *testing.T) { fork(t, hubotC, "acme", "app") },
		func(sw *workload) { sw.checkForkee("hubot/app") })
	w.step("forked twice", func(t *testing.T) {
		fork(t, monaC, "hubot", "app") // a fork of the fork: same network
	})

	for _, private := range []bool{true, false} {
		w.step(fmt.Sprintf("octo/hello private %v", private), func(t *testing.T) {
			_, _, err := octoC.Repositories.Edit(ctx, "octo", "hello", &github.Repository{Private: github.Ptr(private)})
			apptest.Must(t, "change visibility", err)
		})
	}
	w.step("octo/secret transferred to acme", func(t *testing.T) {
		_, _, err := octoC.Repositories.Transfer(ctx, "octo", "secret", github.TransferRequest{NewOwner: "acme"})
		if _, accepted := err.(*github.AcceptedError); err != nil && !accepted {
			t.Fatalf("transfer: %v", err)
		}
	})

	var moved int64 // the issue moved to octo/hello, then deleted
	w.step("issue to move opened", func(t *testing.T) {
		issue, _, err := hubotC.Issues.Create(ctx, "acme", "app", github.CreateIssueRequest{Title: "Belongs elsewhere"})
		apptest.Must(t, "open an issue", err)
		moved = issue.GetID()
	})
	w.step("issue moved to octo/hello", func(t *testing.T) {
		_, err := env.App.DB.ExecContext(ctx, `UPDATE issues SET repository_id = (SELECT r.id FROM repositories r
		JOIN accounts a ON a.id = r.owner_id WHERE a.login = 'octo' AND r.name = 'hello'), number = 1
		WHERE id = $1`, moved)
		apptest.Must(t, "move the issue", err)
	})
	w.step("moved issue deleted", func(t *testing.T) {
		_, err := env.App.DB.ExecContext(ctx, `DELETE FROM issues WHERE id = $1`, moved)
		apptest.Must(t, "delete the issue", err)
	})

	w.step("the middle fork deleted", func(t *testing.T) {
		_, err := hubotC.Repositories.Delete(ctx, "hubot", "app")
		apptest.Must(t, "delete hubot/app", err)
	})

	w.step("acme/app maintained", func(t *testing.T) {
		if n := env.App.GitMaintenance.RunOnce(ctx); n != 1 {
			t.Fatalf("git gc ran on %d repositories, want 1 (acme/app)", n)
		}
	})
}

// fork forks owner/name for the client's user.
func fork(t *testing.T, c *github.Client, owner, name string) {
	t.Helper()
	if _, _, err := c.Repositories.CreateFork(apptest.Ctx(), owner, name, nil); err != nil {
		if _, accepted := err.(*github.AcceptedError); !accepted {
			t.Fatalf("fork %s/%s: %v", owner, name, err)
		}
	}
}

// workload checks the served counters against fresh counts.
type workload struct {
	t      *testing.T
	env    *apptest.Env
	tokens map[string]string // by login: each user's token
	rc     *apptest.Receiver // acme/app's hook
}

// repoCounters are the counters of a repository object, by field name.
var repoCounters = []string{"stargazers_count", "watchers_count", "watchers", "subscribers_count", "forks_count", "forks",
	"open_issues_count", "open_issues", "size", "network_count"}

// freshRepo is a repository with its counters counted afresh.
type freshRepo struct {
	fullName string
	counts   map[string]int64
}

// run runs act (when not nil) as the subtest name, then, when act
// succeeded, check on a workload failing that subtest. An act that
// failed stops the test, as the steps after it build on what it did; a
// counter found wrong does not, so that the test shows every step's.
func (w *workload) run(name string, act func(t *testing.T), check func(sw *workload)) {
	w.t.Helper()
	acted := false
	w.t.Run(name, func(t *testing.T) {
		if act != nil {
			act(t)
		}
		if acted = !t.Failed(); acted {
			check(&workload{t: t, env: w.env, tokens: w.tokens, rc: w.rc})
		}
	})
	if !acted {
		w.t.FailNow()
	}
}

// step runs act as the step name and checks the counters after it.
func (w *workload) step(name string, act func(t *testing.T)) {
	w.t.Helper()
	w.run(name, act, func(sw *workload) { sw.check(name) })
}

// hookStep runs act as the step name, which sends acme/app's hook the
// delivery desc ("event action"), checks the counters, compares the
// repository object of that delivery with acme/app's fresh counters (all
// but size: a pull request's test merge adds objects after its event),
// then runs the checks more.
func (w *workload) hookStep(name, desc string, act func(t *testing.T), more ...func(sw *workload)) {
	w.t.Helper()
	match := func(d apptest.Delivery) string {
		if apptest.EventAction(d) == desc {
			return desc
		}
		return ""
	}
	before := len(w.rc.Described(match))
	w.run(name, act, func(sw *workload) {
		sw.rc.WaitCount(sw.t, match, before+1)
		fresh := sw.check(name)
		var got []apptest.Delivery
		for _, d := range sw.rc.Deliveries() {
			if match(d) != "" {
				got = append(got, d)
			}
		}
		var payload struct {
			Repository map[string]any `json:"repository"`
		}
		apptest.Must(sw.t, "parse the delivery", json.Unmarshal(got[before].Body, &payload))
		want := fresh["acme/app"].counts
		for _, f := range repoCounters {
			if f == "size" {
				continue
			}
			if v, ok := payload.Repository[f].(float64); !ok || int64(v) != want[f] {
				sw.t.Errorf("%s: the webhook's acme/app %s = %v, want %d", name, f, payload.Repository[f], want[f])
			}
		}
		for _, check := range more {
			check(sw)
		}
	})
}

// checkForkee compares the forkee of acme/app's latest fork delivery
// (the new fork, name) with its fresh counters.
func (w *workload) checkForkee(name string) {
	w.t.Helper()
	var forkee map[string]any
	for _, d := range w.rc.Deliveries() {
		if d.Event == "fork" {
			var payload struct {
				Forkee map[string]any `json:"forkee"`
			}
			apptest.Must(w.t, "parse the delivery", json.Unmarshal(d.Body, &payload))
			forkee = payload.Forkee
		}
	}
	w.compare("forked", "the fork webhook's forkee", forkee, w.freshRepos()[name].counts, repoCounters)
}

// check compares every served counter with a fresh count, once the pull
// requests' background checks (whose test merges add objects) are done,
// and returns the fresh repository counters by full name.
func (w *workload) check(step string) map[string]freshRepo {
	w.t.Helper()
	w.waitChecks(step)
	repos := w.freshRepos()
	for name, r := range repos {
		w.compare(step, "GET /repos/"+name, w.get("/repos/"+name, "octo"), r.counts, repoCounters)
	}
	for _, list := range []string{"/orgs/acme/repos", "/users/octo/repos", "/users/hubot/repos", "/users/mona/repos"} {
		var items []map[string]any
		apptest.Must(w.t, "parse "+list, json.Unmarshal(w.getRaw(list+"?per_page=100", "octo"), &items))
		for _, item := range items {
			name, _ := item["full_name"].(string)
			w.compare(step, list+" "+name, item, repos[name].counts, repoCounters)
		}
	}
	for login, c := range w.freshAccounts() {
		if _, ours := w.tokens[login]; !ours && login != "acme" {
			continue // an account the server made itself (github-actions[bot])
		}
		if login == "acme" {
			w.compare(step, "GET /orgs/acme", w.get("/orgs/acme", "octo"), c,
				[]string{"public_repos", "total_private_repos", "owned_private_repos", "followers", "following", "public_gists"})
			continue
		}
		w.compare(step, "GET /users/"+login, w.get("/users/"+login, "octo"), c,
			[]string{"public_repos", "followers", "following", "public_gists"})
		w.compare(step, "GET /user as "+login, w.get("/user", login), c,
			[]string{"public_repos", "total_private_repos", "owned_private_repos", "followers", "following", "public_gists", "private_gists"})
	}
	return repos
}

// compare checks the served object's fields against the fresh counts.
func (w *workload) compare(step, where string, served map[string]any, want map[string]int64, fields []string) {
	w.t.Helper()
	for _, f := range fields {
		if v, ok := served[f].(float64); !ok || int64(v) != want[f] {
			w.t.Errorf("%s: %s: %s = %v, counted %d", step, where, f, served[f], want[f])
		}
	}
}

// waitChecks waits until no pull request waits for its mergeability
// check: the Checker records a check and the size it measured after the
// test merge in one transaction.
func (w *workload) waitChecks(step string) {
	w.t.Helper()
	testwait.For(w.t, step+": the pull request checks due", func() error {
		var due int
		apptest.Must(w.t, "count due checks", w.env.App.DB.QueryRowContext(context.Background(),
			`SELECT count(*) FROM pull_requests WHERE check_due`).Scan(&due))
		if due != 0 {
			return fmt.Errorf("%d still due", due)
		}
		return nil
	})
}

// freshRepos counts every repository's counters from the tables, its
// network from fork_of_id and its size with git count-objects.
func (w *workload) freshRepos() map[string]freshRepo {
	w.t.Helper()
	rows, err := w.env.App.DB.QueryContext(context.Background(), `SELECT r.id, a.login || '/' || r.name, COALESCE(r.fork_of_id, 0),
		(SELECT count(*) FROM stars s WHERE s.repository_id = r.id),
		(SELECT count(*) FROM subscriptions s WHERE s.repository_id = r.id AND NOT s.ignored),
		(SELECT count(*) FROM repositories f WHERE f.fork_of_id = r.id),
		(SELECT count(*) FROM issues i WHERE i.repository_id = r.id AND i.state = 'open')
		FROM repositories r JOIN accounts a ON a.id = r.owner_id`)
	apptest.Must(w.t, "count repositories", err)
	defer rows.Close()
	type row struct {
		id, forkOf, stars, subscribers, forks, open int64
		name                                        string
	}
	var all []row
	byID := map[int64]row{}
	for rows.Next() {
		var r row
		apptest.Must(w.t, "scan", rows.Scan(&r.id, &r.name, &r.forkOf, &r.stars, &r.subscribers, &r.forks, &r.open))
		all = append(all, r)
		byID[r.id] = r
	}
	apptest.Must(w.t, "count repositories", rows.Err())
	out := map[string]freshRepo{}
	for _, r := range all {
		root := r
		for root.forkOf != 0 {
			root = byID[root.forkOf]
		}
		out[r.name] = freshRepo{fullName: r.name, counts: map[string]int64{
			"stargazers_count": r.stars, "watchers_count": r.stars, "watchers": r.stars, "subscribers_count": r.subscribers,
			"forks_count": r.forks, "forks": r.forks, "open_issues_count": r.open, "open_issues": r.open,
			"size": gitSizeKB(w.t, w.env.App.Repos.GitDir(r.id)), "network_count": root.forks,
		}}
	}
	return out
}

// gitSizeKB is git count-objects' size plus size-pack of the bare
// repository.
func gitSizeKB(t *testing.T, dir string) int64 {
	t.Helper()
	var kb int64
	for _, line := range strings.Split(apptest.Git(t, dir, "count-objects", "-v"), "\n") {
		key, value, _ := strings.Cut(line, ": ")
		if key == "size" || key == "size-pack" {
			n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			apptest.Must(t, "parse git count-objects", err)
			kb += n
		}
	}
	return kb
}

// freshAccounts counts every account's counters from the tables, by
// login (no gists exist: 0).
func (w *workload) freshAccounts() map[string]map[string]int64 {
	w.t.Helper()
	rows, err := w.env.App.DB.QueryContext(context.Background(), `SELECT a.login,
		(SELECT count(*) FROM follows f WHERE f.followee_id = a.id),
		(SELECT count(*) FROM follows f WHERE f.follower_id = a.id),
		(SELECT count(*) FROM repositories r WHERE r.owner_id = a.id AND NOT r.private),
		(SELECT count(*) FROM repositories r WHERE r.owner_id = a.id AND r.private)
		FROM accounts a`)
	apptest.Must(w.t, "count accounts", err)
	defer rows.Close()
	out := map[string]map[string]int64{}
	for rows.Next() {
		var login string
		var followers, following, public, private int64
		apptest.Must(w.t, "scan", rows.Scan(&login, &followers, &following, &public, &private))
		out[login] = map[string]int64{"followers": followers, "following": following, "public_repos": public,
			"total_private_repos": private, "owned_private_repos": private, "public_gists": 0, "private_gists": 0}
	}
	apptest.Must(w.t, "count accounts", rows.Err())
	return out
}

// get answers GET path as login, decoded.
func (w *workload) get(path, login string) map[string]any {
	w.t.Helper()
	var out map[string]any
	apptest.Must(w.t, "parse "+path, json.Unmarshal(w.getRaw(path, login), &out))
	return out
}

func (w *workload) getRaw(path, login string) []byte {
	w.t.Helper()
	resp, body := w.env.Do("GET", path, w.tokens[login], nil)
	if resp.StatusCode != http.StatusOK {
		w.t.Fatalf("GET %s as %s: %d %s", path, login, resp.StatusCode, body)
	}
	return body
}
