package e2e_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
)

// Event summaries of the SAML world below.
const (
	ssoCreatePriv   = "CreateEvent alice alice/priv"
	ssoCreateSPub   = "CreateEvent alice sso/spub"
	ssoCreateSPriv  = "CreateEvent alice sso/spriv"
	ssoCreateOPriv  = "CreateEvent alice open/opriv"
	ssoAliceStarS   = "WatchEvent alice sso/spriv"
	ssoAliceStarO   = "WatchEvent alice open/opriv"
	ssoBobStarSPriv = "WatchEvent bob sso/spriv"
	ssoBobStarSPub  = "WatchEvent bob sso/spub"
	samlPassword    = "correct horse"
)

// samlWorld: alice owns the organizations sso, which enforces SAML single
// sign-on, and open, which does not; bob is a member of both. alice
// creates a private repository of her own, a public and a private one of
// sso and a private one of open, stars sso/spriv and open/opriv and
// follows bob, who stars sso/spriv and sso/spub. alice holds a classic
// token (repo and user scopes) and an OAuth token made through the
// authorizations API (repo scope).
type samlWorld struct {
	env            *apptest.Env
	classic, oauth string
}

func newSAMLWorld(t *testing.T, opts ...apptest.Option) *samlWorld {
	env := apptest.Start(t, opts...)
	alice := env.User("alice", apptest.UserOpts{Password: samlPassword})
	bob := env.User("bob")
	sso := env.Org("sso", alice, bob)
	env.Org("open", alice, bob)
	_, err := env.App.DB.ExecContext(apptest.Ctx(), `UPDATE accounts SET saml_enforced = TRUE WHERE id = $1`, sso.ID)
	apptest.Must(t, "enforce SAML", err)
	w := &samlWorld{env: env, classic: env.Token(alice, "repo", "user"), oauth: authorizationToken(t, env, "alice", samlPassword)}
	bobTok := env.Token(bob, "repo")
	do(t, env, "POST", "/user/repos", w.classic, `{"name":"priv","private":true}`)
	do(t, env, "POST", "/orgs/sso/repos", w.classic, `{"name":"spub"}`)
	do(t, env, "POST", "/orgs/sso/repos", w.classic, `{"name":"spriv","private":true}`)
	do(t, env, "POST", "/orgs/open/repos", w.classic, `{"name":"opriv","private":true}`)
	do(t, env, "PUT", "/user/starred/sso/spriv", w.classic, ``)
	do(t, env, "PUT", "/user/starred/open/opriv", w.classic, ``)
	do(t, env, "PUT", "/user/starred/sso/spriv", bobTok, ``)
	do(t, env, "PUT", "/user/starred/sso/spub", bobTok, ``)
	do(t, env, "PUT", "/user/following/bob", w.classic, ``)
	return w
}

// authorizationToken creates a personal authorization with the repo
// scope through POST /authorizations (HTTP Basic) and returns its token.
func authorizationToken(t *testing.T, env *apptest.Env, login, password string) string {
	t.Helper()
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(login+":"+password))
	resp, body := env.DoJSON("POST", "/authorizations", "", `{"note":"feeds","scopes":["repo"]}`, "Authorization", basic)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /authorizations: %d %s", resp.StatusCode, body)
	}
	var a struct{ Token string }
	apptest.Must(t, "decode authorization", json.Unmarshal(body, &a))
	return a.Token
}

func TestFeedsLeaveOutSAMLOrganizationsForAuthorizationTokens(t *testing.T) {
	t.Parallel()
	testSAMLFeeds(t, newSAMLWorld(t))
}

// TestFeedsLeaveOutSAMLOrganizationsWithoutUnion is the same for the form
// of the received feed with more sources than MaxUnionSources.
func TestFeedsLeaveOutSAMLOrganizationsWithoutUnion(t *testing.T) {
	t.Parallel()
	testSAMLFeeds(t, newSAMLWorld(t, func(c *app.Config) { c.Feeds.MaxUnionSources = 1 }))
}

func testSAMLFeeds(t *testing.T, w *samlWorld) {
	env := w.env
	// The user's own events: the OAuth token does not see the private
	// events of sso's repositories; it sees their public events, and the
	// private events of alice's and open's repositories.
	expect(t, env, "/users/alice/events", w.classic, ssoAliceStarO, ssoAliceStarS, ssoCreateOPriv, ssoCreateSPriv,
		ssoCreateSPub, ssoCreatePriv)
	expect(t, env, "/users/alice/events", w.oauth, ssoAliceStarO, ssoCreateOPriv, ssoCreateSPub, ssoCreatePriv)
	// Received events: through a starred repository and through a
	// followed account alike.
	expect(t, env, "/users/alice/received_events", w.classic, ssoBobStarSPub, ssoBobStarSPriv, ssoAliceStarO,
		ssoAliceStarS, ssoCreateOPriv, ssoCreateSPriv)
	expect(t, env, "/users/alice/received_events", w.oauth, ssoBobStarSPub, ssoAliceStarO, ssoCreateOPriv)

	// The organization dashboard and feed of sso refuse the token, as the
	// other /orgs/sso routes do; open's work.
	for _, path := range []string{"/users/alice/events/orgs/sso", "/orgs/sso/events", "/repos/sso/spriv/events", "/repos/sso/spub/events"} {
		resp, body := env.Do("GET", path, w.oauth, nil)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "SAML") {
			t.Errorf("GET %s with the authorization token: %d %s, want 403 naming SAML", path, resp.StatusCode, body)
		}
	}
	expect(t, env, "/users/alice/events/orgs/sso", w.classic, ssoBobStarSPub, ssoBobStarSPriv, ssoAliceStarS,
		ssoCreateSPriv, ssoCreateSPub)
	expect(t, env, "/users/alice/events/orgs/open", w.oauth, ssoAliceStarO, ssoCreateOPriv)
	expect(t, env, "/orgs/sso/events", w.classic, ssoBobStarSPub, ssoCreateSPub)
	expect(t, env, "/users/alice/events/public", w.oauth, ssoCreateSPub)

	testSAMLFeedCaches(t, w)
}

// testSAMLFeedCaches checks that the two tokens do not share cached pages,
// counts or ETags of a feed.
func testSAMLFeedCaches(t *testing.T, w *samlWorld) {
	env := w.env
	for _, path := range []string{"/users/alice/events", "/users/alice/received_events"} {
		classic, _ := getFeed(t, env, path, w.classic, http.StatusOK)
		oauth, events := getFeed(t, env, path, w.oauth, http.StatusOK)
		ce, oe := classic.Header.Get("ETag"), oauth.Header.Get("ETag")
		if ce == "" || ce == oe {
			t.Fatalf("GET %s: ETags %q (classic) and %q (authorization token)", path, ce, oe)
		}
		// Each caller's own ETag is current; the other's is not.
		getFeed(t, env, path, w.classic, http.StatusNotModified, "If-None-Match", ce)
		getFeed(t, env, path, w.oauth, http.StatusNotModified, "If-None-Match", oe)
		_, again := getFeed(t, env, path, w.oauth, http.StatusOK, "If-None-Match", ce)
		if len(again) != len(events) {
			t.Errorf("GET %s with the classic token's ETag: %d events, want %d", path, len(again), len(events))
		}
		getFeed(t, env, path, w.classic, http.StatusOK, "If-None-Match", oe)
	}

	// A count made for the classic token is not the authorization
	// token's: both feeds start with the same event, and the last page of
	// one event per page differs.
	opts := &github.ListOptions{PerPage: 1}
	for _, c := range []struct {
		token string
		last  int
	}{{w.classic, 6}, {w.oauth, 4}, {w.classic, 6}} {
		_, resp, err := env.Client(c.token).Activity.ListEventsPerformedByUser(apptest.Ctx(), "alice", false, opts)
		apptest.Must(t, "list alice's events", err)
		if resp.LastPage != c.last {
			t.Errorf("GET /users/alice/events?per_page=1 (token %s): last page %d, want %d", short(c.token), resp.LastPage, c.last)
		}
	}
}
