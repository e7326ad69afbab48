package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/wire"
)

// feedEvent is the part of a feed event these tests read.
type feedEvent struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Public  bool            `json:"public"`
	Payload json.RawMessage `json:"payload"`
	Actor   struct {
		Login string `json:"login"`
	} `json:"actor"`
	Repo struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"repo"`
}

func feed(t *testing.T, env *apptest.Env, path, token string) []feedEvent {
	t.Helper()
	resp, body := env.Do("GET", path, token, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	var out []feedEvent
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return out
}

func ofType(events []feedEvent, typ string) []feedEvent {
	var out []feedEvent
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func TestStarringEmitsWatchEventAndStarWebhooks(t *testing.T) {
	t.Parallel()
	rec := &apptest.Recorder{}
	env := apptest.Start(t, apptest.WithEventSink(rec))
	owner, fan := env.User("owner"), env.User("fan")
	repo := env.Repo(owner, "widgets")
	client := env.Client(env.Token(fan, "public_repo"))
	ctx := apptest.Ctx()

	if starred, _, err := client.Activity.IsStarred(ctx, "owner", "widgets"); err != nil || starred {
		t.Fatalf("before starring: starred=%v err=%v", starred, err)
	}
	resp, err := client.Activity.Star(ctx, "owner", "widgets")
	apptest.Must(t, "star", err)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("star: %d", resp.StatusCode)
	}
	_, err = client.Activity.Star(ctx, "OWNER", "Widgets") // again: no second event
	apptest.Must(t, "star again", err)
	if starred, _, err := client.Activity.IsStarred(ctx, "owner", "widgets"); err != nil || !starred {
		t.Fatalf("after starring: starred=%v err=%v", starred, err)
	}

	watches := ofType(feed(t, env, "/repos/owner/widgets/events", ""), "WatchEvent")
	if len(watches) != 1 || watches[0].Actor.Login != "fan" || !watches[0].Public || string(watches[0].Payload) != `{"action":"started"}` ||
		watches[0].Repo.ID != repo.ID || watches[0].Repo.Name != "owner/widgets" {
		t.Fatalf("WatchEvent in the repository feed: %+v", watches)
	}
	if hooks := rec.Hook("watch"); len(hooks) != 1 || hooks[0].HookPayload["action"] != "started" || hooks[0].Actor.Login != "fan" {
		t.Fatalf("watch webhook events: %+v", hooks)
	}
	stars := rec.Hook("star")
	if len(stars) != 1 || stars[0].HookPayload["action"] != "created" || stars[0].Repo.ID != repo.ID {
		t.Fatalf("star webhook events: %+v", stars)
	}
	if at, ok := stars[0].HookPayload["starred_at"].(wire.Time); !ok || time.Since(at.Time) > time.Minute {
		t.Fatalf("starred_at: %#v", stars[0].HookPayload["starred_at"])
	}

	_, err = client.Activity.Unstar(ctx, "owner", "widgets")
	apptest.Must(t, "unstar", err)
	if starred, _, err := client.Activity.IsStarred(ctx, "owner", "widgets"); err != nil || starred {
		t.Fatalf("after unstarring: starred=%v err=%v", starred, err)
	}
	stars = rec.Hook("star")
	if len(stars) != 2 || stars[1].HookPayload["action"] != "deleted" || stars[1].HookPayload["starred_at"] != nil {
		t.Fatalf("star deleted webhook: %+v", stars)
	}
	if n := len(ofType(feed(t, env, "/repos/owner/widgets/events", ""), "WatchEvent")); n != 1 {
		t.Fatalf("unstarring must not add a feed event: %d WatchEvents", n)
	}
}

func TestStarringPermissions(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner, fan := env.User("owner"), env.User("fan")
	env.Repo(owner, "public")
	env.Repo(owner, "secret", apptest.RepoOpts{Private: true})
	ctx := apptest.Ctx()

	cases := []struct {
		name, token, repo string
		want              int
	}{
		{"classic token without scopes", env.Token(fan), "public", http.StatusForbidden},
		{"user scope is not enough", env.Token(fan, "user"), "public", http.StatusForbidden},
		{"repo scope", env.Token(fan, "repo"), "public", http.StatusNoContent},
		{"hidden private repository", env.Token(fan, "repo"), "secret", http.StatusNotFound},
		{"owner stars own private repository", env.Token(owner, "repo"), "secret", http.StatusNoContent},
		{"public_repo cannot see a private repository", env.Token(owner, "public_repo"), "secret", http.StatusNotFound},
		{"fine-grained with starring:write", env.FineGrainedToken(fan, fan, nil, "starring:write"), "public", http.StatusNoContent},
		{"fine-grained without starring", env.FineGrainedToken(fan, fan, nil, "followers:write"), "public", http.StatusForbidden},
		{"anonymous", "", "public", http.StatusUnauthorized},
		{"unknown repository", env.Token(fan, "repo"), "nope", http.StatusNotFound},
	}
	for _, c := range cases {
		resp, body := env.Do("PUT", "/user/starred/owner/"+c.repo, c.token, nil)
		if resp.StatusCode != c.want {
			t.Errorf("%s: PUT star = %d %s, want %d", c.name, resp.StatusCode, body, c.want)
		}
	}
	resp, _ := env.Do("GET", "/user/starred/owner/public", env.FineGrainedToken(fan, fan, nil, "watching:read"), nil)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("check with a fine-grained token without starring: %d", resp.StatusCode)
	}
	if _, _, err := env.Client(env.FineGrainedToken(fan, fan, nil, "starring:read")).Activity.IsStarred(ctx, "owner", "public"); err != nil {
		t.Errorf("check with starring:read: %v", err)
	}
	r, _ := env.Do("PUT", "/user/starred/owner/public", env.InstallationToken(env.Org("acme", owner), apptest.AllRepos, "contents:read"), nil)
	if r.StatusCode != http.StatusForbidden {
		t.Errorf("installation token: %d", r.StatusCode)
	}
}

func TestRefusedEventRollsTheChangeBack(t *testing.T) {
	t.Parallel()
	rec := &apptest.Recorder{}
	env := apptest.Start(t, apptest.WithEventSink(rec))
	owner, fan := env.User("owner"), env.User("fan")
	env.Repo(owner, "widgets")
	client := env.Client(env.Token(fan, "repo"))
	rec.Fail(true)
	resp, err := client.Activity.Star(apptest.InjectedFault(apptest.Ctx()), "owner", "widgets")
	if apptest.ResponseStatus(resp) != http.StatusInternalServerError || err == nil {
		t.Fatalf("star with a failing sink: %v", err)
	}
	rec.Fail(false)
	if starred, _, err := client.Activity.IsStarred(apptest.Ctx(), "owner", "widgets"); err != nil || starred {
		t.Fatalf("the star must have rolled back: starred=%v err=%v", starred, err)
	}
	var n int
	apptest.Must(t, "count", env.Q().QueryRowContext(apptest.Ctx(), `SELECT count(*) FROM events WHERE type = 'WatchEvent'`).Scan(&n))
	if n != 0 || len(rec.Hook("star")) != 0 {
		t.Fatalf("a rolled back star left %d feed events and %d star webhooks", n, len(rec.Hook("star")))
	}
}

func TestFollowing(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	alice, bob := env.User("alice"), env.User("bob")
	org := env.Org("acme", bob)
	client := env.Client(env.Token(alice, "user:follow"))
	ctx := apptest.Ctx()

	if ok, _, err := client.Users.IsFollowing(ctx, "", "bob"); err != nil || ok {
		t.Fatalf("before: %v %v", ok, err)
	}
	resp, err := client.Users.Follow(ctx, "bob")
	apptest.Must(t, "follow", err)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("follow: %d", resp.StatusCode)
	}
	_, err = client.Users.Follow(ctx, org.Login) // organizations can be followed
	apptest.Must(t, "follow org", err)
	if ok, _, err := client.Users.IsFollowing(ctx, "", "BOB"); err != nil || !ok {
		t.Fatalf("after follow: %v %v", ok, err)
	}
	u, _, err := env.Client("").Users.Get(ctx, "bob")
	apptest.Must(t, "get bob", err)
	if u.GetFollowers() != 1 {
		t.Fatalf("bob's followers: %d", u.GetFollowers())
	}
	_, err = client.Users.Unfollow(ctx, "bob")
	apptest.Must(t, "unfollow", err)
	if ok, _, err := client.Users.IsFollowing(ctx, "", "bob"); err != nil || ok {
		t.Fatalf("after unfollow: %v %v", ok, err)
	}

	checks := []struct {
		name, method, path, token string
		want                      int
	}{
		{"follow yourself", "PUT", "/user/following/alice", env.Token(alice, "user"), http.StatusUnprocessableEntity},
		{"unknown user", "PUT", "/user/following/nobody", env.Token(alice, "user"), http.StatusNotFound},
		{"no user:follow scope", "PUT", "/user/following/bob", env.Token(alice, "repo"), http.StatusForbidden},
		{"user scope implies user:follow", "PUT", "/user/following/bob", env.Token(alice, "user"), http.StatusNoContent},
		{"fine-grained followers:write", "DELETE", "/user/following/bob", env.FineGrainedToken(alice, alice, nil, "followers:write"), http.StatusNoContent},
		{"fine-grained without followers", "PUT", "/user/following/bob", env.FineGrainedToken(alice, alice, nil, "starring:write"), http.StatusForbidden},
		{"anonymous", "PUT", "/user/following/bob", "", http.StatusUnauthorized},
		{"check with no scope", "GET", "/user/following/bob", env.Token(alice), http.StatusNotFound},
	}
	for _, c := range checks {
		resp, body := env.Do(c.method, c.path, c.token, nil)
		if resp.StatusCode != c.want {
			t.Errorf("%s: %s %s = %d %s, want %d", c.name, c.method, c.path, resp.StatusCode, body, c.want)
		}
	}
}

func TestWatching(t *testing.T) {
	t.Parallel()
	rec := &apptest.Recorder{}
	env := apptest.Start(t, apptest.WithEventSink(rec))
	owner, fan := env.User("owner"), env.User("fan")
	env.Repo(owner, "widgets")
	env.Repo(owner, "secret", apptest.RepoOpts{Private: true})
	client := env.Client(env.Token(fan, "notifications"))
	ctx := apptest.Ctx()

	if sub, _, err := client.Activity.GetRepositorySubscription(ctx, "owner", "widgets"); err != nil || sub != nil {
		t.Fatalf("before: %+v %v", sub, err)
	}
	sub, _, err := client.Activity.SetRepositorySubscription(ctx, "owner", "widgets", &github.Subscription{Subscribed: github.Ptr(true)})
	apptest.Must(t, "watch", err)
	if !sub.GetSubscribed() || sub.GetIgnored() || sub.GetURL() != env.URL+"/repos/owner/widgets/subscription" ||
		sub.GetRepositoryURL() != env.URL+"/repos/owner/widgets" || sub.CreatedAt == nil {
		t.Fatalf("subscription: %+v", sub)
	}
	got, _, err := client.Activity.GetRepositorySubscription(ctx, "owner", "widgets")
	apptest.Must(t, "get subscription", err)
	if !got.GetSubscribed() {
		t.Fatalf("get: %+v", got)
	}
	repo, _, err := env.Client("").Repositories.Get(ctx, "owner", "widgets")
	apptest.Must(t, "get repo", err)
	if repo.GetSubscribersCount() != 1 {
		t.Fatalf("subscribers_count: %d", repo.GetSubscribersCount())
	}
	sub, _, err = client.Activity.SetRepositorySubscription(ctx, "owner", "widgets", &github.Subscription{Ignored: github.Ptr(true)})
	apptest.Must(t, "ignore", err)
	if sub.GetSubscribed() || !sub.GetIgnored() {
		t.Fatalf("ignored subscription: %+v", sub)
	}
	_, err = client.Activity.DeleteRepositorySubscription(ctx, "owner", "widgets")
	apptest.Must(t, "unwatch", err)
	if sub, _, err := client.Activity.GetRepositorySubscription(ctx, "owner", "widgets"); err != nil || sub != nil {
		t.Fatalf("after delete: %+v %v", sub, err)
	}
	if len(rec.Feed("WatchEvent")) != 0 || len(rec.Hook("watch")) != 0 {
		t.Fatal("watching (subscribing) must not emit the starring events")
	}

	checks := []struct {
		name, method, path, token, body string
		want                            int
	}{
		{"hidden private repository", "PUT", "/repos/owner/secret/subscription", env.Token(fan, "repo"), `{"subscribed":true}`, http.StatusNotFound},
		{"no scope", "PUT", "/repos/owner/widgets/subscription", env.Token(fan, "user"), `{"subscribed":true}`, http.StatusForbidden},
		{"repo scope", "PUT", "/repos/owner/widgets/subscription", env.Token(fan, "repo"), `{"subscribed":true}`, http.StatusOK},
		{"both flags", "PUT", "/repos/owner/widgets/subscription", env.Token(fan, "repo"), `{"subscribed":true,"ignored":true}`, http.StatusUnprocessableEntity},
		{"neither", "PUT", "/repos/owner/widgets/subscription", env.Token(fan, "repo"), `{"subscribed":false}`, http.StatusUnprocessableEntity},
		{"bad json", "PUT", "/repos/owner/widgets/subscription", env.Token(fan, "repo"), `{"subscribed":`, http.StatusBadRequest},
		{"wrong type", "PUT", "/repos/owner/widgets/subscription", env.Token(fan, "repo"), `{"subscribed":"yes"}`, http.StatusUnprocessableEntity},
		{"fine-grained watching:write", "PUT", "/repos/owner/widgets/subscription", env.FineGrainedToken(fan, fan, nil, "watching:write"), `{}`, http.StatusOK},
		{"fine-grained watching:read cannot write", "PUT", "/repos/owner/widgets/subscription", env.FineGrainedToken(fan, fan, nil, "watching:read"), `{}`, http.StatusForbidden},
		{"fine-grained watching:read reads", "GET", "/repos/owner/widgets/subscription", env.FineGrainedToken(fan, fan, nil, "watching:read"), ``, http.StatusOK},
		{"owner reads private", "PUT", "/repos/owner/secret/subscription", env.Token(owner, "repo"), `{"subscribed":true}`, http.StatusOK},
	}
	for _, c := range checks {
		resp, body := env.DoJSON(c.method, c.path, c.token, c.body)
		if resp.StatusCode != c.want {
			t.Errorf("%s: %s %s = %d %s, want %d", c.name, c.method, c.path, resp.StatusCode, body, c.want)
		}
		if resp.StatusCode >= 400 && !strings.Contains(string(body), `"message"`) {
			t.Errorf("%s: error without a message: %s", c.name, body)
		}
	}
}

// TestFollowerLists: the followers and followed accounts of the caller
// and of any user, in follow order and paged, and the check of one
// follow.
func TestFollowerLists(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	names := []string{"a1", "a2", "a3", "a4", "a5"}
	for _, n := range names {
		u := env.User(n)
		_, err := env.Client(env.Token(u, "user:follow")).Users.Follow(ctx, "octo")
		apptest.Must(t, n+" follows octo", err)
	}
	_, err := env.Client(env.Token(octo, "user:follow")).Users.Follow(ctx, "a3")
	apptest.Must(t, "octo follows a3", err)

	var all []string
	opts := &github.ListOptions{PerPage: 2}
	for {
		page, resp, err := env.Client("").Users.ListFollowers(ctx, "octo", opts)
		apptest.Must(t, "followers", err)
		for _, u := range page {
			all = append(all, u.GetLogin())
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if strings.Join(all, ",") != strings.Join(names, ",") {
		t.Fatalf("followers of octo: %v, want %v", all, names)
	}
	own, _, err := env.Client(env.Token(octo)).Users.ListFollowing(ctx, "", nil)
	apptest.Must(t, "own following", err)
	if len(own) != 1 || own[0].GetLogin() != "a3" {
		t.Fatalf("octo follows %v", own)
	}
	mine, _, err := env.Client(env.Token(octo)).Users.ListFollowers(ctx, "", &github.ListOptions{PerPage: 100})
	apptest.Must(t, "own followers", err)
	if len(mine) != 5 {
		t.Fatalf("octo's own followers: %d", len(mine))
	}
	for _, c := range []struct {
		user, target string
		want         bool
	}{{"octo", "a3", true}, {"octo", "a1", false}, {"a1", "octo", true}, {"a1", "nobody", false}} {
		got, _, err := env.Client("").Users.IsFollowing(ctx, c.user, c.target)
		apptest.Must(t, "is following", err)
		if got != c.want {
			t.Errorf("%s follows %s: %v, want %v", c.user, c.target, got, c.want)
		}
	}
	if resp, _ := env.Do("GET", "/user/followers", "", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("anonymous /user/followers: %d", resp.StatusCode)
	}
}

// TestStarredWatchedAndForkLists: who starred and watches a repository,
// what a user starred and watches (private ones only to who may see
// them), and a repository's forks.
func TestStarredWatchedAndForkLists(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	hubot := env.User("hubot")
	pub := env.Repo(octo, "pub")
	env.Repo(octo, "priv", apptest.RepoOpts{Private: true})
	env.Repo(hubot, "fork1", apptest.RepoOpts{ForkOf: pub})
	env.Repo(hubot, "fork2", apptest.RepoOpts{ForkOf: pub})
	me := env.Client(env.Token(octo, "repo", "user"))
	them := env.Client(env.Token(hubot, "repo", "user"))
	for _, name := range []string{"pub", "priv"} {
		_, err := me.Activity.Star(ctx, "octo", name)
		apptest.Must(t, "star", err)
	}
	_, err := them.Activity.Star(ctx, "octo", "pub")
	apptest.Must(t, "star", err)
	_, _, err = me.Activity.SetRepositorySubscription(ctx, "octo", "pub", &github.Subscription{Subscribed: github.Ptr(true)})
	apptest.Must(t, "watch", err)

	gazers, _, err := env.Client("").Activity.ListStargazers(ctx, "octo", "pub", nil)
	apptest.Must(t, "stargazers", err)
	if len(gazers) != 2 || gazers[0].GetUser().GetLogin() != "octo" || gazers[0].StarredAt == nil {
		t.Fatalf("stargazers %+v", gazers)
	}
	watchers, _, err := env.Client("").Activity.ListWatchers(ctx, "octo", "pub", nil)
	apptest.Must(t, "watchers", err)
	if len(watchers) != 1 || watchers[0].GetLogin() != "octo" {
		t.Fatalf("watchers %+v", watchers)
	}
	mine, _, err := me.Activity.ListStarred(ctx, "", nil)
	apptest.Must(t, "own starred", err)
	if len(mine) != 2 || mine[0].GetRepository().GetName() != "priv" {
		t.Fatalf("own starred: %d, first %s", len(mine), mine[0].GetRepository().GetName())
	}
	seen, _, err := env.Client("").Activity.ListStarred(ctx, "octo", nil)
	apptest.Must(t, "starred as seen anonymously", err)
	if len(seen) != 1 || seen[0].GetRepository().GetName() != "pub" {
		t.Fatalf("octo's starred, anonymously: %d", len(seen))
	}
	subs, _, err := me.Activity.ListWatched(ctx, "", nil)
	apptest.Must(t, "own subscriptions", err)
	if len(subs) != 1 || subs[0].GetName() != "pub" {
		t.Fatalf("own subscriptions %+v", subs)
	}
	forks, _, err := env.Client("").Repositories.ListForks(ctx, "octo", "pub", &github.RepositoryListForksOptions{Sort: "oldest"})
	apptest.Must(t, "forks", err)
	if len(forks) != 2 || forks[0].GetFullName() != "hubot/fork1" {
		t.Fatalf("forks %+v", forks)
	}
}
