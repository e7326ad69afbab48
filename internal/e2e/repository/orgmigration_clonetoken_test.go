package repository_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
)

// offsetClock is the real time plus an offset the test moves forward.
type offsetClock struct{ offset atomic.Int64 }

func (c *offsetClock) Now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *offsetClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// cloneTokens returns the temp_clone_token of each repository of a
// migration's repositories, by name.
func cloneTokens(t *testing.T, repositories []json.RawMessage) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, raw := range repositories {
		var r struct {
			Name  string  `json:"name"`
			Token *string `json:"temp_clone_token"`
		}
		mustUnmarshal(t, raw, &r)
		if r.Token == nil {
			t.Fatalf("repository %s: temp_clone_token is null", r.Name)
		}
		out[r.Name] = *r.Token
	}
	return out
}

// TestTempCloneToken: the repositories of a migration carry a token that
// clones that repository, and only that, over git HTTP for at most
// auth.CloneTokenTTL; it does not push and does not call the API.
func TestTempCloneToken(t *testing.T) {
	t.Parallel()
	clk := &offsetClock{}
	f := newFixture(t, apptest.WithClock(clk.Now))
	secret := f.env.Repo(f.org, "secret", apptest.RepoOpts{Private: true})
	f.env.Repo(f.org, "other", apptest.RepoOpts{Private: true})
	f.pushHistory(secret, "secret")

	m := f.start(`{"repositories":["secret","other"]}`)
	tokens := cloneTokens(t, m.Repositories)
	token := tokens["secret"]
	if token == "" || tokens["other"] == "" || token == tokens["other"] {
		t.Fatalf("temp_clone_token for the owner: %q", tokens)
	}
	// Polling shows the same token rather than a new one per request.
	if got := cloneTokens(t, f.get(m.ID).Repositories)["secret"]; got != token {
		t.Errorf("GET migration temp_clone_token = %q, want the token of POST %q", got, token)
	}
	resp, data := f.env.Do("GET", f.path("/migrations/%d/repositories", m.ID), f.token, nil)
	var listed []json.RawMessage
	mustUnmarshal(t, data, &listed)
	if got := cloneTokens(t, listed)["secret"]; resp.StatusCode != http.StatusOK || got != token {
		t.Errorf("GET migration repositories: %d temp_clone_token %q, want %q", resp.StatusCode, got, token)
	}

	dir := t.TempDir()
	url := f.env.GitURL(f.org.Login, "secret", "x-access-token", token)
	apptest.Git(t, dir, "clone", "-q", url, "clone")
	work := filepath.Join(dir, "clone")
	if got, want := f.git.refs(work), "refs/remotes/origin/feature"; !strings.Contains(got, want) {
		t.Errorf("cloned refs %q lack %s", got, want)
	}

	apptest.Git(t, dir, "-c", "http.extraHeader=Authorization: Bearer "+token, "clone", "-q",
		f.env.GitURL(f.org.Login, "secret", "", ""), "bearer")

	apptest.Git(t, work, "checkout", "-q", "-b", "by-clone-token")
	if out, err := apptest.TryGit(t, work, "push", "-q", "origin", "by-clone-token"); err == nil {
		t.Errorf("a push with the clone token succeeded:\n%s", out)
	} else if !strings.Contains(out, "read-only") {
		t.Errorf("push refusal does not say the token is read-only:\n%s", out)
	}
	other := f.env.GitURL(f.org.Login, "other", "x-access-token", token)
	if out, err := apptest.TryGit(t, dir, "clone", "-q", other, "other"); err == nil {
		t.Errorf("the token of secret cloned other:\n%s", out)
	}

	// The repository is bound by the MAC: naming another one in the token breaks it.
	otherRepo := repoByName(t, f, "other")
	parts := strings.Split(token, "_")
	parts[1] = strconv.FormatInt(otherRepo.ID, 36)
	forged := f.env.GitURL(f.org.Login, "other", "x-access-token", strings.Join(parts, "_"))
	if out, err := apptest.TryGit(t, dir, "clone", "-q", forged, "forged"); err == nil {
		t.Errorf("a token edited to name other cloned it:\n%s", out)
	}

	for _, path := range []string{"/user", "/repos/" + f.org.Login + "/secret", "/orgs/" + f.org.Login} {
		if resp, data := f.env.Do("GET", path, token, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s with the clone token: %d %s, want 401", path, resp.StatusCode, data)
		}
	}

	clk.advance(auth.CloneTokenTTL)
	if out, err := apptest.TryGit(t, dir, "clone", "-q", url, "expired"); err == nil {
		t.Errorf("the clone token still clones after %s:\n%s", auth.CloneTokenTTL, out)
	}
	fresh := cloneTokens(t, f.get(m.ID).Repositories)["secret"]
	if fresh == token {
		t.Fatal("GET migration shows the expired token")
	}
	apptest.Git(t, dir, "clone", "-q", f.env.GitURL(f.org.Login, "secret", "x-access-token", fresh), "fresh")
}

// TestTempCloneTokenWithoutAdmin: credentials that do not give admin
// rights on the repository (an owner's token without the repo scope, on a
// private repository) see "" as its temp_clone_token.
func TestTempCloneTokenWithoutAdmin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.env.Repo(f.org, "secret", apptest.RepoOpts{Private: true})
	m := f.start(`{"repositories":["secret"]}`)

	orgOnly := f.env.Token(f.owner, "admin:org")
	resp, data := f.env.Do("GET", f.path("/migrations/%d", m.ID), orgOnly, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET migration with admin:org: %d %s", resp.StatusCode, data)
	}
	var got migrationJSON
	mustUnmarshal(t, data, &got)
	if token := cloneTokens(t, got.Repositories)["secret"]; token != "" {
		t.Errorf("temp_clone_token for a token without repo = %q, want \"\"", token)
	}
}
