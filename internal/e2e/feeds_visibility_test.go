package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
)

func mustAccount(t *testing.T, env *apptest.Env, login string) *accounts.Account {
	t.Helper()
	a, err := accounts.ByLogin(apptest.Ctx(), env.Q(), login)
	apptest.Must(t, "find "+login, err)
	return a
}

// Event summaries of the world below, as "Type actor repo".
const (
	createPub    = "CreateEvent alice alice/pub"
	createPriv   = "CreateEvent alice alice/priv"
	createOPub   = "CreateEvent alice acme/opub"
	createOPriv  = "CreateEvent alice acme/opriv"
	bobStarOPriv = "WatchEvent bob acme/opriv"
	bobStarPub   = "WatchEvent bob alice/pub"
	carolStarOP  = "WatchEvent carol acme/opub"
	createFork   = "CreateEvent carol carol/pub-fork"
)

// world: alice owns acme (bob is a member; carol and dave are not), and
// creates a public and a private repository for herself and for acme;
// bob stars acme/opriv and alice/pub; carol stars acme/opub, follows
// alice and forks alice/pub; dave watches alice/pub and follows bob.
type world struct {
	env                        *apptest.Env
	alice, bob, carol, dave    string // classic tokens with the repo scope
	alicePass                  string
	aliceNoRepo, bobNoRepo     string // classic tokens without the repo scope
	aliceEvents, aliceNoEvents string // fine-grained tokens of alice on alice
}

func newWorld(t *testing.T, opts ...apptest.Option) *world {
	env := apptest.Start(t, opts...)
	a := env.User("alice", apptest.UserOpts{Password: "correct horse"})
	b, c, d := env.User("bob"), env.User("carol"), env.User("dave")
	env.Org("acme", a, b)
	w := &world{env: env, alice: env.Token(a, "repo"), bob: env.Token(b, "repo"), carol: env.Token(c, "repo", "user"),
		dave: env.Token(d, "repo", "user"), aliceNoRepo: env.Token(a, "read:user"), bobNoRepo: env.Token(b, "public_repo"),
		aliceEvents: env.FineGrainedToken(a, a, nil, "user_events:read"), aliceNoEvents: env.FineGrainedToken(a, a, nil, "starring:read")}
	do(t, env, "POST", "/user/repos", w.alice, `{"name":"pub"}`)
	do(t, env, "POST", "/user/repos", w.alice, `{"name":"priv","private":true}`)
	do(t, env, "POST", "/orgs/acme/repos", w.alice, `{"name":"opub"}`)
	do(t, env, "POST", "/orgs/acme/repos", w.alice, `{"name":"opriv","private":true}`)
	do(t, env, "PUT", "/user/starred/acme/opriv", w.bob, ``)
	do(t, env, "PUT", "/user/starred/alice/pub", w.bob, ``)
	do(t, env, "PUT", "/user/starred/acme/opub", w.carol, ``)
	do(t, env, "PUT", "/user/following/alice", w.carol, ``)
	pub, err := repos.ByOwnerAndName(apptest.Ctx(), env.Q(), "alice", "pub")
	apptest.Must(t, "find alice/pub", err)
	env.Repo(c, "pub-fork", apptest.RepoOpts{ForkOf: pub})
	do(t, env, "PUT", "/repos/alice/pub/subscription", w.dave, `{"subscribed":true}`)
	do(t, env, "PUT", "/user/following/bob", w.dave, ``)
	return w
}

func TestPublicRepositoryAndNetworkFeeds(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.env
	all := []string{createFork, carolStarOP, bobStarPub, createOPub, createPub}
	expect(t, env, "/events", "", all...)
	expect(t, env, "/events", w.alice, all...) // the public feed is public for everyone

	expect(t, env, "/repos/alice/pub/events", "", bobStarPub, createPub)
	expect(t, env, "/repos/alice/priv/events", w.alice, createPriv)
	expect(t, env, "/repos/acme/opriv/events", w.bob, bobStarOPriv, createOPriv)
	feedStatus(t, env, "/repos/alice/priv/events", "", http.StatusNotFound)
	feedStatus(t, env, "/repos/alice/priv/events", w.bob, http.StatusNotFound)
	feedStatus(t, env, "/repos/alice/priv/events", w.aliceNoRepo, http.StatusNotFound)
	feedStatus(t, env, "/repos/alice/nope/events", w.alice, http.StatusNotFound)
	bobUser, acme := mustAccount(t, env, "bob"), mustAccount(t, env, "acme")
	expect(t, env, "/repos/acme/opriv/events", env.FineGrainedToken(bobUser, acme, apptest.AllRepos, "metadata:read"), bobStarOPriv, createOPriv)
	feedStatus(t, env, "/repos/acme/opriv/events", env.FineGrainedToken(bobUser, bobUser, apptest.AllRepos, "metadata:read"), http.StatusNotFound)
	expect(t, env, "/repos/alice/pub/events", env.FineGrainedToken(bobUser, bobUser, nil, "starring:read"), bobStarPub, createPub)

	network := []string{createFork, bobStarPub, createPub}
	expect(t, env, "/networks/alice/pub/events", "", network...)
	expect(t, env, "/networks/carol/pub-fork/events", "", network...)
	feedStatus(t, env, "/networks/alice/priv/events", "", http.StatusNotFound)
	feedStatus(t, env, "/networks/nobody/nothing/events", "", http.StatusNotFound)
	expect(t, env, "/networks/alice/priv/events", w.alice) // only public events; the private repository has none

	expect(t, env, "/orgs/acme/events", "", carolStarOP, createOPub)
	expect(t, env, "/orgs/acme/events", w.bob, carolStarOP, createOPub)
	feedStatus(t, env, "/orgs/nope/events", "", http.StatusNotFound)
}

func TestUserFeeds(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.env
	public := []string{createOPub, createPub}
	private := []string{createOPriv, createOPub, createPriv, createPub}
	expect(t, env, "/users/alice/events", "", public...)
	expect(t, env, "/users/alice/events", w.bob, public...)
	expect(t, env, "/users/alice/events", w.alice, private...)
	expect(t, env, "/users/alice/events", w.aliceNoRepo, public...)
	expect(t, env, "/users/alice/events", w.aliceNoEvents, public...)
	// A fine-grained token sees the private events of the repositories it
	// selects, and only those: never an organization's (its resource owner
	// is alice), and none when it selects no repository.
	aliceUser := mustAccount(t, env, "alice")
	priv, err := repos.ByOwnerAndName(apptest.Ctx(), env.Q(), "alice", "priv")
	apptest.Must(t, "find alice/priv", err)
	expect(t, env, "/users/alice/events", w.aliceEvents, public...)
	expect(t, env, "/users/alice/events", env.FineGrainedToken(aliceUser, aliceUser, []*repos.Repository{priv}, "user_events:read"),
		createOPub, createPriv, createPub)
	expect(t, env, "/users/alice/events", env.FineGrainedToken(aliceUser, aliceUser, apptest.AllRepos, "user_events:read"),
		createOPub, createPriv, createPub)
	expect(t, env, "/users/alice/events/public", w.alice, public...)
	feedStatus(t, env, "/users/nobody/events", "", http.StatusNotFound)

	req := env.BasicClient("alice", "correct horse", "")
	events, _, err := req.Activity.ListEventsPerformedByUser(apptest.Ctx(), "alice", false, nil)
	apptest.Must(t, "password", err)
	if len(events) != len(private) {
		t.Errorf("alice with her password sees %d events, want %d", len(events), len(private))
	}

	// The organization dashboard.
	allOrg := []string{carolStarOP, bobStarOPriv, createOPriv, createOPub}
	expect(t, env, "/users/bob/events/orgs/acme", w.bob, allOrg...)
	expect(t, env, "/users/bob/events/orgs/acme", w.bobNoRepo, carolStarOP, createOPub)
	expect(t, env, "/users/carol/events/orgs/acme", w.carol, carolStarOP, createOPub)
	feedStatus(t, env, "/users/bob/events/orgs/acme", w.alice, http.StatusForbidden)
	feedStatus(t, env, "/users/bob/events/orgs/acme", "", http.StatusNotFound)
	feedStatus(t, env, "/users/bob/events/orgs/nope", w.bob, http.StatusNotFound)
	bob, acme := mustAccount(t, env, "bob"), mustAccount(t, env, "acme")
	expect(t, env, "/users/bob/events/orgs/acme", env.FineGrainedToken(bob, acme, nil, "organization_events:read"), allOrg...)
	feedStatus(t, env, "/users/bob/events/orgs/acme", env.FineGrainedToken(bob, acme, nil, "members:read"), http.StatusForbidden)
	feedStatus(t, env, "/users/bob/events/orgs/acme", env.FineGrainedToken(bob, bob, nil, "organization_events:read"), http.StatusForbidden)
	feedStatus(t, env, "/users/bob/events/orgs/acme", env.InstallationToken(acme, apptest.AllRepos, "organization_events:read"), http.StatusForbidden)
}

func TestReceivedFeeds(t *testing.T) {
	t.Parallel()
	testReceivedFeeds(t, newWorld(t))
}

// TestReceivedFeedsWithoutUnion checks the form of the received and
// network feeds for users with more sources than MaxUnionSources.
func TestReceivedFeedsWithoutUnion(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *app.Config) { c.Feeds.MaxUnionSources = 1 })
	expect(t, w.env, "/networks/alice/pub/events", "", createFork, bobStarPub, createPub)
	testReceivedFeeds(t, w)
}

func testReceivedFeeds(t *testing.T, w *world) {
	env := w.env
	// carol follows alice and stars acme/opub: alice's public events and
	// the events of acme/opub, never the private ones she cannot read.
	expect(t, env, "/users/carol/received_events", w.carol, carolStarOP, createOPub, createPub)
	expect(t, env, "/users/carol/received_events/public", "", carolStarOP, createOPub, createPub)
	// bob stars acme/opriv (he is a member) and alice/pub.
	expect(t, env, "/users/bob/received_events", w.bob, bobStarPub, bobStarOPriv, createOPriv, createPub)
	expect(t, env, "/users/bob/received_events", "", bobStarPub, createPub)
	expect(t, env, "/users/bob/received_events", w.alice, bobStarPub, createPub)
	expect(t, env, "/users/bob/received_events", w.bobNoRepo, bobStarPub, createPub)
	expect(t, env, "/users/bob/received_events/public", w.bob, bobStarPub, createPub)
	// bob's fine-grained token on himself cannot reach acme's private
	// repository, so neither can his received events through it.
	bob, acme := mustAccount(t, env, "bob"), mustAccount(t, env, "acme")
	expect(t, env, "/users/bob/received_events", env.FineGrainedToken(bob, bob, apptest.AllRepos, "user_events:read"), bobStarPub, createPub)
	opriv, err := repos.ByOwnerAndName(apptest.Ctx(), env.Q(), "acme", "opriv")
	apptest.Must(t, "find acme/opriv", err)
	expect(t, env, "/users/bob/received_events", env.FineGrainedToken(bob, acme, []*repos.Repository{opriv}, "user_events:read"), bobStarPub, createPub)
	// dave watches alice/pub and follows bob, whose private star he
	// cannot see even in his own feed.
	expect(t, env, "/users/dave/received_events", w.dave, bobStarPub, createPub)
	do(t, env, "PUT", "/repos/alice/pub/subscription", w.dave, `{"ignored":true}`)
	expect(t, env, "/users/dave/received_events", w.dave, bobStarPub)
	do(t, env, "DELETE", "/user/following/bob", w.dave, ``)
	expect(t, env, "/users/dave/received_events", w.dave)
	feedStatus(t, env, "/users/nobody/received_events", "", http.StatusNotFound)
}

func TestFeedEventShape(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.env
	resp, body := env.Do("GET", "/orgs/acme/events", "", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") == "" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var raw []map[string]json.RawMessage
	apptest.Must(t, "decode", json.Unmarshal(body, &raw))
	first := raw[0] // carol's star on acme/opub
	for _, k := range []string{"id", "type", "actor", "repo", "payload", "public", "created_at", "org"} {
		if _, ok := first[k]; !ok {
			t.Errorf("feed event has no %q: %s", k, body)
		}
	}
	var list []struct {
		ID    string `json:"id"`
		Actor struct {
			ID           int64  `json:"id"`
			Login        string `json:"login"`
			DisplayLogin string `json:"display_login"`
			GravatarID   string `json:"gravatar_id"`
			URL          string `json:"url"`
			AvatarURL    string `json:"avatar_url"`
		} `json:"actor"`
		Repo struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
			URL  string `json:"url"`
		} `json:"repo"`
		Org struct {
			ID         int64   `json:"id"`
			Login      string  `json:"login"`
			GravatarID *string `json:"gravatar_id"`
			URL        string  `json:"url"`
			AvatarURL  string  `json:"avatar_url"`
		} `json:"org"`
		Public    bool   `json:"public"`
		CreatedAt string `json:"created_at"`
	}
	apptest.Must(t, "decode events", json.Unmarshal(body, &list))
	e := list[0]
	carol, acme := mustAccount(t, env, "carol"), mustAccount(t, env, "acme")
	if e.ID == "" || e.Actor.ID != carol.ID || e.Actor.Login != "carol" || e.Actor.DisplayLogin != "carol" ||
		e.Actor.URL != env.URL+"/users/carol" || !strings.HasPrefix(e.Actor.AvatarURL, env.URL+"/avatars/") ||
		e.Repo.Name != "acme/opub" || e.Repo.URL != env.URL+"/repos/acme/opub" || e.Org.ID != acme.ID ||
		e.Org.Login != "acme" || e.Org.URL != env.URL+"/orgs/acme" || e.Org.GravatarID == nil || !e.Public ||
		!strings.HasSuffix(e.CreatedAt, "Z") {
		t.Errorf("feed event: %+v", e)
	}
	if string(first["payload"]) != `{"action":"started"}` {
		t.Errorf("payload: %s", first["payload"])
	}
	_, userEvents := getFeed(t, env, "/repos/alice/pub/events", "", http.StatusOK)
	if len(userEvents) == 0 || string(userEvents[0].Org) != "" {
		t.Errorf("an event of a user's repository has an org: %s", userEvents[0].Org)
	}
}

// TestUnionFeedsFollowTheirSources checks that the cached filters of the
// network and received feeds follow the writes that change them: a new
// fork joins the network; joining an organization shows the private
// events of its repositories among those of a followed account.
func TestUnionFeedsFollowTheirSources(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.env
	expect(t, env, "/networks/alice/pub/events", "", createFork, bobStarPub, createPub)
	pub, err := repos.ByOwnerAndName(apptest.Ctx(), env.Q(), "alice", "pub")
	apptest.Must(t, "find alice/pub", err)
	env.Repo(mustAccount(t, env, "dave"), "pub-fork", apptest.RepoOpts{ForkOf: pub})
	expect(t, env, "/networks/alice/pub/events", "", "CreateEvent dave dave/pub-fork", createFork, bobStarPub, createPub)

	// carol starred acme/opriv before she could read it (as if she had
	// been a member), then joins acme.
	acme, carol := mustAccount(t, env, "acme"), mustAccount(t, env, "carol")
	opriv, err := repos.ByOwnerAndName(apptest.Ctx(), env.Q(), "acme", "opriv")
	apptest.Must(t, "find acme/opriv", err)
	_, err = env.Q().ExecContext(apptest.Ctx(), `INSERT INTO stars (user_id, repository_id, created_at) VALUES ($1, $2, $3)`,
		carol.ID, opriv.ID, time.Now().UTC())
	apptest.Must(t, "star acme/opriv", err)
	expect(t, env, "/users/carol/received_events", w.carol, carolStarOP, createOPub, createPub)
	_, err = env.Q().ExecContext(apptest.Ctx(), `INSERT INTO org_members (org_id, user_id, role, created_at) VALUES ($1, $2, 'member', $3)`,
		acme.ID, carol.ID, time.Now().UTC())
	apptest.Must(t, "add carol to acme", err)
	expect(t, env, "/users/carol/received_events", w.carol, carolStarOP, bobStarOPriv, createOPriv, createOPub, createPub)
}

// TestBasePermissionNoneHidesPrivateEventsFromMembers: once the
// organization's base repository permission is none, its members who
// are not owners see no private event of its repositories in any feed,
// and see them again when it is read.
func TestBasePermissionNoneHidesPrivateEventsFromMembers(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.env
	owner := env.Token(mustAccount(t, env, "alice"), "admin:org")
	do(t, env, "PATCH", "/orgs/acme", owner, `{"default_repository_permission":"none"}`)
	expect(t, env, "/users/bob/events/orgs/acme", w.bob, carolStarOP, createOPub)
	expect(t, env, "/users/bob/received_events", w.bob, bobStarPub, createPub)
	expect(t, env, "/repos/acme/opub/events", w.bob, carolStarOP, createOPub)
	feedStatus(t, env, "/repos/acme/opriv/events", w.bob, http.StatusNotFound)
	expect(t, env, "/users/alice/events/orgs/acme", w.alice, carolStarOP, bobStarOPriv, createOPriv, createOPub) // the owner
	do(t, env, "PATCH", "/orgs/acme", owner, `{"default_repository_permission":"read"}`)
	expect(t, env, "/users/bob/events/orgs/acme", w.bob, carolStarOP, bobStarOPriv, createOPriv, createOPub)
	expect(t, env, "/users/bob/received_events", w.bob, bobStarPub, bobStarOPriv, createOPriv, createPub)
}
